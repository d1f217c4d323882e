"""Partition reassignment (KIP-455) in the controller: start, AlterPartition catch-up, the
completing record, cancellation, the refusals, fencing, failover, snapshots and deletion."""

from __future__ import annotations

from raftmeta.common.brokers import (
    AlterPartitionRequest,
    AlterPartitionResult,
    IsrMember,
    PartitionIsrChange,
)
from raftmeta.common.elections import TopicPartition
from raftmeta.common.reassignments import (
    PartitionReassignment,
    ReassignmentResult,
    ReassignmentTarget,
)
from raftmeta.common.topics import NewTopic
from raftmeta.controller.reassignment import ReassignmentControlManager
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage, PartitionRegistration
from raftmeta.records import PartitionChangeRecord, TopicId
from tests.controller.harness import Harness, run_async
from tests.controller.test_elr_controller import setup as elr_setup

T0 = TopicPartition("t", 0)


async def setup(brokers: int = 5) -> tuple[Harness, dict[int, int], TopicId]:
    """Brokers 1..``brokers`` unfenced; topic t, partition 0 on (1, 2, 3) led by 1."""
    h = Harness()
    await h.start()
    epochs = await h.add_brokers(brokers)
    [created] = await h.run(h.controller.create_topics([NewTopic("t", assignments={0: (1, 2, 3)})]))
    return h, epochs, created.topic_id


async def reassign(
    h: Harness, *targets: tuple[TopicPartition, tuple[int, ...] | None], allow_rf: bool = True
) -> list[ReassignmentResult]:
    return await h.run(
        h.controller.alter_partition_reassignments(
            [ReassignmentTarget(p, r) for p, r in targets],
            allow_replication_factor_change=allow_rf,
        )
    )


def partition(h: Harness, topic_id: TopicId, number: int = 0) -> PartitionRegistration:
    found = h.log.replay_all().partition(topic_id, number)
    assert found is not None
    return found


async def expand(
    h: Harness, epochs: dict[int, int], topic_id: TopicId, *isr: int
) -> AlterPartitionResult:
    """The partition leader's AlterPartition asking for ``isr``."""
    state = partition(h, topic_id)
    [result] = await h.run(
        h.controller.alter_partition(
            AlterPartitionRequest(
                state.leader,
                epochs[state.leader],
                topic_id,
                (
                    PartitionIsrChange(
                        0,
                        state.leader_epoch,
                        tuple(IsrMember(b, epochs[b]) for b in isr),
                        state.partition_epoch,
                    ),
                ),
            )
        )
    )
    return result


async def listed(h: Harness) -> dict[TopicPartition, PartitionReassignment]:
    return await h.controller.list_partition_reassignments(None)


@run_async
async def test_a_move_starts_with_the_union_and_leaves_isr_and_leader_alone() -> None:
    h, _epochs, topic_id = await setup()
    before = partition(h, topic_id)
    task = await h.submit(
        h.controller.alter_partition_reassignments([ReassignmentTarget(T0, (4, 2, 5))])
    )
    assert h.log.uncommitted_records() == [
        PartitionChangeRecord(
            0,
            topic_id,
            replicas=(4, 2, 5, 1, 3),
            removing_replicas=(1, 3),
            adding_replicas=(4, 5),
        )
    ]
    h.log.commit()
    assert [r.error.code for r in await task] == [ErrorCode.NONE]
    after = partition(h, topic_id)
    assert after.isr == (1, 2, 3) and after.leader == 1
    assert after.leader_epoch == before.leader_epoch
    assert await listed(h) == {T0: PartitionReassignment((4, 2, 5, 1, 3), (4, 5), (1, 3))}
    await h.stop()


@run_async
async def test_the_last_target_joining_the_isr_completes_the_move_in_one_record() -> None:
    h, epochs, topic_id = await setup()
    await reassign(h, (T0, (4, 2, 5)))
    result = await expand(h, epochs, topic_id, 1, 2, 3, 4)
    assert result.error.ok
    state = partition(h, topic_id)
    assert state.replicas == (4, 2, 5, 1, 3) and state.adding_replicas == (4, 5)
    epoch_before = state.leader_epoch
    batches_before = len(h.log.batches)
    result = await expand(h, epochs, topic_id, 1, 2, 3, 4, 5)
    assert len(h.log.batches) == batches_before + 1
    [record] = h.log.records(h.log.batches[-1])
    assert isinstance(record, PartitionChangeRecord)
    assert record.replicas == (4, 2, 5) and record.isr == (2, 4, 5)
    assert record.adding_replicas == () and record.removing_replicas == ()
    state = partition(h, topic_id)
    assert state.replicas == (4, 2, 5) and state.isr == (2, 4, 5)
    assert state.leader == 4, "the removed leader is replaced by the first target in the ISR"
    assert state.leader_epoch == epoch_before + 1
    assert result.error.code is ErrorCode.NEW_LEADER_ELECTED and result.leader == 4
    assert await listed(h) == {}
    await h.stop()


