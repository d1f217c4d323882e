"""``on_loop`` and ``ServingThread``: work handed from one thread's loop to another's."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest

from raftmeta.server.serving_thread import SWITCH_INTERVAL_S, ServingThread, on_loop
from tests.support.scenario import run_with_deadline


class Refused(Exception):
    pass


def test_work_runs_on_the_other_loop_and_its_outcome_comes_back() -> None:
    async def main() -> None:
        home = asyncio.get_running_loop()
        serving = ServingThread("test-serving")
        serving.start()
        try:

            async def where() -> tuple[asyncio.AbstractEventLoop, int]:
                return asyncio.get_running_loop(), threading.get_ident()

            loop, thread = await serving.run(where())
            assert loop is serving.loop and thread != threading.get_ident()

            async def back_home() -> tuple[asyncio.AbstractEventLoop, int]:
                return await on_loop(home, where())

            assert await serving.run(back_home()) == (home, threading.get_ident())

            async def refuse() -> None:
                raise Refused("no")

            with pytest.raises(Refused, match="no"):
                await serving.run(refuse())
        finally:
            serving.stop()

    run_with_deadline(main(), 10)


def test_a_running_serving_thread_bounds_how_long_the_gil_is_held() -> None:
    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    serving = ServingThread("test-serving")
    try:
        serving.start()
        assert sys.getswitchinterval() <= SWITCH_INTERVAL_S
    finally:
        serving.stop()
        sys.setswitchinterval(previous)


def test_cancelling_the_caller_cancels_the_work_on_the_other_loop() -> None:
    async def main() -> None:
        serving = ServingThread("test-serving")
        serving.start()
        started = threading.Event()
        cancelled = threading.Event()

        async def forever() -> None:
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise

        try:
            caller = asyncio.create_task(serving.run(forever()))
            await asyncio.to_thread(started.wait, 5)
            caller.cancel()
            with pytest.raises(asyncio.CancelledError):
                await caller
            assert await asyncio.to_thread(cancelled.wait, 5)
        finally:
            serving.stop()

    run_with_deadline(main(), 10)
