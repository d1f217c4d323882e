"""Running one of raftmeta's own one-shot commands (``leader-election``, ``log export``) as
the demo's child, the way an operator would type it.

The demo drives the cluster through the same command lines a person uses, so a step that
works here works at a terminal too. The child shares the demo's process group: a Ctrl-C in the
terminal reaches it as well, and if the demo is interrupted otherwise while it runs,
:func:`subprocess.run` kills it before the interruption goes on.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from raftmeta.devkit.parent import child_environment

TOOL_DEADLINE_S = 120.0
"""A one-shot command that runs this long has hung: it is killed and reported."""


@dataclass(frozen=True, slots=True)
class ToolRun:
    status: int
    """The exit status; -1 when the command was killed at the deadline."""
    output: str
    """Its stdout and stderr, interleaved as written."""

    def last_line(self) -> str:
        lines = self.output.strip().splitlines()
        return lines[-1] if lines else "no output"


def run_tool(argv: Sequence[str], deadline_s: float = TOOL_DEADLINE_S) -> ToolRun:
    """``raftmeta ARGV`` to its end (or the deadline), with what it printed."""
    try:
        finished = subprocess.run(
            [sys.executable, "-m", "raftmeta", *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=deadline_s,
            env=child_environment(),
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        said = expired.output if isinstance(expired.output, str) else ""
        return ToolRun(-1, f"{said}killed after {deadline_s:g} s\n")
    return ToolRun(finished.returncode, finished.stdout)
