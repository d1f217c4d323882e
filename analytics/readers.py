"""Files to rows: the pure half of the raftmeta data source.

Planning (:func:`plan`) turns each cluster's files into :class:`Split` s, the units read in
parallel; reading (:func:`read_split`) turns one split into Arrow record batches. Neither
imports Spark, so the plain Python audit and the tests use exactly the rows Spark sees.

How a kind is split:

- ``partitions`` from a snapshot (a bare file, or a directory with no log after its latest
  snapshot): the snapshot body is cut at batch boundaries into ranges of about
  ``max_split_bytes``. A PartitionRecord in a snapshot is the partition's whole state, so each
  range is read on its own; the topic names, which sit in TopicRecords elsewhere in the file,
  are found by a quick planning pass that decodes only TopicRecords.
- ``partitions`` from a directory with a log after its snapshot: one split that replays the
  snapshot and the log into a :class:`~raftmeta.image.MetadataImage`, since any record in the
  log may change any partition.
- ``brokers``, ``topics`` and ``configs``: one split per cluster (they are small), replayed
  the same way.
- ``events``: the log is cut at batch boundaries; each split first replays the state up to its
  first offset without emitting rows, then emits one row per record of its range.

The log is read as it lies on disk, including records above the high watermark a crash may
have left uncommitted: like ``raftmeta log dump``, this is an offline view.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import gc
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgpack

from analytics import files
from analytics.sources import AnalyticsInputError, Source, open_snapshot
from raftmeta.image import MetadataImage, PartitionRegistration, ReplayError, entity_order
from raftmeta.raft.batch import Batch
from raftmeta.records import (
    LEADER_UNCHANGED,
    NO_LEADER,
    BrokerRegistrationChangeRecord,
    ConfigResourceType,
    ControlledShutdownChange,
    FencingChange,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RecordDecodeError,
    RecordType,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnregisterBrokerRecord,
    decode_record,
    uuid_to_str,
)
from raftmeta.storage.codec import BATCH_HEADER_SIZE, BatchScanner, decode_batch_header
from raftmeta.storage.errors import StorageError
from raftmeta.storage.snapshots import FOOTER_SIZE, SnapshotReader

_PLANNING_WINDOW = 1 << 20
"""Bytes read at a time while walking batch headers: one request per window, not per batch,
when the file is remote."""

if TYPE_CHECKING:
    import pyarrow as pa

# pyarrow is imported where batches are built, never at module level: the plain audit
# (``raftmeta audit --engine plain``) reads through :func:`read_split_columns` and must work on
# an install without the spark extra, where pyarrow is absent.

KINDS = ("partitions", "brokers", "topics", "events", "configs")
"""The kinds of row a split yields."""

COLUMNS: dict[str, tuple[str, ...]] = {
    "partitions": (
        *("cluster", "snapshot_offset", "topic", "topic_id", "partition", "replicas", "isr"),
        *("leader", "preferred_leader", "leader_epoch", "partition_epoch"),
        *("leader_recovery_state", "elr", "last_known_elr"),
    ),
    "brokers": (
        *("cluster", "snapshot_offset", "broker_id", "rack", "fenced"),
        *("in_controlled_shutdown", "broker_epoch"),
    ),
    "topics": ("cluster", "snapshot_offset", "topic", "topic_id", "partitions", "configs"),
    "events": (
        *("cluster", "offset", "epoch", "batch_time_ms", "record_type", "broker_id", "topic"),
        *("topic_id", "partition", "replicas", "leader", "previous_leader", "isr"),
        *("previous_isr", "isr_added", "isr_removed", "leader_epoch", "leader_recovery_state"),
        *("election", "fencing", "controlled_shutdown"),
    ),
    "configs": (
        *("cluster", "snapshot_offset", "resource_type", "resource_name", "entity", "name"),
        "value",
    ),
}
"""Each kind's column names in the order of its schema in :mod:`analytics.schemas` (a test
holds the two equal; this copy needs no pyarrow)."""
EVENT_COLUMNS = COLUMNS["events"]

DEFAULT_MAX_SPLIT_BYTES = 4 << 20
ROWS_PER_ARROW_BATCH = 65536

_CONTROL_FLAG = 0x01
_RECOVERY_NAMES = {state.value: state.name for state in LeaderRecoveryState}
_TOPIC_TYPE = int(RecordType.TOPIC)
_PARTITION_TYPE = int(RecordType.PARTITION)
_PARTITION_ARRAY_LENGTH = 2 + len(dataclasses.fields(PartitionRecord))
_PARTITION_FIELD = {
    field.name: 2 + index for index, field in enumerate(dataclasses.fields(PartitionRecord))
}
_ELR_FIELDS = ("eligible_leader_replicas", "last_known_elr")
_PARTITION_V0_LENGTH = _PARTITION_ARRAY_LENGTH - len(_ELR_FIELDS)
"""A version 0 PartitionRecord (written before KIP-966) lacks the two ELR lists at the end."""


@dataclass(frozen=True, slots=True)
class Split:
    """One unit of reading, picklable so Spark can ship it to a worker."""

    source: Source
    kind: str
    mode: str
    """``snapshot-range`` (partitions from part of a snapshot), ``replay`` (replay everything,
    emit the final state) or ``events`` (replay up to ``from_offset``, emit to ``to_offset``)."""
    byte_start: int = 0
    byte_end: int = 0
    base_offset: int = 0
    """First record offset of the range (within the snapshot for ``snapshot-range``)."""
    snapshot_offset: int = 0
    topic_names: tuple[tuple[bytes, str], ...] = ()
    from_offset: int = 0
    to_offset: int = 0
    events_base: str | None = None
    """For ``events``: the snapshot the replay starts from, ``None`` for an empty state."""


@dataclass(frozen=True, slots=True)
class _BatchEntry:
    position: int
    end: int
    base_offset: int
    record_count: int
    is_control: bool


def _walk_batches(path: str, start: int, end: int) -> list[_BatchEntry]:
    """Batch headers between ``start`` and ``end``, stopping quietly at a torn or bad tail."""
    entries: list[_BatchEntry] = []
    with files.open_binary(path) as file:
        position = start
        window_start, window = start, b""
        while position + BATCH_HEADER_SIZE <= end:
            if position + BATCH_HEADER_SIZE > window_start + len(window) or position < window_start:
                file.seek(position)
                window_start = position
                window = file.read(min(_PLANNING_WINDOW, end - position))
            offset = position - window_start
            header = window[offset : offset + BATCH_HEADER_SIZE]
            if len(header) < BATCH_HEADER_SIZE:
                break
            fields = decode_batch_header(header)
            batch_end = position + fields.size
            if fields.payload_length < 0 or fields.record_count < 1 or batch_end > end:
                break
            entries.append(
                _BatchEntry(
                    position, batch_end, fields.base_offset, fields.record_count, fields.is_control
                )
            )
            position = batch_end
    return entries


def _group(entries: list[_BatchEntry], max_bytes: int) -> list[list[_BatchEntry]]:
    groups: list[list[_BatchEntry]] = []
    current: list[_BatchEntry] = []
    size = 0
    for entry in entries:
        if current and size + (entry.end - entry.position) > max_bytes:
            groups.append(current)
            current, size = [], 0
        current.append(entry)
        size += entry.end - entry.position
    if current:
        groups.append(current)
    return groups


def _snapshot_body(reader: SnapshotReader) -> tuple[int, int]:
    return len(reader.header.encode()), reader.size - FOOTER_SIZE


def _log_batches(source: Source) -> Iterator[tuple[str, _BatchEntry]]:
    last_end = -1
    for segment in source.segments:
        for entry in _walk_batches(segment, 0, files.size(segment)):
            if entry.base_offset < last_end:
                continue
            if source.log_end is not None and entry.base_offset + entry.record_count > (
                source.log_end
            ):
                return
            last_end = entry.base_offset + entry.record_count
            yield segment, entry


def _log_tail_exists(source: Source, snapshot_end: int) -> bool:
    return any(
        entry.base_offset + entry.record_count > snapshot_end and not entry.is_control
        for _, entry in _log_batches(source)
    )


def _topic_names(path: str, start: int, end: int) -> tuple[tuple[bytes, str], ...]:
    """Every TopicRecord of a snapshot body, decoding nothing else."""
    names: list[tuple[bytes, str]] = []
    body = files.read_range(path, start, end)
    for batch in BatchScanner(body):
        for record in msgpack.unpackb(batch.payload, raw=False):
            if len(record) > 1 and record[1] == _TOPIC_TYPE:
                topic = decode_record(record)
                if isinstance(topic, TopicRecord):
                    names.append((topic.topic_id, topic.name))
    return tuple(names)


def plan(
    sources: Iterable[Source], kind: str, max_split_bytes: int = DEFAULT_MAX_SPLIT_BYTES
) -> list[Split]:
    """The splits that read ``kind`` from ``sources``; at least one per cluster."""
    if kind not in KINDS:
        raise AnalyticsInputError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    if max_split_bytes < 1:
        raise AnalyticsInputError("the split size must be positive")
    splits: list[Split] = []
    for source in sources:
        try:
            if kind == "partitions":
                splits.extend(_plan_partitions(source, max_split_bytes))
            elif kind == "events":
                splits.extend(_plan_events(source, max_split_bytes))
            else:
                splits.append(Split(source, kind, "replay"))
        except StorageError as error:
            raise AnalyticsInputError(str(error)) from None
    return splits


def _plan_partitions(source: Source, max_split_bytes: int) -> list[Split]:
    if source.snapshot is None:
        return [Split(source, "partitions", "replay")]
    reader = open_snapshot(source.snapshot)
    end_offset = reader.snapshot_id.end_offset
    if _log_tail_exists(source, end_offset):
        return [Split(source, "partitions", "replay")]
    start, end = _snapshot_body(reader)
    names = _topic_names(source.snapshot, start, end)
    groups = _group(_walk_batches(source.snapshot, start, end), max_split_bytes)
    if not groups:
        return [Split(source, "partitions", "replay")]
    return [
        Split(
            source,
            "partitions",
            "snapshot-range",
            byte_start=group[0].position,
            byte_end=group[-1].end,
            base_offset=group[0].base_offset,
            snapshot_offset=end_offset,
            topic_names=names,
        )
        for group in groups
    ]


def _plan_events(source: Source, max_split_bytes: int) -> list[Split]:
    entries = [(segment, entry) for segment, entry in _log_batches(source)]
    if not entries:
        return [Split(source, "events", "events", from_offset=0, to_offset=0)]
    first = entries[0][1].base_offset
    last = entries[-1][1].base_offset + entries[-1][1].record_count
    base_snapshot: str | None = None
    base_offset = 0
    if first > 0:
        # The log was trimmed: start from the oldest snapshot the kept log can be replayed
        # from (snapshots older than the log's start cannot be replayed forward).
        base_snapshot = source.history_snapshot or source.snapshot
        if base_snapshot is None:
            return [Split(source, "events", "events", from_offset=0, to_offset=0)]
        base_offset = open_snapshot(base_snapshot).snapshot_id.end_offset
        if base_offset < first:
            return [Split(source, "events", "events", from_offset=0, to_offset=0)]
    wanted = [entry for _, entry in entries if entry.base_offset + entry.record_count > base_offset]
    groups = _group(wanted, max_split_bytes)
    splits = []
    for group in groups:
        splits.append(
            Split(
                source,
                "events",
                "events",
                from_offset=max(group[0].base_offset, base_offset),
                to_offset=group[-1].base_offset + group[-1].record_count,
                events_base=base_snapshot,
                base_offset=base_offset,
            )
        )
    if not splits:
        splits.append(
            Split(source, "events", "events", from_offset=last, to_offset=last, base_offset=last)
        )
    return splits


# --- reading ---------------------------------------------------------------------------------


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Decoding allocates millions of tuples that all stay alive; the cycle collector would
    scan them again and again (it halves the read rate) while finding nothing to free."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_split(split: Split) -> Iterator[pa.RecordBatch]:
    """The rows of one split as Arrow record batches in the kind's schema."""
    import pyarrow as pa

    from analytics.schemas import SCHEMAS

    schema = SCHEMAS[split.kind]
    for columns in read_split_columns(split):
        yield pa.RecordBatch.from_pydict(columns, schema=schema)


