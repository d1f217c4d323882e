"""Waiting for a condition with a deadline, in one place, with one error.

Tests synchronise on conditions, never on sleeps: a probe is called until it returns a value
other than ``None`` or ``False``, which is then returned (so a probe can hand back what it
found). The pause between probes only paces the checking. When the deadline passes,
``WaitTimeout`` says what was awaited and what the probe last returned, which is usually the
first thing one wants to know about a hung test.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar, overload

DEFAULT_TIMEOUT_S = 10.0
PAUSE_S = 0.01
"""How often a probe is asked again in an event loop when nothing announces a change."""
PROCESS_PAUSE_S = 0.02
"""The same from plain code, where probes mostly ask other processes (and cost more)."""

_T = TypeVar("_T")


class WaitTimeout(AssertionError):
    """A condition a test waited for did not hold in time (an assertion failure, not an error
    of the code under test's making: pytest reports it as a failed check)."""

    def __init__(self, what: str, timeout_s: float, last_seen: object) -> None:
        seen = repr(last_seen)
        if len(seen) > 500:
            seen = seen[:500] + "..."
        super().__init__(f"timed out after {timeout_s:g} s waiting for {what} (last seen: {seen})")
        self.what = what
        self.timeout_s = timeout_s
        self.last_seen = last_seen


def _found(value: object) -> bool:
    return value is not None and value is not False


def wait_until(
    probe: Callable[[], _T | None],
    what: str,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    *,
    pause_s: float = PROCESS_PAUSE_S,
) -> _T:
    """Call ``probe`` until it returns something other than None or False, and return that.

    For tests that drive other processes or threads from plain (not async) code.
    """
    give_up = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value is not None and value is not False:
            return value
        if time.monotonic() >= give_up:
            raise WaitTimeout(what, timeout_s, value)
        time.sleep(pause_s)


@overload
async def wait_until_async(
    probe: Callable[[], Awaitable[_T | None]],
    what: str,
    timeout_s: float = ...,
    *,
    pause_s: float = ...,
    changed: Callable[[], asyncio.Event] | None = ...,
) -> _T: ...


@overload
async def wait_until_async(
    probe: Callable[[], _T | None],
    what: str,
    timeout_s: float = ...,
    *,
    pause_s: float = ...,
    changed: Callable[[], asyncio.Event] | None = ...,
) -> _T: ...


async def wait_until_async(
    probe: Callable[[], object],
    what: str,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    *,
    pause_s: float = PAUSE_S,
    changed: Callable[[], asyncio.Event] | None = None,
) -> object:
    """Await ``probe`` (a plain or an async function) until it returns something other than
    None or False, and return that.

    ``changed``, when given, returns an event that is set at the next change the probe could
    see (a listener's notification): the wait then sleeps until that event rather than
    polling. It is taken before each probe, so a change between the probe and the wait is
    never missed.
    """
    loop = asyncio.get_running_loop()
    give_up = loop.time() + timeout_s
    while True:
        event = changed() if changed is not None else None
        value = probe()
        if inspect.isawaitable(value):
            value = await value
        if _found(value):
            return value
        remaining = give_up - loop.time()
        if remaining <= 0:
            raise WaitTimeout(what, timeout_s, value)
        if event is None:
            await asyncio.sleep(min(pause_s, remaining))
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), remaining)
