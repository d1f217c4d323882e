"""Finding what a path holds: which clusters, which snapshot, which log segments.

A path given to the reader (or to ``raftmeta audit``) is one of:

- a snapshot file (``*.checkpoint``): one cluster, named by the cluster id in the snapshot's
  header (or by the file name when the header has none);
- a node's metadata directory (holding ``meta.properties`` and ``__cluster_metadata-0/``, or the
  ``__cluster_metadata-0`` folder itself): one cluster, named by ``meta.properties``' cluster id
  (else the latest snapshot's, else the directory name); its state is the latest snapshot plus
  the log after it;
- a folder of many clusters: every snapshot file and node directory directly inside it is one
  cluster, named by its entry name (the file name without ``.checkpoint``, or the directory
  name). Entry names, not cluster ids, tell them apart because a folder may well hold copies
  from several nodes of one cluster, or snapshots of one cluster taken months apart.

Nothing here imports Spark: the same discovery serves the Spark data source and the plain
Python audit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from raftmeta.storage.errors import MetaPropertiesError, StorageError
from raftmeta.storage.log import list_segment_files
from raftmeta.storage.meta_properties import META_PROPERTIES_FILE, read_meta_properties
from raftmeta.storage.snapshots import SNAPSHOT_SUFFIX, SnapshotReader, list_snapshots

METADATA_PARTITION_DIR = "__cluster_metadata-0"


class AnalyticsInputError(Exception):
    """A path that is missing or holds nothing raftmeta can read; the message is one line."""


@dataclass(frozen=True, slots=True)
class Source:
    """One cluster's files: a snapshot, log segments after it, or both. Picklable."""

    cluster: str
    snapshot: str | None
    """Path of the snapshot the state starts from (the latest one in a directory)."""
    segments: tuple[str, ...] = ()
    """Log segment paths, lowest base offset first; empty for a bare snapshot file."""

    @property
    def description(self) -> str:
        return self.snapshot if self.snapshot is not None and not self.segments else self.cluster


def discover(path: str | os.PathLike[str]) -> list[Source]:
    """The clusters under ``path``, in name order; raises :class:`AnalyticsInputError`."""
    root = Path(path)
    if not root.exists():
        raise AnalyticsInputError(f"{root}: no such file or directory")
    if root.is_file():
        reader = _open_snapshot(root)
        return [Source(reader.cluster_id or _stem(root), str(root))]
    if _is_node_directory(root):
        return [_directory_source(root, cluster=None)]
    found: list[Source] = []
    for entry in sorted(root.iterdir(), key=lambda child: child.name):
        if entry.is_file() and entry.name.endswith(SNAPSHOT_SUFFIX):
            _open_snapshot(entry)
            found.append(Source(_stem(entry), str(entry)))
        elif entry.is_dir() and _is_node_directory(entry):
            found.append(_directory_source(entry, cluster=entry.name))
    if not found:
        raise AnalyticsInputError(
            f"{root}: not a raftmeta snapshot, metadata directory or folder of them"
        )
    return found


def _stem(path: Path) -> str:
    name = path.name
    return name[: -len(SNAPSHOT_SUFFIX)] if name.endswith(SNAPSHOT_SUFFIX) else name


def _open_snapshot(path: Path) -> SnapshotReader:
    try:
        return SnapshotReader(path)
    except StorageError as error:
        raise AnalyticsInputError(f"not a raftmeta snapshot: {error}") from None
    except OSError as error:
        raise AnalyticsInputError(f"{path}: {error.strerror}") from None


def _log_folder(directory: Path) -> Path:
    nested = directory / METADATA_PARTITION_DIR
    return nested if nested.is_dir() else directory


def _is_node_directory(directory: Path) -> bool:
    if (directory / META_PROPERTIES_FILE).is_file() or (
        directory / METADATA_PARTITION_DIR
    ).is_dir():
        return True
    return bool(list_snapshots(directory) or list_segment_files(directory))


def _directory_source(directory: Path, cluster: str | None) -> Source:
    folder = _log_folder(directory)
    snapshots = list_snapshots(folder)
    latest = None
    if snapshots:
        latest = folder / (snapshots[-1].file_stem() + SNAPSHOT_SUFFIX)
        reader = _open_snapshot(latest)
    segments = tuple(str(path) for _, path in list_segment_files(folder))
    if latest is None and not segments:
        raise AnalyticsInputError(f"{directory}: holds neither a snapshot nor a log segment")
    if cluster is None:
        cluster = _cluster_id(directory)
        if cluster is None and latest is not None:
            cluster = reader.cluster_id or None
        if cluster is None:
            cluster = directory.resolve().name
    return Source(cluster, None if latest is None else str(latest), segments)


def _cluster_id(directory: Path) -> str | None:
    candidates = [directory / META_PROPERTIES_FILE]
    if directory.name == METADATA_PARTITION_DIR:
        candidates.append(directory.parent / META_PROPERTIES_FILE)
    for candidate in candidates:
        if candidate.is_file():
            try:
                return read_meta_properties(candidate).cluster_id
            except (MetaPropertiesError, OSError):
                return None
    return None
