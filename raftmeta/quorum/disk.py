"""Carries out a Ready's storage work on the node's ``MetadataDir``.

Every method here blocks on the disk, so the node calls them through ``asyncio.to_thread``;
the driver awaits each call before the next, so the directory, which is not thread-safe, only
ever has one thread in it.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from raftmeta.raft.batch import SnapshotId
from raftmeta.raft.config import RaftConfig
from raftmeta.raft.core import RaftCore
from raftmeta.raft.log import RaftLog
from raftmeta.raft.membership import Membership
from raftmeta.raft.ready import (
    AdvanceLogStart,
    AppendBatches,
    InstallSnapshot,
    Ready,
    TruncateLog,
    WriteSnapshotChunk,
)
from raftmeta.storage.data_dir import MetadataDir
from raftmeta.storage.errors import QuorumStateError
from raftmeta.storage.membership_files import write_snapshot_membership
from raftmeta.storage.snapshots import SnapshotReceiver, read_chunk


class NodeDisk:
    """A node's durable state: applies log operations and election state, then syncs."""

    def __init__(self, directory: MetadataDir) -> None:
        """Take over ``directory``. One whose votes are lost (``MetadataDir.lost_votes``) is
        closed and refused with ``QuorumStateError``: a node must not vote from it."""
        lost = directory.lost_votes()
        if lost is not None:
            directory.close()
            raise QuorumStateError(lost)
        self.directory = directory
        self._receiver: SnapshotReceiver | None = None

    def new_core(
        self,
        membership: Membership,
        config: RaftConfig,
        now_ms: int,
        rng: random.Random,
    ) -> RaftCore:
        """A core that resumes from what is on disk: the latest snapshot and the log after it,
        with ``membership`` in effect where that log starts."""
        directory = self.directory
        latest = directory.latest_snapshot
        log = RaftLog(
            directory.batches_after_snapshot(),
            start_offset=directory.replay_start_offset,
            snapshot=latest,
        )
        size = directory.snapshot_path(latest).stat().st_size if latest is not None else 0
        return RaftCore(
            directory.node_id,
            membership.voters,
            config,
            election_state=directory.election_state,
            log=log,
            now_ms=now_ms,
            rng=rng,
            latest_snapshot=latest,
            latest_snapshot_size=size,
            directory_id=directory.directory_id,
            # A cut log may have lost acknowledged records: the core withholds its votes
            # until a leader has brought it up to date.
            log_repaired=not directory.startup.log_recovery.clean,
            kraft_version=membership.kraft_version,
        )

    def persist(self, ready: Ready) -> None:
        """Make ``ready`` durable: the vote before anything that may depend on it, then the log.

        Only after this returns may the node send ``messages_after_persist``.
        """
        directory = self.directory
        if ready.election_state is not None:
            directory.quorum_state.write(ready.election_state)
        appended = False
        for op in ready.log_ops:
            if isinstance(op, AppendBatches):
                directory.log.append(op.batches)
                appended = True
            elif isinstance(op, TruncateLog):
                directory.log.truncate_to(op.end_offset)
            elif isinstance(op, WriteSnapshotChunk):
                self._write_chunk(op)
            elif isinstance(op, InstallSnapshot):
                self._install(op.snapshot_id, op.membership)
            elif isinstance(op, AdvanceLogStart):
                directory.snapshot_taken(op.snapshot_id, advance_log_start=True)
        if appended:
            directory.log.flush()

    def _write_chunk(self, op: WriteSnapshotChunk) -> None:
        receiver = self._receiver
        if receiver is not None and (receiver.snapshot_id != op.snapshot_id or op.position == 0):
            receiver.abort()
            receiver = None
        if receiver is None:
            receiver = self.directory.snapshot_receiver(op.snapshot_id, op.size)
            self._receiver = receiver
        receiver.write_chunk(op.position, op.data)

    def _install(self, snapshot_id: SnapshotId, membership: Membership | None) -> None:
        receiver = self._receiver
        self._receiver = None
        if receiver is None or receiver.snapshot_id != snapshot_id:
            raise AssertionError(f"snapshot {snapshot_id} was installed before it was received")
        if membership is not None:
            # Before the snapshot is in place: once it is, the log before it (and any
            # VotersRecord there) is gone, and only this file says who the voters are.
            write_snapshot_membership(self.directory.partition_dir, snapshot_id, membership)
        receiver.finish()
        self.directory.install_snapshot(snapshot_id)

    def read_snapshot_chunk(self, snapshot_id: SnapshotId, position: int, length: int) -> bytes:
        return read_chunk(self.directory.snapshot_path(snapshot_id), position, length)

    def write_snapshot(
        self,
        snapshot_id: SnapshotId,
        records: Iterable[bytes],
        membership: Membership | None = None,
    ) -> int:
        """Freeze a snapshot of the state machine, with the voter set in effect at its end
        (a dynamic quorum's) kept beside it first; returns its size in bytes."""
        if membership is not None:
            write_snapshot_membership(self.directory.partition_dir, snapshot_id, membership)
        with self.directory.snapshot_writer(snapshot_id) as writer:
            writer.append(records)
            path = writer.freeze()
        return path.stat().st_size

    def close(self) -> None:
        if self._receiver is not None:
            self._receiver.abort()
            self._receiver = None
        self.directory.close()
