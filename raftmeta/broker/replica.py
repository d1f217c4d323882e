"""A broker's replica of the metadata image, built from the committed log it follows.

The observer's ``RaftClient`` hands this listener committed batches and snapshots; it replays
them into a ``MetadataImage`` and works out, per batch, which partitions changed and which of
them this broker started or stopped leading. Those are the two things a broker acts on: a
partition change means reconciling the local replica, a leadership change means starting or
stopping to serve writes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from raftmeta.image import MetadataImage, PartitionKey, PartitionRegistration, load_snapshot_image
from raftmeta.raft.batch import Batch
from raftmeta.records import (
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicId,
    decode_record,
)
from raftmeta.storage.snapshots import SnapshotReader

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PartitionChange:
    """One partition's state before and after a committed batch (None: it did not exist)."""

    topic_id: TopicId
    partition_id: int
    topic_name: str
    before: PartitionRegistration | None
    after: PartitionRegistration | None

    @property
    def key(self) -> PartitionKey:
        return (self.topic_id, self.partition_id)


@dataclass(frozen=True, slots=True)
class LeadershipChange:
    """Partitions this broker started (``gained``) or stopped (``lost``) leading at ``offset``."""

    offset: int
    gained: tuple[PartitionChange, ...]
    lost: tuple[PartitionChange, ...]


PartitionListener = Callable[[int, Sequence[PartitionChange]], None]
"""Called with the offset of the last record applied and the partitions that changed."""
LeadershipListener = Callable[[LeadershipChange], None]


def _leader(registration: PartitionRegistration | None) -> int | None:
    return None if registration is None else registration.leader


