"""The status file: written at once, then at most once per interval, and always catching up
with the last change."""

from __future__ import annotations

from pathlib import Path

from raftmeta.broker import StatusFile, read_status
from tests.support.scenario import run_with_deadline
from tests.support.waiting import wait_until_async


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
        await wait_until_async(
            lambda: read_status(path) == (8, "d8"), "the window's last change to be written", 5.0
        )
        assert state["digests"] == 2
        state["offset"] = 9
        status.close()
        assert read_status(path) == (9, "d9")

    run_with_deadline(scenario(), 10)
    path.write_text("garbage\n")
    assert read_status(path) is None
