"""A broker's replica loads a snapshot in two halves: the build (run on a worker thread by the
Raft client) changes nothing anyone can see, and the install swaps the image in and tells the
subscribers what changed, as a load in one piece did."""

from __future__ import annotations

import threading
from pathlib import Path

from raftmeta.broker import LeadershipChange, MetadataReplica, PartitionChange
from raftmeta.image import MetadataImage
from raftmeta.quorum.client import PreparingListener
from raftmeta.raft.batch import SnapshotId, make_batch
from raftmeta.records import PartitionRecord, TopicRecord, encode_each, encode_record
from raftmeta.storage.snapshots import SnapshotReader, SnapshotWriter

ME = 1
TOPIC = bytes(range(16))
OTHER = bytes(range(1, 17))


def snapshot_of(tmp_path: Path) -> SnapshotReader:
    """A snapshot at end offset 10 in which this broker leads partition 1 of ``TOPIC``."""
    image = MetadataImage()
    image.apply_batch(
        [
            TopicRecord("t", TOPIC),
            PartitionRecord(0, TOPIC, (2, 1), (2, 1), leader=2),
            PartitionRecord(1, TOPIC, (1, 2), (1, 2), leader=1),
        ],
        0,
    )
    with SnapshotWriter(tmp_path, SnapshotId(10, 1), cluster_id="replica-test") as writer:
        writer.append(encode_each(image.to_records()))
        return SnapshotReader(writer.freeze())


Seen = list[tuple[int, list[PartitionChange]]]


def replica_with_one_topic() -> tuple[MetadataReplica, Seen, list[LeadershipChange]]:
    """A replica that leads partition 0 of a topic the snapshot no longer has."""
    replica = MetadataReplica(ME, lambda: None)
    replica.handle_commit(
        [
            make_batch(
                0,
                1,
                [
                    encode_record(TopicRecord("gone", OTHER)),
                    encode_record(PartitionRecord(0, OTHER, (1, 2), (1, 2), leader=1)),
                ],
            )
        ]
    )
    seen: Seen = []
    replica.on_partition_change(lambda offset, changes: seen.append((offset, list(changes))))
    leadership: list[LeadershipChange] = []
    replica.on_leadership_change(leadership.append)
    return replica, seen, leadership


def test_the_build_changes_nothing_and_the_install_reports_what_a_whole_load_did(
    tmp_path: Path,
) -> None:
    reader = snapshot_of(tmp_path)
    whole, whole_seen, whole_leadership = replica_with_one_topic()
    whole.handle_load_snapshot(reader)

    replica, seen, leadership = replica_with_one_topic()
    assert isinstance(replica, PreparingListener)
    image_before, version_before = replica.image, replica.content_version
    prepared: list[object] = []
    worker = threading.Thread(target=lambda: prepared.append(replica.prepare_snapshot(reader)))
    worker.start()
    worker.join()
    (install,) = prepared
    assert replica.image is image_before and replica.committed_end == 2
    assert replica.content_version == version_before and not seen and not leadership

    assert callable(install)
    install()
    assert replica.committed_end == 10 and replica.metadata_offset == 9
    assert replica.content_version == version_before + 1
    assert replica.image.digest() == whole.image.digest()
    assert seen == whole_seen and leadership == whole_leadership
    (change,) = leadership
    assert change.offset == 9
    assert [(c.topic_name, c.partition_id) for c in change.gained] == [("t", 1)]
    assert [(c.topic_name, c.partition_id) for c in change.lost] == [("gone", 0)]
    ((offset, changes),) = seen
    assert offset == 9
    assert sorted((c.topic_name, c.partition_id, c.after is None) for c in changes) == [
        ("gone", 0, True),
        ("t", 0, False),
        ("t", 1, False),
    ]


def test_a_snapshot_the_replica_is_already_past_installs_nothing(tmp_path: Path) -> None:
    reader = snapshot_of(tmp_path)
    replica, seen, leadership = replica_with_one_topic()
    replica.handle_commit([make_batch(2, 1, [b""] * 20, is_control=True)])
    image = replica.image
    replica.prepare_snapshot(reader)()
    assert replica.image is image and replica.committed_end == 22
    assert not seen and not leadership
