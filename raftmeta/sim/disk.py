"""A simulated disk that forgets what was written but not fsynced when its node crashes.

Writes land in a pending list (the page cache); ``sync`` makes them durable. A crash keeps
a random prefix of the pending writes, possibly cutting the last append mid-way (a torn
tail, which recovery drops), because real disks may persist some unsynced writes in order.
"""

from __future__ import annotations

import bisect
import random
from dataclasses import dataclass, field

from raftmeta.raft.batch import Batch, SnapshotId
from raftmeta.raft.membership import Membership
from raftmeta.raft.ready import (
    AdvanceLogStart,
    AppendBatches,
    InstallSnapshot,
    LogOp,
    TruncateLog,
    WriteSnapshotChunk,
)
from raftmeta.raft.state import ElectionState


@dataclass(slots=True)
class DurableState:
    election: ElectionState = field(default_factory=ElectionState)
    batches: list[Batch] = field(default_factory=list)
    bases: list[int] = field(default_factory=list)
    log_start: int = 0
    start_snapshot: SnapshotId | None = None
    snapshots: dict[SnapshotId, bytes] = field(default_factory=dict)
    snapshot_membership: dict[SnapshotId, Membership] = field(default_factory=dict)
    """The voter set each snapshot holds (KIP-853 snapshots carry it)."""
    partial_snapshot: tuple[SnapshotId, bytearray] | None = None

    @property
    def log_end(self) -> int:
        return self.batches[-1].next_offset if self.batches else self.log_start

    def batch_holding(self, offset: int) -> Batch | None:
        index = bisect.bisect_right(self.bases, offset) - 1
        if index < 0:
            return None
        batch = self.batches[index]
        return batch if offset <= batch.last_offset else None


PendingWrite = LogOp | ElectionState


class SimDisk:
    def __init__(self) -> None:
        self.durable = DurableState()
        self.pending: list[PendingWrite] = []
        self.truncations: list[tuple[int, Batch]] = []
        """Durable truncations applied by the last sync: (offset, first batch removed)."""

    def write(self, item: PendingWrite) -> None:
        self.pending.append(item)

    def sync(self) -> None:
        self.truncations = []
        for item in self.pending:
            self._apply(item)
        self.pending = []

    def crash(self, rng: random.Random) -> None:
        """Keep a random prefix of unsynced writes; the last append may be torn."""
        self.truncations = []
        keep = rng.randint(0, len(self.pending))
        for item in self.pending[:keep]:
            self._apply(item)
        if keep < len(self.pending):
            torn = self.pending[keep]
            if isinstance(torn, AppendBatches) and len(torn.batches) > 1:
                self._apply(AppendBatches(torn.batches[: rng.randrange(len(torn.batches))]))
        self.pending = []
        self.durable.partial_snapshot = None  # recovery deletes .part files

    def wipe(self) -> None:
        self.durable = DurableState()
        self.pending = []

    def write_local_snapshot(
        self, snapshot_id: SnapshotId, data: bytes, membership: Membership
    ) -> None:
        """A snapshot the node wrote itself: .part, fsync, rename — durable when this returns."""
        self.durable.snapshots[snapshot_id] = data
        self.durable.snapshot_membership[snapshot_id] = membership

    def read_snapshot(self, snapshot_id: SnapshotId) -> bytes | None:
        return self.durable.snapshots.get(snapshot_id)

    def _apply(self, item: PendingWrite) -> None:
        durable = self.durable
        if isinstance(item, ElectionState):
            durable.election = item
        elif isinstance(item, AppendBatches):
            for batch in item.batches:
                if batch.base_offset != durable.log_end:
                    raise AssertionError(
                        f"append at {batch.base_offset} does not follow {durable.log_end}"
                    )
                durable.batches.append(batch)
                durable.bases.append(batch.base_offset)
        elif isinstance(item, TruncateLog):
            index = bisect.bisect_left(durable.bases, item.end_offset)
            if index < len(durable.batches):
                self.truncations.append((item.end_offset, durable.batches[index]))
            del durable.batches[index:]
            del durable.bases[index:]
        elif isinstance(item, WriteSnapshotChunk):
            partial = durable.partial_snapshot
            if partial is None or partial[0] != item.snapshot_id:
                partial = (item.snapshot_id, bytearray())
                durable.partial_snapshot = partial
            buffer = partial[1]
            if item.position != len(buffer):
                raise AssertionError("snapshot chunks must arrive in order")
            buffer.extend(item.data)
        elif isinstance(item, InstallSnapshot):
            partial = durable.partial_snapshot
            if partial is None or partial[0] != item.snapshot_id:
                raise AssertionError("install of a snapshot that was not downloaded")
            durable.snapshots = {item.snapshot_id: bytes(partial[1])}
            if item.membership is not None:
                durable.snapshot_membership = {item.snapshot_id: item.membership}
            durable.partial_snapshot = None
            durable.batches = []
            durable.bases = []
            durable.log_start = item.snapshot_id.end_offset
            durable.start_snapshot = item.snapshot_id
        elif isinstance(item, AdvanceLogStart):
            end = item.snapshot_id.end_offset
            index = bisect.bisect_left(durable.bases, end)
            del durable.batches[:index]
            del durable.bases[:index]
            durable.log_start = end
            durable.start_snapshot = item.snapshot_id
            for old in [s for s in durable.snapshots if s.end_offset < end]:
                del durable.snapshots[old]
        else:  # pragma: no cover
            raise TypeError(item)
