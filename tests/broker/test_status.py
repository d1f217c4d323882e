"""The status file: written at once, then at most once per interval, and always catching up
with the last change."""

from __future__ import annotations

import asyncio
from pathlib import Path

from raftmeta.broker import StatusFile, read_status
from tests.broker.harness import poll


def test_status_file_is_rate_limited_but_ends_on_the_last_change(tmp_path: Path) -> None:
    path = tmp_path / "broker.status"
    state = {"offset": 5, "digests": 0}

    def digest() -> str:
        state["digests"] += 1
        return f"d{state['offset']}"

    async def scenario() -> None:
        assert read_status(path) is None
        status = StatusFile(path, lambda: state["offset"], digest, interval_ms=200)
        status.changed()
        assert read_status(path) == (5, "d5")
        for offset in (6, 7, 8):
            state["offset"] = offset
            status.changed()
        # Inside the window nothing more is written (one hash so far) ...
        assert read_status(path) == (5, "d5") and state["digests"] == 1
        # ... and when it ends, the last change is.
        await poll(lambda: read_status(path) == (8, "d8"), 5.0)
        assert state["digests"] == 2
        state["offset"] = 9
        status.close()
        assert read_status(path) == (9, "d9")

    asyncio.run(scenario())
    path.write_text("garbage\n")
    assert read_status(path) is None
