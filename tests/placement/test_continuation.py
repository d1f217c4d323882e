"""CreatePartitions continues the topic's layout (the fix for KAFKA-14437)."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from placement import StripedReplicaPlacer, UsableBroker
from placement.checks import leader_counts, replica_counts, spread
from tests.placement.clusters import clusters, grid, homogeneous_clusters, place, seeded


@settings(max_examples=100, deadline=None)
@given(
    brokers=homogeneous_clusters(),
    sizes=st.lists(st.integers(1, 40), min_size=2, max_size=4),
    rf_fraction=st.floats(0, 1),
    seed=st.integers(0, 2**32 - 1),
)
@example(
    # Found by Hypothesis: the third replica of the third partition went to the rack that had
    # not led yet, so its broker had to take a fourth replica with the last leadership.
    brokers=[
        UsableBroker(0, None, False),
        UsableBroker(1, "rack-1", False),
        UsableBroker(2, None, False),
        UsableBroker(3, "rack-1", False),
    ],
    sizes=[1, 1, 2],
    rf_fraction=0.75,
    seed=0,
)
def test_extensions_end_as_balanced_as_one_creation(
    brokers: list[UsableBroker], sizes: list[int], rf_fraction: float, seed: int
) -> None:
    ids = [broker.id for broker in brokers]
    replication_factor = 1 + int(rf_fraction * (len(brokers) - 1))
    rng = seeded(seed)
    topic: list[list[int]] = []
    for size in sizes:
        topic += place(StripedReplicaPlacer(rng), brokers, size, replication_factor, topic)
    at_once = place(StripedReplicaPlacer(seeded(seed)), brokers, sum(sizes), replication_factor)
    for measure in (leader_counts, replica_counts):
        assert spread(measure(topic), ids) <= max(1, spread(measure(at_once), ids))


@settings(max_examples=60, deadline=None)
@given(
    brokers=clusters(),
    first=st.integers(1, 30),
    second=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_extension_keeps_leaders_within_one_on_any_cluster(
    brokers: list[UsableBroker], first: int, second: int, seed: int
) -> None:
    unfenced = [broker.id for broker in brokers if not broker.fenced]
    rng = seeded(seed)
    topic = place(StripedReplicaPlacer(rng), brokers, first, 1)
    topic += place(StripedReplicaPlacer(rng), brokers, second, 1, topic)
    assert spread(leader_counts(topic), unfenced) <= 1


def test_extension_evens_out_a_skewed_topic() -> None:
    # A topic laid out badly (all leaders on broker 0) is corrected by its extensions.
    brokers = grid(2, 3)
    existing = [[0, 1], [0, 3], [0, 5]]
    added = place(StripedReplicaPlacer(seeded(4)), brokers, 15, 2, existing)
    leaders = leader_counts(existing + added)
    assert 0 not in leader_counts(added)
    assert spread(leaders, range(6)) == 0


def test_replicas_on_departed_brokers_are_ignored() -> None:
    brokers = grid(2, 2)
    existing = [[7, 0], [8, 1]]  # brokers 7 and 8 are gone
    added = place(StripedReplicaPlacer(seeded(4)), brokers, 6, 2, existing)
    assert all(broker in range(4) for replicas in added for broker in replicas)
    assert spread(leader_counts(existing + added), range(4)) <= 1