@run_async
async def test_completion_keeps_a_leader_in_the_target_and_bumps_its_epoch() -> None:
    h, epochs, topic_id = await setup()
    await reassign(h, (T0, (1, 2, 4)))
    epoch_before = partition(h, topic_id).leader_epoch
    result = await expand(h, epochs, topic_id, 1, 2, 3, 4)
    assert result.error.ok and result.leader == 1
    state = partition(h, topic_id)
    assert state.replicas == (1, 2, 4) and state.isr == (1, 2, 4) and state.leader == 1
    assert state.leader_epoch == epoch_before + 1, "replicas left: followers must notice"
    await h.stop()


@run_async
async def test_adding_replicas_only_complete_without_an_epoch_bump() -> None:
    h, epochs, topic_id = await setup()
    await reassign(h, (T0, (1, 2, 3, 4)))
    epoch_before = partition(h, topic_id).leader_epoch
    await expand(h, epochs, topic_id, 1, 2, 3, 4)
    state = partition(h, topic_id)
    assert state.replicas == (1, 2, 3, 4) and state.adding_replicas == ()
    assert state.leader_epoch == epoch_before
    await h.stop()


@run_async
async def test_a_target_already_in_sync_completes_at_once() -> None:
    h, _epochs, topic_id = await setup()
    await reassign(h, (T0, (2, 3)))
    state = partition(h, topic_id)
    assert state.replicas == (2, 3) and state.isr == (2, 3) and state.leader == 2
    assert state.adding_replicas == () and state.removing_replicas == ()
    assert await listed(h) == {}
    await h.stop()


@run_async
async def test_an_adding_replica_does_not_lead_until_it_is_in_sync() -> None:
    h, _epochs, topic_id = await setup()
    await reassign(h, (T0, (4, 5, 2)))
    await h.heartbeat(1, _epochs[1], want_fence=True)
    state = partition(h, topic_id)
    assert state.replicas[0] == 4 and state.leader == 2, "4 comes first but is not in sync"
    await h.stop()


@run_async
async def test_cancel_goes_back_to_the_original_replicas() -> None:
    h, epochs, topic_id = await setup()
    await reassign(h, (T0, (4, 5, 2)))
    await expand(h, epochs, topic_id, 1, 2, 3, 4)
    epoch_before = partition(h, topic_id).leader_epoch
    [result] = await reassign(h, (T0, None))
    assert result.error.ok
    state = partition(h, topic_id)
    # Kafka's revert keeps the order the move gave the original replicas (target first).
    assert state.replicas == (2, 1, 3) and state.isr == (1, 2, 3) and state.leader == 1
    assert state.adding_replicas == () and state.removing_replicas == ()
    assert state.leader_epoch == epoch_before + 1
    [again] = await reassign(h, (T0, None))
    assert again.error.code is ErrorCode.NO_REASSIGNMENT_IN_PROGRESS
    await h.stop()


@run_async
async def test_a_new_target_starts_again_from_the_original_replicas() -> None:
    h, _epochs, topic_id = await setup()
    await reassign(h, (T0, (4, 2, 3)))
    await reassign(h, (T0, (1, 2, 5)))
    state = partition(h, topic_id)
    assert state.replicas == (1, 2, 5, 3)
    assert state.adding_replicas == (5,) and state.removing_replicas == (3,)
    await h.stop()


@run_async
async def test_refusals_carry_kafkas_codes() -> None:
    h, _epochs, _topic_id = await setup()
    results = await reassign(
        h,
        (TopicPartition("nope", 0), (1, 2)),
        (TopicPartition("t", 7), (1, 2)),
        (T0, ()),
        (T0, (1, 2, 2)),
        (T0, (1, 2, 9)),
    )
    assert [r.error.code for r in results] == [
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
    ]
    assert [r.partition for r in results][2:] == [T0, T0, T0]
    [changed_rf] = await reassign(h, (T0, (1, 2)), allow_rf=False)
    assert changed_rf.error.code is ErrorCode.INVALID_REPLICATION_FACTOR
    [same_rf] = await reassign(h, (T0, (1, 2, 4)), allow_rf=False)
    assert same_rf.error.ok
    await h.stop()


