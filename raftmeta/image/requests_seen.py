"""Outcomes of recent admin requests that carried a request id, so a retried request is answered
with its first outcome instead of being applied twice."""

from __future__ import annotations

from raftmeta.image.errors import ReplayError
from raftmeta.records import RequestOutcomeRecord, Uuid

REQUEST_IDS_KEPT = 10_000
"""How many request outcomes an image keeps at most; the oldest go first."""

REQUEST_OUTCOME_BYTES_KEPT = 32 * 1024 * 1024
"""How many outcome bytes an image keeps at most (every node holds them); the oldest go first."""

REQUEST_ID_RETENTION_MS = 10 * 60 * 1000
"""How long an outcome is kept after it was written, by the writers' clocks: far longer than a
client retries one call (its request.timeout.ms, 30 s by default)."""


class RequestsSeen:
    """Recent :class:`RequestOutcomeRecord`\\ s by request id, in the order they were applied.

    Bounded by count and bytes, and expiring: an outcome is dropped once a later record carries
    a time more than :data:`REQUEST_ID_RETENTION_MS` past its own. The controller writes times
    that never go back (a new leader whose clock is behind writes the newest time it has seen),
    so the table is in time order and the oldest entry is always the first to go. Every
    decision reads only record fields and the order of replay, so every node, and a node that
    loads a snapshot of this table, holds the same entries at the same offset.
    """

    __slots__ = ("_by_id", "_bytes", "_newest_ms")

    def __init__(self) -> None:
        self._by_id: dict[Uuid, RequestOutcomeRecord] = {}
        self._bytes = 0
        self._newest_ms = 0

    @property
    def newest_ms(self) -> int:
        """The latest time an applied outcome carried: the least the next one may carry."""
        return self._newest_ms

    def copy(self) -> RequestsSeen:
        other = RequestsSeen()
        other._by_id = dict(self._by_id)
        other._bytes = self._bytes
        other._newest_ms = self._newest_ms
        return other

    def add(self, record: RequestOutcomeRecord) -> None:
        if len(record.request_id) != 16:
            raise ReplayError(f"request id of {len(record.request_id)} bytes; an id has 16")
        by_id = self._by_id
        previous = by_id.pop(record.request_id, None)
        if previous is not None:
            self._bytes -= len(previous.outcome)
        by_id[record.request_id] = record
        self._bytes += len(record.outcome)
        if record.written_at_ms > self._newest_ms:
            self._newest_ms = record.written_at_ms
        self._expire()

    def _expire(self) -> None:
        by_id = self._by_id
        oldest_kept_ms = self._newest_ms - REQUEST_ID_RETENTION_MS
        while by_id:
            oldest = next(iter(by_id.values()))
            if (
                len(by_id) <= REQUEST_IDS_KEPT
                and self._bytes <= REQUEST_OUTCOME_BYTES_KEPT
                and oldest.written_at_ms >= oldest_kept_ms
            ):
                return
            del by_id[oldest.request_id]
            self._bytes -= len(oldest.outcome)

    def get(self, request_id: Uuid) -> RequestOutcomeRecord | None:
        """The outcome kept for ``request_id``, unless it has expired."""
        record = self._by_id.get(request_id)
        if record is None or record.written_at_ms < self._newest_ms - REQUEST_ID_RETENTION_MS:
            return None
        return record

    def records(self) -> tuple[RequestOutcomeRecord, ...]:
        """The kept outcomes in the order they were applied (a snapshot replays them so)."""
        return tuple(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RequestsSeen):
            return NotImplemented
        return self.records() == other.records() and self._newest_ms == other._newest_ms

    __hash__ = None  # type: ignore[assignment]
