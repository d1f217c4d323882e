"""Finding a controller snapshot newer than some committed offset, and keeping a copy of it,
or of the whole committed history up to it.

The controllers take a snapshot every ``metadata.log.max.snapshot.interval.ms`` and delete the
older ones, so what the audit reads is first copied out of the node's directory: Spark must
not find it gone halfway through. The audits read an export of the history
(``raftmeta log export``): a snapshot alone holds no history, and the audit's leadership plot
is the story of the killed broker's leaderships leaving and coming back.
"""

from __future__ import annotations

import logging
import shutil
import uuid
from collections.abc import Iterable
from pathlib import Path

from raftmeta.devkit.demo.tools import run_tool
from raftmeta.raft.batch import SnapshotId
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR
from raftmeta.storage.errors import StorageError
from raftmeta.storage.meta_properties import META_PROPERTIES_FILE, read_meta_properties
from raftmeta.storage.snapshots import list_snapshots, snapshot_path

log = logging.getLogger(__name__)


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


def export_history_after(node_dirs: Iterable[Path], offset: int, into: Path) -> Path | None:
    """Export into a fresh folder under ``into`` the committed history of the controller with
    the newest snapshot past ``offset``, up to that snapshot's end (committed, since only
    committed records are snapshotted), with ``raftmeta log export``. Returns the exported node
    directory, or None while no snapshot reaches that far (or the export failed, say because a
    snapshot was deleted while it read it: the caller polls again)."""
    newest = newest_snapshot(node_dirs)
    if newest is None or newest[1].end_offset <= offset:
        return None
    partition_dir, snapshot_id = newest
    try:
        cluster_id = read_meta_properties(partition_dir.parent / META_PROPERTIES_FILE).cluster_id
    except (FileNotFoundError, StorageError):
        return None
    name = f"{cluster_id}-{uuid.uuid4().hex[:8]}"
    into.mkdir(parents=True, exist_ok=True)
    export = run_tool(
        [
            "log",
            "export",
            str(partition_dir.parent),
            str(into),
            "--name",
            name,
            "--high-watermark",
            str(snapshot_id.end_offset),
        ]
    )
    if export.status != 0:
        log.info("export of %s failed, trying again: %s", partition_dir, export.last_line())
        return None
    return into / name
