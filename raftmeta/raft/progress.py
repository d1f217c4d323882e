"""The leader's view of every replica in its epoch: replication progress and contact times.

A leader learns where each replica's log ends from its fetches, and when it last heard from it
from any fetch or snapshot fetch. From that it derives the high watermark candidate (the log
end a majority of voters has made durable), the check-quorum deadline (when it must resign for
not hearing from a majority), and the order of successors when it hands over. Observers are
tracked for ``DescribeQuorum`` but never count towards a majority.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from raftmeta.raft.majority import majority_value

ALWAYS = 1 << 62
"""A contact time that never expires: the leader always hears from itself."""


@dataclass(slots=True)
class ReplicaProgress:
    """What the leader knows of one replica's log, from its last valid fetch in this epoch."""

    end_offset: int | None = None
    last_fetch_ms: int | None = None
    last_caught_up_ms: int | None = None
    last_contact_ms: int = 0
    """Fetch or FetchSnapshot seen; check-quorum counts this, not replication progress."""


class ProgressTracker:
    """Replica progress for one leader's epoch; created when it wins and dropped when it ends."""

    __slots__ = ("_replicas", "leader_id", "voters")

    def __init__(self, leader_id: int, voters: frozenset[int], now_ms: int) -> None:
        self.leader_id = leader_id
        self.voters = voters
        # Every voter starts as if just heard from, so a new leader has a full check-quorum
        # timeout before its first fetches must arrive.
        self._replicas = {voter: ReplicaProgress(last_contact_ms=now_ms) for voter in voters}

    def __getitem__(self, replica_id: int) -> ReplicaProgress:
        return self._replicas[replica_id]

    def __contains__(self, replica_id: object) -> bool:
        return replica_id in self._replicas

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self._replicas))

    def contact(self, replica_id: int, now_ms: int) -> ReplicaProgress:
        """A Fetch or FetchSnapshot arrived from ``replica_id`` in this epoch."""
        progress = self._replicas.setdefault(replica_id, ReplicaProgress())
        progress.last_contact_ms = now_ms
        return progress

    def fetched(self, replica_id: int, fetch_offset: int, leader_end: int, now_ms: int) -> None:
        """A valid fetch at ``fetch_offset``: the replica's log is durable up to there."""
        progress = self._replicas.setdefault(replica_id, ReplicaProgress())
        progress.end_offset = fetch_offset
        progress.last_fetch_ms = now_ms
        if fetch_offset >= leader_end:
            progress.last_caught_up_ms = now_ms

    def majority_end_offset(self, leader_durable_end: int) -> int:
        """The largest log end a majority of voters holds durably; the leader's own log counts
        only as far as it is fsynced, a follower's fetch offset is durable by the Ready
        contract."""
        return majority_value(
            leader_durable_end
            if voter == self.leader_id
            else (self._replicas[voter].end_offset or 0)
            for voter in self.voters
        )

    def check_quorum_deadline(self, timeout_ms: int) -> int:
        """When the leader must resign unless more voters get in touch first."""
        latest_majority_contact = majority_value(
            ALWAYS if voter == self.leader_id else self._replicas[voter].last_contact_ms
            for voter in self.voters
        )
        return latest_majority_contact + timeout_ms

    def successors(self) -> tuple[int, ...]:
        """The other voters, the furthest replicated first (ties by id), for a handover."""
        return tuple(
            sorted(
                (v for v in self.voters if v != self.leader_id),
                key=lambda v: (-(self._replicas[v].end_offset or -1), v),
            )
        )
