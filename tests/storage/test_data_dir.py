from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.raft.batch import SnapshotId
from raftmeta.raft.state import ElectionState
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR, MetadataDir
from raftmeta.storage.errors import (
    AlreadyFormattedError,
    DirectoryLockedError,
    ForeignDirectoryError,
    MetadataDirError,
    NotFormattedError,
    QuorumStateError,
    SnapshotCorruptError,
    SnapshotError,
)
from raftmeta.storage.log import FileLog
from raftmeta.storage.meta_properties import read_meta_properties
from raftmeta.storage.snapshots import SnapshotWriter, list_snapshots, read_chunk

from .support import batch_run

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"


def _formatted(tmp_path: Path, node_id: int = 1) -> Path:
    root = tmp_path / "metadata"
    MetadataDir.format(root, node_id, CLUSTER)
    return root


def _one_line(error: BaseException) -> str:
    message = str(error)
    assert "\n" not in message
    return message


def _snapshot(directory: MetadataDir, snapshot_id: SnapshotId, records: int = 3) -> None:
    writer = directory.snapshot_writer(snapshot_id, created_ms=1)
    writer.append([f"image-{i}".encode() for i in range(records)])
    writer.freeze()


def test_format_lays_out_the_directory(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b"
    properties = MetadataDir.format(root, 4, CLUSTER, directory_id="dir-1")
    assert read_meta_properties(root / "meta.properties") == properties
    assert (properties.node_id, properties.cluster_id) == (4, CLUSTER)
    assert (root / METADATA_PARTITION_DIR).is_dir()
    with MetadataDir.open(root, 4, CLUSTER) as opened:
        assert (opened.node_id, opened.cluster_id) == (4, CLUSTER)
        assert opened.election_state == ElectionState()
        assert opened.latest_snapshot is None
        assert (opened.log.log_start_offset, opened.log.log_end_offset) == (0, 0)


def test_format_refuses_a_formatted_directory_unless_told_to_skip_it(tmp_path: Path) -> None:
    root = _formatted(tmp_path)
    before = (root / "meta.properties").read_bytes()
    with pytest.raises(AlreadyFormattedError) as caught:
        MetadataDir.format(root, 2, "other")
    assert "already formatted for node 1" in _one_line(caught.value)
    skipped = MetadataDir.format(root, 2, "other", ignore_formatted=True)
    assert (skipped.node_id, skipped.cluster_id) == (1, CLUSTER)
    assert (root / "meta.properties").read_bytes() == before


def test_format_refuses_to_adopt_an_orphaned_log(tmp_path: Path) -> None:
    partition = tmp_path / METADATA_PARTITION_DIR
    partition.mkdir()
    (partition / "quorum-state").write_text("{}")
    with pytest.raises(MetadataDirError, match="holds data"):
        MetadataDir.format(tmp_path, 1, CLUSTER)


def test_format_checks_its_arguments(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cluster id"):
        MetadataDir.format(tmp_path, 1, "not a valid id")
    with pytest.raises(ValueError, match="negative"):
        MetadataDir.format(tmp_path, -1, CLUSTER)


def test_open_refuses_unformatted_foreign_and_locked_directories(tmp_path: Path) -> None:
    with pytest.raises(NotFormattedError) as caught:
        MetadataDir.open(tmp_path / "nothing", 1)
    assert "not formatted" in _one_line(caught.value)

    root = _formatted(tmp_path, node_id=1)
    with pytest.raises(ForeignDirectoryError) as caught_node:
        MetadataDir.open(root, 2)
    assert "belongs to node 1, not to node 2" in _one_line(caught_node.value)
    with pytest.raises(ForeignDirectoryError) as caught_cluster:
        MetadataDir.open(root, 1, "someone-else")
    assert f"belongs to cluster {CLUSTER}, not to cluster someone-else" in _one_line(
        caught_cluster.value
    )

    first = MetadataDir.open(root, 1)
    with pytest.raises(DirectoryLockedError) as caught_lock:
        MetadataDir.open(root, 1)
    assert "in use" in _one_line(caught_lock.value)
    first.close()
    MetadataDir.open(root, 1).close()


def test_open_refuses_a_directory_whose_log_and_votes_vanished(tmp_path: Path) -> None:
    root = _formatted(tmp_path)
    (root / METADATA_PARTITION_DIR).rmdir()
    with pytest.raises(MetadataDirError, match="missing"):
        MetadataDir.open(root, 1)


def test_open_cleans_leftovers_and_refuses_a_corrupt_quorum_state(tmp_path: Path) -> None:
    root = _formatted(tmp_path)
    partition = root / METADATA_PARTITION_DIR
    (partition / "00000000000000000009-0000000001.checkpoint.part").write_bytes(b"half")
    (partition / "quorum-state.tmp").write_text("{")
    with MetadataDir.open(root, 1) as opened:
        assert sorted(opened.startup.removed_files) == [
            "00000000000000000009-0000000001.checkpoint.part",
            "quorum-state.tmp",
        ]
        opened.quorum_state.write(ElectionState(epoch=3, voted_id=2))
    with MetadataDir.open(root, 1) as opened:
        assert opened.election_state == ElectionState(epoch=3, voted_id=2)
    (partition / "quorum-state").write_text("garbage")
    with pytest.raises(QuorumStateError):
        MetadataDir.open(root, 1)
    (partition / "quorum-state").unlink()
    MetadataDir.open(root, 1).close()  # the lock was released by the failed open


def test_snapshot_taken_moves_the_log_start_and_survives_reopen(tmp_path: Path) -> None:
    root = _formatted(tmp_path)
    batches = batch_run(0, [1, 1, 2, 2])
    with MetadataDir.open(root, 1) as opened:
        opened.log.append(batches)
        opened.log.flush()
        _snapshot(opened, SnapshotId(3, 1))
        opened.snapshot_taken(SnapshotId(3, 1))
        _snapshot(opened, SnapshotId(9, 2))
        opened.snapshot_taken(SnapshotId(9, 2))
        assert list_snapshots(opened.partition_dir) == [SnapshotId(9, 2)]
        assert opened.log.log_start_offset == 9
    with MetadataDir.open(root, 1) as opened:
        assert opened.latest_snapshot == SnapshotId(9, 2)
        assert opened.startup.log_reset_to is None
        assert opened.replay_start_offset == 9
        assert opened.batches_after_snapshot() == batches[3:]
        assert list(opened.read_snapshot().records()) == [b"image-0", b"image-1", b"image-2"]


def test_snapshot_taken_can_keep_the_log_for_lagging_followers(tmp_path: Path) -> None:
    root = _formatted(tmp_path)
    batches = batch_run(0, [1, 1, 2, 2])
    with MetadataDir.open(root, 1) as opened:
        opened.log.append(batches)
        opened.log.flush()
        _snapshot(opened, SnapshotId(6, 1))
        opened.snapshot_taken(SnapshotId(6, 1), advance_log_start=False)
    with MetadataDir.open(root, 1) as opened:
        assert opened.log.log_start_offset == 0
        assert opened.replay_start_offset == 6
        assert opened.batches_after_snapshot() == batches[2:]


def test_snapshot_taken_refuses_snapshots_that_do_not_fit(tmp_path: Path) -> None:
    root = _formatted(tmp_path)
    with MetadataDir.open(root, 1) as opened:
        opened.log.append(batch_run(0, [1, 2]))
        with pytest.raises(SnapshotError, match="not in place"):
            opened.snapshot_taken(SnapshotId(3, 1))
        _snapshot(opened, SnapshotId(4, 2))
        with pytest.raises(SnapshotError, match="batch of its epoch"):
            opened.snapshot_taken(SnapshotId(4, 2))
        _snapshot(opened, SnapshotId(3, 2))
        with pytest.raises(SnapshotError, match="batch of its epoch"):
            opened.snapshot_taken(SnapshotId(3, 2))
        _snapshot(opened, SnapshotId(9, 2))
        with pytest.raises(SnapshotError, match="inside the log"):
            opened.snapshot_taken(SnapshotId(9, 2))
        _snapshot(opened, SnapshotId(6, 2))
        opened.snapshot_taken(SnapshotId(6, 2))
        _snapshot(opened, SnapshotId(5, 2))
        with pytest.raises(SnapshotError, match="older than the latest"):
            opened.snapshot_taken(SnapshotId(5, 2))


def _receive(opened: MetadataDir, source: Path, snapshot_id: SnapshotId) -> None:
    size = source.stat().st_size
    receiver = opened.snapshot_receiver(snapshot_id, size)
    while not receiver.complete:
        receiver.write_chunk(
            receiver.received_bytes, read_chunk(source, receiver.received_bytes, 64)
        )
    receiver.finish()


def _leader_snapshot(tmp_path: Path, snapshot_id: SnapshotId) -> Path:
    leader_root = tmp_path / "leader"
    MetadataDir.format(leader_root, 9, CLUSTER)
    with MetadataDir.open(leader_root, 9) as leader:
        _snapshot(leader, snapshot_id, records=50)
        return leader.snapshot_path(snapshot_id)


def test_install_snapshot_replaces_the_log(tmp_path: Path) -> None:
    source = _leader_snapshot(tmp_path, SnapshotId(100, 5))
    root = _formatted(tmp_path)
    with MetadataDir.open(root, 1) as opened:
        opened.log.append(batch_run(0, [1, 1]))
        opened.log.flush()
        _snapshot(opened, SnapshotId(3, 1))
        opened.snapshot_taken(SnapshotId(3, 1))
        _receive(opened, source, SnapshotId(100, 5))
        opened.install_snapshot(SnapshotId(100, 5))
        assert (opened.log.log_start_offset, opened.log.log_end_offset) == (100, 100)
        assert list_snapshots(opened.partition_dir) == [SnapshotId(100, 5)]
        opened.log.append(batch_run(100, [5]))
        opened.log.flush()
    with MetadataDir.open(root, 1) as opened:
        assert opened.latest_snapshot == SnapshotId(100, 5)
        assert opened.batches_after_snapshot() == batch_run(100, [5])
        assert opened.read_snapshot().record_count == 50


def test_open_finishes_an_install_interrupted_before_the_log_reset(tmp_path: Path) -> None:
    source = _leader_snapshot(tmp_path, SnapshotId(100, 5))
    root = _formatted(tmp_path)
    with MetadataDir.open(root, 1) as opened:
        opened.log.append(batch_run(0, [1, 1]))
        opened.log.flush()
        _receive(opened, source, SnapshotId(100, 5))
        # The process dies here, before install_snapshot.
    with MetadataDir.open(root, 1) as opened:
        assert opened.startup.log_reset_to == 100
        assert "before the snapshot end" in opened.startup.log_reset_reason
        assert (opened.log.log_start_offset, opened.log.log_end_offset) == (100, 100)


def test_open_resets_a_log_that_disagrees_with_the_snapshot(tmp_path: Path) -> None:
    source = _leader_snapshot(tmp_path, SnapshotId(6, 3))
    root = _formatted(tmp_path)
    with MetadataDir.open(root, 1) as opened:
        opened.log.append(batch_run(0, [1, 1, 2, 2]))  # epoch 1 at offset 5, not 3
        opened.log.flush()
        _receive(opened, source, SnapshotId(6, 3))
    with MetadataDir.open(root, 1) as opened:
        assert "disagrees" in opened.startup.log_reset_reason
        assert (opened.log.log_start_offset, opened.log.log_end_offset) == (6, 6)


def test_open_keeps_a_log_that_agrees_with_the_snapshot(tmp_path: Path) -> None:
    root = _formatted(tmp_path)
    batches = batch_run(0, [1, 1, 2, 2])
    with MetadataDir.open(root, 1) as opened:
        opened.log.append(batches)
        opened.log.flush()
        _snapshot(opened, SnapshotId(6, 1))
        # The process dies before snapshot_taken.
    with MetadataDir.open(root, 1) as opened:
        assert opened.startup.log_reset_to is None
        assert opened.log.batches() == batches
        assert opened.replay_start_offset == 6


def test_open_refuses_a_log_no_snapshot_covers(tmp_path: Path) -> None:
    root = _formatted(tmp_path)
    partition = root / METADATA_PARTITION_DIR
    with FileLog.open(partition) as log:
        log.append(batch_run(0, [1, 1, 1]))
        log.advance_start(6)
    with pytest.raises(MetadataDirError, match="no snapshot holds"):
        MetadataDir.open(root, 1)


def test_open_refuses_a_snapshot_that_ends_before_the_log_starts(tmp_path: Path) -> None:
    root = _formatted(tmp_path)
    partition = root / METADATA_PARTITION_DIR
    with FileLog.open(partition) as log:
        log.append(batch_run(0, [1, 1, 1]))
        log.advance_start(6)
    SnapshotWriter(partition, SnapshotId(3, 1), cluster_id=CLUSTER).freeze()
    with pytest.raises(MetadataDirError, match="exist nowhere"):
        MetadataDir.open(root, 1)


def test_open_refuses_a_corrupt_or_foreign_latest_snapshot(tmp_path: Path) -> None:
    root = _formatted(tmp_path)
    with MetadataDir.open(root, 1) as opened:
        opened.log.append(batch_run(0, [1]))
        opened.log.flush()
        _snapshot(opened, SnapshotId(3, 1))
        path = opened.snapshot_path(SnapshotId(3, 1))
    raw = bytearray(path.read_bytes())
    raw[-20] ^= 0x01
    path.write_bytes(bytes(raw))
    with pytest.raises(SnapshotCorruptError):
        MetadataDir.open(root, 1)
    path.unlink()
    # As if copied over from a node of another cluster.
    SnapshotWriter(root / METADATA_PARTITION_DIR, SnapshotId(3, 1), cluster_id="another").freeze()
    with pytest.raises(ForeignDirectoryError, match="another"):
        MetadataDir.open(root, 1)


def test_a_missing_quorum_state_beside_an_elected_log_means_lost_votes(tmp_path: Path) -> None:
    root = _formatted(tmp_path)
    partition = root / METADATA_PARTITION_DIR
    with MetadataDir.open(root, 1) as opened:
        assert opened.lost_votes() is None, "a fresh directory never voted"
        opened.quorum_state.write(ElectionState(epoch=2, voted_id=1, leader_id=1))
        opened.log.append(batch_run(0, [1, 2]))
        opened.log.flush()
    with MetadataDir.open(root, 1) as opened:
        assert opened.lost_votes() is None
    (partition / "quorum-state").unlink()
    with MetadataDir.open(root, 1) as opened:
        lost = opened.lost_votes()
    assert lost is not None and _one_line(QuorumStateError(lost)) == lost
    assert lost.startswith(str(partition / "quorum-state")) and "epoch 2" in lost


def test_a_quorum_state_older_than_the_log_means_lost_votes(tmp_path: Path) -> None:
    root = _formatted(tmp_path)
    with MetadataDir.open(root, 1) as opened:
        opened.quorum_state.write(ElectionState(epoch=1, voted_id=1))
        opened.log.append(batch_run(0, [1, 2]))
        opened.log.flush()
    with MetadataDir.open(root, 1) as opened:
        lost = opened.lost_votes()
        assert lost is not None and "holds epoch 1" in lost and "records of epoch 2" in lost
        opened.quorum_state.write(ElectionState(epoch=2, voted_id=1))
    with MetadataDir.open(root, 1) as opened:
        assert opened.lost_votes() is None
