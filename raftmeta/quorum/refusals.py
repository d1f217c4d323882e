"""Logging refused peer input once, at WARNING, without letting a flood fill the disk.

Every message a node refuses (at the wire edge, or in its core as ``Ready.rejected``) is worth
one line: what it was, who sent it, why it was refused. A hostile or broken peer can send
thousands a second, so each sender gets a small budget of lines per interval; what goes over
it is counted, and the count is reported with the sender's next logged line. Senders beyond
``max_senders`` share one budget, so a flood under random ids cannot grow the table either.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

LINES_PER_INTERVAL = 5
"""Lines logged per sender per interval; enough to see what a peer is doing."""
INTERVAL_S = 60.0
MAX_SENDERS = 256
OTHER_SENDERS = "other senders"
"""The shared budget of every sender beyond ``MAX_SENDERS``."""


@dataclass(slots=True)
class _Budget:
    window_start: float
    logged: int = 0
    suppressed: int = 0


class RefusalLog:
    """Logs each refused input once (``refused``), at most ``lines_per_interval`` lines per
    sender per ``interval_s``; a sender is a node id or, before one is known, an address."""

    def __init__(
        self,
        logger: logging.Logger,
        node_id: int,
        *,
        lines_per_interval: int = LINES_PER_INTERVAL,
        interval_s: float = INTERVAL_S,
        max_senders: int = MAX_SENDERS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = logger
        self._node_id = node_id
        self._lines = lines_per_interval
        self._interval_s = interval_s
        self._max_senders = max_senders
        self._clock = clock
        self._budgets: dict[object, _Budget] = {}

    def refused(self, sender: object, what: str, reason: str) -> bool:
        """Note that ``what`` from ``sender`` was refused for ``reason``; True if logged."""
        now = self._clock()
        key = sender
        if key not in self._budgets and len(self._budgets) >= self._max_senders:
            self._forget_idle(now)
            if len(self._budgets) >= self._max_senders:
                key = OTHER_SENDERS
        budget = self._budgets.get(key)
        if budget is None:
            budget = self._budgets[key] = _Budget(now)
        elif now - budget.window_start >= self._interval_s:
            budget.window_start, budget.logged = now, 0
        if budget.logged >= self._lines:
            budget.suppressed += 1
            return False
        budget.logged += 1
        more = ""
        if budget.suppressed:
            more = f" ({budget.suppressed} more refused from {key} went unlogged before this)"
            budget.suppressed = 0
        self._log.warning(
            "node %d: refused %s from %s: %s%s", self._node_id, what, sender, reason, more
        )
        return True

    def _forget_idle(self, now: float) -> None:
        """Drop the budgets of senders quiet for a whole interval with nothing left to report."""
        for key, budget in list(self._budgets.items()):
            if now - budget.window_start >= self._interval_s and not budget.suppressed:
                del self._budgets[key]
