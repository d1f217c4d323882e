"""Running an async test body under a deadline, in a fresh event loop.

The project has no asyncio plugin for pytest, so each async test makes its own loop. The
deadline covers the test's body: a hung wait fails the test (with the stuck await in the
traceback) instead of hanging the suite. A fixture is started before the body and closed
after it whatever happened, so no node, server or socket outlives its test.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeVar

_F = TypeVar("_F", bound="Fixture")


class Fixture(Protocol):
    """What ``run_scenario`` needs of a fixture: to start it, to close it, and how long a
    scenario on it may take (each layer's own: a process quorum is slower than a core)."""

    @property
    def scenario_timeout_s(self) -> float: ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...


def run_with_deadline(body: Awaitable[None], timeout_s: float) -> None:
    """Run ``body`` in a new event loop; cancel it and fail if it takes over ``timeout_s``."""

    async def main() -> None:
        await asyncio.wait_for(body, timeout_s)

    asyncio.run(main())


def run_scenario(
    scenario: Callable[[_F], Coroutine[Any, Any, None]],
    fixture: _F,
    timeout_s: float | None = None,
) -> None:
    """Start ``fixture``, run ``scenario`` against it within ``timeout_s`` (by default the
    fixture's ``scenario_timeout_s``), then close it.

    The deadline covers the scenario, not the start: how long a quorum takes to come up on a
    loaded machine is not what a scenario tests.
    """

    deadline = fixture.scenario_timeout_s if timeout_s is None else timeout_s

    async def main() -> None:
        try:
            await fixture.start()
            await asyncio.wait_for(scenario(fixture), deadline)
        finally:
            await fixture.close()

    asyncio.run(main())


def async_test(
    timeout_s: float,
) -> Callable[[Callable[[], Coroutine[Any, Any, None]]], Callable[[], None]]:
    """Decorate an ``async def test_...()`` so pytest runs it with ``run_with_deadline``."""

    def decorate(test: Callable[[], Coroutine[Any, Any, None]]) -> Callable[[], None]:
        @functools.wraps(test)
        def wrapper() -> None:
            run_with_deadline(test(), timeout_s)

        return wrapper

    return decorate