def read_split_columns(split: Split) -> Iterator[dict[str, list[Any]]]:
    """The rows of one split as plain columns (name to list of values, in the kind's schema
    order), at most ``ROWS_PER_ARROW_BATCH`` rows at a time. Needs no pyarrow."""
    with _collector_paused():
        yield from _read_split(split)


def _read_split(split: Split) -> Iterator[dict[str, list[Any]]]:
    try:
        if split.mode == "snapshot-range":
            yield from _read_snapshot_range(split)
        elif split.mode == "events":
            yield from _chunks(list(event_rows(split)), EVENT_COLUMNS)
        else:
            image, counts = load_image(split.source, with_partitions=split.kind == "partitions")
            rows = image_rows(image, split.source.cluster, split.kind, counts)
            yield from _chunks(rows, COLUMNS[split.kind])
    except (StorageError, RecordDecodeError, ReplayError) as error:
        raise AnalyticsInputError(f"{split.source.description}: {error}") from None


def _chunks(rows: list[dict[str, Any]], names: tuple[str, ...]) -> Iterator[dict[str, list[Any]]]:
    for start in range(0, len(rows), ROWS_PER_ARROW_BATCH):
        chunk = rows[start : start + ROWS_PER_ARROW_BATCH]
        yield {name: [row.get(name) for row in chunk] for name in names}


