"""Log batches: the unit the quorum replicates, persists and checksums.

A batch is a run of records appended together by one leader in one epoch. Consensus never
looks inside the payload; it only needs offsets and epochs. The payload is the msgpack
encoding of a list of record byte strings, so a batch can travel and be stored as raw bytes
without being re-encoded record by record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import msgpack


@dataclass(frozen=True, slots=True, order=True)
class OffsetAndEpoch:
    """A position in the log named by the offset just past it and the epoch that wrote it."""

    offset: int
    epoch: int


@dataclass(frozen=True, slots=True)
class SnapshotId:
    """A snapshot holds every committed record below ``end_offset``; ``epoch`` wrote the last."""

    end_offset: int
    epoch: int

    def file_stem(self) -> str:
        return f"{self.end_offset:020d}-{self.epoch:010d}"


@dataclass(frozen=True, slots=True)
class Batch:
    base_offset: int
    epoch: int
    record_count: int
    payload: bytes
    timestamp_ms: int = 0
    is_control: bool = False

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.record_count - 1

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.record_count

    def records(self) -> list[bytes]:
        return decode_records(self.payload)


def encode_records(records: Sequence[bytes]) -> bytes:
    return msgpack.packb(list(records), use_bin_type=True)  # type: ignore[no-any-return]


def decode_records(payload: bytes) -> list[bytes]:
    decoded = msgpack.unpackb(payload, raw=False)
    if not isinstance(decoded, list) or not all(isinstance(r, bytes) for r in decoded):
        raise ValueError("batch payload is not a list of byte strings")
    return decoded


def make_batch(
    base_offset: int,
    epoch: int,
    records: Sequence[bytes],
    *,
    timestamp_ms: int = 0,
    is_control: bool = False,
) -> Batch:
    if not records:
        raise ValueError("a batch holds at least one record")
    return Batch(
        base_offset=base_offset,
        epoch=epoch,
        record_count=len(records),
        payload=encode_records(records),
        timestamp_ms=timestamp_ms,
        is_control=is_control,
    )
