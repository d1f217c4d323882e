"""AlterPartition: every row of the validation table, in Kafka's order, and the applied change."""

from __future__ import annotations

import pytest

from raftmeta.common.brokers import (
    AlterPartitionRequest,
    AlterPartitionResult,
    IsrMember,
    PartitionIsrChange,
)
from raftmeta.common.topics import NewTopic
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.records import LeaderRecoveryState, PartitionChangeRecord, TopicId
from tests.controller.harness import Harness, run_async


async def setup() -> tuple[Harness, dict[int, int], TopicId]:
    """Brokers 1-4 (4 fenced); topic t, partition 0 on (1, 2, 3) led by 1."""
    h = Harness()
    await h.start()
    epochs = await h.add_brokers(3)
    epochs[4] = await h.register(4)
    [created] = await h.run(
        h.controller.create_topics([NewTopic("t", assignments={0: (1, 2, 3), 1: (2, 3, 4)})])
    )
    return h, epochs, created.topic_id


def members(*broker_ids: int) -> tuple[IsrMember, ...]:
    return tuple(IsrMember(broker_id) for broker_id in broker_ids)


async def alter(
    h: Harness,
    sender: int,
    sender_epoch: int,
    topic_id: TopicId,
    change: PartitionIsrChange,
) -> AlterPartitionResult:
    [result] = await h.run(
        h.controller.alter_partition(
            AlterPartitionRequest(sender, sender_epoch, topic_id, (change,))
        )
    )
    return result


@run_async
async def test_shrink_and_expand_isr() -> None:
    h, epochs, topic_id = await setup()
    task = await h.submit(
        h.controller.alter_partition(
            AlterPartitionRequest(
                1, epochs[1], topic_id, (PartitionIsrChange(0, 0, members(1, 2), 0),)
            )
        )
    )
    assert h.log.uncommitted_records() == [PartitionChangeRecord(0, topic_id, isr=(1, 2))]
    h.log.commit()
    [result] = await task
    assert result == AlterPartitionResult(
        0, leader=1, leader_epoch=0, isr=(1, 2), partition_epoch=1
    )
    with_epochs = (IsrMember(1, epochs[1]), IsrMember(2, epochs[2]), IsrMember(3, epochs[3]))
    result = await alter(h, 1, epochs[1], topic_id, PartitionIsrChange(0, 0, with_epochs, 1))
    assert result.error.ok and result.isr == (1, 2, 3) and result.partition_epoch == 2
    image = h.log.replay_all()
    partition = image.partition(topic_id, 0)
    assert partition is not None and partition.isr == (1, 2, 3) and partition.partition_epoch == 2
    await h.stop()


@run_async
async def test_no_change_writes_nothing() -> None:
    h, epochs, topic_id = await setup()
    before = len(h.log.batches)
    result = await alter(h, 1, epochs[1], topic_id, PartitionIsrChange(0, 0, members(1, 2, 3), 0))
    assert result.error.ok and result.partition_epoch == 0
    assert len(h.log.batches) == before
    await h.stop()


@pytest.mark.parametrize(
    ("sender", "change", "code"),
    [
        (1, PartitionIsrChange(7, 0, members(1), 0), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        (1, PartitionIsrChange(0, 1, members(1), 0), ErrorCode.NOT_CONTROLLER),
        (1, PartitionIsrChange(0, 0, members(1), 1), ErrorCode.NOT_CONTROLLER),
        (2, PartitionIsrChange(0, 0, members(1, 2), 0), ErrorCode.INVALID_REQUEST),
        (1, PartitionIsrChange(0, 0, members(1, 5), 0), ErrorCode.INVALID_REQUEST),
        (1, PartitionIsrChange(0, 0, members(2, 3), 0), ErrorCode.INVALID_REQUEST),
        (1, PartitionIsrChange(0, 0, members(1, 1), 0), ErrorCode.INVALID_REQUEST),
        (
            1,
            PartitionIsrChange(0, 0, members(1), 0, int(LeaderRecoveryState.RECOVERING)),
            ErrorCode.INVALID_REQUEST,
        ),
        (
            1,
            PartitionIsrChange(0, 0, (IsrMember(1), IsrMember(2, 999)), 0),
            ErrorCode.INELIGIBLE_REPLICA,
        ),
    ],
)
def test_validation(sender: int, change: PartitionIsrChange, code: ErrorCode) -> None:
    @run_async
    async def body() -> None:
        h, epochs, topic_id = await setup()
        before = len(h.log.batches)
        result = await alter(h, sender, epochs[sender], topic_id, change)
        assert result.error.code is code, result.error.message
        assert result.error.message
        assert len(h.log.batches) == before
        await h.stop()

    body()


@run_async
async def test_fenced_or_shutting_down_replica_is_ineligible() -> None:
    h, epochs, topic_id = await setup()
    # Partition 1 is led by 2 on (2, 3, 4); broker 4 is fenced, so its ISR is (2, 3).
    result = await alter(h, 2, epochs[2], topic_id, PartitionIsrChange(1, 0, members(2, 3, 4), 0))
    assert result.error.code is ErrorCode.INELIGIBLE_REPLICA
    await h.stop()


@run_async
async def test_older_epochs_are_fenced_or_invalid_update() -> None:
    h, epochs, topic_id = await setup()
    # Fence and unfence broker 1: partition 0 moves to 2 (leader epoch 1), 1 leaves the ISR.
    await h.heartbeat(1, epochs[1], want_fence=True)
    await h.heartbeat(1, epochs[1])
    partition = h.controller.committed_image.partition(topic_id, 0)
    assert partition is not None and partition.leader == 2
    assert (partition.leader_epoch, partition.partition_epoch) == (1, 1)
    fenced = await alter(h, 2, epochs[2], topic_id, PartitionIsrChange(0, 0, members(2, 3), 0))
    assert fenced.error.code is ErrorCode.FENCED_LEADER_EPOCH
    # Grow the ISR once, then reuse the old partition epoch.
    grown = await alter(h, 2, epochs[2], topic_id, PartitionIsrChange(0, 1, members(2, 3, 1), 1))
    assert grown.error.ok and grown.partition_epoch == 2
    stale = await alter(h, 2, epochs[2], topic_id, PartitionIsrChange(0, 1, members(2, 3), 1))
    assert stale.error.code is ErrorCode.INVALID_UPDATE_VERSION
    await h.stop()


@run_async
async def test_stale_sender_epoch_fails_the_request() -> None:
    h, epochs, topic_id = await setup()
    with pytest.raises(KafkaError) as raised:
        await alter(h, 1, epochs[1] + 100, topic_id, PartitionIsrChange(0, 0, members(1), 0))
    assert raised.value.code is ErrorCode.STALE_BROKER_EPOCH
    await h.stop()
