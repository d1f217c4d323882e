"""The byte layout of a batch: one encoding for log segments, snapshots and the wire.

Using the same bytes everywhere means a batch read from disk can be sent to a follower, and a
snapshot can be read by the same scanner as a segment, without re-encoding anything.

Layout (big-endian), 34 header bytes then the payload::

    0   version        uint8   FORMAT_VERSION; checked before anything else is trusted
    1   crc            uint32  CRC-32 of bytes 5 .. end of payload
    5   base_offset    int64
    13  epoch          int32
    17  record_count   int32   at least 1
    21  timestamp_ms   int64
    29  flags          int8    bit 0: control batch; other bits must be zero
    30  payload_length int32
    34  payload

The CRC sits right after the version so that it covers every other header field: a flipped bit
in an offset or a length is caught exactly like one in the payload.

Decoding never raises on bad input by itself. ``BatchScanner`` walks a buffer, yields every
valid batch and records a ``DecodeStop`` saying where and why it stopped; recovery keeps the
valid prefix, while ``decode_batches`` turns any stop other than a clean end into
``BatchDecodeError`` for callers that need all-or-nothing, such as a fetch response.
"""

from __future__ import annotations

import enum
import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from raftmeta.raft.batch import Batch, new_batch
from raftmeta.storage.errors import BatchDecodeError

FORMAT_VERSION = 1
CONTROL_FLAG = 0x01
_KNOWN_FLAGS = CONTROL_FLAG

_PREFIX = struct.Struct(">BI")
_FIELDS = struct.Struct(">qiiqbi")
BATCH_HEADER_SIZE = _PREFIX.size + _FIELDS.size
_HEADER = struct.Struct(">BIqiiqbi")
_CRC_START = _PREFIX.size

_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1


class StopReason(enum.Enum):
    """Why a scan stopped. Everything except ``CLEAN_END`` means the rest is not a valid batch."""

    CLEAN_END = "clean end"
    TORN_HEADER = "torn header"
    TORN_PAYLOAD = "torn payload"
    CRC_MISMATCH = "CRC mismatch"
    BAD_VERSION = "unknown format version"
    INVALID_HEADER = "invalid header"
    NOT_CONTIGUOUS = "offsets not contiguous"
    EPOCH_REGRESSION = "epoch went backwards"


@dataclass(frozen=True, slots=True)
class DecodeStop:
    """Where a scan stopped: ``position`` is the first byte not part of a valid batch."""

    reason: StopReason
    position: int
    detail: str = ""

    @property
    def clean(self) -> bool:
        return self.reason is StopReason.CLEAN_END

    def describe(self) -> str:
        text = f"{self.reason.value} at byte {self.position}"
        return f"{text}: {self.detail}" if self.detail else text


@dataclass(frozen=True, slots=True)
class DecodeResult:
    batches: tuple[Batch, ...]
    stop: DecodeStop

    @property
    def valid_length(self) -> int:
        """Bytes from the start of the buffer that hold only valid batches."""
        return self.stop.position


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """A batch's header without its payload or CRC check: what a reader that plans work by
    seeking over payloads (the analytics data source) needs, read with the one layout."""

    base_offset: int
    epoch: int
    record_count: int
    is_control: bool
    payload_length: int

    @property
    def size(self) -> int:
        """Bytes of the whole batch, header included."""
        return BATCH_HEADER_SIZE + self.payload_length


def decode_batch_header(header: bytes) -> BatchHeader:
    """The fields of the ``BATCH_HEADER_SIZE`` bytes at the start of a batch. Nothing is
    checked: a caller that trusts the result must still bound it (the payload length may be
    torn or corrupt) or decode the batch properly."""
    _version, _crc, base, epoch, count, _time, flags, length = _HEADER.unpack_from(header)
    return BatchHeader(base, epoch, count, bool(flags & CONTROL_FLAG), length)


def encoded_size(batch: Batch) -> int:
    return BATCH_HEADER_SIZE + len(batch.payload)


def encode_batch(batch: Batch) -> bytes:
    """Encode one batch; rejects values the layout cannot hold rather than wrapping them."""
    _check_encodable(batch)
    flags = CONTROL_FLAG if batch.is_control else 0
    fields = _FIELDS.pack(
        batch.base_offset,
        batch.epoch,
        batch.record_count,
        batch.timestamp_ms,
        flags,
        len(batch.payload),
    )
    crc = zlib.crc32(batch.payload, zlib.crc32(fields))
    return b"".join((_PREFIX.pack(FORMAT_VERSION, crc), fields, batch.payload))


def encode_batches(batches: Iterable[Batch]) -> bytes:
    return b"".join(encode_batch(batch) for batch in batches)


def _check_encodable(batch: Batch) -> None:
    if not 0 <= batch.base_offset <= _INT64_MAX:
        raise ValueError(f"base offset {batch.base_offset} is out of range")
    if not 0 <= batch.epoch <= _INT32_MAX:
        raise ValueError(f"epoch {batch.epoch} is out of range")
    if not 1 <= batch.record_count <= _INT32_MAX:
        raise ValueError(f"record count {batch.record_count} must be between 1 and 2^31-1")
    if batch.base_offset + batch.record_count - 1 > _INT64_MAX:
        raise ValueError("batch offsets overflow int64")
    if not -(2**63) <= batch.timestamp_ms <= _INT64_MAX:
        raise ValueError(f"timestamp {batch.timestamp_ms} is out of range")
    if len(batch.payload) > _INT32_MAX:
        raise ValueError("payload is larger than 2 GiB")


