"""Every Raft RPC through a real grpc.aio server on loopback, so that the generated modules, their
imports and each message's fields are exercised the way the runtime uses them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import grpc
import pytest

from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from tests.support.scenario import run_with_deadline

CLUSTER_ID = "MkU3OEVBNTcwNTJENDM2Qk"
# A payload that is not text and is larger than gRPC's default 4 MiB message limit, so the test
# also pins down the channel options the runtime needs for 8 MiB fetches.
BIG_RECORDS = bytes(range(256)) * (9 * 1024 * 4)
MESSAGE_LIMIT = 16 * 1024 * 1024
OPTIONS = [
    ("grpc.max_receive_message_length", MESSAGE_LIMIT),
    ("grpc.max_send_message_length", MESSAGE_LIMIT),
]


class EchoRaft(pb_grpc.RaftServicer):
    """Answers from the request's own fields, so each assertion shows a field crossed the wire
    in both directions."""

    async def Vote(self, request: pb.VoteRequest, context: Any) -> pb.VoteResponse:
        return pb.VoteResponse(
            error_code=0 if request.cluster_id == CLUSTER_ID else 104,
            leader_id=-1,
            leader_epoch=request.candidate_epoch,
            vote_granted=request.pre_vote and request.last_offset >= 10,
        )

    async def BeginQuorumEpoch(
        self, request: pb.BeginQuorumEpochRequest, context: Any
    ) -> pb.BeginQuorumEpochResponse:
        return pb.BeginQuorumEpochResponse(
            error_code=0, leader_id=request.leader_id, leader_epoch=request.leader_epoch
        )

    async def EndQuorumEpoch(
        self, request: pb.EndQuorumEpochRequest, context: Any
    ) -> pb.EndQuorumEpochResponse:
        successor = request.preferred_successors[0] if request.preferred_successors else -1
        return pb.EndQuorumEpochResponse(
            error_code=0, leader_id=successor, leader_epoch=request.leader_epoch + 1
        )

    async def Fetch(self, request: pb.FetchRequest, context: Any) -> pb.FetchResponse:
        leader = pb.LeaderIdAndEpoch(leader_id=1, leader_epoch=request.current_leader_epoch)
        if request.last_fetched_epoch > request.current_leader_epoch:
            return pb.FetchResponse(
                error_code=0,
                high_watermark=40,
                diverging_epoch=pb.EpochEndOffset(epoch=2, end_offset=35),
                current_leader=leader,
                log_start_offset=0,
            )
        if request.fetch_offset == 0:
            return pb.FetchResponse(
                error_code=0,
                high_watermark=40,
                current_leader=leader,
                snapshot_id=pb.SnapshotId(end_offset=30, epoch=2),
                log_start_offset=30,
            )
        return pb.FetchResponse(
            error_code=0,
            high_watermark=request.fetch_offset + 3,
            current_leader=leader,
            records=BIG_RECORDS[: request.max_bytes],
            log_start_offset=30,
        )

    async def FetchSnapshot(
        self, request: pb.FetchSnapshotRequest, context: Any
    ) -> pb.FetchSnapshotResponse:
        snapshot = BIG_RECORDS[:1000]
        start = request.position
        return pb.FetchSnapshotResponse(
            error_code=0,
            current_leader=pb.LeaderIdAndEpoch(leader_id=1, leader_epoch=3),
            snapshot_id=request.snapshot_id,
            size=len(snapshot),
            position=start,
            unaligned_records=snapshot[start : start + request.max_bytes],
        )

    async def DescribeQuorum(
        self, request: pb.DescribeQuorumRequest, context: Any
    ) -> pb.DescribeQuorumResponse:
        return pb.DescribeQuorumResponse(
            error_code=0,
            leader_id=1,
            leader_epoch=3,
            high_watermark=42,
            voters=[
                pb.ReplicaState(
                    replica_id=node,
                    log_end_offset=42,
                    last_fetch_timestamp=1_700_000_000_000,
                    last_caught_up_timestamp=1_700_000_000_000,
                )
                for node in (1, 2, 3)
            ],
            observers=[
                pb.ReplicaState(
                    replica_id=7,
                    log_end_offset=-1,
                    last_fetch_timestamp=-1,
                    last_caught_up_timestamp=-1,
                )
            ],
        )


@asynccontextmanager
async def raft_stub() -> AsyncIterator[pb_grpc.RaftStub]:
    server = grpc.aio.server(options=OPTIONS)
    pb_grpc.add_RaftServicer_to_server(EchoRaft(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    assert port > 0
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=OPTIONS) as channel:
            yield pb_grpc.RaftStub(channel)
    finally:
        await server.stop(grace=None)


def run(scenario: Callable[[pb_grpc.RaftStub], Awaitable[None]]) -> None:
    async def main() -> None:
        async with raft_stub() as stub:
            await scenario(stub)

    run_with_deadline(main(), 10)


def test_vote_and_pre_vote() -> None:
    async def scenario(stub: pb_grpc.RaftStub) -> None:
        request = pb.VoteRequest(
            cluster_id=CLUSTER_ID,
            candidate_epoch=5,
            candidate_id=2,
            last_offset_epoch=4,
            last_offset=10,
            pre_vote=True,
        )
        response = await stub.Vote(request, timeout=5)
        assert (response.error_code, response.leader_id, response.leader_epoch) == (0, -1, 5)
        assert response.vote_granted is True

        request.pre_vote = False
        request.cluster_id = "another-cluster"
        response = await stub.Vote(request, timeout=5)
        assert response.error_code == 104
        assert response.vote_granted is False

    run(scenario)


def test_begin_and_end_quorum_epoch() -> None:
    async def scenario(stub: pb_grpc.RaftStub) -> None:
        begin = await stub.BeginQuorumEpoch(
            pb.BeginQuorumEpochRequest(cluster_id=CLUSTER_ID, leader_id=3, leader_epoch=7),
            timeout=5,
        )
        assert (begin.error_code, begin.leader_id, begin.leader_epoch) == (0, 3, 7)

        end = await stub.EndQuorumEpoch(
            pb.EndQuorumEpochRequest(
                cluster_id=CLUSTER_ID, leader_id=3, leader_epoch=7, preferred_successors=[2, 1]
            ),
            timeout=5,
        )
        assert (end.error_code, end.leader_id, end.leader_epoch) == (0, 2, 8)

    run(scenario)


def test_fetch_records_arrive_byte_for_byte() -> None:
    async def scenario(stub: pb_grpc.RaftStub) -> None:
        response = await stub.Fetch(
            pb.FetchRequest(
                cluster_id=CLUSTER_ID,
                replica_id=2,
                current_leader_epoch=3,
                fetch_offset=37,
                last_fetched_epoch=3,
                max_wait_ms=500,
                max_bytes=len(BIG_RECORDS),
            ),
            timeout=5,
        )
        assert response.error_code == 0
        assert response.high_watermark == 40
        assert response.records == BIG_RECORDS
        assert response.log_start_offset == 30
        assert (response.current_leader.leader_id, response.current_leader.leader_epoch) == (1, 3)
        assert not response.HasField("diverging_epoch")
        assert not response.HasField("snapshot_id")

    run(scenario)


def test_fetch_diverging_epoch_and_snapshot_id_are_present_only_when_set() -> None:
    async def scenario(stub: pb_grpc.RaftStub) -> None:
        diverged = await stub.Fetch(
            pb.FetchRequest(
                cluster_id=CLUSTER_ID,
                replica_id=2,
                current_leader_epoch=3,
                fetch_offset=50,
                last_fetched_epoch=4,
                max_wait_ms=0,
                max_bytes=1024,
            ),
            timeout=5,
        )
        assert diverged.HasField("diverging_epoch")
        assert (diverged.diverging_epoch.epoch, diverged.diverging_epoch.end_offset) == (2, 35)
        assert not diverged.HasField("snapshot_id")
        assert diverged.records == b""

        behind = await stub.Fetch(
            pb.FetchRequest(
                cluster_id=CLUSTER_ID,
                replica_id=7,
                current_leader_epoch=3,
                fetch_offset=0,
                last_fetched_epoch=0,
                max_wait_ms=0,
                max_bytes=1024,
            ),
            timeout=5,
        )
        assert behind.HasField("snapshot_id")
        assert (behind.snapshot_id.end_offset, behind.snapshot_id.epoch) == (30, 2)
        assert not behind.HasField("diverging_epoch")

    run(scenario)


def test_fetch_snapshot_in_chunks() -> None:
    async def scenario(stub: pb_grpc.RaftStub) -> None:
        snapshot_id = pb.SnapshotId(end_offset=30, epoch=2)
        received = b""
        size = None
        while size is None or len(received) < size:
            chunk = await stub.FetchSnapshot(
                pb.FetchSnapshotRequest(
                    cluster_id=CLUSTER_ID,
                    replica_id=7,
                    current_leader_epoch=3,
                    snapshot_id=snapshot_id,
                    position=len(received),
                    max_bytes=300,
                ),
                timeout=5,
            )
            assert chunk.error_code == 0
            assert chunk.snapshot_id == snapshot_id
            assert chunk.position == len(received)
            assert chunk.current_leader.leader_epoch == 3
            size = chunk.size
            received += chunk.unaligned_records
        assert received == BIG_RECORDS[:1000]

    run(scenario)


def test_describe_quorum() -> None:
    async def scenario(stub: pb_grpc.RaftStub) -> None:
        response = await stub.DescribeQuorum(
            pb.DescribeQuorumRequest(cluster_id=CLUSTER_ID), timeout=5
        )
        assert (response.leader_id, response.leader_epoch, response.high_watermark) == (1, 3, 42)
        assert [voter.replica_id for voter in response.voters] == [1, 2, 3]
        assert all(voter.log_end_offset == 42 for voter in response.voters)
        assert response.voters[0].last_caught_up_timestamp == 1_700_000_000_000
        (observer,) = response.observers
        assert (observer.replica_id, observer.log_end_offset) == (7, -1)
        assert (observer.last_fetch_timestamp, observer.last_caught_up_timestamp) == (-1, -1)

    run(scenario)


def test_an_unset_scalar_reads_zero_not_the_sentinel() -> None:
    """Why senders must set every -1 explicitly (see the conventions in raft.proto)."""
    assert pb.VoteResponse().leader_id == 0
    assert pb.VoteResponse(leader_id=-1).leader_id == -1


@pytest.mark.parametrize(
    "method",
    ["Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "Fetch", "FetchSnapshot", "DescribeQuorum"],
)
def test_every_request_carries_the_cluster_id(method: str) -> None:
    service = pb.DESCRIPTOR.services_by_name["Raft"]
    request_type = service.methods_by_name[method].input_type
    assert request_type.fields_by_name["cluster_id"].number == 1
