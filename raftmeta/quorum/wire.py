"""Translation between the core's message values and the gRPC ``Raft`` service messages.

The proto leaves out the echo fields the core uses to recognise stale answers (a vote's
candidate epoch, a fetch's offset), because a unary call already pairs each answer with its
question; the caller fills them in from the request it sent. Batches cross the wire in the
storage codec's bytes, so the leader never re-encodes a batch record by record.
"""

from __future__ import annotations

from collections.abc import Sequence

from raftmeta.errors import ErrorCode
from raftmeta.raft.batch import OffsetAndEpoch, SnapshotId
from raftmeta.raft.core import QuorumDescription, ReplicaState
from raftmeta.raft.membership import Membership
from raftmeta.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    Request,
    Response,
    VoteRequest,
    VoteResponse,
)
from raftmeta.raft.voters import Endpoint, ReplicaKey, Voter, VoterSet
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.storage.codec import decode_batches, encode_batches

UNKNOWN = -1
"""The proto's sentinel for an id, epoch, offset or time nobody knows."""

PbRequest = (
    pb.VoteRequest
    | pb.BeginQuorumEpochRequest
    | pb.EndQuorumEpochRequest
    | pb.FetchRequest
    | pb.FetchSnapshotRequest
)
PbResponse = (
    pb.VoteResponse
    | pb.BeginQuorumEpochResponse
    | pb.EndQuorumEpochResponse
    | pb.FetchResponse
    | pb.FetchSnapshotResponse
)


def error_code(value: int) -> ErrorCode:
    """A code from the wire; one this build does not know is still an error, never NONE."""
    try:
        return ErrorCode(value)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR


def _node(value: int) -> int | None:
    return None if value < 0 else value


def _id(value: int | None) -> int:
    return UNKNOWN if value is None else value


def directory_to_pb(directory_id: str | None) -> str:
    """A directory id on the wire: empty for none (a static voter, or one not known)."""
    return directory_id or ""


def directory_from_pb(value: str) -> str | None:
    return value or None


def voter_to_pb(voter: Voter) -> pb.Voter:
    return pb.Voter(
        voter_id=voter.node_id,
        directory_id=directory_to_pb(voter.key.directory_id),
        endpoints=[pb.Endpoint(name=e.name, host=e.host, port=e.port) for e in voter.endpoints],
    )


def voter_from_pb(message: pb.Voter) -> Voter:
    return Voter(
        ReplicaKey(message.voter_id, directory_from_pb(message.directory_id)),
        tuple(Endpoint(e.name, e.host, e.port) for e in message.endpoints),
    )


def membership_to_pb(membership: Membership) -> pb.Membership:
    return pb.Membership(
        kraft_version=membership.kraft_version,
        voters=[voter_to_pb(voter) for voter in membership.voters],
    )


def membership_from_pb(message: pb.Membership) -> Membership:
    """``ValueError`` for a set naming a node twice or holding no voter."""
    voters = VoterSet(voter_from_pb(voter) for voter in message.voters)
    if not voters:
        raise ValueError("a voter set needs at least one voter")
    return Membership(message.kraft_version, voters)


def _snapshot_to_pb(snapshot_id: SnapshotId) -> pb.SnapshotId:
    return pb.SnapshotId(end_offset=snapshot_id.end_offset, epoch=snapshot_id.epoch)


def _snapshot_from_pb(message: pb.SnapshotId) -> SnapshotId:
    return SnapshotId(message.end_offset, message.epoch)


# --------------------------------------------------------------------------------- requests


