"""A broker's status file: ``<metadata offset> <image digest>``, kept current on disk.

Tests and operators compare a broker's replica of the image with the controller's
(``Admin/DescribeCluster`` with ``include_image_digest``) without talking to the broker, so
the broker publishes both numbers in one small file, replaced atomically (write then rename),
so a reader never sees half a line. Hashing the image costs a walk over it, so the file is
rewritten at most once per ``interval_ms`` (longer for an image slow to hash); a change inside
that window is written when the window ends, so the file always catches up with the last
commit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path

STATUS_FILE = "broker.status"
"""The status file's name in a broker's data directory (``raftmeta broker`` writes it there)."""


class StatusFile:
    def __init__(
        self,
        path: Path,
        offset: Callable[[], int],
        digest: Callable[[], str],
        *,
        interval_ms: int = 100,
    ) -> None:
        self.path = path
        self._offset = offset
        self._digest = digest
        self._interval_s = interval_ms / 1000
        self._gap_s = self._interval_s
        """The interval, or ten times what the last write took if more: hashing a large
        image runs on the event loop, and must not crowd out heartbeats and fetches."""
        self._last_write_s = float("-inf")
        self._pending: asyncio.TimerHandle | None = None

    def changed(self) -> None:
        """The image moved: write now, or at the end of the current window."""
        if self._pending is not None:
            return
        wait_s = self._last_write_s + self._gap_s - time.monotonic()
        if wait_s <= 0:
            self.write()
            return
        self._pending = asyncio.get_running_loop().call_later(wait_s, self.write)

    def write(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        started = time.monotonic()
        temporary = self.path.with_name(self.path.name + ".tmp")
        with contextlib.suppress(OSError):
            temporary.write_text(f"{self._offset()} {self._digest()}\n")
            os.replace(temporary, self.path)
        self._last_write_s = time.monotonic()
        self._gap_s = max(self._interval_s, 10 * (self._last_write_s - started))

    def close(self) -> None:
        """Write the final state now and stop any pending write."""
        self.write()


def read_status(path: Path) -> tuple[int, str] | None:
    """The offset and digest a broker last published, or None if there is no status yet."""
    try:
        offset, digest = path.read_text().split()
        return int(offset), digest
    except (OSError, ValueError):
        return None
