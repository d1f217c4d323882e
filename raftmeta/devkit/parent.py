"""A dev-cluster child ends with the process that started it.

``raftmeta dev``, the demo, the fault campaign and the process tests start ``serve`` and
``broker`` children and name themselves in ``RAFTMETA_PARENT_PID``; the child asks Linux to
send it SIGTERM when that parent dies (``PR_SET_PDEATHSIG``), so even a parent killed with
``kill -9`` leaves no node behind.

The child does this itself, after ``exec``, rather than the parent in a ``preexec_fn``: code
that runs between ``fork`` and ``exec`` in a parent with gRPC threads running can crash the
child (a SIGSEGV before it prints a line was seen when a client-heavy parent restarted nodes).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PARENT_PID_VARIABLE = "RAFTMETA_PARENT_PID"
_PR_SET_PDEATHSIG = 1


def child_environment() -> dict[str, str]:
    """The environment to start a child with: this one, naming this process its parent."""
    return {**os.environ, PARENT_PID_VARIABLE: str(os.getpid())}


def end_with_parent() -> None:
    """If a parent named itself, be sent SIGTERM when it dies; if it has died already
    (between starting this process and now), stop at once."""
    parent = os.environ.get(PARENT_PID_VARIABLE, "")
    if not parent.isdigit() or sys.platform != "linux":
        return
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != int(parent):
        raise SystemExit(0)
