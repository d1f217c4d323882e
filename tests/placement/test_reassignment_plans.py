"""Properties of the replica-move planners over generated clusters: drains, balance plans and
``--generate`` proposals keep every partition's replication factor and rack spread."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from placement import StripedReplicaPlacer, UsableBroker
from placement.reassignment import (
    BalancePlan,
    DrainError,
    PartitionReplicas,
    PlanBroker,
    balance_plan,
    drain_plan,
    plan_document,
    propose_assignment,
    rack_spread,
    replica_bounds,
    topic_replication_factor,
)

RACKS = ("a", "b", "c", None)


@st.composite
def cluster_states(
    draw: st.DrawFn, *, with_racks: bool = True, all_active: bool = False
) -> tuple[list[PlanBroker], list[PartitionReplicas]]:
    broker_count = draw(st.integers(1, 12))
    brokers = [
        PlanBroker(
            id=broker_id,
            rack=draw(st.sampled_from(RACKS)) if with_racks else None,
            active=True if all_active else draw(st.booleans()),
        )
        for broker_id in range(1, broker_count + 1)
    ]
    # A partition may name a broker no longer registered (id 99): it holds replicas but has no
    # rack and can receive none.
    ids = [b.id for b in brokers] + ([99] if draw(st.booleans()) else [])
    partitions = []
    for topic in range(draw(st.integers(1, 4))):
        replication_factor = draw(st.integers(1, min(3, len(ids))))
        for partition in range(draw(st.integers(1, 12))):
            replicas = draw(st.permutations(ids))[:replication_factor]
            partitions.append(PartitionReplicas(f"t{topic}", partition, tuple(replicas)))
    return brokers, partitions


def apply(
    partitions: Sequence[PartitionReplicas], moved: dict[tuple[str, int], tuple[int, ...]]
) -> dict[tuple[str, int], tuple[int, ...]]:
    return {
        (p.topic, p.partition): moved.get((p.topic, p.partition), p.replicas) for p in partitions
    }


def racks(brokers: Sequence[PlanBroker]) -> dict[int, str | None]:
    return {b.id: b.rack for b in brokers}


# --- draining ----------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(state=cluster_states(), data=st.data())
def test_a_drain_leaves_no_replica_on_the_drained_brokers_and_keeps_each_partition_whole(
    state: tuple[list[PlanBroker], list[PartitionReplicas]], data: st.DataObject
) -> None:
    brokers, partitions = state
    drained = set(data.draw(st.sets(st.sampled_from([b.id for b in brokers]), max_size=2)))
    rack_of = racks(brokers)
    try:
        plan = drain_plan(partitions, brokers, drained)
    except DrainError:
        receivers = {b.id for b in brokers if b.active and b.id not in drained}
        # Refused only when some partition has more drained replicas than brokers to go to.
        assert any(
            len(drained & set(p.replicas)) > len(receivers - set(p.replicas)) for p in partitions
        )
        return
    receivers = {b.id for b in brokers if b.active and b.id not in drained}
    for p in partitions:
        key = (p.topic, p.partition)
        if drained.isdisjoint(p.replicas):
            assert key not in plan.reassignments
            continue
        target = plan.reassignments[key]
        assert len(target) == len(p.replicas)
        assert len(set(target)) == len(target)
        assert drained.isdisjoint(target)
        for before, after in zip(p.replicas, target, strict=True):
            if before in drained:
                assert after in receivers  # one move per drained replica, in its position
            else:
                assert after == before
        if key not in plan.spread_reduced:
            assert rack_spread(target, rack_of) >= rack_spread(p.replicas, rack_of)
    assert list(plan.reassignments) == sorted(plan.reassignments)


def test_a_drain_keeps_the_rack_and_spreads_the_replicas_evenly() -> None:
    brokers = [
        PlanBroker(1, "a", True),
        PlanBroker(2, "b", True),
        PlanBroker(3, "a", True),
        PlanBroker(4, "b", True),
        PlanBroker(5, "a", True),
    ]
    partitions = [PartitionReplicas("t", n, (1, 2)) for n in range(6)]
    plan = drain_plan(partitions, brokers, {1})
    # Every replacement is on rack a (3 or 5), alternating as each gets loaded.
    assert [plan.reassignments["t", n] for n in range(6)] == [(3, 2), (5, 2)] * 3
    assert plan.spread_reduced == ()


def test_a_drain_that_cannot_keep_the_spread_says_which_partitions_lost_it() -> None:
    brokers = [PlanBroker(1, "a", True), PlanBroker(2, "b", True), PlanBroker(3, "b", True)]
    plan = drain_plan([PartitionReplicas("t", 0, (1, 2))], brokers, {1})
    assert plan.reassignments == {("t", 0): (3, 2)}
    assert plan.spread_reduced == (("t", 0),)


# --- balancing ---------------------------------------------------------------------------------


def check_balance_invariants(
    plan: BalancePlan, brokers: Sequence[PlanBroker], partitions: Sequence[PartitionReplicas]
) -> None:
    rack_of = racks(brokers)
    active = {b.id for b in brokers if b.active}
    assert len(plan.moves) <= plan.max_moves
    final = apply(partitions, plan.reassignments)
    for p in partitions:
        target = final[p.topic, p.partition]
        assert len(target) == len(p.replicas)
        assert len(set(target)) == len(target)
        assert rack_spread(target, rack_of) >= rack_spread(p.replicas, rack_of)
        for before, after in zip(p.replicas, target, strict=True):
            assert after == before or after in active
    recounted: Counter[int] = Counter({b.id: 0 for b in brokers})
    for replicas in final.values():
        recounted.update(replicas)
    assert plan.after == dict(recounted)
    assert sum(plan.before.values()) == sum(plan.after.values())
    for broker_id in set(plan.before) - active:
        assert plan.after[broker_id] == plan.before[broker_id]  # nothing moves off or onto it
    moved_replicas = sum(
        len(set(final[key]) - set(p.replicas))
        for p in partitions
        for key in [(p.topic, p.partition)]
    )
    assert moved_replicas == len(plan.moves)


def excess_and_shortfall(plan: BalancePlan) -> tuple[int, int]:
    assert plan.lower is not None and plan.upper is not None
    excess = sum(max(0, plan.before[b] - plan.upper) for b in plan.active)
    shortfall = sum(max(0, plan.lower - plan.before[b]) for b in plan.active)
    return excess, shortfall


@settings(max_examples=300, deadline=None)
@given(
    state=cluster_states(),
    threshold=st.sampled_from([0, 5, 10, 25, 50]),
    max_moves=st.integers(0, 40),
)
def test_a_balance_plan_keeps_every_partition_whole_and_within_its_bound(
    state: tuple[list[PlanBroker], list[PartitionReplicas]], threshold: int, max_moves: int
) -> None:
    brokers, partitions = state
    plan = balance_plan(partitions, brokers, threshold_percent=threshold, max_moves=max_moves)
    check_balance_invariants(plan, brokers, partitions)
    if plan.stopped is None:
        assert plan.outside_after() == []
    if plan.active and plan.stopped is None:
        # Each move takes one replica off the excess or the shortfall, and off both unless
        # rack spread forbids it.
        excess, shortfall = excess_and_shortfall(plan)
        assert max(excess, shortfall) <= len(plan.moves) <= excess + shortfall
    if plan.active and plan.stopped == "max_moves":
        assert len(plan.moves) == max_moves


@settings(max_examples=300, deadline=None)
@given(
    state=cluster_states(with_racks=False, all_active=True),
    threshold=st.sampled_from([0, 10, 25]),
)
def test_without_racks_a_balance_plan_always_reaches_the_threshold(
    state: tuple[list[PlanBroker], list[PartitionReplicas]], threshold: int
) -> None:
    brokers, partitions = state
    plan = balance_plan(partitions, brokers, threshold_percent=threshold, max_moves=10_000)
    check_balance_invariants(plan, brokers, partitions)
    assert plan.stopped is None
    assert plan.outside_after() == []
    assert len(plan.moves) == max(excess_and_shortfall(plan))


@settings(max_examples=100, deadline=None)
@given(state=cluster_states(), seed=st.integers(0, 2**16))
def test_a_balance_plan_does_not_depend_on_the_order_of_its_inputs(
    state: tuple[list[PlanBroker], list[PartitionReplicas]], seed: int
) -> None:
    brokers, partitions = state
    shuffled_partitions, shuffled_brokers = list(partitions), list(brokers)
    random.Random(seed).shuffle(shuffled_partitions)
    random.Random(seed).shuffle(shuffled_brokers)
    first = balance_plan(partitions, brokers, threshold_percent=10)
    second = balance_plan(shuffled_partitions, shuffled_brokers, threshold_percent=10)
    assert first == second


def test_an_empty_broker_is_filled_from_the_fullest_ones() -> None:
    brokers = [PlanBroker(b, None, True) for b in range(1, 5)]
    partitions = [PartitionReplicas("t", n, (1 + n % 3, 1 + (n + 1) % 3)) for n in range(12)]
    plan = balance_plan(partitions, brokers, threshold_percent=10)
    assert plan.before == {1: 8, 2: 8, 3: 8, 4: 0}
    assert (plan.ideal, plan.lower, plan.upper) == (6.0, 5, 7)
    # Five moves, the fewest: broker 4 needs five to reach the lower bound, and the three
    # brokers above the upper bound give one each on the way.
    assert plan.after == {1: 6, 2: 6, 3: 7, 4: 5}
    assert len(plan.moves) == 5
    assert {move.target for move in plan.moves} == {4}
    assert plan.outside_before() == [1, 2, 3, 4] and plan.outside_after() == []


def test_a_plan_stops_at_its_bound_on_moves() -> None:
    brokers = [PlanBroker(b, None, True) for b in range(1, 5)]
    partitions = [PartitionReplicas("t", n, (1 + n % 3,)) for n in range(30)]
    plan = balance_plan(partitions, brokers, threshold_percent=0, max_moves=3)
    assert len(plan.moves) == 3
    assert plan.stopped == "max_moves"
    assert plan.after == {1: 9, 2: 9, 3: 9, 4: 3}  # 7 or 8 each would be within


def test_the_bounds_round_outward_and_exactly() -> None:
    assert replica_bounds(10, 10) == (9, 11)
    assert replica_bounds(3.3, 10) == (2, 4)
    assert replica_bounds(6, 0) == (6, 6)


def test_a_topics_replication_factor_is_its_most_common_replica_count() -> None:
    assert topic_replication_factor([3, 3, 2, 5]) == 3
    assert topic_replication_factor([2, 3]) == 3
    assert topic_replication_factor([]) == 0


# --- --generate --------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(
    broker_ids=st.sets(st.integers(0, 20), min_size=3, max_size=8),
    sizes=st.lists(st.tuples(st.integers(1, 10), st.integers(1, 3)), min_size=1, max_size=3),
)
def test_generate_places_every_partition_of_each_topic_with_its_replication_factor(
    broker_ids: set[int], sizes: list[tuple[int, int]]
) -> None:
    usable = [UsableBroker(b, "r" + str(b % 2), False) for b in sorted(broker_ids)]
    topics = {f"t{n}": [[0] * rf for _ in range(count)] for n, (count, rf) in enumerate(sizes)}
    proposed = propose_assignment(StripedReplicaPlacer(random.Random(1)), topics, usable)
    for name, partitions in topics.items():
        for partition, replicas in enumerate(partitions):
            target = proposed[name, partition]
            assert len(target) == len(replicas)
            assert len(set(target)) == len(target)
            assert set(target) <= broker_ids
    assert len(proposed) == sum(count for count, _ in sizes)


def test_the_plan_document_is_kafkas_reassignment_json() -> None:
    assert plan_document({("b", 1): (3, 1), ("a", 0): (2,)}) == {
        "version": 1,
        "partitions": [
            {"topic": "a", "partition": 0, "replicas": [2], "log_dirs": ["any"]},
            {"topic": "b", "partition": 1, "replicas": [3, 1], "log_dirs": ["any", "any"]},
        ],
    }