def _snapshot_records(
    path: str, partition_counts: collections.Counter[bytes] | None = None
) -> Iterator[Record]:
    """The snapshot's records; given ``partition_counts``, PartitionRecords are only counted
    per topic id instead of decoded."""
    reader = open_snapshot(path)
    for batch in reader.batches():
        records = msgpack.unpackb(batch.payload, raw=False)
        if partition_counts is None:
            yield from map(decode_record, records)
            continue
        unpacker = msgpack.Unpacker(use_list=False, raw=False)
        unpacker.feed(b"".join(records))
        for array, data in zip(unpacker, records, strict=True):
            if array[0] == _PARTITION_TYPE and len(array) == _PARTITION_ARRAY_LENGTH:
                partition_counts[array[_PARTITION_FIELD["topic_id"]]] += 1
            else:
                yield decode_record(data)


def _log_batches_from(source: Source, start_offset: int) -> Iterator[Batch]:
    """Data batches of the log holding offsets at or above ``start_offset``."""
    next_offset = -1
    for segment in source.segments:
        data = files.read_all(segment)
        for batch in BatchScanner(data):
            if batch.next_offset <= max(start_offset, next_offset):
                continue
            if source.log_end is not None and batch.next_offset > source.log_end:
                return
            next_offset = batch.next_offset
            if not batch.is_control:
                yield batch


