"""Log batches: the unit the quorum replicates, persists and checksums.

A batch is a run of records appended together by one leader in one epoch. Consensus never
looks inside the payload; it only needs offsets and epochs. The payload is the msgpack
encoding of a list of record byte strings, so a batch can travel and be stored as raw bytes
without being re-encoded record by record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

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


class _UnfrozenBatch:
    """:class:`Batch`'s slots without its frozen ``__setattr__``: a batch is built here with
    plain slot stores and then given its real class (the memory layouts are identical), at
    about a third of the cost of the frozen dataclass ``__init__``. Every append and every
    fetched batch builds one."""

    __slots__ = Batch.__slots__


def new_batch(
    base_offset: int,
    epoch: int,
    record_count: int,
    payload: bytes,
    timestamp_ms: int,
    is_control: bool,
) -> Batch:
    """A :class:`Batch` from values already known to be well-typed; nothing is checked."""
    built: Any = object.__new__(_UnfrozenBatch)
    built.base_offset = base_offset
    built.epoch = epoch
    built.record_count = record_count
    built.payload = payload
    built.timestamp_ms = timestamp_ms
    built.is_control = is_control
    built.__class__ = Batch
    return built  # type: ignore[no-any-return]


# Packing a list of byte strings runs entirely in C, holding the GIL and never calling back
# into Python, so one shared packer cannot interleave two threads' output; it resets itself
# after every pack, a failed one included. Reusing it saves allocating a buffer per batch.
_pack_records = msgpack.Packer(use_bin_type=True).pack


def encode_records(records: Sequence[bytes]) -> bytes:
    if type(records) is not list and type(records) is not tuple:
        records = list(records)
    return _pack_records(records)  # type: ignore[no-any-return]


def decode_records(payload: bytes) -> list[bytes]:
    decoded = msgpack.unpackb(payload, raw=False)
    if type(decoded) is not list:
        raise ValueError("batch payload is not a list of byte strings")
    for record in decoded:
        if type(record) is not bytes:
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
    return new_batch(
        base_offset, epoch, len(records), encode_records(records), timestamp_ms, is_control
    )
