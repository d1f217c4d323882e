"""Automatic leader rebalance: the per-broker imbalance formula, the threshold, the cap and
the catch-up gate."""

from __future__ import annotations

from fractions import Fraction

import pytest

from elections import leader_imbalance, preferred_rebalance
from raftmeta.image import MetadataImage, PartitionKey
from raftmeta.records import NO_LEADER, PartitionChangeRecord
from tests.elections.clusters import ACTIVE, FENCED, Part, cluster, replayed, topic_id

T = topic_id("t")


def ten_partitions_preferring_1(led_elsewhere: int) -> MetadataImage:
    """Broker 1 is the preferred leader of 10 partitions and leads all but ``led_elsewhere``;
    broker 2 prefers and leads 4."""
    parts = [Part((1, 2), leader=2 if index < led_elsewhere else 1) for index in range(10)]
    parts += [Part((2, 1))] * 4
    return cluster({1: ACTIVE, 2: ACTIVE}, {"t": parts})


def test_imbalance_is_the_share_of_preferred_partitions_a_broker_does_not_lead() -> None:
    image = cluster(
        {1: ACTIVE, 2: ACTIVE, 3: FENCED},
        {
            "t": [
                Part((1, 2), leader=2),
                Part((1, 2)),
                Part((1, 2), isr=(2,), leader=NO_LEADER),
                Part((2, 1)),
                Part((3, 2), leader=2),
            ]
        },
    )
    assert leader_imbalance(image) == {1: Fraction(2, 3), 2: Fraction(0), 3: Fraction(1)}


@pytest.mark.parametrize(
    ("led_elsewhere", "threshold", "moves"),
    [
        (1, 10, 0),  # 10% is not above 10%
        (2, 10, 2),  # 20% is
        (1, 0, 1),  # 0 moves everything movable, as KRaft does
        (10, 100, 0),  # 100% never triggers
        (10, 99, 10),
        (0, 0, 0),
    ],
)
def test_only_brokers_strictly_above_the_threshold_get_leaderships_back(
    led_elsewhere: int, threshold: int, moves: int
) -> None:
    image = ten_partitions_preferring_1(led_elsewhere)
    run = preferred_rebalance(image, threshold_percent=threshold)
    assert run.records == tuple(
        PartitionChangeRecord(partition_id, T, leader=1) for partition_id in range(moves)
    )
    assert not run.capped


def test_a_rebalance_replays_to_a_balanced_image_with_leader_epochs_bumped() -> None:
    image = ten_partitions_preferring_1(5)
    after = replayed(image, preferred_rebalance(image, threshold_percent=10).records)
    assert leader_imbalance(after) == {1: 0, 2: 0}
    for partition_id in range(5):
        before_reg, after_reg = image.partition(T, partition_id), after.partition(T, partition_id)
        assert before_reg is not None and after_reg is not None
        assert after_reg.leader_epoch == before_reg.leader_epoch + 1
        assert after_reg.isr == before_reg.isr
    assert preferred_rebalance(after, threshold_percent=0).records == ()


def test_the_cap_limits_one_run_and_says_more_remain() -> None:
    image = ten_partitions_preferring_1(10)
    first = preferred_rebalance(image, threshold_percent=0, max_elections=4)
    assert [record.partition_id for record in first.records] == [0, 1, 2, 3]
    assert first.capped
    rest = preferred_rebalance(replayed(image, first.records), threshold_percent=0, max_elections=6)
    assert [record.partition_id for record in rest.records] == [4, 5, 6, 7, 8, 9]
    assert not rest.capped


def test_the_default_cap_is_a_thousand() -> None:
    parts = [Part((1, 2), leader=2)] * 1_001
    run = preferred_rebalance(cluster({1: ACTIVE, 2: ACTIVE}, {"t": parts}), threshold_percent=10)
    assert (len(run.records), run.capped) == (1_000, True)


def test_a_partition_moves_only_to_a_preferred_replica_in_the_isr_that_can_lead() -> None:
    image = cluster(
        {1: ACTIVE, 2: ACTIVE, 3: FENCED},
        {
            "t": [
                Part((1, 2), isr=(2,), leader=2),  # preferred out of the ISR
                Part((3, 2), leader=2),  # preferred fenced
                Part((4, 2), leader=2),  # preferred not registered
                Part((3, 1, 2), isr=(1, 2), leader=NO_LEADER),  # not a rebalance's job
                Part((1, 2), isr=(1, 2), leader=NO_LEADER),  # leaderless, preferred ready
            ]
        },
    )
    run = preferred_rebalance(image, threshold_percent=0)
    assert run.records == (PartitionChangeRecord(4, T, leader=1),)


def test_the_catch_up_gate_holds_back_a_broker_that_is_not_ready() -> None:
    image = cluster(
        {1: ACTIVE, 2: ACTIVE, 3: ACTIVE},
        {"t": [Part((1, 3), leader=3), Part((2, 3), leader=3), Part((1, 3), leader=3)]},
    )
    asked: list[tuple[int, PartitionKey]] = []

    def caught_up(broker_id: int, key: PartitionKey) -> bool:
        asked.append((broker_id, key))
        return broker_id == 2 or key[1] == 2

    run = preferred_rebalance(image, threshold_percent=0, eligible=caught_up)
    assert run.records == (
        PartitionChangeRecord(1, T, leader=2),
        PartitionChangeRecord(2, T, leader=1),
    )
    assert asked == [(1, (T, 0)), (2, (T, 1)), (1, (T, 2))]
    assert not run.capped  # gated partitions wait for a later run, not a capped rerun


def test_gated_partitions_do_not_use_up_the_cap() -> None:
    image = ten_partitions_preferring_1(10)
    run = preferred_rebalance(
        image, threshold_percent=0, max_elections=2, eligible=lambda _b, key: key[1] >= 8
    )
    assert [record.partition_id for record in run.records] == [8, 9]
    assert not run.capped


@pytest.mark.parametrize("bad", [-1, 101])
def test_the_threshold_is_a_percentage(bad: int) -> None:
    with pytest.raises(ValueError):
        preferred_rebalance(ten_partitions_preferring_1(1), threshold_percent=bad)


def test_the_cap_must_be_positive() -> None:
    with pytest.raises(ValueError):
        preferred_rebalance(ten_partitions_preferring_1(1), threshold_percent=0, max_elections=0)
