"""The one rule for where a node may snapshot its applied state."""

from __future__ import annotations

from raftmeta.raft.batch import SnapshotId, make_batch
from raftmeta.raft.log import RaftLog
from raftmeta.raft.snapshot_policy import snapshot_id_for


def _log() -> RaftLog:
    """Offsets 0-1 in epoch 1, 2-4 in epoch 2."""
    return RaftLog([make_batch(0, 1, [b"a", b"b"]), make_batch(2, 2, [b"c", b"d", b"e"])])


def test_a_committed_end_past_the_log_start_names_the_epoch_of_its_last_record() -> None:
    assert snapshot_id_for(_log(), 5, 2) == SnapshotId(2, 1)
    assert snapshot_id_for(_log(), 5, 5) == SnapshotId(5, 2)


def test_nothing_past_the_log_start_is_not_worth_a_snapshot() -> None:
    assert snapshot_id_for(_log(), 5, 0) is None
    snapshotted = RaftLog([make_batch(2, 2, [b"c"])], start_offset=2, snapshot=SnapshotId(2, 1))
    assert snapshot_id_for(snapshotted, 3, 2) is None
    assert snapshot_id_for(snapshotted, 3, 3) == SnapshotId(3, 2)


def test_an_uncommitted_end_may_not_be_snapshotted() -> None:
    assert snapshot_id_for(_log(), 4, 5) is None
