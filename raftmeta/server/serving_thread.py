"""``ServingThread``: a thread with an event loop of its own, for the node's gRPC server.

A controller node's one event loop carries the Raft driver, the Raft stream's sockets, the
controller and every gRPC callback. Under many admin clients most of that loop's time is
gRPC's: each call's completion, decoding and encoding run as callbacks in the same queue as
the Raft driver, so every Raft step (a follower's fetch, the disk write finishing, the commit)
waits behind a whole turn of admin work. Serving gRPC from a loop on its own thread keeps
those callbacks out of the Raft loop's queue: each handler runs on the node's loop (its home,
:func:`on_loop`), so everything that touches the controller, the image or the node stays on
the one loop that owns them; only gRPC's own work moves.

The GIL still serialises Python code, so this moves waiting, not work, and costs two
cross-thread hand-offs per call. With two busy threads, a loop whose socket became readable
waits for the other thread to give up the GIL, which the interpreter forces only every
``sys.getswitchinterval()`` (5 ms by default); a running serving thread lowers that to
:data:`SWITCH_INTERVAL_S` so that a Raft step waits at most that long behind gRPC work.

Measured in 17 interleaved runs under 16 CreateTopics clients (3 voters on one 2-core
machine shared with other work, load average 9-25), with the thread against without: 1,000
against 974 CreateTopics/s, client p50 12.8 against 14.1 ms and p99 52 against 70 ms, the
leader's append-to-commit p50 7.3 against 8.5 ms but its p99 45 against 32 ms; with one
client, p50 3.1 against 2.6 ms (two thread wake-ups per call). Raft's own p99 is the figure
this layout was meant to lower and it did not, so it is off by default
(``controller.grpc.thread.enable``); ``benchmarks/peers_bench.py --variant`` compares the two
layouts in one run.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from raftmeta.quorum.event_loop import loop_factory

_T = TypeVar("_T")

SWITCH_INTERVAL_S = 0.001
"""The longest one thread holds the GIL while another waits for it, once a serving thread
runs (the process-wide setting is only ever lowered). Measured under 16 CreateTopics clients:
the leader's append-to-commit p99 was lower at 1 ms than at the default 5 ms in each set of
interleaved runs, with the same throughput."""


class ServingThread:
    """A daemon thread running an event loop until :meth:`stop`."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise RuntimeError("the serving thread is not running")
        return self._loop

    def start(self) -> None:
        """Start the thread and return once its loop runs."""
        if self._thread is not None:
            return
        if sys.getswitchinterval() > SWITCH_INTERVAL_S:
            sys.setswitchinterval(SWITCH_INTERVAL_S)
        factory = loop_factory()
        loop = factory() if factory is not None else asyncio.new_event_loop()
        started = threading.Event()

        def main() -> None:
            asyncio.set_event_loop(loop)
            loop.call_soon(started.set)
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._loop = loop
        self._thread = threading.Thread(target=main, name=self._name, daemon=True)
        self._thread.start()
        started.wait()

    async def run(self, work: Coroutine[Any, Any, _T]) -> _T:
        """Run ``work`` on this thread's loop; its result, awaited from the caller's loop."""
        return await on_loop(self.loop, work)

    def stop(self) -> None:
        """Stop the loop and wait for the thread (call once what runs on it has stopped)."""
        thread, self._thread = self._thread, None
        loop = self._loop
        if thread is None or loop is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        self._loop = None


async def on_loop(loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, _T]) -> _T:
    """Run ``work`` on ``loop`` (at once when that is the caller's own loop) and await it.

    Cancelling the caller cancels ``work`` too (a gRPC call whose client went away). One
    wake-up of each loop and no ``concurrent.futures`` machinery: this runs twice per gRPC
    call, where ``run_coroutine_threadsafe`` with ``wrap_future`` cost a lock, a condition
    and a chain of callbacks per call.
    """
    caller = asyncio.get_running_loop()
    if caller is loop:
        return await work
    answer: asyncio.Future[_T] = caller.create_future()
    running: list[asyncio.Task[_T]] = []

    def begin() -> None:
        task = loop.create_task(work)
        running.append(task)
        task.add_done_callback(lambda done: caller.call_soon_threadsafe(_settle, answer, done))

    def cancel() -> None:
        # Queued after begin() by the same thread, so it runs after it.
        for task in running:
            task.cancel()

    loop.call_soon_threadsafe(begin)
    try:
        return await answer
    except asyncio.CancelledError:
        loop.call_soon_threadsafe(cancel)
        raise


def _settle(answer: asyncio.Future[_T], done: asyncio.Task[_T]) -> None:
    """Hand ``done``'s outcome to ``answer`` (on ``answer``'s loop)."""
    if answer.done():
        return
    if done.cancelled():
        answer.cancel()
        return
    error = done.exception()
    if error is not None:
        answer.set_exception(error)
    else:
        answer.set_result(done.result())
