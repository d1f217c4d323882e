"""Which snapshot a node may take of its applied state, decided once for every runtime.

A snapshot ending at ``end_offset`` replaces the log below it, so it is only worth taking
when it reaches past the log start, and only allowed when everything it covers is committed:
a follower's uncommitted tail may still be truncated by a new leader, and a snapshot of it
could never be undone. Its id names the epoch of its last record, which the log still holds
(or the snapshot the log starts from does).

The quorum runtime (``raftmeta.quorum``) and the simulator (``raftmeta.sim``) both ask here,
so a bug found by the simulator is a bug fixed for the real node too.
"""

from __future__ import annotations

from raftmeta.raft.batch import SnapshotId
from raftmeta.raft.log import RaftLog


def snapshot_id_for(log: RaftLog, high_watermark: int, end_offset: int) -> SnapshotId | None:
    """The id of a snapshot of the state up to ``end_offset``, or ``None`` when none may be
    taken there (nothing past the log start, or not yet committed)."""
    if end_offset <= log.start_offset or end_offset > high_watermark:
        return None
    return SnapshotId(end_offset, log.epoch_at(end_offset - 1))
