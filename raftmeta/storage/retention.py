"""How much committed log a controller keeps below its latest snapshot.

The consensus core needs nothing below the latest snapshot, but the history is worth keeping:
``raftmeta audit`` explains how leadership moved by reading the log, and a snapshot alone says
only where it ended up. So, as Kafka does with ``metadata.max.retention.bytes`` and
``metadata.max.retention.ms``, the log below the latest snapshot is deleted only once the log
has grown over the size limit or the records are older than the time limit. Either limit
reached is enough; ``-1`` turns a limit off, and with both off the log is kept whole.

Deletion always moves the log start to the end of a snapshot still on disk: the records left
must be replayable from somewhere, so the oldest snapshot kept is the one the log starts at,
and deletion never passes the latest snapshot. Nothing here touches files or reads the clock;
``MetadataDir`` supplies both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

NO_LIMIT = -1
DEFAULT_RETENTION_BYTES = 100 << 20
"""Kafka's ``metadata.max.retention.bytes`` default, 100 MiB."""
DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000
"""Kafka's ``metadata.max.retention.ms`` default, 7 days."""


@dataclass(frozen=True, slots=True)
class LogRetention:
    """The two limits; a log over either loses its oldest snapshot-covered records."""

    max_bytes: int = DEFAULT_RETENTION_BYTES
    max_age_ms: int = DEFAULT_RETENTION_MS

    def __post_init__(self) -> None:
        if self.max_bytes < NO_LIMIT or self.max_age_ms < NO_LIMIT:
            raise ValueError(f"retention limits must be -1 (none) or more, not {self}")


TRIM_AT_ONCE = LogRetention(max_bytes=0, max_age_ms=0)
"""Delete everything a snapshot covers as soon as it is taken (what tests and tools that want
the smallest directory use)."""


def retained_start(
    retention: LogRetention,
    log_start: int,
    snapshot_ends: Sequence[int],
    bytes_from: Callable[[int], int],
    newest_timestamp_below: Callable[[int], int | None],
    now_ms: int,
) -> int:
    """Where the log should start: ``log_start`` or a later snapshot end.

    ``snapshot_ends`` are the ends of the snapshots on disk, ``bytes_from(offset)`` the bytes
    the log would hold if it started at ``offset``, and ``newest_timestamp_below(offset)`` the
    newest batch timestamp of the records below ``offset`` (``None`` if there are none). The
    oldest records go first, one snapshot at a time, while the log is over the size limit or
    the records up to the next snapshot are all older than the time limit.
    """
    start = log_start
    for end in sorted(set(snapshot_ends)):
        if end <= start:
            continue
        over_size = retention.max_bytes != NO_LIMIT and bytes_from(start) > retention.max_bytes
        newest = newest_timestamp_below(end)
        too_old = (
            retention.max_age_ms != NO_LIMIT
            and newest is not None
            and newest < now_ms - retention.max_age_ms
        )
        if not (over_size or too_old):
            break
        start = end
    return start
