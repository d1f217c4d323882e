"""``raftmeta log export``: a node's committed history, copied where an audit can read it.

A snapshot says where leadership ended up; only the log says how it got there. The export
takes a node's metadata directory (a stopped node's, or a running one's: it only reads, and
takes no lock) and writes, under ``DESTINATION/NAME``, the layout ``raftmeta audit`` reads:

    meta.properties
    __cluster_metadata-0/<end>-<epoch>.checkpoint   the latest snapshot, and the oldest one
                                                    the kept log can be replayed from
    __cluster_metadata-0/<base offset>.log          the log from that snapshot on, one segment

Only committed records go: nothing at or past the high watermark, which a data directory does
not record (a node learns it from the leader). It comes from the running quorum
(``--bootstrap-controller``) or from the operator (``--high-watermark``, for a stopped cluster
whose committed end is known). The destination may be a local directory or a URI that
``pyarrow.fs`` writes (``s3://bucket/clusters``; see :mod:`analytics.files`); an S3 bucket
must exist, or be created with ``--create-bucket``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raftmeta.cli.errors import USAGE_ERROR, CommandLineError
from raftmeta.raft.batch import Batch, SnapshotId
from raftmeta.storage.codec import encode_batch, scan_batches
from raftmeta.storage.errors import MetaPropertiesError, StorageError
from raftmeta.storage.log import list_segment_files, read_log_start, segment_file_name
from raftmeta.storage.meta_properties import META_PROPERTIES_FILE, read_meta_properties
from raftmeta.storage.snapshots import SnapshotReader, list_snapshots, snapshot_file_name

METADATA_PARTITION_DIR = "__cluster_metadata-0"


def register(actions: Any) -> None:
    export = actions.add_parser(
        "export",
        help="copy a node's committed history (snapshots + log) to a directory or URI",
        description="Copy the latest snapshot, the oldest snapshot the kept log replays from, "
        "and the committed log after it to DESTINATION/NAME, where `raftmeta audit` reads it. "
        "Give the high watermark, or a controller to ask for it.",
    )
    export.add_argument("directory", type=Path, help="metadata.log.dir or its log folder")
    export.add_argument(
        "destination", help="a directory or URI (file://, s3://bucket/prefix, hdfs://, gs://)"
    )
    export.add_argument(
        "--name", default=None, help="the cluster's entry under DESTINATION (default its id)"
    )
    committed = export.add_mutually_exclusive_group()
    committed.add_argument(
        "--bootstrap-controller",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="ask the running quorum for its high watermark",
    )
    committed.add_argument(
        "--high-watermark",
        type=_offset,
        metavar="OFFSET",
        help="export nothing at or past OFFSET (a stopped cluster's committed end)",
    )
    export.add_argument(
        "--create-bucket",
        action="store_true",
        help="create the s3:// destination's bucket if it does not exist (else it must)",
    )
    export.set_defaults(handler=run)


def _offset(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an offset: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return value


@dataclass(frozen=True, slots=True)
class History:
    """What an export writes, read and checked before anything is written."""

    cluster_id: str
    meta_properties: bytes
    snapshots: tuple[tuple[SnapshotId, Path], ...]
    batches: tuple[Batch, ...]

    @property
    def log_range(self) -> tuple[int, int]:
        if not self.batches:
            start = self.snapshots[-1][0].end_offset if self.snapshots else 0
            return start, start
        return self.batches[0].base_offset, self.batches[-1].next_offset


def run(args: argparse.Namespace) -> int:
    from analytics import files

    folder, meta_path = _folders(args.directory)
    try:
        meta = read_meta_properties(meta_path)
        meta_bytes = meta_path.read_bytes()
    except (MetaPropertiesError, OSError) as error:
        raise CommandLineError(
            f"{args.directory}: not a formatted metadata directory ({error})"
        ) from None
    if args.high_watermark is not None:
        high_watermark = args.high_watermark
    elif args.bootstrap_controller is not None:
        high_watermark = _ask_high_watermark(args.bootstrap_controller, meta.cluster_id)
    else:
        raise CommandLineError(
            "a data directory does not record which records are committed: give "
            "--bootstrap-controller HOST:PORT (a running quorum's high watermark) or "
            "--high-watermark OFFSET",
            USAGE_ERROR,
        )
    try:
        history = read_history(folder, meta.cluster_id, meta_bytes, high_watermark)
    except StorageError as error:
        raise CommandLineError(str(error)) from None
    except OSError as error:
        raise CommandLineError(f"{error.filename or folder}: {error.strerror or error}") from None
    name = args.name or meta.cluster_id
    if not name or "/" in name or name in (".", ".."):
        raise CommandLineError(f"--name {name!r} is not a directory name", USAGE_ERROR)
    target = files.join(args.destination, name)
    try:
        files.ensure_bucket(args.destination, create=args.create_bucket)
        if files.kind(target) is not None:
            raise CommandLineError(f"{target} already exists; remove it or give another --name")
        write_history(history, target, high_watermark)
    except files.RemoteFileError as error:
        raise CommandLineError(str(error)) from None
    except OSError as error:
        raise CommandLineError(f"{error.filename or target}: {error.strerror or error}") from None
    start, end = history.log_range
    snapshots = ", ".join(snapshot_file_name(sid) for sid, _ in history.snapshots) or "none"
    print(
        f"exported cluster {history.cluster_id} to {target}: snapshots {snapshots}; "
        f"log offsets {start}..{end} ({len(history.batches)} batches, high watermark "
        f"{high_watermark})"
    )
    return 0


def _folders(directory: Path) -> tuple[Path, Path]:
    """The log folder and the ``meta.properties`` of a node directory or its log folder."""
    if (directory / METADATA_PARTITION_DIR).is_dir():
        return directory / METADATA_PARTITION_DIR, directory / META_PROPERTIES_FILE
    if directory.is_dir() and directory.name == METADATA_PARTITION_DIR:
        return directory, directory.parent / META_PROPERTIES_FILE
    if not directory.exists():
        raise CommandLineError(f"{directory}: no such file or directory")
    raise CommandLineError(
        f"{directory}: not a metadata directory (no {META_PROPERTIES_FILE} and "
        f"{METADATA_PARTITION_DIR}/)"
    )


def _ask_high_watermark(bootstrap: str, cluster_id: str) -> int:
    from raftmeta.admin.quorum import DescribeError, describe_quorum

    try:
        info = describe_quorum(bootstrap, cluster_id)
    except DescribeError as error:
        raise CommandLineError(str(error)) from None
    if info.high_watermark < 0:
        raise CommandLineError(f"{bootstrap}: the leader does not know its high watermark yet")
    return info.high_watermark


def read_history(
    folder: Path, cluster_id: str, meta_properties: bytes, high_watermark: int
) -> History:
    """The committed history in ``folder``: every whole batch below ``high_watermark`` from the
    oldest snapshot the log replays from (or from 0), and the snapshots it needs."""
    batches: list[Batch] = []
    for _, segment in list_segment_files(folder):
        result = scan_batches(segment.read_bytes())
        for batch in result.batches:
            if batches and batch.base_offset < batches[-1].next_offset:
                continue  # left over from a truncation the next segment superseded
            if batches and batch.base_offset != batches[-1].next_offset:
                raise StorageError(f"{segment}: the log skips offsets before {batch.base_offset}")
            batches.append(batch)
        stop = result.stop
        if not stop.clean and (not batches or batches[-1].next_offset < high_watermark):
            raise StorageError(
                f"{segment}: the log stops early below the high watermark {high_watermark}, "
                f"{stop.describe()}"
            )
    # Batches below the log start may linger in its first segment; they count as deleted.
    log_start = read_log_start(folder)
    committed = [
        batch
        for batch in batches
        if batch.next_offset <= high_watermark and batch.base_offset >= log_start
    ]
    snapshots = [sid for sid in list_snapshots(folder) if sid.end_offset <= high_watermark]
    first = committed[0].base_offset if committed else None
    wanted: list[SnapshotId] = []
    if snapshots:
        latest = snapshots[-1]
        replayable = [sid for sid in snapshots if first is not None and sid.end_offset >= first]
        if first != 0 and replayable and replayable[0] != latest:
            wanted.append(replayable[0])
        wanted.append(latest)
    elif first not in (None, 0):
        raise StorageError(
            f"{folder}: the log starts at {first} and no snapshot holds the records before it"
        )
    base = 0 if first == 0 else (wanted[0].end_offset if wanted else 0)
    kept = tuple(batch for batch in committed if batch.base_offset >= base)
    chosen = []
    for sid in wanted:
        path = folder / snapshot_file_name(sid)
        SnapshotReader(path)  # verified before it is copied
        chosen.append((sid, path))
    return History(cluster_id, meta_properties, tuple(chosen), kept)


def write_history(history: History, target: str, high_watermark: int | None = None) -> None:
    """Snapshots first, then the log, its manifest, then ``meta.properties``: a half-written
    export lacks the file that names its cluster, and a whole one says what it holds.
    ``high_watermark`` is recorded in the manifest (default: the end of the exported log)."""
    from analytics import files
    from analytics.manifest import MANIFEST_FILE, Manifest, SegmentEntry, SnapshotEntry

    folder = files.join(target, METADATA_PARTITION_DIR)
    snapshots = []
    for snapshot_id, path in history.snapshots:
        data = path.read_bytes()
        name = snapshot_file_name(snapshot_id)
        files.write_file(files.join(folder, name), data)
        snapshots.append(SnapshotEntry(name, len(data)))
    segments = []
    if history.batches:
        data = b"".join(encode_batch(batch) for batch in history.batches)
        start, end = history.log_range
        name = segment_file_name(start)
        files.write_file(files.join(folder, name), data)
        segments.append(SegmentEntry(name, len(data), start, end))
    recorded = history.log_range[1] if high_watermark is None else high_watermark
    manifest = Manifest(history.cluster_id, recorded, tuple(snapshots), tuple(segments))
    files.write_file(files.join(folder, MANIFEST_FILE), manifest.encode())
    files.write_file(files.join(target, META_PROPERTIES_FILE), history.meta_properties)
