"""Every core message survives the trip through its proto form, echo fields included."""

from __future__ import annotations

import pytest

from raftmeta.errors import ErrorCode
from raftmeta.quorum import wire
from raftmeta.raft.batch import OffsetAndEpoch, SnapshotId, make_batch
from raftmeta.raft.core import QuorumDescription, ReplicaState
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

SNAPSHOT = SnapshotId(40, 3)
DYNAMIC_VOTERS = VoterSet(
    [
        Voter(ReplicaKey(1, "dirA"), (Endpoint("CONTROLLER", "10.0.0.1", 9093),)),
        Voter(ReplicaKey(2, "dirB"), (Endpoint("CONTROLLER", "h2", 9094),)),
    ]
)
BATCHES = (make_batch(7, 2, [b"a", b"bc"]), make_batch(9, 3, [b"\x00" * 100], is_control=True))

REQUEST_DECODERS = {
    pb.VoteRequest: wire.vote_request_from_pb,
    pb.BeginQuorumEpochRequest: wire.begin_epoch_request_from_pb,
    pb.EndQuorumEpochRequest: wire.end_epoch_request_from_pb,
    pb.FetchRequest: wire.fetch_request_from_pb,
    pb.FetchSnapshotRequest: wire.fetch_snapshot_request_from_pb,
}

PAIRS: list[tuple[int, Request, Response]] = [
    (
        2,
        VoteRequest(5, 2, 4, 17, pre_vote=True),
        VoteResponse(ErrorCode.NONE, 4, None, True, 5, pre_vote=True),
    ),
    (
        1,
        BeginQuorumEpochRequest(1, 6),
        BeginQuorumEpochResponse(ErrorCode.FENCED_LEADER_EPOCH, 7, 3),
    ),
    (
        1,
        EndQuorumEpochRequest(1, 6, (3, 2)),
        EndQuorumEpochResponse(ErrorCode.NONE, 6, None),
    ),
    (
        3,
        FetchRequest(6, 7, 2, 250, 1024),
        FetchResponse(ErrorCode.NONE, 6, 1, 7, 9, 0, BATCHES),
    ),
    (
        3,
        FetchRequest(6, 12, 2, 250, 1024),
        FetchResponse(ErrorCode.NONE, 6, 1, 12, 9, 0, diverging=OffsetAndEpoch(9, 2)),
    ),
    (
        3,
        FetchRequest(6, 0, 0, 250, 1024),
        FetchResponse(ErrorCode.NONE, 6, 1, 0, 50, 40, snapshot_id=SNAPSHOT),
    ),
    (
        3,
        FetchSnapshotRequest(6, SNAPSHOT, 10, 4),
        FetchSnapshotResponse(ErrorCode.NONE, 6, 1, SNAPSHOT, 10, 99, 4, b"\x01\x02\x03\x04"),
    ),
    # KIP-853's directory ids and a snapshot's voter set cross the wire too.
    (
        2,
        VoteRequest(5, 2, 4, 17, candidate_directory_id="dirB", voter_directory_id="dirA"),
        VoteResponse(ErrorCode.INVALID_VOTER_KEY, 4, None, False, 5),
    ),
    (
        1,
        BeginQuorumEpochRequest(1, 6, voter_directory_id="dirC"),
        BeginQuorumEpochResponse(ErrorCode.NONE, 6, 1),
    ),
    (
        3,
        FetchRequest(6, 7, 2, 250, 1024, high_watermark=5, replica_directory_id="dirC"),
        FetchResponse(ErrorCode.NONE, 6, 1, 7, 9, 0, BATCHES),
    ),
    (
        3,
        FetchSnapshotRequest(6, SNAPSHOT, 0, 4, replica_directory_id="dirC"),
        FetchSnapshotResponse(
            ErrorCode.NONE, 6, 1, SNAPSHOT, 0, 99, 1, b"\x01", DYNAMIC_VOTERS, kraft_version=1
        ),
    ),
]


@pytest.mark.parametrize(("sender", "request_", "response"), PAIRS)
def test_request_and_response_round_trip(
    sender: int, request_: Request, response: Response
) -> None:
    message = wire.request_to_pb(request_, "cluster", sender)
    assert message.cluster_id == "cluster"
    decode = REQUEST_DECODERS[type(message)]
    assert decode(message) == (sender, request_)
    encoded = wire.response_to_pb(response).SerializeToString()
    answer = type(wire.response_to_pb(response)).FromString(encoded)
    assert wire.response_from_pb(answer, request_) == response


def test_an_unread_snapshot_chunk_is_never_sent() -> None:
    with pytest.raises(ValueError, match="read from the file"):
        wire.response_to_pb(FetchSnapshotResponse(ErrorCode.NONE, 6, 1, SNAPSHOT, 0, 99, 4))


def test_an_unknown_error_code_is_still_an_error() -> None:
    assert wire.error_code(31337) is ErrorCode.UNKNOWN_SERVER_ERROR
    assert wire.error_code(104) is ErrorCode.INCONSISTENT_CLUSTER_ID


def test_a_quorum_description_reports_what_nobody_knows_as_minus_one() -> None:
    description = QuorumDescription(
        1,
        7,
        42,
        (ReplicaState(1, 42, None, 1_000), ReplicaState(2, None, None, None)),
        (ReplicaState(9, 40, 990, 980),),
    )
    message = wire.describe_quorum_to_pb(description, "c")
    assert (message.error_code, message.leader_id, message.leader_epoch) == (0, 1, 7)
    assert (message.high_watermark, message.cluster_id) == (42, "c")
    assert [
        (v.replica_id, v.log_end_offset, v.last_fetch_timestamp, v.last_caught_up_timestamp)
        for v in [*message.voters, *message.observers]
    ] == [(1, 42, -1, 1_000), (2, -1, -1, -1), (9, 40, 990, 980)]


def test_a_follower_describing_the_quorum_names_the_leader_and_where_it_serves() -> None:
    message = wire.describe_quorum_not_leader(3, 8, "127.0.0.1:9093")
    assert message.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert (message.leader_id, message.leader_epoch) == (3, 8)
    assert (message.high_watermark, message.leader_endpoint) == (-1, "127.0.0.1:9093")
    unknown = wire.describe_quorum_not_leader(None, 8, "")
    assert unknown.leader_id == -1
