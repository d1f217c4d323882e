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
    BrokerEndpoint,
    ConfigRecord,
    ConfigResourceType,
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
