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
from raftmeta.raft.voters import ReplicaKey, VoterSet

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
    directory_id: str | None = None
    """The directory the replica's latest fetch came from (a static voter's is not in the
    voter set; the upgrade to a dynamic quorum records it)."""
    answered_leader: bool = False
    """The replica answered this leader's BeginQuorumEpoch: the leader's own link to it works.
    Fetches prove only the replica's link to the leader; a voter restarted after the epoch
    began fetches at once while the leader's channel to it may still sit in reconnect backoff."""


def _key(replica: int | ReplicaKey) -> ReplicaKey:
    return replica if isinstance(replica, ReplicaKey) else ReplicaKey(replica)


class ProgressTracker:
    """Replica progress for one leader's epoch; created when it wins and dropped when it ends.

    Voters are tracked by node id, and only a fetch from a voter's own directory counts as the
    voter's (KIP-853); anyone else, including the same node id on another directory, is an
    observer, tracked by its full key. When the voter set changes (on append, KIP-853), progress
    moves with the replica: an observer that was caught up keeps its offsets as a new voter.
    """

    __slots__ = ("_observers", "_replicas", "leader_id", "voter_set")

    def __init__(self, leader_id: int, voters: frozenset[int] | VoterSet, now_ms: int) -> None:
        self.leader_id = leader_id
        self.voter_set = voters if isinstance(voters, VoterSet) else VoterSet.of(voters)
        # Every voter starts as if just heard from, so a new leader has a full check-quorum
        # timeout before its first fetches must arrive.
        self._replicas = {
            voter: ReplicaProgress(last_contact_ms=now_ms) for voter in self.voter_set.ids
        }
        self._observers: dict[ReplicaKey, ReplicaProgress] = {}

    @property
    def voters(self) -> frozenset[int]:
        return self.voter_set.ids

    def __getitem__(self, replica_id: int) -> ReplicaProgress:
        return self._replicas[replica_id]

    def __contains__(self, replica_id: object) -> bool:
        return replica_id in self._replicas

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self._replicas))

    def observers(self) -> list[tuple[ReplicaKey, ReplicaProgress]]:
        """Observers by node id, then directory; a key without a directory sorts first."""
        return sorted(
            self._observers.items(), key=lambda item: (item[0].node_id, item[0].directory_id or "")
        )

    def progress(self, replica: int | ReplicaKey) -> ReplicaProgress | None:
        """What is known of ``replica``: as a voter if it is one, else as an observer."""
        key = _key(replica)
        if self.voter_set.is_voter(key):
            return self._replicas[key.node_id]
        return self._observers.get(self._observer_key(key, rekey=False))

    def _entry(self, replica: int | ReplicaKey) -> ReplicaProgress:
        key = _key(replica)
        if self.voter_set.is_voter(key):
            return self._replicas[key.node_id]
        return self._observers.setdefault(self._observer_key(key, rekey=True), ReplicaProgress())

    def _observer_key(self, key: ReplicaKey, *, rekey: bool) -> ReplicaKey:
        """The key an observer's progress is kept under, so that one replica has one entry
        whether or not its fetches name its directory.

        A fetch without a directory id (an older fetcher, or a forged one) is counted against
        the replica of that id already tracked, the one heard from last; a fetch that names a
        directory takes over an entry kept without one (``rekey``). Two entries for one id
        remain possible only for two named directories, which KIP-853 treats as two replicas.
        """
        if key in self._observers:
            return key
        if key.directory_id is None:
            known = [other for other in self._observers if other.node_id == key.node_id]
            if not known:
                return key
            return max(known, key=lambda other: self._observers[other].last_contact_ms)
        unnamed = ReplicaKey(key.node_id)
        if rekey and unnamed in self._observers:
            self._observers[key] = self._observers.pop(unnamed)
        return key

    def contact(self, replica: int | ReplicaKey, now_ms: int) -> ReplicaProgress:
        """A Fetch or FetchSnapshot arrived from ``replica`` in this epoch."""
        progress = self._entry(replica)
        progress.last_contact_ms = now_ms
        if isinstance(replica, ReplicaKey) and replica.directory_id is not None:
            progress.directory_id = replica.directory_id
        return progress

    def answered(self, replica_id: int) -> None:
        """``replica_id`` answered this leader's BeginQuorumEpoch."""
        if replica_id in self._replicas:
            self._replicas[replica_id].answered_leader = True

    def fetched(
        self, replica: int | ReplicaKey, fetch_offset: int, leader_end: int, now_ms: int
    ) -> None:
        """A valid fetch at ``fetch_offset``: the replica's log is durable up to there."""
        progress = self._entry(replica)
        progress.end_offset = fetch_offset
        progress.last_fetch_ms = now_ms
        if fetch_offset >= leader_end:
            progress.last_caught_up_ms = now_ms

    def set_voters(self, voters: VoterSet, now_ms: int) -> None:
        """The voter set changed: a new voter brings its observer progress along (a voter
        never heard from counts as just heard from, as at the start of an epoch); a removed
        voter is tracked as an observer from now on."""
        old = self.voter_set
        replicas: dict[int, ReplicaProgress] = {}
        for voter in voters:
            key = voter.key
            if old.is_voter(key) and key.node_id in self._replicas:
                replicas[key.node_id] = self._replicas[key.node_id]
            else:
                replicas[key.node_id] = self._observers.pop(
                    key, ReplicaProgress(last_contact_ms=now_ms)
                )
        for node_id, progress in self._replicas.items():
            if node_id not in replicas:
                former = old.key_of(node_id)
                assert former is not None
                # The removed voter's progress supersedes anything kept for its id without a
                # directory, so the id does not appear twice in DescribeQuorum.
                if former.directory_id is not None:
                    self._observers.pop(ReplicaKey(node_id), None)
                self._observers[former] = progress
        self.voter_set = voters
        self._replicas = replicas

    def majority_end_offset(self, leader_durable_end: int) -> int:
        """The largest log end a majority of voters holds durably; the leader's own log counts
        only as far as it is fsynced (and only while it is a voter), a follower's fetch offset
        is durable by the Ready contract."""
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
        """The other voters, the furthest replicated first, for a handover.

        Among equally replicated voters, one that answered this leader comes first: the first
        successor stands at once on EndQuorumEpoch, the others only after a backoff, so naming
        first a voter the leader cannot reach yet (restarted since the epoch began, the link
        to it still reconnecting) delays the handover, or splits the vote when that late
        EndQuorumEpoch makes it stand alongside the next one. Ties after that go by id.
        """
        return tuple(
            sorted(
                (v for v in self.voters if v != self.leader_id),
                key=lambda v: (
                    -(self._replicas[v].end_offset or -1),
                    not self._replicas[v].answered_leader,
                    v,
                ),
            )
        )
