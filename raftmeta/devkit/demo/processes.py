"""Every OS process the demo starts, and the one way they all stop.

The demo starts a dozen processes (three ``raftmeta serve`` nodes, six brokers, the election
tool). Whatever ends the demo (success, a failed step, Ctrl-C, SIGTERM) must leave none behind,
so each one is entered here the moment it starts and written to ``processes.json`` in the data
directory, where a person or a test can check on them afterwards.

Children are started in their own sessions (see ``raftmeta.devkit.cluster``), so each is the leader
of its own process group: a terminal's Ctrl-C reaches only the demo, which then stops them in
order, and the final sweep signals whole groups, so nothing a child started survives it either.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from raftmeta.devkit.cluster import stop_all

PROCESSES_FILE = "processes.json"
SWEEP_DEADLINE_S = 2.0
"""How long a group signalled with SIGKILL may take to disappear before we stop waiting."""


class Child(Protocol):
    """What the book needs of a started process (``cluster.NodeProcess`` has it)."""

    @property
    def pid(self) -> int | None: ...

    @property
    def running(self) -> bool: ...

    def signal(self, signum: int) -> None: ...

    def wait(self, timeout_s: float) -> int | None: ...

    @property
    def exit_status(self) -> int | None: ...


@dataclass(slots=True)
class Entry:
    label: str
    """What the process is, as the summary names it: ``controller 3000``, ``broker 2``."""
    role: str
    """Its place in the stopping order (``STOP_ORDER``)."""
    child: Child
    pid: int
    """The pid at the time it was entered: a restarted child gets a second entry."""
    log_path: Path | None


STOP_ORDER = ("tool", "broker", "controller")
"""Tools first, then brokers (which shut down through the controller), then the quorum."""


class ProcessBook:
    """The processes started so far, kept in memory and in ``processes.json``."""

    def __init__(self, root: Path) -> None:
        self.path = root / PROCESSES_FILE
        self.entries: list[Entry] = []

    def add(self, label: str, role: str, child: Child, log_path: Path | None = None) -> None:
        """Enter a started process; call at once after starting it."""
        if role not in STOP_ORDER:
            raise ValueError(f"unknown role {role!r}")
        if child.pid is None:
            raise ValueError(f"{label} has not been started")
        self.entries.append(Entry(label, role, child, child.pid, log_path))
        self._write()

    def pids(self) -> list[int]:
        return [e.pid for e in self.entries]

    def exit_statuses(self) -> dict[str, int | None]:
        """Each child's latest exit status (None while it runs), by its first label."""
        latest: dict[int, tuple[str, Child]] = {}
        for entry in self.entries:
            latest.setdefault(id(entry.child), (entry.label, entry.child))
        return {label: child.exit_status for label, child in latest.values()}

    def _children(self, role: str) -> list[Child]:
        """Each child object once, however many times it was (re)started."""
        unique: dict[int, Child] = {}
        for entry in self.entries:
            if entry.role == role:
                unique.setdefault(id(entry.child), entry.child)
        return list(unique.values())

    def _write(self) -> None:
        listed = [
            {
                "label": e.label,
                "role": e.role,
                "pid": e.pid,
                "log": None if e.log_path is None else str(e.log_path),
            }
            for e in self.entries
        ]
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps({"processes": listed}, indent=2) + "\n")
        os.replace(temporary, self.path)

    def stop_role(self, role: str, deadline_s: float) -> None:
        """SIGTERM every process of ``role`` at once; SIGKILL those still running at the
        deadline."""
        stop_all(self._children(role), deadline_s)  # type: ignore[arg-type]

    def stop_everything(self, deadline_s: float) -> None:
        """Stop every process in ``STOP_ORDER``, then kill whatever is left of their process
        groups.

        Ctrl-C and SIGTERM are ignored meanwhile: a second Ctrl-C must not cut the cleanup short
        and leave children running. Every wait is bounded, so this ends within about
        ``len(STOP_ORDER) * deadline_s`` plus the sweep.
        """
        previous = {
            signum: signal.signal(signum, signal.SIG_IGN)
            for signum in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            for role in STOP_ORDER:
                self.stop_role(role, deadline_s)
            sweep_groups(self.pids())
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_groups(pgids: Sequence[int]) -> None:
    """SIGKILL every process left in these process groups and wait until they are gone."""
    for pgid in pgids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    give_up = time.monotonic() + SWEEP_DEADLINE_S
    while any(group_alive(p) for p in pgids) and time.monotonic() < give_up:
        time.sleep(0.02)
