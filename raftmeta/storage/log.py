"""``FileLog``: the Raft log as segment files, with crash recovery.

Segments are named ``<20-digit base offset>.log`` and hold encoded batches back to back (see
``codec``). The consensus core keeps every batch after the latest snapshot in memory, so the log
loads all of them at ``open`` and never reads a segment again; segments exist to be appended to,
cut, and deleted cheaply from the front.

Durability contract: after a crash at any point, ``open`` yields a prefix of the log as it was
last changed, and that prefix holds at least every batch present at the last ``flush``.

- ``append`` only writes. ``flush`` makes it durable with one fsync of the active segment, plus
  one of the directory when a segment was created or deleted since the previous flush. Only the
  active segment can hold unsynced bytes: ``append`` fsyncs a segment as it rolls away from it
  (once per ``segment_bytes``), which keeps each ``flush`` at one file fsync.
- ``truncate_to``, ``advance_start`` and ``reset`` are rare and are durable when they return,
  so a reopened log never resurrects batches that were cut away.
- The log start lives in the ``log-start-offset`` checkpoint, replaced atomically. Batches below
  it may remain in the first segment; they are validated on open but never served.

Recovery rules, applied in order by ``open``:

1. Segments wholly below the log start (the next segment begins at or before it) are deleted
   unread; they are left over from an ``advance_start`` interrupted before its deletions.
2. The first remaining segment must not begin after the log start, and each later segment
   must begin where the previous one ends; the first gap drops that segment and all after it.
3. Every batch must decode (version, CRC, header sanity), follow its predecessor without an
   offset gap, and not lower the epoch. The first batch that fails is cut off with everything
   after it in its segment (the file is truncated and fsynced) and every later segment is
   deleted. ``recovery`` reports what was dropped and why.
4. If what remains ends at or before the log start, every segment is deleted and the log is
   empty at its start (the data below it is covered by a snapshot).
5. A log start that falls inside a batch means the checkpoint and the segments disagree; that
   raises ``LogCorruptError`` rather than guessing.

Whatever survives is fsynced before it is served: after a process crash (as opposed to a power
loss) the page cache still holds bytes that never reached the disk, and a follower that reported
them as durable could lose acknowledged, committed data in a later power loss.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import NoReturn

from raftmeta.raft.batch import Batch
from raftmeta.raft.epoch_cache import EpochCache
from raftmeta.storage.codec import BatchScanner, StopReason, encode_batch, encoded_size
from raftmeta.storage.errors import LogCorruptError, LogFailedError, LogUsageError
from raftmeta.storage.fsutil import (
    TEMP_SUFFIX,
    fsync_directory,
    write_all,
    write_file_atomically,
)

DEFAULT_SEGMENT_BYTES = 1 << 30
"""Kafka's ``metadata.log.segment.bytes`` default, 1 GiB."""

SEGMENT_SUFFIX = ".log"
LOG_START_CHECKPOINT = "log-start-offset"
_CHECKPOINT_VERSION = 1
_SEGMENT_NAME = re.compile(r"^(\d{20})\.log$")


def segment_file_name(base_offset: int) -> str:
    return f"{base_offset:020d}{SEGMENT_SUFFIX}"


def segment_base_offset(name: str) -> int | None:
    """The base offset a segment file's name gives, or None for a name the log does not read."""
    match = _SEGMENT_NAME.match(name)
    return int(match.group(1)) if match else None


def list_segment_files(directory: Path) -> list[tuple[int, Path]]:
    """(base offset, path) of every segment file in ``directory``, lowest base first."""
    found: list[tuple[int, Path]] = []
    for entry in os.scandir(directory):
        match = _SEGMENT_NAME.match(entry.name)
        if match and entry.is_file():
            found.append((int(match.group(1)), Path(entry.path)))
    found.sort()
    return found


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    """What ``FileLog.open`` had to repair; ``reason`` is ``None`` when nothing was corrupt."""

    reason: StopReason | None = None
    detail: str = ""
    dropped_from_offset: int | None = None
    """The first offset that was on disk but is no longer in the log."""
    bytes_dropped: int = 0
    truncated_segment: str | None = None
    segments_deleted: tuple[str, ...] = ()
    """Segments removed because they followed corruption or a gap."""
    segments_below_start: tuple[str, ...] = ()
    """Segments removed because the log start had passed them: housekeeping, not damage."""

    @property
    def clean(self) -> bool:
        return self.reason is None

    def describe(self) -> str:
        if self.reason is None:
            return "log recovered cleanly"
        return (
            f"log truncated at offset {self.dropped_from_offset} ({self.detail}); "
            f"{self.bytes_dropped} bytes dropped"
        )


