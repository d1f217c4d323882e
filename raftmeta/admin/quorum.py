"""The metadata quorum as its leader describes it: voters, observers and how far each trails.

Kafka's DescribeQuorum answer (``Admin.describeMetadataQuorum``'s QuorumInfo) as a value, with
the lags ``kafka-metadata-quorum describe`` prints computed from it. The admin client's Kafka
transport returns it, and the ``quorum describe`` command builds it from the Raft service's
answer too, so both print through the same code.
"""

from __future__ import annotations

from dataclasses import dataclass

UNKNOWN = -1
"""Kafka's value for a lag or a time the leader cannot know."""


@dataclass(frozen=True, slots=True)
class Replica:
    """One voter or observer as the leader last heard from it; -1 where it does not know."""

    node_id: int
    log_end_offset: int
    last_fetch_timestamp: int
    last_caught_up_timestamp: int
    directory_id: str = ""
    """KIP-853's directory id; empty when the leader does not know it."""


@dataclass(frozen=True, slots=True)
class QuorumInfo:
    """The leader's view of the quorum at ``high_watermark``."""

    cluster_id: str
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[Replica, ...]
    observers: tuple[Replica, ...]
    kraft_version: int = 0
    """1: a dynamic quorum, whose voters are shown with their directory ids and endpoints."""
    endpoints: tuple[tuple[int, str], ...] = ()
    """(voter id, NAME://host:port) for every endpoint of every voter (a dynamic quorum)."""

    @property
    def dynamic(self) -> bool:
        return self.kraft_version >= 1

    @property
    def leader(self) -> Replica | None:
        return next((v for v in self.voters if v.node_id == self.leader_id), None)

    def lag(self, replica: Replica) -> int:
        """Records behind the leader's log end; -1 while the replica's end is unknown."""
        leader = self.leader
        if leader is None or replica.log_end_offset < 0 or leader.log_end_offset < 0:
            return UNKNOWN
        return max(0, leader.log_end_offset - replica.log_end_offset)

    @property
    def followers(self) -> tuple[Replica, ...]:
        return tuple(v for v in self.voters if v.node_id != self.leader_id)

    @property
    def max_follower_lag(self) -> int:
        lags = [self.lag(f) for f in self.followers]
        return max(lags, default=0)

    @property
    def max_follower_lag_time_ms(self) -> int:
        """How long the follower furthest behind has not been caught up, as the leader last
        saw; -1 if a follower was never caught up."""
        leader = self.leader
        if leader is None or leader.last_caught_up_timestamp < 0:
            return UNKNOWN
        times = [f.last_caught_up_timestamp for f in self.followers]
        if not times:
            return 0
        if min(times) < 0:
            return UNKNOWN
        return max(0, leader.last_caught_up_timestamp - min(times))