@run_async
async def test_a_fenced_target_is_accepted_and_stalls_the_move() -> None:
    h, epochs, topic_id = await setup()
    await h.heartbeat(5, epochs[5], want_fence=True)
    [result] = await reassign(h, (T0, (1, 2, 5)))
    assert result.error.ok
    refused = await expand(h, epochs, topic_id, 1, 2, 3, 5)
    assert refused.error.code is ErrorCode.INELIGIBLE_REPLICA
    assert await listed(h) == {T0: PartitionReassignment((1, 2, 5, 3), (5,), (3,))}
    await h.heartbeat(5, epochs[5])  # unfenced again
    done = await expand(h, epochs, topic_id, 1, 2, 3, 5)
    assert done.error.ok
    assert partition(h, topic_id).replicas == (1, 2, 5) and await listed(h) == {}
    await h.stop()


@run_async
async def test_fencing_an_adding_replica_in_sync_stalls_without_losing_the_move() -> None:
    h, epochs, topic_id = await setup()
    await reassign(h, (T0, (1, 4, 5)))
    await expand(h, epochs, topic_id, 1, 2, 3, 4)
    await h.heartbeat(4, epochs[4], want_fence=True)
    state = partition(h, topic_id)
    assert 4 not in state.isr and state.adding_replicas == (4, 5)
    assert await listed(h) == {T0: PartitionReassignment((1, 4, 5, 2, 3), (4, 5), (2, 3))}
    await h.stop()


@run_async
async def test_a_move_survives_controller_failover() -> None:
    h, epochs, topic_id = await setup()
    await reassign(h, (T0, (4, 2, 5)))
    committed = h.log.batches[: h.log.committed_count]
    await h.stop()
    standby = Harness()
    standby.controller.start()
    standby.log.batches = list(committed)
    standby.log.become_leader()
    assert await listed(standby) == {T0: PartitionReassignment((4, 2, 5, 1, 3), (4, 5), (1, 3))}
    result = await expand(standby, epochs, topic_id, 1, 2, 3, 4, 5)
    assert result.error.code is ErrorCode.NEW_LEADER_ELECTED
    assert partition(standby, topic_id).replicas == (4, 2, 5)
    await standby.stop()


@run_async
async def test_a_move_survives_a_snapshot() -> None:
    h, _epochs, _topic_id = await setup()
    await reassign(h, (T0, (4, 2, 5)))
    image = h.log.replay_all()
    reloaded = MetadataImage.from_records(image.to_records(), image.offset)
    manager = ReassignmentControlManager(h.controller.settings)
    assert manager.list_partition_reassignments(reloaded, None).response == {
        T0: PartitionReassignment((4, 2, 5, 1, 3), (4, 5), (1, 3))
    }
    await h.stop()


@run_async
async def test_deleting_the_topic_ends_its_moves() -> None:
    h, _epochs, _topic_id = await setup()
    await reassign(h, (T0, (4, 2, 5)))
    await h.run(h.controller.delete_topics(["t"]))
    assert await listed(h) == {}
    [result] = await reassign(h, (T0, None))
    assert result.error.code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    await h.stop()


@run_async
async def test_listing_named_partitions_skips_unknown_and_idle_ones() -> None:
    h, _epochs, _topic_id = await setup()
    await h.run(h.controller.create_topics([NewTopic("u", assignments={0: (1, 2), 1: (2, 3)})]))
    await reassign(h, (TopicPartition("u", 1), (3, 4)))
    found = await h.controller.list_partition_reassignments(
        [T0, TopicPartition("u", 1), TopicPartition("gone", 0), TopicPartition("u", 9)]
    )
    assert found == {TopicPartition("u", 1): PartitionReassignment((3, 4, 2), (4,), (2,))}
    await h.stop()


@run_async
async def test_with_elr_on_no_list_names_a_replica_the_move_removed() -> None:
    h, _epochs, topic_id = await elr_setup(elr=True)  # min ISR 2, so one replica is below it
    [result] = await reassign(h, (T0, (1,)))
    assert result.error.ok
    state = partition(h, topic_id)
    assert state.replicas == (1,) and state.isr == (1,) and state.leader == 1
    assert state.elr == () and state.last_known_elr == ()
    await h.stop()
