"""A stream of admin writes rides out a paused leader: the client finds the new leader by
asking the other servers (tests/process/paused_writes.py has the scenario, and measures it)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from tests.process.paused_writes import WRITES_AFTER, WRITES_BEFORE, writes_through


def test_writes_resume_after_the_leader_is_paused_and_none_is_lost(tmp_path: Path) -> None:
    outcome = asyncio.run(writes_through(tmp_path / "cluster", signal.SIGSTOP))
    assert outcome.acknowledged >= WRITES_BEFORE + WRITES_AFTER
    assert outcome.lost == []
