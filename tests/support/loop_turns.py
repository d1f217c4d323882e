"""A counter of event-loop turns, for tests that show a long piece of work lets the loop run.

A task that bumps the count and yields at once advances only when the loop gets to run other
tasks: two readings that are equal mean nothing else ran between them. Tests compare counts,
never durations, so they hold on a loaded machine."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass


@dataclass(eq=False)
class Turns:
    """Counts event-loop turns while :meth:`run` runs as a task (cancel it to stop)."""

    count: int = 0

    async def run(self) -> None:
        while True:
            self.count += 1
            await asyncio.sleep(0)
