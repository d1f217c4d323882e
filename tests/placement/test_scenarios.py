"""The KIP-660 scenarios: cordoned brokers, emptiest brokers first, capacity limits."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from placement import (
    CapacityAwarePlacer,
    ClusterView,
    CordonedBrokerPlacer,
    EmptiestBrokerPlacer,
    PlacementError,
    PlacementSpec,
    PlacerConfigError,
    StripedReplicaPlacer,
    UsableBroker,
)
from placement.checks import leader_counts, replica_counts, spread
from raftmeta.errors import ErrorCode
from tests.placement.clusters import clusters, grid, place, seeded, view

# Cordon


@settings(max_examples=60, deadline=None)
@given(brokers=clusters(), data=st.data())
def test_cordoned_brokers_get_nothing(brokers: list[UsableBroker], data: st.DataObject) -> None:
    ids = [broker.id for broker in brokers]
    cordoned = data.draw(st.sets(st.sampled_from(ids), max_size=len(ids) - 1))
    open_brokers = [broker for broker in brokers if broker.id not in cordoned]
    if all(broker.fenced for broker in open_brokers):
        return
    replication_factor = data.draw(st.integers(1, len(open_brokers)))
    placer = CordonedBrokerPlacer(StripedReplicaPlacer(seeded(1)), cordoned)
    assignment = place(placer, brokers, 20, replication_factor)
    assert not {broker for replicas in assignment for broker in replicas} & cordoned


def test_cordon_reads_config_and_delegates_to_the_default() -> None:
    placer = CordonedBrokerPlacer()
    placer.configure(
        {"replica.placer.cordoned.brokers": " 1, 3,,", "replica.placer.random.seed": "5"}
    )
    assert placer.cordoned == {1, 3}
    again = CordonedBrokerPlacer()
    again.configure({"replica.placer.cordoned.brokers": "1,3", "replica.placer.random.seed": "5"})
    brokers = grid(2, 3)
    assert place(placer, brokers, 10, 2) == place(again, brokers, 10, 2)


def test_cordon_failure_names_the_cordon() -> None:
    placer = CordonedBrokerPlacer(cordoned=[2, 3])
    with pytest.raises(PlacementError) as caught:
        place(placer, grid(2, 2), 1, 3)
    assert caught.value.code is ErrorCode.REPLICA_PLACEMENT_FAILED
    assert caught.value.message == (
        "The target replication factor of 3 cannot be reached because only 2 broker(s) are "
        "registered and not cordoned (cordoned: 2, 3)."
    )
    brokers = [UsableBroker(0, None, True), UsableBroker(1, None, False)]
    with pytest.raises(PlacementError, match="not cordoned are currently fenced"):
        place(CordonedBrokerPlacer(cordoned=[1]), brokers, 1, 1)


def test_cordon_with_configured_delegate() -> None:
    placer = CordonedBrokerPlacer()
    placer.configure(
        {
            "replica.placer.cordoned.brokers": "0",
            "replica.placer.cordon.delegate.class.name": "placement.emptiest:EmptiestBrokerPlacer",
        }
    )
    brokers = grid(1, 3)
    counts = {0: 0, 1: 10, 2: 0}
    assignment = placer.place(PlacementSpec(0, 2, 1), view(brokers, replica_counts=counts))
    assert assignment == [[2], [2]] or leader_counts(assignment)[2] >= 1
    assert all(replicas != [0] for replicas in assignment)


def test_cordon_as_its_own_delegate_does_not_recurse() -> None:
    placer = CordonedBrokerPlacer()
    placer.configure(
        {
            "replica.placer.cordoned.brokers": "0",
            "replica.placer.cordon.delegate.class.name": "placement.cordon.CordonedBrokerPlacer",
        }
    )
    assert all(0 not in replicas for replicas in place(placer, grid(1, 3), 5, 2))


def test_cordon_rejects_a_delegate_that_ignores_it() -> None:
    class Stubborn:
        def place(self, spec: PlacementSpec, cluster: ClusterView) -> list[list[int]]:
            return [[0]] * spec.partition_count

    with pytest.raises(PlacementError, match=r"partition 4 on cordoned broker\(s\) \[0\]"):
        CordonedBrokerPlacer(Stubborn(), cordoned=[0]).place(
            PlacementSpec(4, 1, 1), view(grid(1, 2))
        )


def test_cordon_config_errors() -> None:
    with pytest.raises(PlacerConfigError, match=r"replica.placer.cordoned.brokers: 'x'"):
        CordonedBrokerPlacer().configure({"replica.placer.cordoned.brokers": "1,x"})


# Emptiest broker


def test_new_broker_is_filled_first() -> None:
    brokers = grid(3, 2)  # 0..5, racks r0 r1 r2
    brokers.append(UsableBroker(6, "r0", False))  # just added, empty
    replicas = {broker.id: 30 for broker in brokers[:6]}
    leaders = {broker.id: 10 for broker in brokers[:6]}
    cluster = view(brokers, replica_counts=replicas, leader_counts=leaders)
    assignment = EmptiestBrokerPlacer(seeded(1)).place(PlacementSpec(0, 12, 3), cluster)
    assert all(6 in partition for partition in assignment)
    # Broker 6 takes leaders until it is level with the others, then shares them.
    leaders_after = leader_counts(assignment)
    leaders_after.update(leaders)
    assert spread(leaders_after, range(7)) <= 1
    for partition in assignment:
        assert len({broker % 3 if broker < 6 else 0 for broker in partition}) == 3


@settings(max_examples=60, deadline=None)
@given(brokers=clusters(), data=st.data())
def test_emptiest_water_fills(brokers: list[UsableBroker], data: st.DataObject) -> None:
    # One rack, so that rack spread does not compete with emptiness for the follower slots.
    brokers = [UsableBroker(broker.id, None, broker.fenced) for broker in brokers]
    ids = [broker.id for broker in brokers]
    unfenced = [broker.id for broker in brokers if not broker.fenced]
    if len(ids) < 2:
        return
    partitions = data.draw(st.integers(1, 30))
    empty = data.draw(st.sampled_from(unfenced))
    replicas = {broker_id: data.draw(st.integers(partitions, 50)) for broker_id in ids}
    replicas[empty] = 0
    leaders = {broker_id: data.draw(st.integers(0, 5)) for broker_id in unfenced}
    replication_factor = data.draw(st.integers(2, len(ids)))
    cluster = view(brokers, replica_counts=replicas, leader_counts=leaders)
    assignment = EmptiestBrokerPlacer(seeded(1)).place(
        PlacementSpec(0, partitions, replication_factor), cluster
    )
    # A broker far below the rest is in every new partition, as leader or first follower...
    assert all(empty in partition for partition in assignment)
    # ...and leadership only ever goes to the least-leading unfenced broker.
    leaders_after = leader_counts(assignment)
    leaders_after.update(leaders)
    assert spread(leaders_after, unfenced) <= max(1, spread(Counter(leaders), unfenced))


# Capacity


def capacity(config: Mapping[str, str]) -> CapacityAwarePlacer:
    placer = CapacityAwarePlacer(seeded(1))
    placer.configure(config)
    return placer


def test_brokers_near_capacity_are_skipped() -> None:
    placer = capacity(
        {
            "replica.placer.capacity.max.replicas": "100",
            "replica.placer.capacity.broker.3.max.replicas": "200",
        }
    )
    assert [placer.limit(broker_id) for broker_id in (0, 3)] == [90, 180]
    brokers = grid(2, 2)
    counts = {0: 90, 1: 85, 2: 10, 3: 170}
    assignment = placer.place(PlacementSpec(0, 12, 2), view(brokers, replica_counts=counts))
    added = replica_counts(assignment)
    assert added[0] == 0
    assert added[1] <= 5
    assert added[3] <= 10
    for replicas in assignment:
        assert len({broker % 2 for broker in replicas}) == 2


def test_capacity_counts_what_the_call_places() -> None:
    placer = capacity(
        {
            "replica.placer.capacity.max.replicas": "10",
            "replica.placer.capacity.headroom.percent": "0",
        }
    )
    brokers = grid(1, 4)
    assignment = placer.place(PlacementSpec(0, 20, 2), view(brokers))
    assert all(count == 10 for count in replica_counts(assignment).values())
    with pytest.raises(PlacementError) as caught:
        placer.place(PlacementSpec(0, 21, 2), view(brokers))
    assert caught.value.code is ErrorCode.REPLICA_PLACEMENT_FAILED
    assert caught.value.message == (
        "Cannot place partition 20: no unfenced broker is below 100% of their replica capacity."
    )


def test_capacity_failure_for_followers() -> None:
    placer = capacity({"replica.placer.capacity.max.replicas": "10"})
    counts = {0: 0, 1: 9, 2: 9}
    with pytest.raises(PlacementError) as caught:
        placer.place(PlacementSpec(3, 1, 2), view(grid(1, 3), replica_counts=counts))
    assert caught.value.message == (
        "Cannot place partition 3 with 2 replicas: only 1 broker(s) are below 90% of their "
        "replica capacity."
    )


def test_capacity_keeps_default_balance_below_the_line() -> None:
    placer = capacity({"replica.placer.capacity.max.replicas": "1000"})
    assignment = place(placer, grid(3, 3), 45, 3)
    assert spread(leader_counts(assignment), range(9)) == 0
    assert spread(replica_counts(assignment), range(9)) == 0


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({}, "replica.placer.capacity.max.replicas or"),
        ({"replica.placer.capacity.max.replicas": "many"}, "'many' is not an integer"),
        ({"replica.placer.capacity.max.replicas": "0"}, "must be at least 1"),
        ({"replica.placer.capacity.broker.x.max.replicas": "5"}, "'x' is not a broker id"),
        (
            {
                "replica.placer.capacity.max.replicas": "5",
                "replica.placer.capacity.headroom.percent": "100",
            },
            "must be at most 99",
        ),
    ],
)
def test_capacity_config_errors(config: dict[str, str], message: str) -> None:
    with pytest.raises(PlacerConfigError, match=message):
        CapacityAwarePlacer().configure(config)
