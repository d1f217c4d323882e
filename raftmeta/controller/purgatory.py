"""Replies parked until the records they speak of commit.

A controller reply is true only once the records behind it are committed, so the event queue
parks it here under the offset of its last record (or of the last record pending when it ran,
for a reply that wrote nothing) and the epoch it was written in; a commit releases every reply
whose offset it passed. A commit of another epoch at a parked offset means the records parked
on were never written: that reply fails, and so do all of them when leadership is lost.
Replies sit in offset order, as the queue hands offsets out in order.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass

from raftmeta.errors import KafkaError
from raftmeta.raft.batch import Batch


@dataclass(slots=True)
class Waiter:
    """A reply parked until ``offset`` commits in ``epoch``."""

    offset: int
    epoch: int
    future: asyncio.Future[object]
    response: object
    deadline_ms: int | None
    name: str


class Purgatory:
    """The parked replies, oldest offset first."""

    def __init__(self) -> None:
        self._waiters: deque[Waiter] = deque()

    def park(self, waiter: Waiter) -> None:
        self._waiters.append(waiter)

    def parked(self) -> Counter[str]:
        """Replies still waiting, by operation."""
        return Counter(waiter.name for waiter in self._waiters if not waiter.future.done())

    def release(self, batch: Batch, superseded: Callable[[], KafkaError]) -> None:
        """Answers every reply ``batch`` commits; one parked at an offset the batch wrote in
        another epoch fails with ``superseded()``."""
        waiters = self._waiters
        while waiters and waiters[0].offset <= batch.last_offset:
            waiter = waiters.popleft()
            if waiter.future.done():
                continue
            if waiter.offset >= batch.base_offset and waiter.epoch != batch.epoch:
                waiter.future.set_exception(superseded())
            else:
                waiter.future.set_result(waiter.response)

    def expire(self, now_ms: int, timed_out: Callable[[str], KafkaError]) -> None:
        """Fails the replies whose deadline passed with ``timed_out(name)``."""
        for waiter in self._waiters:
            if (
                waiter.deadline_ms is not None
                and now_ms >= waiter.deadline_ms
                and not waiter.future.done()
            ):
                waiter.future.set_exception(timed_out(waiter.name))
        while self._waiters and self._waiters[0].future.done():
            self._waiters.popleft()

    def drop_from(self, offset: int, error: KafkaError) -> None:
        """Fails the replies parked at ``offset`` or later: those offsets will be handed out
        again, and the purgatory releases in offset order."""
        waiters = self._waiters
        while waiters and waiters[-1].offset >= offset:
            waiter = waiters.pop()
            if not waiter.future.done():
                waiter.future.set_exception(error)

    def fail_all(self, error: KafkaError) -> None:
        waiters, self._waiters = self._waiters, deque()
        for waiter in waiters:
            if not waiter.future.done():
                waiter.future.set_exception(error)