class MetadataReplica:
    """The ``Listener`` of a broker's observer node: the image plus change notifications."""

    def __init__(self, broker_id: int, on_update: Callable[[], None]) -> None:
        self.broker_id = broker_id
        self.image = MetadataImage()
        self.committed_end = 0
        """Every record below this offset, control records included, has been handed here."""
        self.content_version = 0
        """Bumped whenever a batch may have changed the image's content (not by NoOps), so a
        digest need only be recomputed when it moves."""
        self.leader: tuple[int | None, int] = (None, -1)
        self._on_update = on_update
        self._partition_listeners: list[PartitionListener] = []
        self._leadership_listeners: list[LeadershipListener] = []

    @property
    def metadata_offset(self) -> int:
        """The offset of the last committed record handed to this replica (-1: none)."""
        return self.committed_end - 1

    # --- subscriptions -------------------------------------------------------------------

    def on_partition_change(self, callback: PartitionListener) -> Callable[[], None]:
        self._partition_listeners.append(callback)
        return lambda: self._partition_listeners.remove(callback)

    def on_leadership_change(self, callback: LeadershipListener) -> Callable[[], None]:
        self._leadership_listeners.append(callback)
        return lambda: self._leadership_listeners.remove(callback)

    # --- Listener ------------------------------------------------------------------------

    def handle_commit(self, batches: Sequence[Batch]) -> None:
        for batch in batches:
            if batch.next_offset <= self.committed_end:
                continue
            if not batch.is_control:
                self._apply(batch)
            self.committed_end = batch.next_offset
        self._on_update()

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        self.prepare_snapshot(reader)()

    def prepare_snapshot(self, reader: SnapshotReader) -> Callable[[], None]:
        """Builds the snapshot's image and the partition changes against the image in place;
        returns the install, which swaps the image in and tells the subscribers.

        The Raft client runs this on a worker thread (seconds for a large image) while the
        event loop goes on. Only this listener's ``handle_*`` calls change ``image`` and
        ``committed_end``, and the node makes none until the install has run, so the worker
        reads them unchanged while the loop may read them too; it writes only new objects.
        """
        end_offset = reader.snapshot_id.end_offset
        if end_offset <= self.committed_end:
            # The observer restarted on its own directory: the image is already past it.
            return _nothing_to_install
        previous = self.image
        image = load_snapshot_image(reader)
        changes = self._snapshot_changes(previous, image)
        leadership = self._leadership(end_offset - 1, changes)

        def install() -> None:
            if end_offset <= self.committed_end:
                return
            self.committed_end = end_offset
            self.content_version += 1
            if self.image is previous:
                self.image = image
                self._notify(end_offset - 1, changes, leadership)
            else:
                # The node changes nothing in between; should anything else have moved the
                # image, the changes are worked out again against the one in place.
                before, self.image = self.image, image
                self._notify(end_offset - 1, self._snapshot_changes(before, image))
            self._on_update()

        return install

    def _snapshot_changes(
        self, previous: MetadataImage, image: MetadataImage
    ) -> list[PartitionChange]:
        keys = {key for key, _ in previous.partitions()}
        keys.update(key for key, _ in image.partitions())
        return self._changes(keys, previous, image=image)

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        self.leader = (leader_id, epoch)
        self._on_update()

    # --- replay --------------------------------------------------------------------------

    def _apply(self, batch: Batch) -> None:
        records = [decode_record(data) for data in batch.records()]
        image = self.image
        touched: set[PartitionKey] = set()
        names: dict[TopicId, str] = {}
        for record in records:
            if isinstance(record, PartitionRecord | PartitionChangeRecord):
                touched.add((record.topic_id, record.partition_id))
            elif isinstance(record, RemoveTopicRecord):
                topic = image.topic(record.topic_id)
                if topic is not None:
                    names[record.topic_id] = topic.name
                    touched.update((record.topic_id, p) for p in topic.partitions)
        before = {key: image.partition(*key) for key in touched}
        image.apply_batch(records, batch.base_offset)
        if any(not isinstance(record, NoOpRecord) for record in records):
            self.content_version += 1
        if touched:
            self._notify(batch.last_offset, self._changes(touched, None, before, names))

    def _changes(
        self,
        keys: Iterable[PartitionKey],
        previous: MetadataImage | None,
        before: dict[PartitionKey, PartitionRegistration | None] | None = None,
        names: dict[TopicId, str] | None = None,
        *,
        image: MetadataImage | None = None,
    ) -> list[PartitionChange]:
        """The partitions among ``keys`` whose registration differs from before (in
        ``previous`` or ``before``) to now (in ``image``, by default the one in place)."""
        if image is None:
            image = self.image
        changes: list[PartitionChange] = []
        for key in sorted(keys):
            topic_id, partition_id = key
            if before is not None:
                old = before.get(key)
            else:
                assert previous is not None
                old = previous.partition(topic_id, partition_id)
            new = image.partition(topic_id, partition_id)
            if old == new:
                continue
            topic = image.topic(topic_id)
            if topic is None and previous is not None:
                topic = previous.topic(topic_id)
            name = topic.name if topic is not None else (names or {}).get(topic_id, "")
            changes.append(PartitionChange(topic_id, partition_id, name, old, new))
        return changes

    def _notify(
        self,
        offset: int,
        changes: list[PartitionChange],
        leadership: LeadershipChange | None = None,
    ) -> None:
        """Tells the subscribers; ``leadership`` is ``changes``' leadership change when it was
        worked out already (off the loop, for a snapshot)."""
        if not changes:
            return
        for partition_listener in list(self._partition_listeners):
            _call_safely(partition_listener, offset, changes)
        if leadership is None:
            leadership = self._leadership(offset, changes)
        if leadership.gained or leadership.lost:
            for leadership_listener in list(self._leadership_listeners):
                _call_safely(leadership_listener, leadership)

    def _leadership(self, offset: int, changes: Sequence[PartitionChange]) -> LeadershipChange:
        me = self.broker_id
        gained = tuple(c for c in changes if _leader(c.after) == me and _leader(c.before) != me)
        lost = tuple(c for c in changes if _leader(c.before) == me and _leader(c.after) != me)
        return LeadershipChange(offset, gained, lost)


def _nothing_to_install() -> None:
    pass


def _call_safely(callback: Callable[..., None], *args: object) -> None:
    """A subscriber's bug must not stop the replay (which would stop the observer)."""
    try:
        callback(*args)
    except Exception:
        log.exception("a metadata subscriber failed")