class BatchScanner:
    """Walks a buffer of encoded batches; iterate it for the batches, then read ``stop``.

    ``expected_base_offset`` pins the first batch's offset (later ones must follow on without
    gaps either way); ``min_epoch`` is the epoch the first batch may not go below. Iteration is
    lazy, so a reader can stream a large snapshot without holding every batch.
    """

    __slots__ = ("_buffer", "_end", "_expected_base", "_min_epoch", "_start", "stop")

    def __init__(
        self,
        buffer: bytes | bytearray | memoryview,
        *,
        expected_base_offset: int | None = None,
        min_epoch: int | None = None,
        start: int = 0,
        end: int | None = None,
    ) -> None:
        self._buffer = memoryview(buffer).cast("B")
        self._start = start
        self._end = len(self._buffer) if end is None else end
        self._expected_base = expected_base_offset
        self._min_epoch = min_epoch
        self.stop: DecodeStop | None = None

    def __iter__(self) -> Iterator[Batch]:
        view = self._buffer
        end = self._end
        position = self._start
        expected_base = self._expected_base
        min_epoch = self._min_epoch
        try:
            while True:
                remaining = end - position
                if remaining == 0:
                    self.stop = DecodeStop(StopReason.CLEAN_END, position)
                    return
                if remaining < BATCH_HEADER_SIZE:
                    self.stop = DecodeStop(
                        StopReason.TORN_HEADER,
                        position,
                        f"{remaining} of {BATCH_HEADER_SIZE} header bytes",
                    )
                    return
                (version, crc, base, epoch, count, timestamp, flags, length) = _HEADER.unpack_from(
                    view, position
                )
                if version != FORMAT_VERSION:
                    self.stop = DecodeStop(StopReason.BAD_VERSION, position, f"version {version}")
                    return
                if length < 0:
                    self.stop = DecodeStop(
                        StopReason.INVALID_HEADER, position, f"payload length {length}"
                    )
                    return
                batch_end = position + BATCH_HEADER_SIZE + length
                if batch_end > end:
                    self.stop = DecodeStop(
                        StopReason.TORN_PAYLOAD,
                        position,
                        f"{end - position - BATCH_HEADER_SIZE} of {length} payload bytes",
                    )
                    return
                actual_crc = zlib.crc32(view[position + _CRC_START : batch_end])
                if actual_crc != crc:
                    self.stop = DecodeStop(
                        StopReason.CRC_MISMATCH,
                        position,
                        f"stored {crc:#010x}, computed {actual_crc:#010x}",
                    )
                    return
                # Inline the common case; _header_problem says what is wrong otherwise.
                if count < 1 or base < 0 or epoch < 0 or flags & ~_KNOWN_FLAGS:
                    problem = _header_problem(base, epoch, count, flags)
                    self.stop = DecodeStop(StopReason.INVALID_HEADER, position, problem)
                    return
                if expected_base is not None and base != expected_base:
                    self.stop = DecodeStop(
                        StopReason.NOT_CONTIGUOUS,
                        position,
                        f"batch starts at offset {base}, expected {expected_base}",
                    )
                    return
                if min_epoch is not None and epoch < min_epoch:
                    self.stop = DecodeStop(
                        StopReason.EPOCH_REGRESSION,
                        position,
                        f"batch at offset {base} has epoch {epoch} after epoch {min_epoch}",
                    )
                    return
                payload = bytes(view[position + BATCH_HEADER_SIZE : batch_end])
                expected_base = base + count
                min_epoch = epoch
                position = batch_end
                yield new_batch(base, epoch, count, payload, timestamp, flags == CONTROL_FLAG)
        finally:
            if self.stop is None:
                # The consumer stopped early; what was consumed is valid up to here.
                self.stop = DecodeStop(StopReason.CLEAN_END, position, "iteration abandoned")


def _header_problem(base: int, epoch: int, count: int, flags: int) -> str:
    if count < 1:
        return f"record count {count}"
    if base < 0:
        return f"base offset {base}"
    if epoch < 0:
        return f"epoch {epoch}"
    if flags & ~_KNOWN_FLAGS:
        return f"unknown flags {flags:#04x}"
    return ""


def scan_batches(
    buffer: bytes | bytearray | memoryview,
    *,
    expected_base_offset: int | None = None,
    min_epoch: int | None = None,
) -> DecodeResult:
    """Every valid batch from the start of ``buffer`` and where the valid prefix ends."""
    scanner = BatchScanner(buffer, expected_base_offset=expected_base_offset, min_epoch=min_epoch)
    batches = tuple(scanner)
    assert scanner.stop is not None
    return DecodeResult(batches, scanner.stop)


def decode_batches(
    buffer: bytes | bytearray | memoryview,
    *,
    expected_base_offset: int | None = None,
    min_epoch: int | None = None,
) -> list[Batch]:
    """All batches in ``buffer``, or ``BatchDecodeError`` if any byte is not part of one."""
    result = scan_batches(buffer, expected_base_offset=expected_base_offset, min_epoch=min_epoch)
    if not result.stop.clean:
        raise BatchDecodeError(result.stop, f"cannot decode batches: {result.stop.describe()}")
    return list(result.batches)


def decode_batch(buffer: bytes | bytearray | memoryview) -> Batch:
    """Exactly one batch filling the whole buffer."""
    batches = decode_batches(buffer)
    if len(batches) != 1:
        stop = DecodeStop(StopReason.CLEAN_END, len(buffer), f"{len(batches)} batches, not 1")
        raise BatchDecodeError(stop, f"expected exactly one batch, found {len(batches)}")
    return batches[0]