def load_image(
    source: Source, *, with_partitions: bool = True, end_offset: int | None = None
) -> tuple[MetadataImage, dict[bytes, int] | None]:
    """The cluster's state: the latest snapshot plus the log after it.

    ``with_partitions=False`` leaves partitions out when there is no log to replay on top,
    which makes reading the brokers or topics of a million-partition snapshot cheap; the
    partition count of each topic id is then returned alongside (else ``None``).
    ``end_offset`` stops the replay before the first batch at or past it (a log's tail may
    hold records that were never committed; a snapshot past it is still read whole).
    """
    image = MetadataImage()
    start = 0
    counts: collections.Counter[bytes] | None = None
    if source.snapshot is not None:
        reader = open_snapshot(source.snapshot)
        start = reader.snapshot_id.end_offset
        if not with_partitions and not _log_tail_exists(source, start):
            counts = collections.Counter()
        image = MetadataImage.from_records(_snapshot_records(source.snapshot, counts), start - 1)
    for batch in _log_batches_from(source, start):
        if end_offset is not None and batch.base_offset >= end_offset:
            break
        _apply_batch(image, batch, start)
    return image, counts


def _apply_batch(image: MetadataImage, batch: Batch, start: int) -> None:
    records = [decode_record(record) for record in batch.records()]
    if batch.base_offset < start:
        records = records[start - batch.base_offset :]
        image.apply_batch(records, start)
    else:
        image.apply_batch(records, batch.base_offset)


def _recovery_name(state: int) -> str:
    return _RECOVERY_NAMES.get(state, str(state))


