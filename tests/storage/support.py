"""Builders shared by the storage tests."""

from __future__ import annotations

from collections.abc import Sequence

from raftmeta.raft.batch import Batch, make_batch


def records_for(base_offset: int, count: int, size: int = 8) -> list[bytes]:
    """Records whose bytes name their offset, so a test can tell any two apart."""
    return [
        f"{offset}:".encode().ljust(size, b"x")
        for offset in range(base_offset, base_offset + count)
    ]


def batch_run(
    start_offset: int, epochs: Sequence[int], *, records: int = 3, size: int = 8
) -> list[Batch]:
    """Contiguous batches from ``start_offset``, one per entry of ``epochs``."""
    out: list[Batch] = []
    offset = start_offset
    for epoch in epochs:
        out.append(
            make_batch(offset, epoch, records_for(offset, records, size), timestamp_ms=offset)
        )
        offset += records
    return out