def request_to_pb(request: Request, cluster_id: str, local_id: int) -> PbRequest:
    if isinstance(request, VoteRequest):
        return pb.VoteRequest(
            cluster_id=cluster_id,
            candidate_epoch=request.candidate_epoch,
            candidate_id=request.candidate_id,
            last_offset_epoch=request.last_offset_epoch,
            last_offset=request.last_offset,
            pre_vote=request.pre_vote,
            candidate_directory_id=directory_to_pb(request.candidate_directory_id),
            voter_directory_id=directory_to_pb(request.voter_directory_id),
        )
    if isinstance(request, BeginQuorumEpochRequest):
        return pb.BeginQuorumEpochRequest(
            cluster_id=cluster_id,
            leader_id=request.leader_id,
            leader_epoch=request.leader_epoch,
            voter_directory_id=directory_to_pb(request.voter_directory_id),
        )
    if isinstance(request, EndQuorumEpochRequest):
        return pb.EndQuorumEpochRequest(
            cluster_id=cluster_id,
            leader_id=request.leader_id,
            leader_epoch=request.leader_epoch,
            preferred_successors=list(request.preferred_successors),
        )
    if isinstance(request, FetchRequest):
        return pb.FetchRequest(
            cluster_id=cluster_id,
            replica_id=local_id,
            current_leader_epoch=request.current_leader_epoch,
            fetch_offset=request.fetch_offset,
            last_fetched_epoch=request.last_fetched_epoch,
            max_wait_ms=request.max_wait_ms,
            max_bytes=request.max_bytes,
            high_watermark=request.high_watermark,
            replica_directory_id=directory_to_pb(request.replica_directory_id),
        )
    return pb.FetchSnapshotRequest(
        cluster_id=cluster_id,
        replica_id=local_id,
        current_leader_epoch=request.current_leader_epoch,
        snapshot_id=_snapshot_to_pb(request.snapshot_id),
        position=request.position,
        max_bytes=request.max_bytes,
        replica_directory_id=directory_to_pb(request.replica_directory_id),
    )


def vote_request_from_pb(message: pb.VoteRequest) -> tuple[int, VoteRequest]:
    request = VoteRequest(
        message.candidate_epoch,
        message.candidate_id,
        message.last_offset_epoch,
        message.last_offset,
        message.pre_vote,
        directory_from_pb(message.candidate_directory_id),
        directory_from_pb(message.voter_directory_id),
    )
    return message.candidate_id, request


def begin_epoch_request_from_pb(
    message: pb.BeginQuorumEpochRequest,
) -> tuple[int, BeginQuorumEpochRequest]:
    request = BeginQuorumEpochRequest(
        message.leader_id, message.leader_epoch, directory_from_pb(message.voter_directory_id)
    )
    return message.leader_id, request


def end_epoch_request_from_pb(
    message: pb.EndQuorumEpochRequest,
) -> tuple[int, EndQuorumEpochRequest]:
    request = EndQuorumEpochRequest(
        message.leader_id, message.leader_epoch, tuple(message.preferred_successors)
    )
    return message.leader_id, request


def fetch_request_from_pb(message: pb.FetchRequest) -> tuple[int, FetchRequest]:
    request = FetchRequest(
        message.current_leader_epoch,
        message.fetch_offset,
        message.last_fetched_epoch,
        message.max_wait_ms,
        message.max_bytes,
        message.high_watermark if message.HasField("high_watermark") else None,
        directory_from_pb(message.replica_directory_id),
    )
    return message.replica_id, request


def fetch_snapshot_request_from_pb(
    message: pb.FetchSnapshotRequest,
) -> tuple[int, FetchSnapshotRequest]:
    request = FetchSnapshotRequest(
        message.current_leader_epoch,
        _snapshot_from_pb(message.snapshot_id),
        message.position,
        message.max_bytes,
        directory_from_pb(message.replica_directory_id),
    )
    return message.replica_id, request


def request_from_pb(message: PbRequest) -> tuple[int, Request]:
    """The sender and the core's form of any request message, whichever kind it is."""
    if isinstance(message, pb.FetchRequest):  # first: by far the most frequent
        return fetch_request_from_pb(message)
    if isinstance(message, pb.VoteRequest):
        return vote_request_from_pb(message)
    if isinstance(message, pb.BeginQuorumEpochRequest):
        return begin_epoch_request_from_pb(message)
    if isinstance(message, pb.EndQuorumEpochRequest):
        return end_epoch_request_from_pb(message)
    return fetch_snapshot_request_from_pb(message)