def _read_snapshot_range(split: Split) -> Iterator[dict[str, list[Any]]]:
    """PartitionRecords of one range of a snapshot body, decoded a batch of rows at a time.

    The records are unpacked as plain arrays (see :mod:`raftmeta.records`: ``[type, version,
    fields...]`` in declaration order) and transposed into columns in C, rather than built
    into dataclasses one by one: this path carries the million-partition snapshots.
    """
    assert split.source.snapshot is not None
    names = dict(split.topic_names)
    id_texts = {topic_id: uuid_to_str(topic_id) for topic_id in names}
    data = files.read_range(split.source.snapshot, split.byte_start, split.byte_end)
    scanner = BatchScanner(data, expected_base_offset=split.base_offset)
    pending: list[tuple[Any, ...]] = []
    for batch in scanner:
        unpacker = msgpack.Unpacker(use_list=False, raw=False)
        unpacker.feed(b"".join(msgpack.unpackb(batch.payload, raw=False)))
        pending.extend(array for array in unpacker if array[0] == _PARTITION_TYPE)
        if len(pending) >= ROWS_PER_ARROW_BATCH:
            yield _partition_columns(split, pending, names, id_texts)
            pending = []
    stop = scanner.stop
    if stop is not None and not stop.clean:
        raise AnalyticsInputError(f"{split.source.snapshot}: {stop.describe()}")
    if pending:
        yield _partition_columns(split, pending, names, id_texts)


def _partition_columns(
    split: Split,
    arrays: list[tuple[Any, ...]],
    names: dict[bytes, str],
    id_texts: dict[bytes, str],
) -> dict[str, list[Any]]:
    try:
        columns = list(zip(*arrays, strict=True))
    except ValueError:
        columns = []
    if len(columns) == _PARTITION_V0_LENGTH and set(columns[1]) == {0}:
        # A snapshot from before KIP-966: its partitions have no ELR, as the decoder says too.
        columns[1] = (PartitionRecord.version,) * len(arrays)
        columns.extend([((),) * len(arrays)] * len(_ELR_FIELDS))
    field = _PARTITION_FIELD
    if (
        len(columns) != _PARTITION_ARRAY_LENGTH
        or set(columns[1]) != {PartitionRecord.version}
        or min(columns[field["leader"]]) < NO_LEADER
        or not set(columns[field["leader_recovery_state"]]) <= _RECOVERY_NAMES.keys()
    ):
        # Something unusual: let the record decoder and the image name the problem.
        for array in arrays:
            record = decode_record(msgpack.packb(array, use_bin_type=True))
            assert isinstance(record, PartitionRecord)
            PartitionRegistration.from_record(record)
        raise AnalyticsInputError(f"{split.source.snapshot}: malformed PartitionRecord")
    topic_ids = columns[field["topic_id"]]
    for topic_id in set(topic_ids) - id_texts.keys():
        id_texts[topic_id] = uuid_to_str(topic_id)
    replicas = columns[field["replicas"]]
    leaders = columns[field["leader"]]
    recovery = columns[field["leader_recovery_state"]]
    count = len(arrays)
    return dict(
        zip(
            COLUMNS["partitions"],
            [
                [split.source.cluster] * count,
                [split.snapshot_offset] * count,
                list(map(names.get, topic_ids)),
                list(map(id_texts.__getitem__, topic_ids)),
                list(columns[field["partition_id"]]),
                list(replicas),
                list(columns[field["isr"]]),
                list(leaders),
                [r[0] if r else NO_LEADER for r in replicas],
                list(columns[field["leader_epoch"]]),
                list(columns[field["partition_epoch"]]),
                list(map(_RECOVERY_NAMES.__getitem__, recovery)),
                list(columns[field["eligible_leader_replicas"]]),
                list(columns[field["last_known_elr"]]),
            ],
            strict=True,
        )
    )


def image_batches(
    image: MetadataImage,
    cluster: str,
    kind: str,
    partition_counts: dict[bytes, int] | None = None,
) -> Iterator[pa.RecordBatch]:
    """The image's rows of ``kind`` (partitions, brokers, topics or configs) as Arrow batches."""
    import pyarrow as pa

    from analytics.schemas import SCHEMAS

    rows = image_rows(image, cluster, kind, partition_counts)
    schema = SCHEMAS[kind]
    for start in range(0, len(rows), ROWS_PER_ARROW_BATCH):
        yield pa.RecordBatch.from_pylist(rows[start : start + ROWS_PER_ARROW_BATCH], schema)


