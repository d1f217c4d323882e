"""A snapshot loaded into a new image in bulk: the load every node makes at start-up and on each
snapshot it installs, and what decides how soon a restarted controller can serve again.

Replaying record by record (:meth:`MetadataImage.from_records`) builds a ``PartitionRecord``
per partition only to copy its fields into a registration, and indexes each partition as it
comes, asking what it held before. Here each batch's records are unpacked in one msgpack pass,
a partition's registration is built straight from its array, and the indexes are derived once
from the finished partitions (:meth:`TopicsImage.rebuild_indexes`). Every other record is
decoded and replayed as usual. The image is the one the record-by-record replay gives.

Whatever this load does not expect (a malformed record, a replay error, a corrupt body) makes it
start over record by record, which names the problem exactly as it always has: the bulk path
never has to tell a bad snapshot apart from an unusual one.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import compress
from operator import eq
from typing import Any

from raftmeta.image.errors import ReplayError
from raftmeta.image.metadata import MetadataImage
from raftmeta.image.partitions import FULL_RECOVERY_STATES, PartitionKey, PartitionRegistration
from raftmeta.image.snapshot_content import collector_paused
from raftmeta.image.topics import TopicsImage, share_id
from raftmeta.records import (
    NO_LEADER,
    PARTITION_RECORD_TYPE,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    decode_record,
    record_from_array,
    unfrozen_twin,
    unpack_records,
)
from raftmeta.storage.snapshots import SnapshotReader

log = logging.getLogger(__name__)

_INDEXED_REPLAY = frozenset((PartitionRecord, PartitionChangeRecord, RemoveTopicRecord))
"""Record types whose replay reads or keeps the topics' indexes. Snapshots hold none but the
PartitionRecords of the current version, which are placed in bulk; an older PartitionRecord (or
a change, in a snapshot written by other means) has the partitions placed so far indexed first,
and the rest of the load replays record by record."""

_PARTITION_FIELDS = (
    "partition_id",
    "topic_id",
    "replicas",
    "isr",
    "removing_replicas",
    "adding_replicas",
    "leader",
    "leader_recovery_state",
    "leader_epoch",
    "partition_epoch",
    "eligible_leader_replicas",
    "last_known_elr",
)
"""The order the bulk path reads a PartitionRecord's array in: the record's own field order."""
if tuple(field.name for field in dataclasses.fields(PartitionRecord)) != _PARTITION_FIELDS:
    raise TypeError("PartitionRecord's fields changed: the bulk snapshot load reads them by place")


_REGISTRATION_TWIN: Any = unfrozen_twin(PartitionRegistration)


class _NotInBulk(Exception):
    """The bulk path met something it leaves to the record-by-record load."""


def load_snapshot_image(reader: SnapshotReader) -> MetadataImage:
    """The image ``reader``'s snapshot holds, at the last offset it covers.

    Raises what :meth:`MetadataImage.from_records` raises for the snapshot's decoded records
    (``RecordDecodeError``, ``ReplayError``) or the reader for its body
    (``SnapshotCorruptError``).
    """
    offset = reader.snapshot_id.end_offset - 1
    try:
        return _load_in_bulk(reader, offset)
    except Exception as error:
        # Any failure is retried record by record. Only its description is kept: the
        # traceback holds the half-built image.
        bulk_failure = repr(error)
    image = MetadataImage.from_records((decode_record(data) for data in reader.records()), offset)
    log.warning(
        "snapshot %s: the bulk load failed (%s) where replaying its records did not",
        reader.snapshot_id.file_stem(),
        bulk_failure,
    )
    return image


def _load_in_bulk(reader: SnapshotReader, offset: int) -> MetadataImage:
    image = MetadataImage()
    topics = image._topics
    topics_by_id = topics._topics
    replay_by_type = image._replay_by_type
    partition_version = PartitionRecord.version
    new = object.__new__
    twin = _REGISTRATION_TWIN
    registration_class = PartitionRegistration
    indexes = _BulkIndexes()
    isr_adders = indexes.isr_adders
    add_isr_member = indexes.add_isr_member
    leaders_append = indexes.leaders.append
    preferreds_append = indexes.preferreds.append
    add_leaderless = indexes.leaderless.add
    add_not_led_by_preferred = indexes.not_led_by_preferred.add
    bulk = True
    """Partitions are placed and indexed here until a record whose replay keeps the indexes
    itself; from there on every record is replayed."""
    topic_id: Any = None
    """The id of the topic ``partitions`` belongs to, None before the first partition."""
    partitions: dict[int, PartitionRegistration] = {}
    with collector_paused():
        for batch in reader.batches():
            encoded = batch.records()
            arrays = unpack_records(encoded)
            if len(arrays) != len(encoded):
                raise _NotInBulk("a record is not one msgpack array")
            for array in arrays:
                if array[0] == PARTITION_RECORD_TYPE and array[1] == partition_version and bulk:
                    (
                        _type,
                        _version,
                        partition_id,
                        record_topic_id,
                        replicas,
                        isr,
                        removing_replicas,
                        adding_replicas,
                        leader,
                        recovery_state,
                        leader_epoch,
                        partition_epoch,
                        elr,
                        last_known_elr,
                    ) = array
                    if record_topic_id != topic_id:
                        # Snapshots hold a topic's partitions together: one lookup per topic.
                        topic = topics._writable_topic(topics_by_id[record_topic_id])
                        topic_id = topic._topic_id
                        partitions = topic._partitions
                    if leader < NO_LEADER or recovery_state not in FULL_RECOVERY_STATES:
                        raise _NotInBulk("a PartitionRecord replay refuses")
                    partition_id = share_id(partition_id, partition_id)
                    # As replay_partition: one shared int per id, the ISR tuple the replicas
                    # tuple when they are equal, the key holding the topic's own id.
                    key = (topic_id, partition_id)
                    if len(replicas) == 3 and isr == replicas:
                        # The usual partition, written out: three replicas, all in sync.
                        first, second, third = replicas
                        first = share_id(first, first)
                        second = share_id(second, second)
                        third = share_id(third, third)
                        replicas = isr = (first, second, third)
                        try:
                            isr_adders[first](key)
                            isr_adders[second](key)
                            isr_adders[third](key)
                        except KeyError:  # a broker's first partition: adding again is harmless
                            add_isr_member(first, key)
                            add_isr_member(second, key)
                            add_isr_member(third, key)
                    else:
                        replicas = tuple(map(share_id, replicas, replicas))
                        isr = replicas if isr == replicas else tuple(map(share_id, isr, isr))
                        first = replicas[0] if replicas else NO_LEADER
                        for broker_id in isr:
                            add_isr_member(broker_id, key)
                    leader = first if leader == first else share_id(leader, leader)
                    leaders_append(leader)
                    preferreds_append(first)
                    if leader != first:
                        add_not_led_by_preferred(key)
                        if leader == NO_LEADER:
                            add_leaderless(key)
                    elif leader == NO_LEADER:  # no replicas, so no preferred leader to miss
                        add_leaderless(key)
                    registration = new(twin)
                    registration.replicas = replicas
                    registration.isr = isr
                    registration.removing_replicas = removing_replicas
                    registration.adding_replicas = adding_replicas
                    registration.leader = leader
                    registration.leader_recovery_state = recovery_state
                    registration.leader_epoch = leader_epoch
                    registration.partition_epoch = partition_epoch
                    registration.elr = elr
                    registration.last_known_elr = last_known_elr
                    registration.__class__ = registration_class
                    partitions[partition_id] = registration
                    continue
                record = record_from_array(array)
                replay = replay_by_type.get(type(record))
                if replay is None:
                    raise ReplayError(f"{type(record).__name__} is not a metadata record")
                if bulk and type(record) in _INDEXED_REPLAY:
                    indexes.install(topics)
                    bulk = False
                replay(record)
                topic_id = None  # the record may have replaced the topic the next one names
        if bulk:
            indexes.install(topics)
    image._offset = offset
    return image


class _BulkIndexes:
    """The topics' indexes as the bulk path gathers them: the sets as they will be kept, the
    counts as lists of broker ids (NO_LEADER included) counted once at the end."""

    __slots__ = (
        "isr_adders",
        "isr_partitions",
        "leaderless",
        "leaders",
        "not_led_by_preferred",
        "preferreds",
    )

    def __init__(self) -> None:
        self.isr_partitions: dict[int, set[PartitionKey]] = {}
        self.isr_adders: dict[int, Callable[[PartitionKey], None]] = {}
        """Each ISR index set's ``add``, by broker id."""
        self.leaderless: set[PartitionKey] = set()
        self.not_led_by_preferred: set[PartitionKey] = set()
        self.leaders: list[int] = []
        self.preferreds: list[int] = []

    def add_isr_member(self, broker_id: int, key: PartitionKey) -> None:
        add = self.isr_adders.get(broker_id)
        if add is None:
            members = self.isr_partitions[broker_id] = set()
            add = self.isr_adders[broker_id] = members.add
        add(key)

    def install(self, topics: TopicsImage) -> None:
        """Gives ``topics`` these indexes and its partition count, as replay would have kept
        them: counts in the order of first appearance, no entry for NO_LEADER."""
        leaders, preferreds = self.leaders, self.preferreds
        partition_count = sum(len(topic._partitions) for topic in topics._topics.values())
        if partition_count != len(leaders):
            # One partition placed twice: its first placement's index entries would stay.
            raise _NotInBulk("a partition placed twice")
        led_by_preferred = compress(leaders, map(eq, leaders, preferreds))
        topics.install_indexes(
            partition_count,
            self.isr_partitions,
            self.leaderless,
            self.not_led_by_preferred,
            _counts(leaders),
            _counts(preferreds),
            _counts(led_by_preferred),
        )


def _counts(broker_ids: Iterable[int]) -> dict[int, int]:
    """How often each broker id occurs, NO_LEADER left out (Counter counts in C)."""
    counts = dict(Counter(broker_ids))
    counts.pop(NO_LEADER, None)
    return counts
