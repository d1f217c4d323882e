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

A directory's log may reach back before its latest snapshot (controllers keep history, see
``metadata.max.retention.*``, and ``raftmeta log export`` copies it): the snapshot the log can
be replayed from is kept too, as :attr:`Source.history_snapshot`, so the events start there.

The path may be a URI (``s3://bucket/clusters``, see :mod:`analytics.files`); discovery runs
on the driver and the splits carry locations every executor resolves on its own. Nothing here
imports Spark: the same discovery serves the Spark data source and the plain Python audit.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from analytics import files
from analytics.manifest import MANIFEST_FILE
from raftmeta.config.properties import parse_properties
from raftmeta.raft.batch import SnapshotId
from raftmeta.storage.errors import StorageError
from raftmeta.storage.meta_properties import META_PROPERTIES_FILE
from raftmeta.storage.snapshots import SNAPSHOT_SUFFIX, SnapshotReader, parse_snapshot_file_name

METADATA_PARTITION_DIR = "__cluster_metadata-0"
_SEGMENT_NAME = re.compile(r"^(\d{20})\.log$")


class AnalyticsInputError(Exception):
    """A path that is missing or holds nothing raftmeta can read; the message is one line."""


@dataclass(frozen=True, slots=True)
class Source:
    """One cluster's files: a snapshot, log segments after it, or both. Picklable; every file
    is a location (a local path or a URI, see :mod:`analytics.files`)."""

    cluster: str
    snapshot: str | None
    """The snapshot the state starts from (the latest one in a directory)."""
    segments: tuple[str, ...] = ()
    """Log segments, lowest base offset first; empty for a bare snapshot file."""
    history_snapshot: str | None = None
    """The oldest snapshot at or after the log's first offset: the events replay from it, so
    the history kept below the latest snapshot is read too (``None``: use ``snapshot``)."""
    manifest: str | None = None
    """The export manifest beside the segments (see :mod:`analytics.manifest`), if any."""
    log_end: int | None = None
    """Offsets at or past it are not read: set by :mod:`analytics.integrity` when a damaged
    log is read as far as it is whole (``--allow-partial``); ``None`` reads the whole log."""

    @property
    def description(self) -> str:
        return self.snapshot if self.snapshot is not None and not self.segments else self.cluster


def open_snapshot(location: str) -> SnapshotReader:
    """A verified reader of a snapshot, local or remote."""
    if files.is_remote(location):
        return SnapshotReader(location, opener=files.open_binary)
    return SnapshotReader(location)


def discover(path: str | os.PathLike[str]) -> list[Source]:
    """The clusters under ``path``, in name order; raises :class:`AnalyticsInputError`."""
    root = files.absolute(os.fspath(path))
    try:
        return _discover(root, os.fspath(path))
    except FileNotFoundError:
        raise AnalyticsInputError(f"{os.fspath(path)}: no such file or directory") from None
    except files.RemoteFileError as error:
        raise AnalyticsInputError(str(error)) from None


def _discover(root: str, shown: str) -> list[Source]:
    what = files.kind(root)
    if what is None:
        raise AnalyticsInputError(f"{shown}: no such file or directory")
    if what == "other":  # a device, a socket, a pipe
        raise AnalyticsInputError(
            f"{shown}: not a snapshot, a metadata directory or a folder of them "
            "(not a regular file)"
        )
    if what != "dir":
        reader = _open_snapshot(root)
        return [Source(reader.cluster_id or _stem(files.basename(root)), root)]
    entries = files.list_dir(root)
    if _is_node_directory(root, entries):
        return [_directory_source(root, entries, cluster=None)]
    found: list[Source] = []
    for name, kind in entries:
        entry = files.join(root, name)
        if kind == "file" and name.endswith(SNAPSHOT_SUFFIX):
            _open_snapshot(entry)
            found.append(Source(_stem(name), entry))
        elif kind == "dir":
            children = files.list_dir(entry)
            if _is_node_directory(entry, children):
                found.append(_directory_source(entry, children, cluster=name))
    if not found:
        raise AnalyticsInputError(
            f"{shown}: not a raftmeta snapshot, metadata directory or folder of them"
        )
    return found


def _stem(name: str) -> str:
    return name[: -len(SNAPSHOT_SUFFIX)] if name.endswith(SNAPSHOT_SUFFIX) else name


def _open_snapshot(location: str) -> SnapshotReader:
    try:
        return open_snapshot(location)
    except StorageError as error:
        raise AnalyticsInputError(f"not a raftmeta snapshot: {error}") from None
    except files.RemoteFileError:
        raise
    except OSError as error:
        raise AnalyticsInputError(f"{location}: {error.strerror}") from None


def _snapshots(entries: list[tuple[str, str]]) -> list[tuple[SnapshotId, str]]:
    found = []
    for name, kind in entries:
        parsed = parse_snapshot_file_name(name)
        if kind == "file" and parsed is not None and not parsed[1]:
            found.append((parsed[0], name))
    return sorted(found, key=lambda item: (item[0].end_offset, item[0].epoch))


def _segments(entries: list[tuple[str, str]]) -> list[tuple[int, str]]:
    found = []
    for name, kind in entries:
        match = _SEGMENT_NAME.match(name)
        if kind == "file" and match:
            found.append((int(match.group(1)), name))
    return sorted(found)


def _is_node_directory(location: str, entries: list[tuple[str, str]]) -> bool:
    if (META_PROPERTIES_FILE, "file") in entries or (METADATA_PARTITION_DIR, "dir") in entries:
        return True
    return bool(_snapshots(entries) or _segments(entries))


def _directory_source(
    directory: str, entries: list[tuple[str, str]], cluster: str | None
) -> Source:
    folder, folder_entries = directory, entries
    if (METADATA_PARTITION_DIR, "dir") in entries:
        folder = files.join(directory, METADATA_PARTITION_DIR)
        folder_entries = files.list_dir(folder)
    snapshots = _snapshots(folder_entries)
    segments = _segments(folder_entries)
    latest = None
    reader = None
    if snapshots:
        latest = files.join(folder, snapshots[-1][1])
        reader = _open_snapshot(latest)
    if latest is None and not segments and (MANIFEST_FILE, "file") not in folder_entries:
        raise AnalyticsInputError(f"{directory}: holds neither a snapshot nor a log segment")
    history = None
    if segments and snapshots:
        first_offset = segments[0][0]
        covering = [
            name for snapshot_id, name in snapshots if snapshot_id.end_offset >= first_offset
        ]
        if covering and covering[0] != snapshots[-1][1]:
            history = files.join(folder, covering[0])
            _open_snapshot(history)
    if cluster is None:
        cluster = _cluster_id(directory, entries)
        if cluster is None and reader is not None:
            cluster = reader.cluster_id or None
        if cluster is None:
            cluster = files.basename(
                directory if files.is_remote(directory) else os.path.realpath(directory)
            )
    manifest = None
    if (MANIFEST_FILE, "file") in folder_entries:
        manifest = files.join(folder, MANIFEST_FILE)
    return Source(
        cluster,
        latest,
        tuple(files.join(folder, name) for _, name in segments),
        history_snapshot=history,
        manifest=manifest,
    )


def _cluster_id(directory: str, entries: list[tuple[str, str]]) -> str | None:
    candidates = []
    if (META_PROPERTIES_FILE, "file") in entries:
        candidates.append(files.join(directory, META_PROPERTIES_FILE))
    if files.basename(directory) == METADATA_PARTITION_DIR and not files.is_remote(directory):
        parent = os.path.dirname(os.path.normpath(directory))
        if os.path.isfile(os.path.join(parent, META_PROPERTIES_FILE)):
            candidates.append(os.path.join(parent, META_PROPERTIES_FILE))
    for candidate in candidates:
        try:
            values = parse_properties(files.read_all(candidate).decode("utf-8"))
        except (ValueError, OSError):
            return None
        return values.get("cluster.id") or None
    return None
