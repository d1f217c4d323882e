"""``MetadataDir``: one node's whole on-disk state, and the rules that keep its parts agreeing.

Layout, under ``metadata.log.dir``::

    meta.properties                 node id, cluster id, directory id (written by format)
    .lock                           held while a process uses the directory
    __cluster_metadata-0/
        00000000000000000000.log    log segments (``FileLog``)
        log-start-offset            the log start checkpoint
        quorum-state                election state (``QuorumStateStore``)
        <end>-<epoch>.checkpoint    snapshots (``snapshots``)

Rules ``open`` enforces between the latest snapshot and the log, so that afterwards
``log start <= latest snapshot end <= log end`` (or, with no snapshot, the log starts at 0):

1. No snapshot and a log start above 0: the records below the start exist nowhere; refuse.
2. The snapshot ends past the log end: the log is reset to start empty at the snapshot end.
   This finishes an ``install_snapshot`` that a crash interrupted after the snapshot was in place.
3. The snapshot ends before the log start: records in between exist nowhere; refuse.
4. The snapshot ends inside the log: the log must agree with it, i.e. the snapshot end is a
   batch boundary and the batch before it has the snapshot's epoch. Otherwise the log holds an
   uncommitted history the snapshot superseded (again an interrupted install), and is reset to
   the snapshot end. If it agrees, the log is kept whole, including any part below the snapshot
   end kept for lagging followers.

The latest snapshot's checksum is verified at open: every rule above trusts it, and a corrupt
one is an error to resolve, not a reason to fall back silently to an older state.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from raftmeta.raft.batch import Batch, SnapshotId
from raftmeta.raft.state import ElectionState
from raftmeta.storage.errors import (
    AlreadyFormattedError,
    DirectoryLockedError,
    ForeignDirectoryError,
    MetadataDirError,
    NotFormattedError,
    SnapshotError,
)
from raftmeta.storage.fsutil import TEMP_SUFFIX, fsync_directory
from raftmeta.storage.log import DEFAULT_SEGMENT_BYTES, FileLog, RecoveryReport
from raftmeta.storage.meta_properties import (
    META_PROPERTIES_FILE,
    MetaProperties,
    check_id,
    generate_id,
    read_meta_properties,
    write_meta_properties,
)
from raftmeta.storage.quorum_state import QUORUM_STATE_FILE, QuorumStateStore
from raftmeta.storage.retention import TRIM_AT_ONCE, LogRetention, retained_start
from raftmeta.storage.snapshots import (
    SnapshotReader,
    SnapshotReceiver,
    SnapshotWriter,
    delete_snapshots_before,
    latest_snapshot,
    list_snapshots,
    remove_partial_snapshots,
    snapshot_path,
)

METADATA_PARTITION_DIR = "__cluster_metadata-0"
LOCK_FILE = ".lock"


@dataclass(frozen=True, slots=True)
class StartupReport:
    """What ``MetadataDir.open`` found and repaired, for the node's start-up log line."""

    log_recovery: RecoveryReport
    removed_files: tuple[str, ...] = ()
    """Leftovers of interrupted writes: snapshot ``.part`` files and temp files."""
    log_reset_to: int | None = None
    log_reset_reason: str = ""

    def repairs(self) -> list[str]:
        """One line per thing start-up cut, deleted or reset, naming file, offset and bytes:
        what an operator needs to notice a disk going bad. Empty when nothing was repaired;
        segments deleted only because the log start passed them are housekeeping, not repairs."""
        lines: list[str] = []
        recovery = self.log_recovery
        if not recovery.clean:
            where = f" in {recovery.truncated_segment}" if recovery.truncated_segment else ""
            lines.append(recovery.describe() + where)
        if recovery.segments_deleted:
            deleted = ", ".join(recovery.segments_deleted)
            lines.append(f"log segments deleted after the damage: {deleted}")
        if self.removed_files:
            lines.append(
                f"leftovers of interrupted writes removed: {', '.join(self.removed_files)}"
            )
        if self.log_reset_to is not None:
            lines.append(f"log reset to offset {self.log_reset_to}: {self.log_reset_reason}")
        return lines


def _order(snapshot_id: SnapshotId) -> tuple[int, int]:
    return (snapshot_id.end_offset, snapshot_id.epoch)