def image_rows(
    image: MetadataImage,
    cluster: str,
    kind: str,
    partition_counts: dict[bytes, int] | None = None,
) -> list[dict[str, Any]]:
    """The image's rows of ``kind`` as dicts, straight from the image (no files involved).

    ``partition_counts`` stands in for the partitions of an image loaded without them.
    """
    snapshot_offset = image.offset + 1
    if kind == "brokers":
        return [
            {
                "cluster": cluster,
                "snapshot_offset": snapshot_offset,
                "broker_id": broker.broker_id,
                "rack": broker.rack,
                "fenced": broker.fenced,
                "in_controlled_shutdown": broker.in_controlled_shutdown,
                "broker_epoch": broker.broker_epoch,
            }
            for broker in image.brokers.values()
        ]
    if kind == "topics":
        resource = int(ConfigResourceType.TOPIC)
        return [
            {
                "cluster": cluster,
                "snapshot_offset": snapshot_offset,
                "topic": topic.name,
                "topic_id": uuid_to_str(topic.topic_id),
                "partitions": len(topic.partitions)
                if partition_counts is None
                else partition_counts.get(topic.topic_id, 0),
                "configs": sorted(image.configs(resource, topic.name).items()),
            }
            for topic in image.topics.values()
        ]
    if kind == "configs":
        return config_rows(image, cluster)
    if kind != "partitions":
        raise AnalyticsInputError(f"kind {kind!r} is not read from an image")
    rows = []
    for topic in image.topics.values():
        topic_id = uuid_to_str(topic.topic_id)
        for partition_id, registration in topic.partitions.items():
            rows.append(
                {
                    "cluster": cluster,
                    "snapshot_offset": snapshot_offset,
                    "topic": topic.name,
                    "topic_id": topic_id,
                    "partition": partition_id,
                    "replicas": list(registration.replicas),
                    "isr": list(registration.isr),
                    "leader": registration.leader,
                    "preferred_leader": registration.preferred_leader,
                    "leader_epoch": registration.leader_epoch,
                    "partition_epoch": registration.partition_epoch,
                    "leader_recovery_state": _recovery_name(registration.leader_recovery_state),
                    "elr": list(registration.elr),
                    "last_known_elr": list(registration.last_known_elr),
                }
            )
    return rows


_CONFIG_RESOURCE_NAMES = {
    int(ConfigResourceType.TOPIC): "topic",
    int(ConfigResourceType.BROKER): "broker",
}


def config_rows(image: MetadataImage, cluster: str) -> list[dict[str, Any]]:
    """Every dynamic config (topic, broker, cluster default) and client quota value of the
    image, one row each, in the snapshot's order."""
    snapshot_offset = image.offset + 1
    rows: list[dict[str, Any]] = []
    for resource_type, resource_name in sorted(image.config_resources):
        shown = _CONFIG_RESOURCE_NAMES.get(resource_type, str(resource_type))
        for name, value in sorted(image.configs(resource_type, resource_name).items()):
            rows.append(
                {
                    "cluster": cluster,
                    "snapshot_offset": snapshot_offset,
                    "resource_type": shown,
                    "resource_name": resource_name,
                    "entity": None,
                    "name": name,
                    "value": value,
                }
            )
    quotas = image.client_quotas
    for entity in sorted(quotas.entities, key=entity_order):
        label = ",".join(f"{kind}={'<default>' if name is None else name}" for kind, name in entity)
        for key, quota in sorted(quotas.quotas(entity).items()):
            rows.append(
                {
                    "cluster": cluster,
                    "snapshot_offset": snapshot_offset,
                    "resource_type": "client_quota",
                    "resource_name": label,
                    "entity": list(entity),
                    "name": key,
                    "value": repr(quota),
                }
            )
    return rows


# --- events ----------------------------------------------------------------------------------


