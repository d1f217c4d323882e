"""The node's clock: monotonic milliseconds for the core, the driver's sleep until its next
deadline, and the translation of the core's times to the wall clock for DescribeQuorum."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence

from raftmeta.raft.core import QuorumDescription, ReplicaState


def monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class Wakeup:
    """What the driver sleeps on between Readys: set by any input, or its deadline passing.

    An ``asyncio.Event`` under ``wait_for`` costs a task and several turns of the loop per
    wake, on the path of every commit; this is one future and one timer.
    """

    __slots__ = ("_is_set", "_sleeping")

    def __init__(self) -> None:
        self._is_set = False
        self._sleeping: asyncio.Future[None] | None = None

    def set(self) -> None:
        self._is_set = True
        sleeping = self._sleeping
        if sleeping is not None and not sleeping.done():
            sleeping.set_result(None)

    def clear(self) -> None:
        self._is_set = False

    async def wait(self, timeout_s: float) -> None:
        """Return once set (at once if it is), or after ``timeout_s``."""
        if self._is_set:
            return
        loop = asyncio.get_running_loop()
        sleeping: asyncio.Future[None] = loop.create_future()
        self._sleeping = sleeping
        timer = loop.call_later(timeout_s, _wake, sleeping)
        try:
            await sleeping
        finally:
            timer.cancel()
            self._sleeping = None


def _wake(sleeping: asyncio.Future[None]) -> None:
    if not sleeping.done():
        sleeping.set_result(None)


def on_wall_clock(description: QuorumDescription) -> QuorumDescription:
    """``description`` with its replicas' times moved from the monotonic clock to wall-clock
    milliseconds, as DescribeQuorum reports them.

    The core keeps times on the monotonic clock; they are turned into wall-clock milliseconds
    here, where the clock is known.
    """
    wall_offset = time.time_ns() // 1_000_000 - monotonic_ms()

    def wall(value: int | None) -> int | None:
        return None if value is None else value + wall_offset

    def replicas_on_wall_clock(states: Sequence[ReplicaState]) -> tuple[ReplicaState, ...]:
        return tuple(
            dataclasses.replace(
                state,
                last_fetch_ms=wall(state.last_fetch_ms),
                last_caught_up_ms=wall(state.last_caught_up_ms),
            )
            for state in states
        )

    return dataclasses.replace(
        description,
        voters=replicas_on_wall_clock(description.voters),
        observers=replicas_on_wall_clock(description.observers),
    )
