"""``MetadataReplica`` alone: which partitions a committed batch changed, and which of them
this broker started or stopped leading."""

from __future__ import annotations

from collections.abc import Sequence

from raftmeta.broker import LeadershipChange, MetadataReplica, PartitionChange
from raftmeta.raft.batch import Batch, make_batch
from raftmeta.records import (
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RemoveTopicRecord,
    TopicRecord,
    encode_record,
)

ME = 1
TOPIC = bytes(range(16))


class Log:
    """Feeds a replica batches at consecutive offsets and keeps what it reported."""

    def __init__(self) -> None:
        self.replica = MetadataReplica(ME, lambda: None)
        self.offset = 0
        self.changes: list[tuple[int, list[PartitionChange]]] = []
        self.leadership: list[LeadershipChange] = []
        self.replica.on_partition_change(self.changed)
        self.replica.on_leadership_change(self.leadership.append)

    def changed(self, offset: int, changes: Sequence[PartitionChange]) -> None:
        self.changes.append((offset, list(changes)))

    def commit(self, *records: Record, control: bool = False) -> Batch:
        batch = make_batch(self.offset, 1, [encode_record(r) for r in records], is_control=control)
        self.offset = batch.next_offset
        self.replica.handle_commit([batch])
        return batch


def test_partition_changes_and_leadership_gained_and_lost() -> None:
    log = Log()
    log.commit(
        TopicRecord("t", TOPIC),
        PartitionRecord(0, TOPIC, (1, 2), (1, 2), leader=1),
        PartitionRecord(1, TOPIC, (2, 1), (2, 1), leader=2),
    )
    ((offset, created),) = log.changes
    assert offset == 2 and log.replica.metadata_offset == 2
    assert [(c.topic_name, c.partition_id, c.before) for c in created] == [
        ("t", 0, None),
        ("t", 1, None),
    ]
    (gained,) = log.leadership
    assert [c.partition_id for c in gained.gained] == [0] and not gained.lost

    # A NoOp changes nothing and reports nothing, but moves the offset.
    log.commit(NoOpRecord())
    assert len(log.changes) == 1 and log.replica.metadata_offset == 3

    # Leadership of partition 0 moves to 2; partition 1's ISR shrinks.
    log.commit(
        PartitionChangeRecord(0, TOPIC, isr=(2,), leader=2),
        PartitionChangeRecord(1, TOPIC, isr=(2,)),
    )
    offset, moved = log.changes[-1]
    assert offset == 5 and [c.partition_id for c in moved] == [0, 1]
    assert moved[0].before is not None and moved[0].before.leader == ME
    assert moved[0].after is not None and moved[0].after.leader == 2
    lost = log.leadership[-1]
    assert [c.partition_id for c in lost.lost] == [0] and not lost.gained

    # Back to this broker, then the topic goes: the removal reports both partitions gone.
    log.commit(PartitionChangeRecord(0, TOPIC, isr=(1, 2), leader=1))
    assert [c.partition_id for c in log.leadership[-1].gained] == [0]
    log.commit(RemoveTopicRecord(TOPIC))
    offset, removed = log.changes[-1]
    assert [(c.topic_name, c.partition_id, c.after) for c in removed] == [
        ("t", 0, None),
        ("t", 1, None),
    ]
    assert [c.partition_id for c in log.leadership[-1].lost] == [0]
    assert log.replica.image.topic(TOPIC) is None


def test_control_batches_and_replayed_batches_move_only_the_offset() -> None:
    log = Log()
    first = log.commit(TopicRecord("t", TOPIC))
    log.commit(NoOpRecord(), control=True)
    assert log.replica.metadata_offset == 1 and log.replica.image.offset == 0
    version = log.replica.content_version
    # An observer restarted on its own log hands over batches already applied: skipped.
    log.replica.handle_commit([first])
    assert log.replica.content_version == version and log.replica.metadata_offset == 1


def test_a_failing_subscriber_does_not_stop_the_replay_and_can_unsubscribe() -> None:
    log = Log()

    def broken(offset: int, changes: Sequence[PartitionChange]) -> None:
        raise RuntimeError("subscriber bug")

    unsubscribe = log.replica.on_partition_change(broken)
    log.commit(TopicRecord("t", TOPIC), PartitionRecord(0, TOPIC, (1,), (1,), leader=1))
    assert log.replica.image.partition(TOPIC, 0) is not None
    assert len(log.changes) == 1 and len(log.leadership) == 1
    unsubscribe()
    log.commit(PartitionChangeRecord(0, TOPIC, leader=1))
    assert len(log.changes) == 2
