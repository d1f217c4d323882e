"""Finding a controller snapshot newer than some committed offset, and keeping a copy of it.

The controllers take a snapshot every ``metadata.log.max.snapshot.interval.ms`` and delete the
older ones, so the file the audit reads is first copied out of the node's directory: Spark must
not find it gone halfway through.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from raftmeta.raft.batch import SnapshotId
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR
from raftmeta.storage.snapshots import list_snapshots, snapshot_path


def newest_snapshot(node_dirs: Iterable[Path]) -> tuple[Path, SnapshotId] | None:
    """The snapshot with the highest end offset in any of these metadata directories."""
    best: tuple[Path, SnapshotId] | None = None
    for node_dir in node_dirs:
        partition_dir = node_dir / METADATA_PARTITION_DIR
        try:
            found = list_snapshots(partition_dir)
        except FileNotFoundError:
            continue
        if found and (best is None or found[-1].end_offset > best[1].end_offset):
            best = (partition_dir, found[-1])
    return best


def copy_snapshot_after(node_dirs: Iterable[Path], offset: int, into: Path) -> Path | None:
    """Copy into ``into`` the newest snapshot holding everything up to ``offset``, if any.

    Returns the copy's path, or None when no snapshot reaches that far yet (or the one found
    was deleted before it could be copied: the caller polls again).
    """
    newest = newest_snapshot(node_dirs)
    if newest is None or newest[1].end_offset <= offset:
        return None
    source = snapshot_path(newest[0], newest[1])
    into.mkdir(parents=True, exist_ok=True)
    target = into / source.name
    try:
        shutil.copyfile(source, target)
    except FileNotFoundError:
        return None
    return target
