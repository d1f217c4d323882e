"""The controller's view of the Raft log: append atomically, learn the offset, hear commits.

The controller needs exactly two things from Raft while it leads: to append a list of records
as one batch and learn the offsets they will take, and to know, before building a record, which
offset the next record will get (a broker's epoch is the offset of its RegisterBrokerRecord).
Committed batches and leader changes come back through the ``Listener`` calls the controller
implements (``handle_commit``, ``handle_load_snapshot``, ``handle_leader_change``).

Keeping this a two-method protocol is what lets tests drive the controller with an in-process
log that commits when told to, so pending state, purgatory, timeouts and leadership loss are
tested deterministically; the real Raft is tested elsewhere.

Imports nothing above the controller: the Raft client it adapts is described here by the
three calls it makes (:class:`RaftAppender`), which ``raftmeta.quorum.RaftClient`` has, and
the composition root hands the client in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol


class MetadataLog(Protocol):
    """What the active controller appends through. ``RaftClientLog`` adapts ``RaftClient``."""

    def next_offset(self) -> int:
        """The offset the next appended record will take; only meaningful while leading."""
        ...

    def append(self, records: Sequence[bytes]) -> tuple[int, asyncio.Future[int]]:
        """Appends ``records`` as one batch: the last record's offset and a commit future.

        Raises ``raftmeta.raft.core.NotLeaderError`` when this node does not lead; the future
        fails with it if the epoch is lost before the records commit.
        """
        ...


class RaftAppender(Protocol):
    """What :class:`RaftClientLog` needs of a Raft client (``raftmeta.quorum.RaftClient``)."""

    def epoch(self) -> int:
        """The node's current epoch."""
        ...

    def log_end_offset(self) -> int:
        """The offset after the last record in the node's log (proposed, not yet committed)."""
        ...

    def append(self, records: Sequence[bytes]) -> tuple[int, asyncio.Future[int]]:
        """As :meth:`MetadataLog.append`, except that the records may linger before they are
        proposed, so the log's end can lag the offsets already promised."""
        ...


class RaftClientLog:
    """:class:`MetadataLog` over a Raft client (:class:`RaftAppender`).

    ``RaftClient`` hands out offsets as soon as ``append`` is called, before its linger ends, so
    the log's end offset lags what has been promised. While one epoch lasts, the controller is
    the only writer, so the next offset is the larger of the log's end and one past the last
    offset this adapter was promised in that epoch.
    """

    def __init__(self, client: RaftAppender) -> None:
        self._client = client
        self._promised_epoch = -1
        self._promised_end = 0

    def next_offset(self) -> int:
        end = self._client.log_end_offset()
        if self._client.epoch() == self._promised_epoch:
            end = max(end, self._promised_end)
        return end

    def append(self, records: Sequence[bytes]) -> tuple[int, asyncio.Future[int]]:
        last_offset, future = self._client.append(records)
        self._promised_epoch = self._client.epoch()
        self._promised_end = last_offset + 1
        return last_offset, future
