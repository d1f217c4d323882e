"""Properties every partition placed by the striped placers must have, over generated clusters."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placement import (
    EmptiestBrokerPlacer,
    KafkaStripedReplicaPlacer,
    ReplicaPlacer,
    StripedReplicaPlacer,
    UsableBroker,
)
from placement.checks import leader_counts, replica_counts, spread
from tests.placement.clusters import clusters, homogeneous_clusters, place, seeded

PlacerFactory = Callable[[int], ReplicaPlacer]

ALL_STRIPED: list[PlacerFactory] = [
    lambda seed: KafkaStripedReplicaPlacer(seeded(seed)),
    lambda seed: StripedReplicaPlacer(seeded(seed)),
    lambda seed: EmptiestBrokerPlacer(seeded(seed)),
]
IDS = ["kafka", "default", "emptiest"]


@st.composite
def requests(
    draw: st.DrawFn, brokers_strategy: st.SearchStrategy[list[UsableBroker]]
) -> tuple[list[UsableBroker], int, int, int]:
    brokers = draw(brokers_strategy)
    replication_factor = draw(st.integers(1, len(brokers)))
    partitions = draw(st.integers(0, 80))
    seed = draw(st.integers(0, 2**32 - 1))
    return brokers, replication_factor, partitions, seed


def racks_of(brokers: Sequence[UsableBroker]) -> dict[int, str | None]:
    return {broker.id: broker.rack for broker in brokers}


@pytest.mark.parametrize("factory", ALL_STRIPED, ids=IDS)
@settings(max_examples=120, deadline=None)
@given(request=requests(clusters()))
def test_every_partition_is_well_formed(
    factory: PlacerFactory, request: tuple[list[UsableBroker], int, int, int]
) -> None:
    brokers, replication_factor, partitions, seed = request
    by_id = {broker.id: broker for broker in brokers}
    rack = racks_of(brokers)
    rack_count = len(set(rack.values()))
    assignment = place(factory(seed), brokers, partitions, replication_factor)
    assert len(assignment) == partitions
    for replicas in assignment:
        assert len(replicas) == replication_factor
        assert len(set(replicas)) == replication_factor, "a broker holds two replicas"
        assert all(broker_id in by_id for broker_id in replicas)
        assert not by_id[replicas[0]].fenced, "a fenced broker would lead"
        used_racks = [rack[broker_id] for broker_id in replicas]
        assert len(set(used_racks)) == min(replication_factor, rack_count), "racks left unused"
        # Fenced brokers last: a rack gives a fenced broker only once its unfenced ones are in.
        for broker_id in replicas:
            if by_id[broker_id].fenced:
                same_rack_unfenced = {
                    b.id for b in brokers if b.rack == rack[broker_id] and not b.fenced
                }
                assert same_rack_unfenced <= set(replicas)


@pytest.mark.parametrize("factory", ALL_STRIPED, ids=IDS)
@settings(max_examples=60, deadline=None)
@given(request=requests(clusters()))
def test_racks_share_each_partition_evenly_when_they_can(
    factory: PlacerFactory, request: tuple[list[UsableBroker], int, int, int]
) -> None:
    brokers, replication_factor, partitions, seed = request
    rack = racks_of(brokers)
    sizes = {name: list(rack.values()).count(name) for name in set(rack.values())}
    fair = math.ceil(replication_factor / len(sizes))
    if min(sizes.values()) < fair:
        return  # a small rack runs out; Kafka calls that layout a user error
    for replicas in place(factory(seed), brokers, partitions, replication_factor):
        used = [rack[broker_id] for broker_id in replicas]
        assert max(used.count(name) for name in set(used)) <= fair


@pytest.mark.parametrize("factory", ALL_STRIPED, ids=IDS)
@settings(max_examples=40, deadline=None)
@given(request=requests(clusters()))
def test_same_seed_same_assignment(
    factory: PlacerFactory, request: tuple[list[UsableBroker], int, int, int]
) -> None:
    brokers, replication_factor, partitions, seed = request
    first = place(factory(seed), brokers, partitions, replication_factor)
    again = place(factory(seed), list(reversed(brokers)), partitions, replication_factor)
    assert first == again, "the order brokers are listed in must not matter either"


@settings(max_examples=150, deadline=None)
@given(request=requests(clusters()))
def test_default_leaders_per_unfenced_broker_within_one(
    request: tuple[list[UsableBroker], int, int, int],
) -> None:
    brokers, replication_factor, partitions, seed = request
    unfenced = [broker.id for broker in brokers if not broker.fenced]
    assignment = place(StripedReplicaPlacer(seeded(seed)), brokers, partitions, replication_factor)
    # Every prefix is itself a placement of fewer partitions (the placer is sequential), so
    # checking prefixes checks every smaller partition count too.
    for end in range(1, partitions + 1):
        assert spread(leader_counts(assignment[:end]), unfenced) <= 1


@settings(max_examples=150, deadline=None)
@given(request=requests(homogeneous_clusters()))
def test_default_homogeneous_racks_balance_leaders_and_replicas(
    request: tuple[list[UsableBroker], int, int, int],
) -> None:
    brokers, replication_factor, partitions, seed = request
    ids = [broker.id for broker in brokers]
    assignment = place(StripedReplicaPlacer(seeded(seed)), brokers, partitions, replication_factor)
    for end in range(1, partitions + 1):
        assert spread(leader_counts(assignment[:end]), ids) <= 1
        assert spread(replica_counts(assignment[:end]), ids) <= 1
