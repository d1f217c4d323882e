"""Synthetic clusters for the notebook, the benchmark and the tests.

A cluster is built the way a controller builds one, as metadata records replayed into a
:class:`~raftmeta.image.MetadataImage`, and written with the project's
:class:`~raftmeta.storage.snapshots.SnapshotWriter`, so what the readers see is byte for byte
what a node would have written.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator, Sequence
from pathlib import Path

from raftmeta.image import MetadataImage
from raftmeta.raft.batch import SnapshotId, make_batch
from raftmeta.records import (
    NO_LEADER,
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    ConfigRecord,
    ConfigResourceType,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    TopicRecord,
    encode_each,
)
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR, MetadataDir
from raftmeta.storage.log import FileLog
from raftmeta.storage.snapshots import SnapshotWriter


def cluster_records(
    *,
    brokers: int,
    racks: int,
    topics: int,
    partitions_per_topic: int,
    replication: int = 3,
    skew: float = 0.0,
    seed: int = 0,
    fenced: tuple[int, ...] = (),
) -> Iterator[Record]:
    """Records of a cluster: brokers 0..brokers-1 on ``racks`` racks (broker ``i`` on rack
    ``i % racks``), replicas striped so consecutive replicas sit on different racks, and a
    fraction ``skew`` of the partitions led by their second replica instead of the first."""
    if replication > brokers:
        raise ValueError(f"replication {replication} needs at least as many brokers")
    chooser = random.Random(seed)
    for broker_id in range(brokers):
        yield RegisterBrokerRecord(
            broker_id=broker_id,
            incarnation_id=chooser.randbytes(16),
            broker_epoch=broker_id + 1,
            endpoints=(BrokerEndpoint("PLAINTEXT", f"broker-{broker_id}", 9092, 0),),
            rack=f"rack-{broker_id % racks}" if racks else None,
            fenced=broker_id in fenced,
        )
    first_replica = 0
    for topic_index in range(topics):
        name = f"topic-{topic_index:05d}"
        topic_id = chooser.randbytes(16)
        yield TopicRecord(name, topic_id)
        if topic_index % 10 == 0:
            yield ConfigRecord(ConfigResourceType.TOPIC, name, "min.insync.replicas", "2")
        for partition_id in range(partitions_per_topic):
            replicas = tuple((first_replica + step) % brokers for step in range(replication))
            first_replica = (first_replica + 1) % brokers
            leader = replicas[0]
            if replication > 1 and chooser.random() < skew:
                leader = replicas[1]
            yield PartitionRecord(
                partition_id=partition_id,
                topic_id=topic_id,
                replicas=replicas,
                isr=replicas,
                leader=leader,
                leader_epoch=1 if leader != replicas[0] else 0,
            )


def build_image(**shape: object) -> MetadataImage:
    """An image of :func:`cluster_records` with the same keyword arguments."""
    records = list(cluster_records(**shape))  # type: ignore[arg-type]
    return MetadataImage.from_records(records, len(records) - 1)


def write_snapshot(
    image: MetadataImage,
    directory: str | os.PathLike[str],
    *,
    cluster_id: str,
    epoch: int = 1,
    name: str | None = None,
) -> Path:
    """Writes ``image`` as a snapshot in ``directory``; ``name`` renames the finished file
    (a folder of many clusters names each snapshot after its cluster)."""
    snapshot_id = SnapshotId(image.offset + 1, epoch)
    with SnapshotWriter(directory, snapshot_id, cluster_id=cluster_id) as writer:
        writer.append(encode_each(image.to_records()))
        path = writer.freeze()
    if name is not None:
        renamed = path.with_name(name)
        os.replace(path, renamed)
        return renamed
    return path


def write_node_directory(
    directory: str | os.PathLike[str],
    *,
    cluster_id: str,
    batches: Sequence[tuple[Sequence[Record], int, int]],
    snapshot_at: int | None = None,
    node_id: int = 1,
    segment_bytes: int = 1 << 20,
) -> Path:
    """A formatted node directory whose log holds ``batches`` of (records, epoch, batch time
    in ms) from offset 0, with a snapshot of the first ``snapshot_at`` records if given."""
    root = Path(directory)
    MetadataDir.format(root, node_id, cluster_id)
    folder = root / METADATA_PARTITION_DIR
    log = FileLog.open(folder, segment_bytes=segment_bytes)
    offset = 0
    image = MetadataImage()
    for records, epoch, batch_time_ms in batches:
        log.append([make_batch(offset, epoch, encode_each(records), timestamp_ms=batch_time_ms)])
        for record in records:
            if snapshot_at is not None and offset < snapshot_at:
                image.apply(record, offset)
            offset += 1
    log.flush()
    log.close()
    if snapshot_at is not None:
        write_snapshot(image, folder, cluster_id=cluster_id, epoch=max(e for _, e, _ in batches))
    return root


Batches = list[tuple[list[Record], int, int]]
"""(records, epoch, batch time in ms) per batch, as :func:`write_node_directory` takes them."""


def failover_story(
    *,
    brokers: int,
    racks: int,
    topics: int,
    partitions_per_topic: int,
    failed: Sequence[int] = (1,),
    start_ms: int = 1_767_225_600_000,
    records_per_batch: int = 500,
) -> Batches:
    """A cluster's log with history in it: created balanced; each broker in ``failed`` is
    fenced in turn from +60 s, up to 20 s apart (its leaderships move to the next replica in
    the ISR); all come back at +240 s, and at +300 s a preferred election returns two thirds
    of the moved leaderships, leaving the rest for the audit's election plan. Batches of one
    change carry times a fraction of a second apart, as a controller writes them."""
    created = list(
        cluster_records(
            brokers=brokers, racks=racks, topics=topics, partitions_per_topic=partitions_per_topic
        )
    )
    batches: Batches = []
    epoch = 1

    def add(records: list[Record], time_ms: int) -> None:
        for start in range(0, len(records), records_per_batch):
            batches.append((records[start : start + records_per_batch], epoch, time_ms))
            time_ms += 150

    add(created, start_ms)
    replicas: dict[tuple[bytes, int], tuple[int, ...]] = {}
    for record in created:
        if isinstance(record, PartitionRecord):
            replicas[record.topic_id, record.partition_id] = record.replicas
    leader = {key: value[0] for key, value in replicas.items()}
    isr = dict(replicas)
    down: set[int] = set()
    moved: list[tuple[bytes, int]] = []
    spacing_ms = min(20_000, 160_000 // max(1, len(failed)))
    for index, broker_id in enumerate(failed):
        epoch += 1
        down.add(broker_id)
        changes: list[Record] = [BrokerRegistrationChangeRecord(broker_id, broker_id + 1, 1)]
        for key, members in isr.items():
            if broker_id not in members:
                continue
            isr[key] = tuple(member for member in members if member != broker_id)
            if leader[key] == broker_id:
                candidates = [r for r in replicas[key] if r not in down]
                leader[key] = candidates[0] if candidates else NO_LEADER
                moved.append(key)
                changes.append(
                    PartitionChangeRecord(key[1], key[0], isr=isr[key], leader=leader[key])
                )
            else:
                changes.append(PartitionChangeRecord(key[1], key[0], isr=isr[key]))
        add(changes, start_ms + 60_000 + index * spacing_ms + 1_250)
    epoch += 1
    recovered: list[Record] = [
        BrokerRegistrationChangeRecord(broker_id, broker_id + 1, -1) for broker_id in failed
    ]
    for key, members in isr.items():
        if members != replicas[key]:
            isr[key] = replicas[key]
            recovered.append(PartitionChangeRecord(key[1], key[0], isr=replicas[key]))
    add(recovered, start_ms + 240_000 + 400)
    elected: list[Record] = []
    for number, key in enumerate(moved):
        preferred = replicas[key][0]
        if number % 3 != 2 and leader[key] != preferred:
            leader[key] = preferred
            elected.append(PartitionChangeRecord(key[1], key[0], leader=preferred))
    add(elected, start_ms + 300_000 + 2_700)
    return batches
