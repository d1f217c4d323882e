"""The core's in-memory view of its log: batches since the log start, and the epoch cache.

The core keeps every batch after the latest snapshot in memory, so a leader answers fetches
without touching the disk; storage mirrors every change through the Ready's log operations.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from raftmeta.raft.batch import Batch, OffsetAndEpoch, SnapshotId
from raftmeta.raft.epoch_cache import EpochCache


class LogInvariantError(AssertionError):
    """The log was asked to do something that would break Raft's log rules."""


class RaftLog:
    __slots__ = ("_bases", "_batches", "epochs", "snapshot", "start_offset")

    def __init__(
        self,
        batches: Iterable[Batch] = (),
        *,
        start_offset: int = 0,
        snapshot: SnapshotId | None = None,
    ) -> None:
        self._batches: list[Batch] = []
        self._bases: list[int] = []
        self.epochs = EpochCache()
        self.start_offset = start_offset
        self.snapshot = snapshot
        if snapshot is not None:
            if snapshot.end_offset != start_offset:
                raise LogInvariantError("the log must start where its snapshot ends")
            self.epochs.assign(snapshot.epoch, snapshot.end_offset)
        for batch in batches:
            self.append(batch)

    @property
    def end_offset(self) -> int:
        return self._batches[-1].next_offset if self._batches else self.start_offset

    @property
    def last_epoch(self) -> int:
        if self._batches:
            return self._batches[-1].epoch
        return self.snapshot.epoch if self.snapshot is not None else 0

    def batches(self) -> list[Batch]:
        return list(self._batches)

    def __len__(self) -> int:
        return len(self._batches)

    def append(self, batch: Batch) -> None:
        if batch.base_offset != self.end_offset:
            raise LogInvariantError(
                f"batch at {batch.base_offset} does not follow log end {self.end_offset}"
            )
        if batch.epoch < self.last_epoch:
            raise LogInvariantError(
                f"batch epoch {batch.epoch} is below the last epoch {self.last_epoch}"
            )
        if batch.record_count <= 0:
            raise LogInvariantError("empty batch")
        self.epochs.assign(batch.epoch, batch.base_offset)
        self._batches.append(batch)
        self._bases.append(batch.base_offset)

    def _index_of(self, offset: int) -> int:
        """Index of the batch holding ``offset`` (offset must be inside the log)."""
        return bisect.bisect_right(self._bases, offset) - 1

    def truncate_to(self, end_offset: int) -> None:
        if end_offset < self.start_offset:
            raise LogInvariantError(f"truncation to {end_offset} is below the log start")
        if end_offset >= self.end_offset:
            return
        index = self._index_of(end_offset)
        if self._bases[index] != end_offset:
            raise LogInvariantError(f"truncation to {end_offset} is inside a batch")
        del self._batches[index:]
        del self._bases[index:]
        self.epochs.truncate_from_end(end_offset)
        if self.snapshot is not None and not self.epochs.entries():
            self.epochs.assign(self.snapshot.epoch, self.snapshot.end_offset)

    def read(self, offset: int, max_bytes: int) -> tuple[Batch, ...]:
        """Batches from ``offset`` (a batch boundary) up to about ``max_bytes``, at least one."""
        if offset >= self.end_offset or offset < self.start_offset:
            return ()
        index = self._index_of(offset)
        if self._bases[index] != offset:
            raise LogInvariantError(f"fetch offset {offset} is inside a batch")
        out: list[Batch] = []
        size = 0
        for batch in self._batches[index:]:
            if out and size + len(batch.payload) > max_bytes:
                break
            out.append(batch)
            size += len(batch.payload)
        return tuple(out)

    def batches_between(self, start: int, end: int, max_records: int | None = None) -> list[Batch]:
        """Whole batches whose offsets fall in [start, end), stopping before the batch that
        would take the count of records past ``max_records`` (the first batch always goes)."""
        if start >= end or start >= self.end_offset:
            return []
        index = max(self._index_of(max(start, self.start_offset)), 0)
        out: list[Batch] = []
        records = 0
        for batch in self._batches[index:]:
            if batch.base_offset >= end:
                break
            if batch.base_offset >= start:
                if max_records is not None and out and records + batch.record_count > max_records:
                    break
                out.append(batch)
                records += batch.record_count
        return out

    def batch_holding(self, offset: int) -> Batch | None:
        """The batch that holds ``offset``, if the log (not its snapshot) has it."""
        if offset < self.start_offset or offset >= self.end_offset:
            return None
        return self._batches[self._index_of(offset)]

    def epoch_at(self, offset: int) -> int:
        """The epoch of the record at ``offset``, which must be in the log or end the snapshot."""
        if self.snapshot is not None and offset == self.snapshot.end_offset - 1:
            return self.snapshot.epoch
        if offset < self.start_offset or offset >= self.end_offset:
            raise LogInvariantError(f"offset {offset} is not in the log")
        return self._batches[self._index_of(offset)].epoch

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        return self.epochs.end_offset_for(epoch, self.end_offset)

    def is_batch_boundary(self, offset: int) -> bool:
        if offset == self.end_offset or offset == self.start_offset:
            return True
        if offset < self.start_offset or offset > self.end_offset:
            return False
        return self._bases[self._index_of(offset)] == offset

    def reset_to_snapshot(self, snapshot: SnapshotId) -> None:
        """Replace everything with ``snapshot``; the log restarts empty at its end."""
        self._batches.clear()
        self._bases.clear()
        self.snapshot = snapshot
        self.start_offset = snapshot.end_offset
        self.epochs.clear_and_start(snapshot.epoch, snapshot.end_offset)

    def advance_start(self, snapshot: SnapshotId) -> None:
        """Drop the batches a snapshot now covers; the snapshot end must be a batch boundary."""
        if snapshot.end_offset < self.start_offset:
            return
        if snapshot.end_offset > self.end_offset:
            raise LogInvariantError("a local snapshot cannot end past the log end")
        if snapshot.end_offset == self.end_offset:
            keep_from = len(self._batches)
        else:
            keep_from = self._index_of(snapshot.end_offset)
            if self._bases[keep_from] != snapshot.end_offset:
                raise LogInvariantError("a snapshot must end at a batch boundary")
        del self._batches[:keep_from]
        del self._bases[:keep_from]
        self.snapshot = snapshot
        self.start_offset = snapshot.end_offset
        rebuilt = EpochCache()
        rebuilt.assign(snapshot.epoch, snapshot.end_offset)
        for batch in self._batches:
            rebuilt.assign(batch.epoch, batch.base_offset)
        self.epochs = rebuilt