# -------------------------------------------------------------------------------- responses


def response_to_pb(response: Response) -> PbResponse:
    """The wire form of a response; a snapshot chunk must already carry its data."""
    if isinstance(response, FetchResponse):  # first: by far the most frequent
        batches = response.batches
        fetch = pb.FetchResponse(
            error_code=response.error,
            high_watermark=response.high_watermark,
            current_leader=pb.LeaderIdAndEpoch(
                leader_id=_id(response.leader_id), leader_epoch=response.epoch
            ),
            records=encode_batches(batches) if batches else b"",
            log_start_offset=response.log_start_offset,
        )
        if response.diverging is not None:
            fetch.diverging_epoch.CopyFrom(
                pb.EpochEndOffset(
                    epoch=response.diverging.epoch, end_offset=response.diverging.offset
                )
            )
        if response.snapshot_id is not None:
            fetch.snapshot_id.CopyFrom(_snapshot_to_pb(response.snapshot_id))
        return fetch
    if isinstance(response, VoteResponse):
        return pb.VoteResponse(
            error_code=response.error,
            leader_id=_id(response.leader_id),
            leader_epoch=response.epoch,
            vote_granted=response.vote_granted,
        )
    if isinstance(response, BeginQuorumEpochResponse):
        return pb.BeginQuorumEpochResponse(
            error_code=response.error,
            leader_id=_id(response.leader_id),
            leader_epoch=response.epoch,
        )
    if isinstance(response, EndQuorumEpochResponse):
        return pb.EndQuorumEpochResponse(
            error_code=response.error,
            leader_id=_id(response.leader_id),
            leader_epoch=response.epoch,
        )
    leader = pb.LeaderIdAndEpoch(leader_id=_id(response.leader_id), leader_epoch=response.epoch)
    if response.chunk_length != len(response.data):
        raise ValueError("a snapshot chunk must be read from the file before it is sent")
    answer = pb.FetchSnapshotResponse(
        error_code=response.error,
        current_leader=leader,
        snapshot_id=_snapshot_to_pb(response.snapshot_id),
        size=response.size,
        position=response.position,
        unaligned_records=response.data,
    )
    if response.voters is not None and response.kraft_version is not None:
        answer.membership.CopyFrom(
            membership_to_pb(Membership(response.kraft_version, response.voters))
        )
    return answer


def response_from_pb(message: PbResponse, request: Request) -> Response:
    """The core's form of ``message``, with the echo fields taken from ``request``."""
    if isinstance(message, pb.VoteResponse):
        assert isinstance(request, VoteRequest)
        return VoteResponse(
            error_code(message.error_code),
            message.leader_epoch,
            _node(message.leader_id),
            message.vote_granted,
            request.candidate_epoch,
            request.pre_vote,
        )
    if isinstance(message, pb.BeginQuorumEpochResponse):
        return BeginQuorumEpochResponse(
            error_code(message.error_code), message.leader_epoch, _node(message.leader_id)
        )
    if isinstance(message, pb.EndQuorumEpochResponse):
        return EndQuorumEpochResponse(
            error_code(message.error_code), message.leader_epoch, _node(message.leader_id)
        )
    leader = message.current_leader
    if isinstance(message, pb.FetchResponse):
        assert isinstance(request, FetchRequest)
        diverging = None
        if message.HasField("diverging_epoch"):
            diverging = OffsetAndEpoch(
                message.diverging_epoch.end_offset, message.diverging_epoch.epoch
            )
        snapshot_id = None
        if message.HasField("snapshot_id"):
            snapshot_id = _snapshot_from_pb(message.snapshot_id)
        return FetchResponse(
            error_code(message.error_code),
            leader.leader_epoch,
            _node(leader.leader_id),
            request.fetch_offset,
            message.high_watermark,
            message.log_start_offset,
            tuple(decode_batches(message.records)),
            diverging,
            snapshot_id,
        )
    assert isinstance(request, FetchSnapshotRequest)
    data = bytes(message.unaligned_records)
    membership = membership_from_pb(message.membership) if message.HasField("membership") else None
    return FetchSnapshotResponse(
        error_code(message.error_code),
        leader.leader_epoch,
        _node(leader.leader_id),
        request.snapshot_id,
        request.position,
        message.size,
        len(data),
        data,
        None if membership is None else membership.voters,
        None if membership is None else membership.kraft_version,
    )


