"""Snapshot files: the records that rebuild the metadata image as of one offset.

A snapshot named ``<20-digit end offset>-<10-digit epoch>.checkpoint`` holds every committed
record below its end offset. It appears under that name only when complete: writers and
receivers fill a ``<name>.<token>.part`` of their own first, fsync it, link it to the final
name, and fsync the directory, so a crash leaves at most a ``.part`` that start-up removes.

Each writer and receiver has its own ``.part`` (the random token) and never replaces a complete
snapshot: a node may write its own snapshot while it installs a peer's at the same offset (a
restarted follower catching up), and with one shared ``.part`` each would truncate, rename or
delete the other's file. Two complete snapshots of one id hold the same committed records, so
whichever is in place first stays and the other is dropped.

Layout (big-endian)::

    header  magic "RMSN", version uint8, end_offset int64, epoch int32, record_count int64,
            created_ms int64, cluster id length uint16, cluster id (UTF-8)
    body    batches in the log's encoding (``codec``), epoch = the snapshot's epoch, offsets
            counting records from 0 within the snapshot
    footer  magic "RMSF", length of everything before the footer uint64, CRC-32 of it uint32

The body uses the log's batch encoding so that recovery, ``FetchSnapshot`` (which ships the raw
file in chunks) and the Spark reader need one decoder. The footer carries the length as well as
the CRC so a truncated transfer is named as such rather than as a checksum failure.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import struct
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from raftmeta.raft.batch import Batch, SnapshotId, make_batch
from raftmeta.storage.codec import BatchScanner, StopReason, encode_batch
from raftmeta.storage.crc import crc32_combine
from raftmeta.storage.errors import SnapshotCorruptError, SnapshotError
from raftmeta.storage.fsutil import fsync_directory, write_all

SNAPSHOT_SUFFIX = ".checkpoint"
PARTIAL_SUFFIX = ".part"
FORMAT_VERSION = 1
DEFAULT_RECORDS_PER_BATCH = 1000
DEFAULT_MAX_BATCH_BYTES = 8 * 1024 * 1024
"""Kafka's ``MAX_BATCH_SIZE_BYTES``: a snapshot batch can then travel in one fetch as well."""

_HEADER_MAGIC = b"RMSN"
_FOOTER_MAGIC = b"RMSF"
_HEADER = struct.Struct(">4sBqiqqH")
_FOOTER = struct.Struct(">4sQI")
FOOTER_SIZE = _FOOTER.size
MIN_SNAPSHOT_SIZE = _HEADER.size + _FOOTER.size
_READ_CHUNK = 1 << 20
_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint((?:\.[0-9a-z]+)?\.part)?$")


@dataclass(frozen=True, slots=True)
class SnapshotHeader:
    snapshot_id: SnapshotId
    cluster_id: str
    record_count: int
    created_ms: int

    def encode(self) -> bytes:
        cluster = self.cluster_id.encode("utf-8")
        return (
            _HEADER.pack(
                _HEADER_MAGIC,
                FORMAT_VERSION,
                self.snapshot_id.end_offset,
                self.snapshot_id.epoch,
                self.record_count,
                self.created_ms,
                len(cluster),
            )
            + cluster
        )


def snapshot_file_name(snapshot_id: SnapshotId) -> str:
    return snapshot_id.file_stem() + SNAPSHOT_SUFFIX


def snapshot_path(directory: str | os.PathLike[str], snapshot_id: SnapshotId) -> Path:
    return Path(directory) / snapshot_file_name(snapshot_id)


def partial_snapshot_path(
    directory: str | os.PathLike[str], snapshot_id: SnapshotId, token: str = ""
) -> Path:
    """Where a snapshot is filled before it takes its name; ``token`` keeps one writer's file
    apart from another's."""
    middle = f".{token}" if token else ""
    return Path(directory) / (snapshot_file_name(snapshot_id) + middle + PARTIAL_SUFFIX)


def _own_partial_path(directory: Path, snapshot_id: SnapshotId) -> Path:
    return partial_snapshot_path(directory, snapshot_id, secrets.token_hex(6))