def event_rows(split: Split) -> Iterator[dict[str, Any]]:
    """One row per record with offsets in ``[from_offset, to_offset)``."""
    if split.to_offset <= split.from_offset:
        return
    if split.events_base is not None:
        image = MetadataImage.from_records(
            _snapshot_records(split.events_base), split.base_offset - 1
        )
    else:
        image = MetadataImage()
    recorder = EventRecorder(split.source.cluster, image)
    for batch in _log_batches_from(split.source, split.base_offset):
        if batch.base_offset >= split.to_offset:
            break
        records = [decode_record(record) for record in batch.records()]
        for index, record in enumerate(records):
            offset = batch.base_offset + index
            if offset < split.base_offset:
                continue
            if offset >= split.to_offset:
                break
            row = recorder.apply(record, offset, batch.epoch, batch.timestamp_ms)
            if offset >= split.from_offset:
                yield row


class EventRecorder:
    """Applies records to an image and describes what each one changed, as an event row."""

    def __init__(self, cluster: str, image: MetadataImage) -> None:
        self.cluster = cluster
        self.image = image

    def apply(self, record: Record, offset: int, epoch: int, batch_time_ms: int) -> dict[str, Any]:
        image = self.image
        row: dict[str, Any] = {
            "cluster": self.cluster,
            "offset": offset,
            "epoch": epoch,
            "batch_time_ms": batch_time_ms,
            "record_type": type(record).__name__,
        }
        if isinstance(record, PartitionRecord | PartitionChangeRecord):
            previous = image.partition(record.topic_id, record.partition_id)
            image.apply(record, offset)
            current = image.partition(record.topic_id, record.partition_id)
            assert current is not None
            topic = image.topic(record.topic_id)
            row["topic"] = None if topic is None else topic.name
            row["topic_id"] = uuid_to_str(record.topic_id)
            row["partition"] = record.partition_id
            row.update(_partition_change(record, previous, current))
        elif isinstance(record, RemoveTopicRecord):
            topic = image.topic(record.topic_id)
            row["topic"] = None if topic is None else topic.name
            row["topic_id"] = uuid_to_str(record.topic_id)
            image.apply(record, offset)
        elif isinstance(record, TopicRecord):
            image.apply(record, offset)
            row["topic"] = record.name
            row["topic_id"] = uuid_to_str(record.topic_id)
        elif isinstance(record, RegisterBrokerRecord | UnregisterBrokerRecord):
            image.apply(record, offset)
            row["broker_id"] = record.broker_id
        elif isinstance(record, BrokerRegistrationChangeRecord):
            image.apply(record, offset)
            row["broker_id"] = record.broker_id
            if record.fenced == FencingChange.FENCE:
                row["fencing"] = "fenced"
            elif record.fenced == FencingChange.UNFENCE:
                row["fencing"] = "unfenced"
            row["controlled_shutdown"] = (
                record.in_controlled_shutdown == ControlledShutdownChange.IN_CONTROLLED_SHUTDOWN
            )
        else:
            image.apply(record, offset)
        return row


def _partition_change(
    record: PartitionRecord | PartitionChangeRecord,
    previous: PartitionRegistration | None,
    current: PartitionRegistration,
) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "replicas": list(current.replicas),
        "leader": current.leader,
        "isr": list(current.isr),
        "leader_epoch": current.leader_epoch,
        "leader_recovery_state": _recovery_name(current.leader_recovery_state),
    }
    if previous is None:
        fields["isr_added"] = []
        fields["isr_removed"] = []
        return fields
    fields["previous_leader"] = previous.leader
    fields["previous_isr"] = list(previous.isr)
    fields["isr_added"] = [broker for broker in current.isr if broker not in previous.isr]
    fields["isr_removed"] = [broker for broker in previous.isr if broker not in current.isr]
    leader_set = not (
        isinstance(record, PartitionChangeRecord) and record.leader == LEADER_UNCHANGED
    )
    if leader_set and current.leader != previous.leader:
        fields["election"] = classify_election(previous, current)
    return fields


def classify_election(previous: PartitionRegistration, current: PartitionRegistration) -> str:
    """Names a leader change: see :data:`analytics.schemas.EVENTS`."""
    if current.leader == NO_LEADER:
        return "leader_lost"
    if (
        current.leader_recovery_state == LeaderRecoveryState.RECOVERING
        or current.leader not in previous.isr
    ):
        return "unclean"
    if current.leader == current.preferred_leader:
        return "preferred"
    return "non_preferred"