def error_response(
    request_type: type[Request], error: ErrorCode, epoch: int = UNKNOWN
) -> PbResponse:
    """An answer that carries only an error, for requests the core never sees."""
    leader = pb.LeaderIdAndEpoch(leader_id=UNKNOWN, leader_epoch=epoch)
    if request_type is VoteRequest:
        return pb.VoteResponse(error_code=error, leader_id=UNKNOWN, leader_epoch=epoch)
    if request_type is BeginQuorumEpochRequest:
        return pb.BeginQuorumEpochResponse(error_code=error, leader_id=UNKNOWN, leader_epoch=epoch)
    if request_type is EndQuorumEpochRequest:
        return pb.EndQuorumEpochResponse(error_code=error, leader_id=UNKNOWN, leader_epoch=epoch)
    if request_type is FetchRequest:
        return pb.FetchResponse(error_code=error, high_watermark=UNKNOWN, current_leader=leader)
    return pb.FetchSnapshotResponse(error_code=error, current_leader=leader)


# --------------------------------------------------------------------------- DescribeQuorum


def describe_quorum_to_pb(
    description: QuorumDescription, cluster_id: str, membership: Membership | None = None
) -> pb.DescribeQuorumResponse:
    """The leader's answer; ``description``'s times must already be wall-clock milliseconds.
    ``membership`` adds the kraft.version and the voters' endpoints."""

    def replicas(states: Sequence[ReplicaState]) -> list[pb.ReplicaState]:
        return [
            pb.ReplicaState(
                replica_id=state.replica_id,
                log_end_offset=_id(state.log_end_offset),
                last_fetch_timestamp=_id(state.last_fetch_ms),
                last_caught_up_timestamp=_id(state.last_caught_up_ms),
                replica_directory_id=directory_to_pb(state.directory_id),
            )
            for state in states
        ]

    return pb.DescribeQuorumResponse(
        error_code=ErrorCode.NONE,
        leader_id=_id(description.leader_id),
        leader_epoch=description.leader_epoch,
        high_watermark=description.high_watermark,
        voters=replicas(description.voters),
        observers=replicas(description.observers),
        cluster_id=cluster_id,
        kraft_version=0 if membership is None else membership.kraft_version,
        voter_endpoints=[] if membership is None else [voter_to_pb(v) for v in membership.voters],
    )


def describe_quorum_not_leader(
    leader_id: int | None, epoch: int, leader_endpoint: str
) -> pb.DescribeQuorumResponse:
    """A follower's answer: NOT_LEADER_OR_FOLLOWER, naming the leader and where it serves."""
    return pb.DescribeQuorumResponse(
        error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
        leader_id=_id(leader_id),
        leader_epoch=epoch,
        high_watermark=UNKNOWN,
        leader_endpoint=leader_endpoint,
    )


def describe_quorum_error(error: ErrorCode) -> pb.DescribeQuorumResponse:
    """An answer that carries only an error, with every id and offset unknown."""
    return pb.DescribeQuorumResponse(
        error_code=error, leader_id=UNKNOWN, leader_epoch=UNKNOWN, high_watermark=UNKNOWN
    )
