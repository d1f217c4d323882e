"""The event loop a server process runs on: uvloop where it is installed, else asyncio's own.

A node's event loop carries Raft, gRPC's callbacks and the stream transport's sockets; uvloop
(libuv underneath) runs the same asyncio code with less overhead per callback and per socket
operation. grpc.aio works on it (checked here with grpcio 1.85: same calls, same results).
Only the process entry points choose the loop (``raftmeta serve``, the broker command, the
benchmark node processes); library code never assumes one.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

_T = TypeVar("_T")

DISABLE_ENV = "RAFTMETA_EVENT_LOOP"
"""Set to ``asyncio`` to run on the standard loop even where uvloop is installed (to compare,
or to rule the loop out when chasing a problem)."""


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop constructor when it is importable and not disabled, else None (the
    standard loop)."""
    if os.environ.get(DISABLE_ENV, "").strip().lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def loop_name() -> str:
    """Which loop :func:`run` uses here, for logs and benchmark reports."""
    return "asyncio" if loop_factory() is None else "uvloop"


def run(main: Coroutine[Any, Any, _T]) -> _T:
    """Run ``main`` to completion on a new loop of :func:`loop_factory`'s kind, as
    ``asyncio.run`` does."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(main)
