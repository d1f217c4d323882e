"""The frames one Kafka connection has read ahead of the one being answered.

A connection has exactly one reader (its task reading frames) and one answerer (the task
answering them in order), so the hand-over needs what ``asyncio.Queue`` gives (a bound the
reader waits at, the answerer waiting while it is empty) but none of its bookkeeping for many
waiters and ``join``: a deque and at most one waiting future on each side. Every request
passes through here once, and the queue's calls were a tenth of what the listener itself spent
on a CreateTopics.
"""

from __future__ import annotations

import asyncio
from collections import deque


class FramePipeline:
    """Frames (``None`` ends the stream) from one reader to one answerer, at most ``depth``
    held at once."""

    __slots__ = ("_answerer_waits", "_depth", "_frames", "_reader_waits")

    def __init__(self, depth: int) -> None:
        if depth < 1:
            raise ValueError("a pipeline holds at least one frame")
        self._depth = depth
        self._frames: deque[bytes | None] = deque()
        self._reader_waits: asyncio.Future[None] | None = None
        """Set while the reader waits for room."""
        self._answerer_waits: asyncio.Future[None] | None = None
        """Set while the answerer waits for a frame."""

    def empty(self) -> bool:
        return not self._frames

    async def put(self, frame: bytes | None) -> None:
        """Hand ``frame`` on, after waiting for room while ``depth`` are held."""
        while len(self._frames) >= self._depth:
            waiter = asyncio.get_running_loop().create_future()
            self._reader_waits = waiter
            try:
                await waiter
            finally:
                self._reader_waits = None
        self._frames.append(frame)
        _wake(self._answerer_waits)

    async def get(self) -> bytes | None:
        """The oldest frame, after waiting for one while none is held."""
        while not self._frames:
            waiter = asyncio.get_running_loop().create_future()
            self._answerer_waits = waiter
            try:
                await waiter
            finally:
                self._answerer_waits = None
        frame = self._frames.popleft()
        _wake(self._reader_waits)
        return frame


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)
