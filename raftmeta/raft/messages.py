"""The Raft RPCs as plain values (KIP-595, KIP-630 snapshots, KIP-996 pre-vote, KIP-853 keys).

Requests and responses are delivered to the core as ``step(sender_id, message, now_ms)``, so
the core never knows whether they came over gRPC or through the simulator's router. A response
names the epoch and leader its sender knows, which is how stale nodes learn they are behind.

Requests name replicas by directory id as well as node id (KIP-853's CandidateDirectoryId,
VoterDirectoryId, ReplicaDirectoryId); ``None`` is a replica that has none, or a sender that
does not know it, and matches only a voter whose directory id is not known either.
"""

from __future__ import annotations

from dataclasses import dataclass

from raftmeta.errors import ErrorCode
from raftmeta.raft.batch import Batch, OffsetAndEpoch, SnapshotId
from raftmeta.raft.voters import VoterSet


@dataclass(frozen=True, slots=True)
class VoteRequest:
    candidate_epoch: int
    """The epoch the candidate runs in; for a pre-vote, the epoch it would run in."""
    candidate_id: int
    last_offset_epoch: int
    last_offset: int
    """The candidate's log end offset."""
    pre_vote: bool = False
    candidate_directory_id: str | None = None
    voter_directory_id: str | None = None
    """The directory the candidate believes the receiving voter has."""


@dataclass(frozen=True, slots=True)
class VoteResponse:
    error: ErrorCode
    epoch: int
    leader_id: int | None
    vote_granted: bool
    candidate_epoch: int
    """Echo of the request, so a late answer to an old round is recognised and ignored."""
    pre_vote: bool = False


@dataclass(frozen=True, slots=True)
class BeginQuorumEpochRequest:
    leader_id: int
    leader_epoch: int
    voter_directory_id: str | None = None
    """The directory the leader believes the receiving voter has."""


@dataclass(frozen=True, slots=True)
class BeginQuorumEpochResponse:
    error: ErrorCode
    epoch: int
    leader_id: int | None


@dataclass(frozen=True, slots=True)
class EndQuorumEpochRequest:
    leader_id: int
    leader_epoch: int
    preferred_successors: tuple[int, ...]
    """Voters ordered by how far they have replicated: the first should campaign at once."""


@dataclass(frozen=True, slots=True)
class EndQuorumEpochResponse:
    error: ErrorCode
    epoch: int
    leader_id: int | None


@dataclass(frozen=True, slots=True)
class FetchRequest:
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int
    max_wait_ms: int = 0
    max_bytes: int = 8 * 1024 * 1024
    high_watermark: int | None = None
    """The high watermark the fetcher knows (KIP-1166): a leader with a newer one answers at
    once rather than parking the fetch. None (an older peer) parks as before."""
    replica_directory_id: str | None = None
    """The fetcher's directory: only a fetch from a voter's own directory counts as the voter's."""


@dataclass(frozen=True, slots=True)
class FetchResponse:
    error: ErrorCode
    epoch: int
    leader_id: int | None
    fetch_offset: int
    """Echo of the request's fetch offset; lets a follower drop duplicated or late answers."""
    high_watermark: int = -1
    log_start_offset: int = 0
    batches: tuple[Batch, ...] = ()
    diverging: OffsetAndEpoch | None = None
    snapshot_id: SnapshotId | None = None


@dataclass(frozen=True, slots=True)
class FetchSnapshotRequest:
    current_leader_epoch: int
    snapshot_id: SnapshotId
    position: int
    max_bytes: int = 1024 * 1024
    replica_directory_id: str | None = None


@dataclass(frozen=True, slots=True)
class FetchSnapshotResponse:
    error: ErrorCode
    epoch: int
    leader_id: int | None
    snapshot_id: SnapshotId
    position: int
    size: int = 0
    chunk_length: int = 0
    """How many bytes from ``position`` the sender's runtime must read from the snapshot file."""
    data: bytes = b""
    """Filled by the sending runtime from the snapshot file; the core never reads files."""
    voters: VoterSet | None = None
    """The voter set the snapshot holds (KIP-853 keeps it in snapshots), so the follower that
    installs it knows its voters without reading the file; None from a static quorum."""
    kraft_version: int | None = None


Request = (
    VoteRequest
    | BeginQuorumEpochRequest
    | EndQuorumEpochRequest
    | FetchRequest
    | FetchSnapshotRequest
)
Response = (
    VoteResponse
    | BeginQuorumEpochResponse
    | EndQuorumEpochResponse
    | FetchResponse
    | FetchSnapshotResponse
)
Message = Request | Response