class MetadataDir:
    """An opened, locked, consistent metadata directory. Not thread-safe."""

    __slots__ = (
        "_lock_fd",
        "election_state",
        "latest_snapshot",
        "log",
        "meta",
        "partition_dir",
        "path",
        "quorum_state",
        "retention",
        "startup",
    )

    def __init__(
        self,
        path: Path,
        meta: MetaProperties,
        log: FileLog,
        quorum_state: QuorumStateStore,
        lock_fd: int,
        retention: LogRetention = TRIM_AT_ONCE,
    ) -> None:
        """Use ``MetadataDir.open``."""
        self.path = path
        self.retention = retention
        """How much log below the latest snapshot ``snapshot_taken`` keeps (see
        :mod:`raftmeta.storage.retention`)."""
        self.partition_dir = path / METADATA_PARTITION_DIR
        self.meta = meta
        self.log = log
        self.quorum_state = quorum_state
        self.election_state = ElectionState()
        """The election state as read at open; later writes go through ``quorum_state``."""
        self.latest_snapshot: SnapshotId | None = None
        self.startup = StartupReport(log_recovery=log.recovery)
        self._lock_fd: int | None = lock_fd

    # --------------------------------------------------------------------------- format

    @classmethod
    def format(
        cls,
        path: str | os.PathLike[str],
        node_id: int,
        cluster_id: str,
        *,
        ignore_formatted: bool = False,
        directory_id: str | None = None,
    ) -> MetaProperties:
        """Give ``path`` its identity. An already formatted directory is refused, or with
        ``ignore_formatted`` left exactly as it is (its properties are returned)."""
        root = Path(path)
        check_id("cluster id", cluster_id)
        if node_id < 0:
            raise ValueError(f"node id {node_id} is negative")
        if not root.exists():
            root.mkdir(parents=True)
            fsync_directory(root.parent)
        lock_fd = _lock(root)
        try:
            meta_path = root / META_PROPERTIES_FILE
            if meta_path.exists():
                existing = read_meta_properties(meta_path)
                if ignore_formatted:
                    return existing
                raise AlreadyFormattedError(
                    f"{root} is already formatted for node {existing.node_id} of cluster "
                    f"{existing.cluster_id}; pass ignore_formatted to leave it as it is"
                )
            partition = root / METADATA_PARTITION_DIR
            if partition.exists() and any(partition.iterdir()):
                raise MetadataDirError(
                    f"{partition} holds data but {root} has no {META_PROPERTIES_FILE}; "
                    "refusing to format over it"
                )
            partition.mkdir(exist_ok=True)
            fsync_directory(root)
            # meta.properties goes last: its presence is what "formatted" means.
            properties = MetaProperties(
                node_id=node_id,
                cluster_id=cluster_id,
                directory_id=directory_id if directory_id is not None else generate_id(),
            )
            write_meta_properties(meta_path, properties)
            return properties
        finally:
            os.close(lock_fd)

    # ----------------------------------------------------------------------------- open

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        expected_node_id: int,
        expected_cluster_id: str | None = None,
        *,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        retention: LogRetention = TRIM_AT_ONCE,
    ) -> MetadataDir:
        """Lock, check identity, clean up, recover the log, and apply the module's rules.

        ``retention`` is how much log below the latest snapshot to keep; the default deletes it
        as soon as a snapshot covers it, a server passes its ``metadata.max.retention.*``.
        """
        root = Path(path)
        meta_path = root / META_PROPERTIES_FILE
        if not meta_path.is_file():
            raise NotFormattedError(
                f"{root} is not formatted (no {META_PROPERTIES_FILE}); run 'raftmeta format' first"
            )
        lock_fd = _lock(root)
        try:
            meta = read_meta_properties(meta_path)
            if meta.node_id != expected_node_id:
                raise ForeignDirectoryError(
                    f"{root} belongs to node {meta.node_id}, not to node {expected_node_id}"
                )
            if expected_cluster_id is not None and meta.cluster_id != expected_cluster_id:
                raise ForeignDirectoryError(
                    f"{root} belongs to cluster {meta.cluster_id}, not to cluster "
                    f"{expected_cluster_id}"
                )
            partition = root / METADATA_PARTITION_DIR
            if not partition.is_dir():
                raise MetadataDirError(
                    f"{partition} is missing, and with it this node's log and votes; "
                    "restore it or format a fresh directory"
                )
            removed = [p.name for p in remove_partial_snapshots(partition)]
            stale_state = partition / (QUORUM_STATE_FILE + TEMP_SUFFIX)
            if stale_state.exists():
                stale_state.unlink()
                removed.append(stale_state.name)
            quorum_state = QuorumStateStore(partition / QUORUM_STATE_FILE)
            election_state = quorum_state.read()
            log = FileLog.open(partition, segment_bytes=segment_bytes)
        except BaseException:
            os.close(lock_fd)
            raise
        opened = cls(root, meta, log, quorum_state, lock_fd, retention)
        try:
            opened.election_state = election_state
            opened._reconcile(tuple(removed))
        except BaseException:
            opened.close()
            raise
        return opened

    def lost_votes(self) -> str | None:
        """Why this directory's votes are lost, or None: its ``quorum-state`` is missing, or
        holds an earlier epoch, although its log or latest snapshot holds records of an epoch
        after 0 (or after the file's).

        Every epoch a log or snapshot holds was learned, and persisted in ``quorum-state``,
        before its first record was written here (the vote goes to disk before the log), so
        such a file was lost, or put back from an older copy; it was not simply never written.
        A node that ran on as if it had never voted (Kafka reads a missing file as epoch 0 and
        no vote) could vote twice in an epoch it had already voted in, letting two leaders be
        elected; and it would campaign in an epoch below its own log's, which every peer
        refuses as malformed, so it would not rejoin either. Only the operator can tell
        whether the file can be restored, so a node refuses to start on such a directory
        (``quorum.disk.NodeDisk``); tools that only read it may.
        """
        snapshot = self.latest_snapshot
        seen = max(self.log.last_epoch or 0, snapshot.epoch if snapshot is not None else 0)
        path = self.quorum_state.path
        if not path.exists():
            if seen == 0:
                return None
            return (
                f"{path} is missing, but this directory holds records of epoch {seen}: the "
                "node's votes are lost and it could vote twice in one epoch; restore the file "
                "or format a fresh directory"
            )
        if self.election_state.epoch >= seen:
            return None
        return (
            f"{path} holds epoch {self.election_state.epoch}, but this directory holds records "
            f"of epoch {seen}: the file is older than the log, so the votes cast since are "
            "lost and the node could vote twice in one epoch; restore the current file or "
            "format a fresh directory"
        )

    def _reconcile(self, removed: tuple[str, ...]) -> None:
        log = self.log
        latest = latest_snapshot(self.partition_dir)
        reset_reason = ""
        if latest is None:
            if log.log_start_offset > 0:
                raise MetadataDirError(
                    f"{self.partition_dir}: the log starts at {log.log_start_offset} but no "
                    "snapshot holds the records below it"
                )
        else:
            reader = SnapshotReader(snapshot_path(self.partition_dir, latest))
            if reader.cluster_id != self.meta.cluster_id:
                raise ForeignDirectoryError(
                    f"{reader.path} belongs to cluster {reader.cluster_id}, not to "
                    f"{self.meta.cluster_id}"
                )
            end = latest.end_offset
            if end < log.log_start_offset:
                raise MetadataDirError(
                    f"{self.partition_dir}: the log starts at {log.log_start_offset}, after the "
                    f"latest snapshot ends at {end}; the records in between exist nowhere"
                )
            if end > log.log_end_offset:
                reset_reason = f"the log ended at {log.log_end_offset}, before the snapshot end"
            elif not _log_agrees_with(log, latest):
                reset_reason = f"the log disagrees with snapshot {latest.file_stem()}"
            if reset_reason:
                log.reset(end)
        self.latest_snapshot = latest
        self.startup = StartupReport(
            log_recovery=log.recovery,
            removed_files=removed,
            log_reset_to=latest.end_offset if reset_reason and latest else None,
            log_reset_reason=reset_reason,
        )

    # ------------------------------------------------------------------------ accessors

    @property
    def cluster_id(self) -> str:
        return self.meta.cluster_id

    @property
    def node_id(self) -> int:
        return self.meta.node_id

    @property
    def directory_id(self) -> str | None:
        """This directory's KIP-853 directory id; None if formatted before they existed."""
        return self.meta.directory_id

    @property
    def replay_start_offset(self) -> int:
        """Where the consensus core's in-memory log starts: the latest snapshot's end, or the
        log start when there is no snapshot. The on-disk log may start earlier (retention)."""
        if self.latest_snapshot is not None:
            return self.latest_snapshot.end_offset
        return self.log.log_start_offset

    def batches_after_snapshot(self) -> list[Batch]:
        """The batches the core replays on top of the latest snapshot."""
        return self.log.batches(from_offset=self.replay_start_offset)

    def snapshot_path(self, snapshot_id: SnapshotId) -> Path:
        return snapshot_path(self.partition_dir, snapshot_id)

    def read_snapshot(self, snapshot_id: SnapshotId | None = None) -> SnapshotReader:
        """A verified reader of ``snapshot_id`` (default: the latest)."""
        wanted = snapshot_id if snapshot_id is not None else self.latest_snapshot
        if wanted is None:
            raise SnapshotError(f"{self.partition_dir} has no snapshot")
        return SnapshotReader(self.snapshot_path(wanted))

    def snapshot_writer(
        self, snapshot_id: SnapshotId, *, created_ms: int | None = None
    ) -> SnapshotWriter:
        return SnapshotWriter(
            self.partition_dir, snapshot_id, cluster_id=self.cluster_id, created_ms=created_ms
        )

    def snapshot_receiver(self, snapshot_id: SnapshotId, size: int) -> SnapshotReceiver:
        return SnapshotReceiver(self.partition_dir, snapshot_id, size, cluster_id=self.cluster_id)

    # ------------------------------------------------------------------ snapshot events

    def install_snapshot(self, snapshot_id: SnapshotId) -> None:
        """A fetched snapshot is in place: the log restarts empty at its end, and older
        snapshots go. A crash part-way is finished by ``open`` (rules 2 and 4)."""
        self._check_new_snapshot(snapshot_id)
        self.log.reset(snapshot_id.end_offset)
        delete_snapshots_before(self.partition_dir, snapshot_id)
        self.latest_snapshot = snapshot_id

    def snapshot_taken(
        self,
        snapshot_id: SnapshotId,
        *,
        advance_log_start: bool = True,
        now_ms: int | None = None,
    ) -> None:
        """This node froze a snapshot of its own committed records. With
        ``advance_log_start`` the log start moves as far towards the snapshot end as
        ``retention`` allows (at ``now_ms``, default the wall clock), and the segments wholly
        below the new start go, with the snapshots older than it; the snapshot the log now
        starts at is kept so the retained history stays replayable. Without it, the log is kept
        for followers that lag behind and only older snapshots go."""
        self._check_new_snapshot(snapshot_id)
        end = snapshot_id.end_offset
        if not self.log.log_start_offset <= end <= self.log.log_end_offset:
            raise SnapshotError(
                f"snapshot {snapshot_id.file_stem()} does not end inside the log "
                f"[{self.log.log_start_offset}, {self.log.log_end_offset}]"
            )
        if not _log_agrees_with(self.log, snapshot_id):
            raise SnapshotError(
                f"snapshot {snapshot_id.file_stem()} does not end on a batch of its epoch"
            )
        keep_from = snapshot_id
        if advance_log_start:
            log = self.log
            on_disk = {s.end_offset: s for s in list_snapshots(self.partition_dir)}
            start = retained_start(
                self.retention,
                log.log_start_offset,
                [offset for offset in on_disk if offset <= end],
                log.bytes_from,
                log.newest_timestamp_below,
                int(time.time() * 1000) if now_ms is None else now_ms,
            )
            log.advance_start(start)
            # A log starting at 0 needs no snapshot to be replayed: then only the latest stays.
            keep_from = on_disk.get(start, snapshot_id)
            # Between the two, a snapshot serves nothing the log does not: they go too.
            between = [
                s for s in on_disk.values() if _order(keep_from) < _order(s) < _order(snapshot_id)
            ]
            for middle in between:
                self.snapshot_path(middle).unlink()
            if between:
                fsync_directory(self.partition_dir)
        delete_snapshots_before(self.partition_dir, keep_from)
        self.latest_snapshot = snapshot_id

    def _check_new_snapshot(self, snapshot_id: SnapshotId) -> None:
        if not self.snapshot_path(snapshot_id).is_file():
            raise SnapshotError(f"snapshot {snapshot_id.file_stem()} is not in place")
        if self.latest_snapshot is not None and _order(snapshot_id) < _order(self.latest_snapshot):
            raise SnapshotError(
                f"snapshot {snapshot_id.file_stem()} is older than the latest, "
                f"{self.latest_snapshot.file_stem()}"
            )

    # ---------------------------------------------------------------------------- close

    def close(self) -> None:
        """Close the log (without flushing) and release the directory lock."""
        self.log.close()
        if self._lock_fd is not None:
            fd, self._lock_fd = self._lock_fd, None
            os.close(fd)

    def __enter__(self) -> MetadataDir:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _log_agrees_with(log: FileLog, snapshot_id: SnapshotId) -> bool:
    """Whether the log's history up to the snapshot end is the snapshot's (rule 4)."""
    end = snapshot_id.end_offset
    if end == log.log_start_offset:
        return True
    batches = log.batches()
    if end == log.log_end_offset:
        return bool(batches) and batches[-1].epoch == snapshot_id.epoch
    try:
        following = log.batches(from_offset=end)
    except ValueError:
        return False  # the snapshot end is inside a batch
    before = batches[len(batches) - len(following) - 1]
    return before.epoch == snapshot_id.epoch


def _lock(root: Path) -> int:
    """Hold ``<root>/.lock`` exclusively; the lock dies with the process, never goes stale."""
    fd = os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DirectoryLockedError(f"{root} is in use by another process") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    return fd
