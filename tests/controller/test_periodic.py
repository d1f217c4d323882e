"""Periodic elections run from ``tick``: preferred-leader rebalance and unclean elections."""

from __future__ import annotations

from raftmeta.common.brokers import AlterPartitionRequest, IsrMember, PartitionIsrChange
from raftmeta.common.configs import AlterConfig, AlterConfigOp, ConfigResourceRef
from raftmeta.common.topics import NewTopic
from raftmeta.records import ConfigResourceType, LeaderRecoveryState, PartitionChangeRecord, TopicId
from tests.controller.harness import Harness, run_async

LONG = 10**9
"""A session timeout these tests never reach: they step the clock by minutes."""


async def moved_to_second_replica(h: Harness) -> tuple[dict[int, int], TopicId]:
    """Brokers 1 and 2; partition t-0 on (1, 2) now led by 2 with both in the ISR again."""
    epochs = await h.add_brokers(2)
    [created] = await h.run(h.controller.create_topics([NewTopic("t", assignments={0: (1, 2)})]))
    await h.heartbeat(1, epochs[1], want_fence=True)
    await h.heartbeat(1, epochs[1])
    partition = h.controller.committed_image.partition(created.topic_id, 0)
    assert partition is not None and partition.leader == 2
    change = PartitionIsrChange(
        0, partition.leader_epoch, (IsrMember(2), IsrMember(1)), partition.partition_epoch
    )
    await h.run(
        h.controller.alter_partition(
            AlterPartitionRequest(2, epochs[2], created.topic_id, (change,))
        )
    )
    return epochs, created.topic_id


@run_async
async def test_rebalance_waits_for_interval_and_catch_up() -> None:
    h = Harness(
        leader_imbalance_check_interval_seconds=1,
        leader_imbalance_catch_up_ms=10_000,
        broker_session_timeout_ms=LONG,
    )
    await h.start()
    _, topic_id = await moved_to_second_replica(h)
    h.clock.advance(1_000)
    await h.controller.tick()
    assert not any(
        isinstance(record, PartitionChangeRecord) for record in h.log.uncommitted_records()
    ), "broker 1 was unfenced too recently to lead again"
    h.log.commit()
    h.clock.advance(10_000)
    await h.controller.tick()
    assert PartitionChangeRecord(0, topic_id, leader=1) in h.log.uncommitted_records()
    h.log.commit()
    partition = h.log.replay_all().partition(topic_id, 0)
    assert partition is not None and partition.leader == 1
    await h.stop()


@run_async
async def test_rebalance_can_be_switched_off() -> None:
    h = Harness(
        auto_leader_rebalance_enable=False,
        leader_imbalance_check_interval_seconds=1,
        broker_session_timeout_ms=LONG,
    )
    await h.start()
    _, topic_id = await moved_to_second_replica(h)
    h.clock.advance(60_000)
    await h.controller.tick()
    h.log.commit()
    partition = h.log.replay_all().partition(topic_id, 0)
    assert partition is not None and partition.leader == 2
    await h.stop()


@run_async
async def test_periodic_unclean_election_for_topics_that_allow_it() -> None:
    h = Harness(unclean_leader_election_interval_ms=5_000, broker_session_timeout_ms=LONG)
    await h.start()
    epochs = await h.add_brokers(2)
    [created] = await h.run(h.controller.create_topics([NewTopic("t", assignments={0: (1, 2)})]))
    shrink = PartitionIsrChange(0, 0, (IsrMember(1),), 0)
    await h.run(
        h.controller.alter_partition(
            AlterPartitionRequest(1, epochs[1], created.topic_id, (shrink,))
        )
    )
    await h.heartbeat(1, epochs[1], want_fence=True)
    partition = h.controller.committed_image.partition(created.topic_id, 0)
    assert partition is not None and partition.leader == -1
    h.clock.advance(5_000)
    await h.controller.tick()
    h.log.commit()
    partition = h.controller.committed_image.partition(created.topic_id, 0)
    assert partition is not None and partition.leader == -1, "the topic does not allow it yet"
    await h.run(
        h.controller.incremental_alter_configs(
            {
                ConfigResourceRef(int(ConfigResourceType.TOPIC), "t"): [
                    AlterConfig("unclean.leader.election.enable", AlterConfigOp.SET, "true")
                ]
            }
        )
    )
    h.clock.advance(5_000)
    await h.controller.tick()
    h.log.commit()
    partition = h.log.replay_all().partition(created.topic_id, 0)
    assert partition is not None and partition.leader == 2 and partition.isr == (2,)
    assert partition.leader_recovery_state == LeaderRecoveryState.RECOVERING
    await h.stop()