def _publish(partial: Path, final: Path) -> Path:
    """Give the complete file ``partial`` the name ``final`` unless a complete snapshot of
    that id is already there (then ours is dropped); either way ``partial`` goes.

    A hard link fails rather than replace, atomically, where a rename would overwrite a file a
    peer may be fetching in chunks at this moment.
    """
    with contextlib.suppress(FileExistsError):
        os.link(partial, final)
    os.unlink(partial)
    fsync_directory(final.parent)
    return final


def parse_snapshot_file_name(name: str) -> tuple[SnapshotId, bool] | None:
    """(id, is partial) for a snapshot or ``.part`` file name, ``None`` for anything else."""
    match = _NAME.match(name)
    if match is None:
        return None
    return SnapshotId(int(match.group(1)), int(match.group(2))), match.group(3) is not None


def _order(snapshot_id: SnapshotId) -> tuple[int, int]:
    return (snapshot_id.end_offset, snapshot_id.epoch)


def list_snapshots(directory: str | os.PathLike[str]) -> list[SnapshotId]:
    """Complete snapshots in ``directory``, oldest first (by end offset, then epoch)."""
    found = []
    for entry in os.scandir(directory):
        parsed = parse_snapshot_file_name(entry.name)
        if parsed is not None and not parsed[1] and entry.is_file():
            found.append(parsed[0])
    return sorted(found, key=_order)


def latest_snapshot(directory: str | os.PathLike[str]) -> SnapshotId | None:
    snapshots = list_snapshots(directory)
    return snapshots[-1] if snapshots else None


def delete_snapshots_before(
    directory: str | os.PathLike[str], snapshot_id: SnapshotId
) -> list[SnapshotId]:
    """Delete every complete snapshot older than ``snapshot_id``; returns what went."""
    doomed = [s for s in list_snapshots(directory) if _order(s) < _order(snapshot_id)]
    for old in doomed:
        snapshot_path(directory, old).unlink()
    if doomed:
        fsync_directory(Path(directory))
    return doomed


def remove_partial_snapshots(directory: str | os.PathLike[str]) -> list[Path]:
    """Delete ``.part`` files: work a crash interrupted, which nothing can resume."""
    removed = []
    for entry in os.scandir(directory):
        parsed = parse_snapshot_file_name(entry.name)
        if parsed is not None and parsed[1]:
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    if removed:
        fsync_directory(Path(directory))
    return removed


def read_chunk(path: str | os.PathLike[str], position: int, max_bytes: int) -> bytes:
    """Up to ``max_bytes`` raw bytes of a snapshot file from ``position``, for FetchSnapshot."""
    if max_bytes < 0:
        raise ValueError(f"max_bytes {max_bytes} is negative")
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        if not 0 <= position <= size:
            raise SnapshotError(f"{path}: position {position} is outside the file (size {size})")
        file.seek(position)
        return file.read(max_bytes)


