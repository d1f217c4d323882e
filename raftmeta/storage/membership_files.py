"""Where a node's voter set is kept outside its log: the bootstrap checkpoint and snapshots'.

A dynamic quorum's voter set is the latest VotersRecord in a node's log (KIP-853). Two places
hold one that is not in the log:

- the **bootstrap checkpoint**, ``bootstrap.checkpoint`` in the partition directory, written by
  ``raftmeta format --standalone`` or ``--initial-controllers`` (as ``kafka-storage format``
  writes its 0-0 checkpoint): a KRaftVersionRecord and the first VotersRecord. Its voters are
  the log's voters until a VotersRecord is in the log; the first leader copies it into the log
  so that nodes fetching from the start learn it.
- a **snapshot's** voter set, ``<end>-<epoch>.voters`` beside the snapshot it belongs to. The
  snapshot replaces the log before it, VotersRecords included, so the set in effect at its end
  must be kept with it (Kafka writes the records into the snapshot itself; here the snapshot
  file stays the state machine's alone, so the set sits beside it).

Both files hold one control batch in the log's own encoding, CRC included, written atomically
with fsync: a torn or damaged one is refused rather than read as another set.
"""

from __future__ import annotations

from pathlib import Path

from raftmeta.raft.batch import SnapshotId
from raftmeta.raft.control import membership_batch, membership_in
from raftmeta.raft.membership import Membership
from raftmeta.storage.codec import decode_batches, encode_batch
from raftmeta.storage.errors import BatchDecodeError, MetadataDirError
from raftmeta.storage.fsutil import fsync_directory, write_file_atomically
from raftmeta.storage.snapshots import SNAPSHOT_SUFFIX

BOOTSTRAP_FILE = "bootstrap.checkpoint"
SNAPSHOT_VOTERS_SUFFIX = ".voters"


def bootstrap_path(partition_dir: Path) -> Path:
    return partition_dir / BOOTSTRAP_FILE


def snapshot_voters_path(partition_dir: Path, snapshot_id: SnapshotId) -> Path:
    return partition_dir / (snapshot_id.file_stem() + SNAPSHOT_VOTERS_SUFFIX)


def write_membership(path: Path, membership: Membership) -> None:
    """Write ``membership`` to ``path`` durably (file and directory entry)."""
    batch = membership_batch(0, 0, membership.voters, kraft_version=membership.kraft_version)
    write_file_atomically(path, encode_batch(batch))
    fsync_directory(path.parent)


def read_membership(path: Path) -> Membership | None:
    """The membership in ``path``; None if there is no such file. ``MetadataDirError`` for a
    file that is damaged or holds no voter set."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        batches = decode_batches(data)
    except BatchDecodeError as error:
        raise MetadataDirError(f"{path}: damaged voter set ({error})") from None
    if len(batches) != 1:
        raise MetadataDirError(f"{path}: expected one control batch, found {len(batches)}")
    kraft_version, voters = membership_in(batches[0])
    if kraft_version is None or voters is None or not voters:
        raise MetadataDirError(f"{path}: holds no kraft.version and voter set")
    return Membership(kraft_version, voters)


def write_snapshot_membership(
    partition_dir: Path, snapshot_id: SnapshotId, membership: Membership
) -> None:
    """Keep ``membership`` with snapshot ``snapshot_id``, before the snapshot is published.

    The sets of snapshots already deleted go; the others stay, since a crash before this
    snapshot is in place leaves an older one the latest, and its set still in use."""
    path = snapshot_voters_path(partition_dir, snapshot_id)
    write_membership(path, membership)
    for other in partition_dir.glob("*" + SNAPSHOT_VOTERS_SUFFIX):
        stem = other.name.removesuffix(SNAPSHOT_VOTERS_SUFFIX)
        if other != path and not (partition_dir / (stem + SNAPSHOT_SUFFIX)).exists():
            other.unlink(missing_ok=True)


def log_start_membership(partition_dir: Path, latest: SnapshotId | None) -> Membership | None:
    """The membership in effect where a node's log starts: its latest snapshot's set, else
    the bootstrap checkpoint's; None for a static quorum (or a node that must discover it)."""
    if latest is not None:
        kept = read_membership(snapshot_voters_path(partition_dir, latest))
        if kept is not None:
            return kept
    return read_membership(bootstrap_path(partition_dir))
