"""Where the driver makes a Ready durable: on the event loop itself, or on a worker thread.

A worker thread keeps a slow disk from stalling everything else on the loop (answers to
votes and fetches, the application), but each handoff costs a thread wake-up, a turn for the
GIL while the loop runs Python, and a ``call_soon_threadsafe`` back: measured on the serial
commit path (``quorum_bench.py --breakdown``) 0.1 to 0.3 ms on the leader and again on the
follower, as much as the fsync itself (0.26 ms for a 4 KiB append here). So a small append,
the kind a serial writer makes, is written inline while the disk has been fast, and anything
else goes to the thread: a large append, a truncation or snapshot work, a write of the
election state (a few fsyncs, and rare), and every write once the smoothed write time passes
:data:`INLINE_MAX_MS`, until it falls back under it.
"""

from __future__ import annotations

import asyncio
import time

from raftmeta.quorum.disk import NodeDisk
from raftmeta.raft.ready import AppendBatches, Ready

INLINE_MAX_BYTES = 64 * 1024
"""Appends larger than this go to the worker thread: writing them takes longer than a handoff."""

INLINE_MAX_MS = 2.0
"""While the smoothed write time is above this, every write goes to the worker thread."""

SMOOTHING = 0.2
"""Weight of the newest write in the smoothed write time."""


class WritePlacement:
    """Chooses, Ready by Ready, and learns how long the disk takes."""

    def __init__(self, *, inline: bool = True, max_inline_ms: float = INLINE_MAX_MS) -> None:
        self.enabled = inline
        """False sends every write to the worker thread, as before this choice existed."""
        self.max_inline_ms = max_inline_ms
        self.smoothed_ms = 0.0
        """Smoothed time of a write (inline or on the thread), in milliseconds."""

    def inline(self, ready: Ready) -> bool:
        """Whether to write ``ready`` on the event loop."""
        if not self.enabled or self.smoothed_ms > self.max_inline_ms:
            return False
        if ready.election_state is not None:
            return False
        size = 0
        for op in ready.log_ops:
            if not isinstance(op, AppendBatches):
                return False
            size += sum(len(batch.payload) for batch in op.batches)
        return size <= INLINE_MAX_BYTES

    def observe(self, elapsed_ms: float) -> None:
        """Count one write that took ``elapsed_ms`` (the disk work alone, without the wait
        for a worker thread), wherever it ran."""
        self.smoothed_ms += SMOOTHING * (elapsed_ms - self.smoothed_ms)


async def persist(disk: NodeDisk, ready: Ready, placement: WritePlacement) -> None:
    """Make ``ready`` durable where ``placement`` says, and tell it how long the write took."""
    if placement.inline(ready):
        if ready.messages:
            # One turn for whatever the sends woke (a gRPC handler's answer) to go out
            # before the loop blocks on the disk.
            await asyncio.sleep(0)
        elapsed_ms = _timed_persist(disk, ready)
    else:
        elapsed_ms = await asyncio.to_thread(_timed_persist, disk, ready)
    placement.observe(elapsed_ms)


def _timed_persist(disk: NodeDisk, ready: Ready) -> float:
    """Make ``ready`` durable; returns the milliseconds the disk work took."""
    started = time.perf_counter()
    disk.persist(ready)
    return (time.perf_counter() - started) * 1000