class SnapshotWriter:
    """Streams records into a new snapshot; only ``freeze`` makes it visible.

    Records are grouped into batches of up to ``records_per_batch`` records (and about
    ``max_batch_bytes``). The body's CRC is computed as it streams; the header, whose record
    count is known only at the end, is written last at the front of the file, and its CRC is
    combined with the body's, so the file is never read back.
    """

    __slots__ = (
        "_body_crc",
        "_body_length",
        "_closed",
        "_fd",
        "_header_length",
        "_partial",
        "_pending",
        "_pending_bytes",
        "_records_written",
        "cluster_id",
        "created_ms",
        "directory",
        "max_batch_bytes",
        "records_per_batch",
        "snapshot_id",
    )

    def __init__(
        self,
        directory: str | os.PathLike[str],
        snapshot_id: SnapshotId,
        *,
        cluster_id: str,
        created_ms: int | None = None,
        records_per_batch: int = DEFAULT_RECORDS_PER_BATCH,
        max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
    ) -> None:
        if not (0 <= snapshot_id.end_offset < 2**63 and 0 <= snapshot_id.epoch < 2**31):
            raise ValueError(f"invalid snapshot id {snapshot_id}")
        if records_per_batch < 1 or max_batch_bytes < 1:
            raise ValueError("batch limits must be positive")
        if len(cluster_id.encode("utf-8")) > 0xFFFF:
            raise ValueError("cluster id is too long")
        self.directory = Path(directory)
        self.snapshot_id = snapshot_id
        self.cluster_id = cluster_id
        self.created_ms = int(time.time() * 1000) if created_ms is None else created_ms
        self.records_per_batch = records_per_batch
        self.max_batch_bytes = max_batch_bytes
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._records_written = 0
        self._body_crc = 0
        self._body_length = 0
        self._closed = False
        if snapshot_path(self.directory, snapshot_id).exists():
            raise SnapshotError(f"snapshot {snapshot_file_name(snapshot_id)} already exists")
        placeholder = self._header(record_count=0)
        self._header_length = len(placeholder)
        self._partial = _own_partial_path(self.directory, snapshot_id)
        self._fd = os.open(self._partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            write_all(self._fd, placeholder)
        except BaseException:
            self.abort()
            raise

    @property
    def partial_path(self) -> Path:
        """The file this writer fills until :meth:`freeze`."""
        return self._partial

    @property
    def record_count(self) -> int:
        """Records appended so far, including those not yet written as a batch."""
        return self._records_written + len(self._pending)

    def _header(self, record_count: int) -> bytes:
        return SnapshotHeader(
            self.snapshot_id, self.cluster_id, record_count, self.created_ms
        ).encode()

    def append(self, records: Iterable[bytes]) -> None:
        self._check_open()
        for record in records:
            self._pending.append(record)
            self._pending_bytes += len(record)
            if (
                len(self._pending) >= self.records_per_batch
                or self._pending_bytes >= self.max_batch_bytes
            ):
                self._write_pending()

    def _write_pending(self) -> None:
        if not self._pending:
            return
        batch = make_batch(
            self._records_written,
            self.snapshot_id.epoch,
            self._pending,
            timestamp_ms=self.created_ms,
        )
        data = encode_batch(batch)
        write_all(self._fd, data)
        self._body_crc = zlib.crc32(data, self._body_crc)
        self._body_length += len(data)
        self._records_written += batch.record_count
        self._pending = []
        self._pending_bytes = 0

    def freeze(self) -> Path:
        """Finish the file, make it durable and give it its final name; returns that path."""
        self._check_open()
        try:
            self._write_pending()
            header = self._header(self._records_written)
            if len(header) != self._header_length:
                raise AssertionError("snapshot header changed size")
            os.pwrite(self._fd, header, 0)
            covered = self._header_length + self._body_length
            crc = crc32_combine(zlib.crc32(header), self._body_crc, self._body_length)
            write_all(self._fd, _FOOTER.pack(_FOOTER_MAGIC, covered, crc))
            os.fsync(self._fd)
        except BaseException:
            self.abort()
            raise
        os.close(self._fd)
        self._closed = True
        return _publish(self._partial, snapshot_path(self.directory, self.snapshot_id))

    def abort(self) -> None:
        """Give up: close and delete the ``.part``. A crash instead leaves it for start-up."""
        if self._closed:
            return
        self._closed = True
        os.close(self._fd)
        self._partial.unlink(missing_ok=True)

    def _check_open(self) -> None:
        if self._closed:
            raise SnapshotError(f"writer for {snapshot_file_name(self.snapshot_id)} is closed")

    def __enter__(self) -> SnapshotWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.abort()


class SnapshotReader:
    """A verified snapshot: construction checks the header and the footer checksum.

    It holds no open file; ``batches`` and ``records`` stream from the file on each call, so a
    large snapshot is never held in memory whole.
    """

    __slots__ = ("_body_end", "_body_start", "_opener", "_where", "header", "path", "size")

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        opener: Callable[[str], BinaryIO] | None = None,
    ) -> None:
        """``opener`` opens ``path`` for reading when it is not a local file (an analytics
        reader passes one for ``s3://`` and other URIs); the file must be seekable."""
        self.path = Path(path)
        self._where = os.fspath(path)
        self._opener = opener
        with self._open() as file:
            self.size = file.seek(0, os.SEEK_END)
            file.seek(0)
            if self.size < MIN_SNAPSHOT_SIZE:
                raise self._corrupt(f"{self.size} bytes is too short for a snapshot")
            fixed = file.read(_HEADER.size)
            magic, version, end_offset, epoch, record_count, created_ms, cluster_length = (
                _HEADER.unpack(fixed)
            )
            if magic != _HEADER_MAGIC:
                raise self._corrupt("not a snapshot file (bad header magic)")
            if version != FORMAT_VERSION:
                raise self._corrupt(f"unsupported snapshot format version {version}")
            self._body_start = _HEADER.size + cluster_length
            self._body_end = self.size - FOOTER_SIZE
            if self._body_start > self._body_end:
                raise self._corrupt("cluster id runs into the footer")
            file.seek(self._body_end)
            footer_magic, covered, stored_crc = _FOOTER.unpack(file.read(FOOTER_SIZE))
            if footer_magic != _FOOTER_MAGIC or covered != self._body_end:
                raise self._corrupt(
                    f"footer missing or misplaced (file is {self.size} bytes; "
                    "truncated or extended?)"
                )
            file.seek(_HEADER.size)
            cluster_bytes = file.read(cluster_length)
            file.seek(0)
            crc = 0
            remaining = self._body_end
            while remaining:
                chunk = file.read(min(_READ_CHUNK, remaining))
                if not chunk:
                    raise self._corrupt("file shrank while being read")
                crc = zlib.crc32(chunk, crc)
                remaining -= len(chunk)
            if crc != stored_crc:
                raise self._corrupt(
                    f"checksum mismatch (stored {stored_crc:#010x}, read {crc:#010x})"
                )
        try:
            cluster_id = cluster_bytes.decode("utf-8")
        except UnicodeDecodeError:
            raise self._corrupt("cluster id is not UTF-8") from None
        if end_offset < 0 or epoch < 0 or record_count < 0:
            raise self._corrupt("negative offset, epoch or record count in header")
        self.header = SnapshotHeader(
            SnapshotId(end_offset, epoch), cluster_id, record_count, created_ms
        )
        parsed = parse_snapshot_file_name(self._where.rsplit("/", 1)[-1])
        if parsed is not None and parsed[0] != self.header.snapshot_id:
            raise self._corrupt(
                f"header says {self.header.snapshot_id.file_stem()}, the file name disagrees"
            )

    @property
    def snapshot_id(self) -> SnapshotId:
        return self.header.snapshot_id

    @property
    def cluster_id(self) -> str:
        return self.header.cluster_id

    @property
    def record_count(self) -> int:
        return self.header.record_count

    @property
    def created_ms(self) -> int:
        return self.header.created_ms

    def batches(self) -> Iterator[Batch]:
        """The body's batches in order; raises ``SnapshotCorruptError`` on a malformed body."""
        epoch = self.header.snapshot_id.epoch
        next_offset = 0
        carry = b""
        with self._open() as file:
            file.seek(self._body_start)
            remaining = self._body_end - self._body_start
            while remaining or carry:
                wanted = max(_READ_CHUNK, len(carry))  # doubles across a batch bigger than a chunk
                chunk = file.read(min(wanted, remaining)) if remaining else b""
                remaining -= len(chunk)
                buffer = carry + chunk if carry else chunk
                scanner = BatchScanner(buffer, expected_base_offset=next_offset, min_epoch=epoch)
                for batch in scanner:
                    if batch.epoch != epoch:
                        raise self._corrupt(f"batch at {batch.base_offset} has epoch {batch.epoch}")
                    next_offset = batch.next_offset
                    yield batch
                stop = scanner.stop
                assert stop is not None
                torn = stop.reason in (StopReason.TORN_HEADER, StopReason.TORN_PAYLOAD)
                if not stop.clean and not (torn and remaining):
                    raise self._corrupt(f"malformed body: {stop.describe()}")
                carry = b"" if stop.clean else bytes(buffer[stop.position :])
        if next_offset != self.header.record_count:
            raise self._corrupt(
                f"body holds {next_offset} records, header says {self.header.record_count}"
            )

    def records(self) -> Iterator[bytes]:
        for batch in self.batches():
            yield from batch.records()

    def _open(self) -> BinaryIO:
        if self._opener is not None:
            return self._opener(self._where)
        return open(self.path, "rb")

    def _corrupt(self, reason: str) -> SnapshotCorruptError:
        return SnapshotCorruptError(f"{self._where}: {reason}")


