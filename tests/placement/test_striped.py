"""The striped placers on hand-made clusters: the stripe, the reshuffle, Kafka's weaknesses."""

from __future__ import annotations

from collections import Counter

from placement import (
    ClusterDescriber,
    ClusterView,
    KafkaStripedReplicaPlacer,
    PlacementSpec,
    ReplicaPlacer,
    StripedReplicaPlacer,
    UsableBroker,
)
from placement.checks import leader_counts, replica_counts, spread
from tests.placement.clusters import grid, place, seeded, view


def test_kafka_stripes_racks() -> None:
    # One broker per rack: the rack pattern is A,B,C / B,C,A / C,A,B from a random start.
    brokers = grid(3, 1)
    assignment = place(KafkaStripedReplicaPlacer(seeded(7)), brokers, 3, 3)
    starts = [replicas[0] for replicas in assignment]
    assert sorted(starts) == [0, 1, 2]
    for replicas in assignment:
        first = replicas[0]
        assert replicas == [first, (first + 1) % 3, (first + 2) % 3]


def test_kafka_reshuffles_after_a_round_of_unfenced_brokers() -> None:
    brokers = grid(3, 3)
    seen_rounds = set()
    for seed in range(20):
        assignment = place(KafkaStripedReplicaPlacer(seeded(seed)), brokers, 18, 3)
        first_round, second_round = assignment[:9], assignment[9:]
        seen_rounds.add(first_round == second_round)
    assert False in seen_rounds, "the second round should not always repeat the first"


def test_kafka_piles_leaders_on_one_broker_per_rack() -> None:
    # KAFKA-15354: with RF = racks, every rack's list advances once per partition, so a rack
    # leads every third partition with the same broker. Kept to show what the default fixes.
    brokers = grid(3, 3)
    for seed in range(10):
        leaders = leader_counts(place(KafkaStripedReplicaPlacer(seeded(seed)), brokers, 9, 3))
        assert sorted(leaders.values()) == [3, 3, 3]
        default = place(StripedReplicaPlacer(seeded(seed)), brokers, 9, 3)
        assert sorted(leader_counts(default).values()) == [1] * 9


def test_kafka_restarts_on_create_partitions() -> None:
    # KAFKA-14437: each call starts at a random point, so an extension can skew the topic.
    brokers = grid(1, 4)
    skewed = 0
    for seed in range(20):
        rng = seeded(seed)
        first = place(KafkaStripedReplicaPlacer(rng), brokers, 2, 1)
        more = place(KafkaStripedReplicaPlacer(rng), brokers, 2, 1, existing=first)
        skewed += spread(leader_counts(first + more), range(4)) > 1
    assert skewed > 0


def test_leader_is_never_fenced_even_where_the_stripe_points_at_fenced_racks() -> None:
    brokers = [
        UsableBroker(1, "a", True),
        UsableBroker(2, "a", True),
        UsableBroker(3, "b", False),
        UsableBroker(4, "c", True),
    ]
    rack = {broker.id: broker.rack for broker in brokers}
    for factory in (KafkaStripedReplicaPlacer, StripedReplicaPlacer):
        for replicas in place(factory(seeded(3)), brokers, 10, 3):
            assert replicas[0] == 3
            # Rack spread outranks avoiding fenced brokers: all three racks appear.
            assert {rack[broker] for broker in replicas} == {"a", "b", "c"}


def test_default_uses_fenced_brokers_only_when_needed() -> None:
    brokers = [UsableBroker(index, None, index >= 4) for index in range(8)]
    assignment = place(StripedReplicaPlacer(seeded(5)), brokers, 40, 4)
    assert all(max(replicas) < 4 for replicas in assignment)
    assignment = place(StripedReplicaPlacer(seeded(5)), brokers, 40, 6)
    fenced_used = Counter(broker for replicas in assignment for broker in replicas if broker >= 4)
    assert all(count == 20 for count in fenced_used.values()), fenced_used


def test_default_balances_when_racks_differ_in_size() -> None:
    brokers = [UsableBroker(index, "big" if index < 6 else "small", False) for index in range(8)]
    assignment = place(StripedReplicaPlacer(seeded(9)), brokers, 80, 2)
    assert spread(leader_counts(assignment), range(8)) <= 1
    replicas = replica_counts(assignment)
    # Every partition needs the small rack, so its two brokers hold 40 each; the big rack
    # shares the other 80 replicas evenly.
    assert [replicas[index] for index in (6, 7)] == [40, 40]
    assert spread(replicas, range(6)) <= 1


def test_default_does_not_repeat_the_same_replica_sets_forever() -> None:
    assignment = place(StripedReplicaPlacer(seeded(2)), grid(3, 4), 120, 3)
    assert len({frozenset(replicas) for replicas in assignment}) > 30


def test_simple_placer_needs_only_usable_brokers() -> None:
    class FirstBrokers:
        def place(self, spec: PlacementSpec, cluster: ClusterDescriber) -> list[list[int]]:
            ids = sorted(broker.id for broker in cluster.usable_brokers())
            return [ids[: spec.replication_factor] for _ in range(spec.partition_count)]

    placer: ReplicaPlacer = FirstBrokers()
    cluster: ClusterView = view(grid(2, 2))
    assert placer.place(PlacementSpec(0, 2, 2), cluster) == [[0, 1], [0, 1]]
    assert isinstance(placer, ReplicaPlacer)


def test_result_is_a_fresh_list_of_lists() -> None:
    spec = PlacementSpec(0, 3, 2)
    for factory in (KafkaStripedReplicaPlacer, StripedReplicaPlacer):
        assignment = factory(seeded(1)).place(spec, view(grid(2, 2)))
        assert all(type(replicas) is list for replicas in assignment)


def test_default_keeps_the_cluster_balanced_over_many_small_topics() -> None:
    # Each topic is balanced on its own; the cluster-wide counts in the view break the ties
    # that small topics leave, so the sum over topics stays even too. Kafka's does not.
    brokers = grid(3, 3)
    worst = {"default": 0, "kafka": 0}
    for seed in range(10):
        for name, placer in (
            ("default", StripedReplicaPlacer(seeded(seed))),
            ("kafka", KafkaStripedReplicaPlacer(seeded(seed))),
        ):
            sizes = seeded(seed + 100)
            leaders: Counter[int] = Counter()
            replicas: Counter[int] = Counter()
            for _ in range(100):
                spec = PlacementSpec(0, sizes.randint(1, 4), 3)
                for partition in placer.place(spec, view(brokers, (), replicas, leaders)):
                    leaders[partition[0]] += 1
                    replicas.update(partition)
            worst[name] = max(worst[name], spread(leaders, range(9)), spread(replicas, range(9)))
    assert worst["default"] <= 4
    assert worst["kafka"] > 10