class _Segment:
    """One segment file and where each of its batches begins, for cutting it later."""

    __slots__ = ("base_offset", "batch_bases", "batch_positions", "path", "size")

    def __init__(self, base_offset: int, path: Path) -> None:
        self.base_offset = base_offset
        self.path = path
        self.size = 0
        self.batch_bases: list[int] = []
        self.batch_positions: list[int] = []


class FileLog:
    """A segmented, crash-recoverable log of batches. Not thread-safe: one owner drives it."""

    __slots__ = (
        "_active_fd",
        "_bases",
        "_batches",
        "_closed",
        "_dir_dirty",
        "_epoch_cache",
        "_failure",
        "_flushed_end",
        "_segments",
        "_start",
        "_unsynced",
        "directory",
        "recovery",
        "segment_bytes",
    )

    def __init__(self, directory: Path, segment_bytes: int) -> None:
        """Use ``FileLog.open``; this only sets up an empty, unrecovered object."""
        self.directory = directory
        self.segment_bytes = segment_bytes
        self.recovery = RecoveryReport()
        self._segments: list[_Segment] = []
        self._batches: list[Batch] = []
        self._bases: list[int] = []
        self._epoch_cache = EpochCache()
        self._start = 0
        self._flushed_end = 0
        self._active_fd: int | None = None
        self._unsynced = False
        self._dir_dirty = False
        self._closed = False
        self._failure: BaseException | None = None

    # ----------------------------------------------------------------- opening and recovery

    @classmethod
    def open(
        cls, directory: str | os.PathLike[str], *, segment_bytes: int = DEFAULT_SEGMENT_BYTES
    ) -> FileLog:
        """Recover the log in ``directory`` (which must exist) and load every batch."""
        if segment_bytes < 1:
            raise ValueError(f"segment_bytes must be positive, not {segment_bytes}")
        path = Path(directory)
        if not path.is_dir():
            raise FileNotFoundError(f"log directory {path} does not exist")
        log = cls(path, segment_bytes)
        stale_temp = path / (LOG_START_CHECKPOINT + TEMP_SUFFIX)
        if stale_temp.exists():
            stale_temp.unlink()
        log._recover(_read_start_checkpoint(path), list_segment_files(path))
        return log

    def _recover(self, checkpoint_start: int | None, found: list[tuple[int, Path]]) -> None:
        start = checkpoint_start
        if start is None:
            start = found[0][0] if found else 0
        directory_changed = False
        below_start: list[str] = []
        while len(found) >= 2 and found[1][0] <= start:
            below_start.append(found[0][1].name)
            found[0][1].unlink()
            found.pop(0)
            directory_changed = True

        reason: StopReason | None = None
        detail = ""
        dropped_from: int | None = None
        bytes_dropped = 0
        truncated_segment: str | None = None
        deleted: list[str] = []
        segments: list[_Segment] = []
        batches: list[Batch] = []
        next_offset: int | None = None
        last_epoch: int | None = None

        for index, (base, path) in enumerate(found):
            if next_offset is None and base > start:
                reason = StopReason.NOT_CONTIGUOUS
                detail = f"log starts at {start} but first segment {path.name} starts at {base}"
            elif next_offset is not None and base != next_offset:
                reason = StopReason.NOT_CONTIGUOUS
                detail = f"segment {path.name} does not start at {next_offset}"
            if reason is not None:
                dropped_from = next_offset if next_offset is not None else start
                doomed = found[index:]
                break
            data = path.read_bytes()
            segment = _Segment(base, path)
            scanner = BatchScanner(data, expected_base_offset=base, min_epoch=last_epoch)
            position = 0
            for batch in scanner:
                segment.batch_bases.append(batch.base_offset)
                segment.batch_positions.append(position)
                position += encoded_size(batch)
                batches.append(batch)
                last_epoch = batch.epoch
            segment.size = position
            segments.append(segment)
            next_offset = batches[-1].next_offset if segment.batch_bases else base
            stop = scanner.stop
            assert stop is not None
            if not stop.clean:
                reason = stop.reason
                detail = f"{path.name}: {stop.describe()}"
                dropped_from = next_offset
                bytes_dropped += len(data) - stop.position
                truncated_segment = path.name
                _truncate_file(path, stop.position)
                doomed = found[index + 1 :]
                break
        else:
            doomed = []

        for _, path in doomed:
            bytes_dropped += path.stat().st_size
            deleted.append(path.name)
            path.unlink()
            directory_changed = True

        end = next_offset if next_offset is not None else start
        if segments and end <= start:
            for segment in segments:
                below_start.append(segment.path.name)
                segment.path.unlink()
            directory_changed = True
            segments = []
            batches = []

        first_served = bisect.bisect_left([b.base_offset for b in batches], start)
        starts_on_boundary = (
            first_served < len(batches) and batches[first_served].base_offset == start
        )
        if segments and not starts_on_boundary:
            raise LogCorruptError(
                f"{self.directory / LOG_START_CHECKPOINT}: log start offset {start} is not a "
                f"batch boundary in {segments[0].path.name}"
            )
        for segment in segments:
            _fsync_file(segment.path)
        if directory_changed or segments:
            fsync_directory(self.directory)

        self._start = start
        self._segments = segments
        self._batches = batches[first_served:]
        self._bases = [batch.base_offset for batch in self._batches]
        self._epoch_cache = _build_epoch_cache(self._batches)
        self._flushed_end = self.log_end_offset
        self.recovery = RecoveryReport(
            reason=reason,
            detail=detail,
            dropped_from_offset=dropped_from,
            bytes_dropped=bytes_dropped,
            truncated_segment=truncated_segment,
            segments_deleted=tuple(deleted),
            segments_below_start=tuple(below_start),
        )

    # ----------------------------------------------------------------------------- reading

    @property
    def log_start_offset(self) -> int:
        return self._start

    @property
    def log_end_offset(self) -> int:
        return self._batches[-1].next_offset if self._batches else self._start

    @property
    def flushed_end_offset(self) -> int:
        """Every batch below this offset survives a crash."""
        return self._flushed_end

    @property
    def last_epoch(self) -> int | None:
        return self._batches[-1].epoch if self._batches else None

    @property
    def epoch_cache(self) -> EpochCache:
        """Epoch start offsets of the batches in the log (a snapshot's epoch is not included)."""
        return self._epoch_cache

    def batches(self, from_offset: int | None = None) -> list[Batch]:
        """Batches from ``from_offset`` (a batch boundary; default the log start) to the end."""
        if from_offset is None or from_offset <= self._start:
            return list(self._batches)
        if from_offset >= self.log_end_offset:
            return []
        index = bisect.bisect_left(self._bases, from_offset)
        if index == len(self._bases) or self._bases[index] != from_offset:
            raise LogUsageError(f"offset {from_offset} is inside a batch")
        return self._batches[index:]

    def __len__(self) -> int:
        return len(self._batches)

    def segment_paths(self) -> list[Path]:
        return [segment.path for segment in self._segments]

    def bytes_from(self, offset: int) -> int:
        """The bytes the segments would hold if the log started at ``offset``: every segment
        but those ``advance_start(offset)`` would delete (wholly below it)."""
        kept = [
            segment
            for index, segment in enumerate(self._segments)
            if index + 1 >= len(self._segments) or self._segments[index + 1].base_offset > offset
        ]
        return sum(segment.size for segment in kept)

    def newest_timestamp_below(self, offset: int) -> int | None:
        """The newest batch timestamp among the batches wholly below ``offset`` (from the log
        start), or ``None`` when there are none."""
        index = bisect.bisect_left(self._bases, offset)
        below = [batch for batch in self._batches[:index] if batch.next_offset <= offset]
        return max((batch.timestamp_ms for batch in below), default=None)

    # ----------------------------------------------------------------------------- writing

    def append(self, batches: Iterable[Batch]) -> None:
        """Write ``batches`` after the log end without syncing; ``flush`` makes them durable.

        All batches are checked before any byte is written, so a rejected call changes nothing.
        """
        self._check_usable()
        pending = list(batches)
        next_offset = self.log_end_offset
        last_epoch = self.last_epoch
        for batch in pending:
            if batch.base_offset != next_offset:
                raise LogUsageError(
                    f"batch at offset {batch.base_offset} does not follow log end {next_offset}"
                )
            if last_epoch is not None and batch.epoch < last_epoch:
                raise LogUsageError(
                    f"batch at offset {batch.base_offset} has epoch {batch.epoch}, "
                    f"below the last epoch {last_epoch}"
                )
            if batch.record_count < 1:
                raise LogUsageError(f"batch at offset {batch.base_offset} holds no records")
            next_offset = batch.next_offset
            last_epoch = batch.epoch
        encoded = [encode_batch(batch) for batch in pending]
        if not pending:
            return
        try:
            self._write(pending, encoded)
        except OSError as exc:
            self._fail(exc)

    def _write(self, pending: list[Batch], encoded: list[bytes]) -> None:
        parts: list[bytes] = []
        segment = self._segments[-1] if self._segments else None
        for batch, data in zip(pending, encoded, strict=True):
            if segment is None or (
                segment.size > 0 and segment.size + len(data) > self.segment_bytes
            ):
                if segment is not None:
                    self._write_parts(parts)
                    parts = []
                    self._seal_active()
                segment = self._create_segment(batch.base_offset)
            parts.append(data)
            segment.batch_bases.append(batch.base_offset)
            segment.batch_positions.append(segment.size)
            segment.size += len(data)
            self._batches.append(batch)
            self._bases.append(batch.base_offset)
            self._epoch_cache.assign(batch.epoch, batch.base_offset)
        self._write_parts(parts)

    def _write_parts(self, parts: list[bytes]) -> None:
        if not parts:
            return
        write_all(self._active(), b"".join(parts))
        self._unsynced = True

    def _seal_active(self) -> None:
        """The active segment will never be written again: sync it now, so ``flush`` need not."""
        if self._active_fd is not None:
            if self._unsynced:
                os.fsync(self._active_fd)
                self._unsynced = False
            os.close(self._active_fd)
            self._active_fd = None

    def _create_segment(self, base_offset: int) -> _Segment:
        path = self.directory / segment_file_name(base_offset)
        self._active_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        self._dir_dirty = True
        segment = _Segment(base_offset, path)
        self._segments.append(segment)
        return segment

    def _active(self) -> int:
        if self._active_fd is None:
            path = self._segments[-1].path
            self._active_fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        return self._active_fd

    def flush(self) -> None:
        """Make every appended batch durable: one fsync, plus the directory if it changed."""
        self._check_usable()
        try:
            if self._unsynced and self._active_fd is not None:
                os.fsync(self._active_fd)
                self._unsynced = False
            if self._dir_dirty:
                fsync_directory(self.directory)
                self._dir_dirty = False
        except OSError as exc:
            self._fail(exc)
        self._flushed_end = self.log_end_offset

    def truncate_to(self, offset: int) -> None:
        """Cut the log so it ends at ``offset``, a batch boundary; durable on return.

        Later segments go first, highest first, then the segment holding ``offset`` is cut:
        a crash part-way leaves a prefix of the old log, never a log with a hole in it.
        """
        self._check_usable()
        if offset < self._start:
            raise LogUsageError(f"cannot truncate to {offset}, below the log start {self._start}")
        if offset >= self.log_end_offset:
            return
        index = bisect.bisect_left(self._bases, offset)
        if index == len(self._bases) or self._bases[index] != offset:
            raise LogUsageError(f"cannot truncate to {offset}: it is inside a batch")
        try:
            self._close_active()
            removed_any = False
            while self._segments and self._segments[-1].base_offset >= offset:
                self._segments.pop().path.unlink()
                removed_any = True
            if removed_any:
                fsync_directory(self.directory)
                self._dir_dirty = False
            if self._segments:
                segment = self._segments[-1]
                cut = bisect.bisect_left(segment.batch_bases, offset)
                if cut < len(segment.batch_bases):
                    size = segment.batch_positions[cut]
                    del segment.batch_bases[cut:]
                    del segment.batch_positions[cut:]
                    segment.size = size
                    self._active_fd = os.open(segment.path, os.O_WRONLY | os.O_APPEND)
                    os.ftruncate(self._active_fd, size)
                    os.fsync(self._active_fd)
            self._unsynced = False
        except OSError as exc:
            self._fail(exc)
        del self._batches[index:]
        del self._bases[index:]
        self._epoch_cache.truncate_from_end(offset)
        self._flushed_end = min(self._flushed_end, offset)

    def advance_start(self, offset: int) -> None:
        """Move the log start to ``offset`` (a batch boundary or the log end) and drop what
        lies wholly below it.

        The checkpoint is written first; segments are deleted after. A crash in between leaves
        segments that recovery deletes by rule 1, so the log never starts before a checkpoint
        that was made durable.
        """
        self._check_usable()
        if offset < self._start:
            raise LogUsageError(f"log start {self._start} cannot move back to {offset}")
        if offset > self.log_end_offset:
            raise LogUsageError(
                f"log start cannot pass the log end {self.log_end_offset}; use reset({offset})"
            )
        if offset == self._start:
            return
        index = bisect.bisect_left(self._bases, offset)
        on_boundary = index < len(self._bases) and self._bases[index] == offset
        if offset < self.log_end_offset and not on_boundary:
            raise LogUsageError(f"cannot start the log at {offset}: it is inside a batch")
        try:
            _write_start_checkpoint(self.directory, offset)
            self._start = offset
            del self._batches[:index]
            del self._bases[:index]
            self._epoch_cache = _build_epoch_cache(self._batches)
            self._flushed_end = max(self._flushed_end, offset)
            while len(self._segments) >= 2 and self._segments[1].base_offset <= offset:
                self._segments.pop(0).path.unlink()
                self._dir_dirty = True
            if self._segments and not self._batches:
                self._close_active()
                self._unsynced = False
                self._segments.pop().path.unlink()
                self._dir_dirty = True
        except OSError as exc:
            self._fail(exc)

    def reset(self, start_offset: int) -> None:
        """Drop every batch and restart the log, empty, at ``start_offset``; durable on return.

        Segments go first, highest first, then the checkpoint: a crash part-way leaves a
        prefix of the old log with the old start, which ``MetadataDir`` resets again because
        the snapshot that asked for the reset is already in place.
        """
        self._check_usable()
        if start_offset < 0:
            raise LogUsageError(f"log start {start_offset} is negative")
        try:
            self._close_active()
            self._unsynced = False
            while self._segments:
                self._segments.pop().path.unlink()
            fsync_directory(self.directory)
            self._dir_dirty = False
            _write_start_checkpoint(self.directory, start_offset)
        except OSError as exc:
            self._fail(exc)
        self._start = start_offset
        self._batches = []
        self._bases = []
        self._epoch_cache = EpochCache()
        self._flushed_end = start_offset

    def close(self) -> None:
        """Release the file; does not flush, so unflushed batches may be lost in a crash."""
        if self._closed:
            return
        self._closed = True
        self._close_active()

    def __enter__(self) -> FileLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # ---------------------------------------------------------------------------- helpers

    def _close_active(self) -> None:
        if self._active_fd is not None:
            fd, self._active_fd = self._active_fd, None
            os.close(fd)

    def _check_usable(self) -> None:
        if self._closed:
            raise LogUsageError(f"log in {self.directory} is closed")
        if self._failure is not None:
            raise LogFailedError(
                f"log in {self.directory} failed earlier ({self._failure}); reopen it"
            )

    def _fail(self, exc: OSError) -> NoReturn:
        self._failure = exc
        with contextlib.suppress(OSError):
            self._close_active()
        raise exc


