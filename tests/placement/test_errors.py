"""Kafka's replication-factor errors, word for word, in Kafka's order, from every placer."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from placement import (
    CapacityAwarePlacer,
    CordonedBrokerPlacer,
    EmptiestBrokerPlacer,
    InvalidReplicationFactorError,
    KafkaStripedReplicaPlacer,
    PlacementError,
    PlacementSpec,
    ReplicaPlacer,
    StripedReplicaPlacer,
    UsableBroker,
)
from raftmeta.errors import ErrorCode, KafkaError
from tests.placement.clusters import grid, seeded, view


def capacity_placer() -> ReplicaPlacer:
    placer = CapacityAwarePlacer(seeded(1))
    placer.set_capacity(default=1000)
    return placer


PLACERS: list[Callable[[], ReplicaPlacer]] = [
    lambda: KafkaStripedReplicaPlacer(seeded(1)),
    lambda: StripedReplicaPlacer(seeded(1)),
    lambda: EmptiestBrokerPlacer(seeded(1)),
    capacity_placer,
    lambda: CordonedBrokerPlacer(StripedReplicaPlacer(seeded(1)), cordoned=[0]),
]
IDS = ["kafka", "default", "emptiest", "capacity", "cordon"]

ALL_FENCED = [UsableBroker(1, "a", True), UsableBroker(2, "b", True)]


def failure(
    placer: ReplicaPlacer, brokers: list[UsableBroker], replication_factor: int
) -> InvalidReplicationFactorError:
    with pytest.raises(InvalidReplicationFactorError) as caught:
        placer.place(PlacementSpec(0, 3, replication_factor), view(brokers))
    return caught.value


@pytest.mark.parametrize("make", PLACERS, ids=IDS)
@pytest.mark.parametrize("replication_factor", [0, -1, -3])
def test_non_positive_replication_factor(
    make: Callable[[], ReplicaPlacer], replication_factor: int
) -> None:
    error = failure(make(), grid(2, 2), replication_factor)
    assert error.message == (
        f"Invalid replication factor {replication_factor}: the replication factor must be positive."
    )


@pytest.mark.parametrize("make", PLACERS, ids=IDS)
def test_too_few_brokers(make: Callable[[], ReplicaPlacer]) -> None:
    error = failure(make(), grid(2, 2), 5)
    assert error.message == (
        "The target replication factor of 5 cannot be reached because only 4 broker(s) "
        "are registered."
    )


@pytest.mark.parametrize("make", PLACERS, ids=IDS)
def test_all_fenced(make: Callable[[], ReplicaPlacer]) -> None:
    assert failure(make(), ALL_FENCED, 1).message == "All brokers are currently fenced."


@pytest.mark.parametrize("make", PLACERS, ids=IDS)
def test_checks_run_in_kafkas_order(make: Callable[[], ReplicaPlacer]) -> None:
    # Several conditions hold at once; the user sees the one Kafka checks first.
    assert failure(make(), ALL_FENCED, 0).message.startswith("Invalid replication factor 0")
    assert failure(make(), ALL_FENCED, 3).message == "All brokers are currently fenced."
    assert failure(make(), [], 3).message == "All brokers are currently fenced."


@pytest.mark.parametrize("make", PLACERS, ids=IDS)
def test_an_empty_request_is_still_validated(make: Callable[[], ReplicaPlacer]) -> None:
    placer = make()
    assert placer.place(PlacementSpec(4, 0, 2), view(grid(2, 2))) == []
    with pytest.raises(InvalidReplicationFactorError):
        placer.place(PlacementSpec(4, 0, 0), view(grid(2, 2)))


def test_error_codes_map_as_documented() -> None:
    invalid = InvalidReplicationFactorError("x")
    failed = PlacementError("y")
    assert invalid.code is ErrorCode.INVALID_REPLICATION_FACTOR
    assert failed.code is ErrorCode.REPLICA_PLACEMENT_FAILED
    assert isinstance(invalid, PlacementError)
    assert isinstance(failed, KafkaError)
    assert (failed.message, str(failed)) == ("y", "y")


def test_duplicate_broker_in_view_is_a_placement_failure() -> None:
    brokers = [UsableBroker(1, "a", False), UsableBroker(1, "b", False)]
    with pytest.raises(PlacementError, match="Broker 1 is listed more than once") as caught:
        StripedReplicaPlacer(seeded(1)).place(PlacementSpec(0, 1, 1), view(brokers))
    assert caught.value.code is ErrorCode.REPLICA_PLACEMENT_FAILED


def test_spec_rejects_negative_positions() -> None:
    with pytest.raises(ValueError, match="start_partition"):
        PlacementSpec(-1, 1, 1)
    with pytest.raises(ValueError, match="partition_count"):
        PlacementSpec(0, -1, 1)
