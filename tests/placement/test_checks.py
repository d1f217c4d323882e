"""The controller's check of a placer's answer, and the protocol helpers."""

from __future__ import annotations

import pytest

from placement import (
    CloseablePlacer,
    ConfigurablePlacer,
    CordonedBrokerPlacer,
    KafkaStripedReplicaPlacer,
    PlacementError,
    PlacementSpec,
    ReplicaPlacer,
    StaticClusterView,
    StripedReplicaPlacer,
    UsableBroker,
    check_assignment,
)
from placement.checks import leader_counts, replica_counts, spread
from tests.placement.clusters import grid

BROKERS = [UsableBroker(1, "a", False), UsableBroker(2, "b", False), UsableBroker(3, "c", True)]
SPEC = PlacementSpec(5, 2, 2)


def test_valid_answer_is_returned_as_plain_lists() -> None:
    assert check_assignment(SPEC, BROKERS, [[1, 3], [2, 1]]) == [[1, 3], [2, 1]]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ((1, 2), "returned tuple, not a list of lists"),
        ([[1, 2]], "returned 1 replica list(s) for 2 partition(s)"),
        ([[1, 2], [1]], "gave partition 6 1 replica(s) instead of 2"),
        ([[1, 9], [1, 2]], "gave partition 5 replica 9, which is not a usable broker"),
        ([[1, "2"], [1, 2]], "gave partition 5 replica '2', which is not a usable broker"),
        ([[1, True], [1, 2]], "gave partition 5 replica True, which is not a usable broker"),
        ([[1, 2], [2, 2]], "gave partition 6 a repeated broker: [2, 2]"),
        ([[3, 1], [1, 2]], "made fenced broker 3 the leader of partition 5"),
    ],
)
def test_bad_answers_are_rejected(answer: object, message: str) -> None:
    with pytest.raises(PlacementError) as caught:
        check_assignment(SPEC, BROKERS, answer)
    assert message in caught.value.message


def test_built_in_placers_satisfy_the_protocols() -> None:
    for placer in (StripedReplicaPlacer(), KafkaStripedReplicaPlacer(), CordonedBrokerPlacer()):
        assert isinstance(placer, ReplicaPlacer)
        assert isinstance(placer, ConfigurablePlacer)
    assert isinstance(CordonedBrokerPlacer(), CloseablePlacer)
    assert not isinstance(StripedReplicaPlacer(), CloseablePlacer)


def test_static_view_answers_unknown_brokers_with_zero() -> None:
    cluster = StaticClusterView(tuple(grid(1, 2)), ((0, 1),), {0: 4}, {0: 2})
    assert (cluster.replica_count(0), cluster.replica_count(9)) == (4, 0)
    assert (cluster.leader_count(0), cluster.leader_count(1)) == (2, 0)
    assert cluster.existing_assignment() == ((0, 1),)


def test_count_helpers() -> None:
    assignment = [[1, 2], [2, 3], [1, 3]]
    assert leader_counts(assignment) == {1: 2, 2: 1}
    assert replica_counts(assignment) == {1: 2, 2: 2, 3: 2}
    assert spread(leader_counts(assignment), [1, 2, 3]) == 2
    assert spread(leader_counts(assignment), []) == 0