def _corrupt(path: Path, reason: str) -> SnapshotCorruptError:
    return SnapshotCorruptError(f"{path}: {reason}")


class SnapshotReceiver:
    """Assembles a snapshot fetched in chunks, then verifies it before it takes its name.

    Chunks must arrive at ``position == received_bytes`` or earlier (a resent chunk simply
    overwrites the same bytes); a chunk past that would leave a hole and is refused.
    """

    __slots__ = (
        "_closed",
        "_fd",
        "_partial",
        "cluster_id",
        "directory",
        "received_bytes",
        "size",
        "snapshot_id",
    )

    def __init__(
        self,
        directory: str | os.PathLike[str],
        snapshot_id: SnapshotId,
        size: int,
        *,
        cluster_id: str | None = None,
    ) -> None:
        if size < MIN_SNAPSHOT_SIZE:
            raise SnapshotError(f"snapshot size {size} is below the minimum {MIN_SNAPSHOT_SIZE}")
        self.directory = Path(directory)
        self.snapshot_id = snapshot_id
        self.size = size
        self.cluster_id = cluster_id
        self.received_bytes = 0
        self._closed = False
        self._partial = _own_partial_path(self.directory, snapshot_id)
        self._fd = os.open(self._partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)

    @property
    def complete(self) -> bool:
        return self.received_bytes == self.size

    def write_chunk(self, position: int, data: bytes) -> None:
        if self._closed:
            raise SnapshotError(f"receiver for {snapshot_file_name(self.snapshot_id)} is closed")
        if not 0 <= position <= self.received_bytes:
            raise SnapshotError(
                f"chunk at {position} would leave a gap after {self.received_bytes} bytes"
            )
        if position + len(data) > self.size:
            raise SnapshotError(
                f"chunk at {position} of {len(data)} bytes overruns the size {self.size}"
            )
        view = memoryview(data)
        while view:
            written = os.pwrite(self._fd, view, position)
            view = view[written:]
            position += written
        self.received_bytes = max(self.received_bytes, position)

    def finish(self) -> Path:
        """Verify the whole file, fsync it and give it its final name; returns that path.

        A file that fails verification is deleted and ``SnapshotCorruptError`` raised: the
        caller starts the fetch again rather than install a snapshot that lies.
        """
        if not self.complete:
            raise SnapshotError(
                f"snapshot {self.snapshot_id.file_stem()} has {self.received_bytes} of "
                f"{self.size} bytes"
            )
        partial = self._partial
        try:
            os.fsync(self._fd)
            os.close(self._fd)
            self._closed = True
            reader = SnapshotReader(partial)
            if reader.snapshot_id != self.snapshot_id:
                raise _corrupt(partial, "header does not match the snapshot id that was fetched")
            if self.cluster_id is not None and reader.cluster_id != self.cluster_id:
                raise _corrupt(
                    partial,
                    f"cluster id {reader.cluster_id!r} is not this cluster's {self.cluster_id!r}",
                )
        except BaseException:
            self.abort()
            raise
        return _publish(partial, snapshot_path(self.directory, self.snapshot_id))

    def abort(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._fd)
        self._partial.unlink(missing_ok=True)