def _build_epoch_cache(batches: Iterable[Batch]) -> EpochCache:
    cache = EpochCache()
    for batch in batches:
        cache.assign(batch.epoch, batch.base_offset)
    return cache


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _truncate_file(path: Path, size: int) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    finally:
        os.close(fd)


_CHECKPOINT_MAX_BYTES = 4096
"""The checkpoint is one short JSON object; a bigger file is not one, and is not parsed."""


def read_log_start(directory: Path) -> int:
    """The log start recorded in ``directory`` (0 when none was ever written), read without
    opening the log: for tools that only read, such as ``raftmeta log export``."""
    start = _read_start_checkpoint(directory)
    return 0 if start is None else start


def _read_start_checkpoint(directory: Path) -> int | None:
    path = directory / LOG_START_CHECKPOINT
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise LogCorruptError(
            f"{path}: unreadable log start checkpoint (a directory, not a file)"
        ) from None
    except OSError as exc:
        raise LogCorruptError(
            f"{path}: unreadable log start checkpoint ({exc.strerror or exc})"
        ) from None
    if len(raw) > _CHECKPOINT_MAX_BYTES:
        raise LogCorruptError(
            f"{path}: unreadable log start checkpoint ({len(raw)} bytes, at most "
            f"{_CHECKPOINT_MAX_BYTES} expected)"
        )
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("data_version") != _CHECKPOINT_VERSION:
            raise ValueError("unsupported data_version")
        offset = data["log_start_offset"]
        if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset < 2**63:
            raise ValueError(f"log_start_offset {offset!r}")
    except UnicodeDecodeError as exc:
        raise LogCorruptError(
            f"{path}: unreadable log start checkpoint (byte {exc.start} is not UTF-8 text)"
        ) from None
    except json.JSONDecodeError as exc:
        raise LogCorruptError(
            f"{path}: unreadable log start checkpoint ({exc.msg} at byte {exc.pos})"
        ) from None
    except (ValueError, KeyError, RecursionError) as exc:
        raise LogCorruptError(f"{path}: unreadable log start checkpoint ({exc!s:.200})") from None
    return offset


def _write_start_checkpoint(directory: Path, offset: int) -> None:
    body = json.dumps({"data_version": _CHECKPOINT_VERSION, "log_start_offset": offset})
    write_file_atomically(directory / LOG_START_CHECKPOINT, body.encode("utf-8"))
