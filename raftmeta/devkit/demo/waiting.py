"""Waiting on a condition with a deadline, the only way the demo waits.

Each probe returns a value when the condition holds and None (or False) while it does not; the
wait polls it, shows what it is waiting for, and fails the step with that description at the
deadline. A give-up probe (a process the condition depends on died) ends the wait at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from raftmeta.devkit.demo.errors import StepFailed

T = TypeVar("T")

POLL_S = 0.1


def wait_for(
    probe: Callable[[], T | None],
    what: str,
    deadline_s: float,
    *,
    give_up: Callable[[], str | None] = lambda: None,
    poll_s: float = POLL_S,
) -> T:
    """Poll ``probe`` until it returns something other than None or False.

    ``give_up`` returns a reason to stop waiting (say, "broker 3 exited with 1"), or None.
    """
    deadline = time.monotonic() + deadline_s
    while True:
        value = probe()
        if value is not None and value is not False:
            return value
        reason = give_up()
        if reason is not None:
            raise StepFailed(f"gave up waiting for {what}: {reason}")
        if time.monotonic() >= deadline:
            raise StepFailed(f"timed out after {deadline_s:g} s waiting for {what}")
        time.sleep(poll_s)
