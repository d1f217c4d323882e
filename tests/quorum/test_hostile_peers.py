"""Issue 12's plaintext findings, replayed against a fresh three-node quorum on loopback.

Each test is an unauthenticated client with nothing but the generated stubs (or raw bytes on a
generic channel call). After the packet, the quorum must keep its leader, its epoch and every
acknowledged write, and the refusal must be a Kafka code with a one-line reason (or gRPC
INVALID_ARGUMENT for bytes that do not decode), never UNKNOWN and never a stopped node.
"""

from __future__ import annotations

import asyncio
import logging
import random
from pathlib import Path
from typing import Any

import grpc
import pytest

from raftmeta.errors import ErrorCode
from raftmeta.quorum.raft_service import ERROR_MESSAGE_KEY
from raftmeta.raft.roles import Role
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from raftmeta.storage.quorum_state import QUORUM_STATE_FILE
from tests.quorum.harness import CLUSTER_ID, DEADLINE_S, Member, NodeCluster
from tests.support.scenario import run_scenario

INT32_MAX = 2**31 - 1


async def reason(call: Any) -> str:
    """The one-line reason the edge put in a refused call's trailing metadata."""
    metadata = await call.trailing_metadata()
    return str(dict(metadata)[ERROR_MESSAGE_KEY])


def follower_of(cluster: NodeCluster, leader: Member) -> Member:
    return next(m for m in cluster.members.values() if m is not leader)


def assert_all_running(cluster: NodeCluster) -> None:
    for member in cluster.members.values():
        assert member.node.failure is None, member.node.failure
        assert member.node.running


async def assert_still_leads(cluster: NodeCluster, leader: Member, epoch: int) -> None:
    """Same leader, same epoch, nobody stopped, and a write still commits everywhere."""
    assert_all_running(cluster)
    assert leader.node.core.role is Role.LEADER
    assert leader.node.core.epoch == epoch
    offset = await cluster.append([b"after the forged packet"])
    await cluster.wait_for_commit(offset + 1)
    assert cluster.leader() is leader
    assert leader.node.core.epoch == epoch


def test_a_forged_begin_or_end_epoch_naming_another_leader_leaves_the_leader_leading(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        await cluster.append([b"before"])
        epoch = leader.node.core.epoch
        other = follower_of(cluster, leader).node.node_id
        async with grpc.aio.insecure_channel(cluster.addresses[leader.node.node_id]) as channel:
            stub = pb_grpc.RaftStub(channel)
            begin = await stub.BeginQuorumEpoch(
                pb.BeginQuorumEpochRequest(
                    cluster_id=CLUSTER_ID, leader_id=other, leader_epoch=epoch
                )
            )
            end = await stub.EndQuorumEpoch(
                pb.EndQuorumEpochRequest(
                    cluster_id=CLUSTER_ID,
                    leader_id=other,
                    leader_epoch=epoch,
                    preferred_successors=[other],
                )
            )
        assert begin.error_code == ErrorCode.INVALID_REQUEST
        assert end.error_code == ErrorCode.INVALID_REQUEST
        assert (begin.leader_id, begin.leader_epoch) == (leader.node.node_id, epoch)
        await assert_still_leads(cluster, leader, epoch)

    with caplog.at_level(logging.WARNING, logger="raftmeta.quorum.node"):
        run_scenario(scenario, NodeCluster(tmp_path))
    # The core's refusals reach the log, once each, naming what, who and why.
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert any(
        "BeginQuorumEpochRequest" in line and "which this node led" in line for line in refused
    )
    assert any(
        "EndQuorumEpochRequest" in line and "which this node led" in line for line in refused
    )


def test_a_begin_epoch_with_leader_id_minus_five_is_refused_by_a_follower(tmp_path: Path) -> None:
    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        epoch = leader.node.core.epoch
        follower = follower_of(cluster, leader)
        async with grpc.aio.insecure_channel(cluster.addresses[follower.node.node_id]) as channel:
            call = pb_grpc.RaftStub(channel).BeginQuorumEpoch(
                pb.BeginQuorumEpochRequest(cluster_id=CLUSTER_ID, leader_id=-5, leader_epoch=epoch)
            )
            answer = await call
            why = await reason(call)
        assert answer.error_code == ErrorCode.INVALID_REQUEST
        assert "leader id -5" in why
        assert follower.node.core.leader_id == leader.node.node_id
        await assert_still_leads(cluster, leader, epoch)

    run_scenario(scenario, NodeCluster(tmp_path))


def test_vote_and_begin_epoch_at_the_int32_limit_are_refused_and_never_persisted(
    tmp_path: Path,
) -> None:
    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        await cluster.append([b"acknowledged"])
        epoch = leader.node.core.epoch
        files = {
            i: cluster.data_dir(i) / "__cluster_metadata-0" / QUORUM_STATE_FILE for i in cluster.ids
        }
        before = {i: path.read_bytes() for i, path in files.items()}
        for target in cluster.ids:
            sender = next(i for i in cluster.ids if i != target)
            async with grpc.aio.insecure_channel(cluster.addresses[target]) as channel:
                stub = pb_grpc.RaftStub(channel)
                vote_call = stub.Vote(
                    pb.VoteRequest(
                        cluster_id=CLUSTER_ID,
                        candidate_epoch=INT32_MAX,
                        candidate_id=sender,
                        last_offset_epoch=epoch,
                        last_offset=10**6,
                    )
                )
                begin_call = stub.BeginQuorumEpoch(
                    pb.BeginQuorumEpochRequest(
                        cluster_id=CLUSTER_ID, leader_id=sender, leader_epoch=INT32_MAX
                    )
                )
                vote, begin = await vote_call, await begin_call
                assert vote.error_code == ErrorCode.INVALID_REQUEST
                assert not vote.vote_granted
                assert begin.error_code == ErrorCode.INVALID_REQUEST
                assert str(INT32_MAX) in await reason(vote_call)
                assert str(INT32_MAX) in await reason(begin_call)
        assert {i: path.read_bytes() for i, path in files.items()} == before
        assert all(m.node.core.epoch == epoch for m in cluster.members.values())
        assert_all_running(cluster)

        # A full restart: every node resumes from what it persisted and elects again.
        for node_id in list(cluster.members):
            await cluster.stop(node_id, graceful=False)
        for node_id in cluster.ids:
            await cluster.restart(node_id)
        again = await cluster.wait_for_leader(newer_than=epoch)
        assert again.node.core.epoch < INT32_MAX - 1
        offset = await cluster.append([b"after the restart"])
        await cluster.wait_for_commit(offset + 1)
        assert b"acknowledged" in again.recorder.values

    run_scenario(scenario, NodeCluster(tmp_path))


def test_a_fetch_as_a_made_up_replica_with_a_huge_offset_changes_nothing(tmp_path: Path) -> None:
    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        await cluster.append([b"before"])
        epoch = leader.node.core.epoch
        high_watermark = leader.node.core.high_watermark
        async with grpc.aio.insecure_channel(cluster.addresses[leader.node.node_id]) as channel:
            stub = pb_grpc.RaftStub(channel)

            def fetch(replica_id: int, offset: int) -> Any:
                return stub.Fetch(
                    pb.FetchRequest(
                        cluster_id=CLUSTER_ID,
                        replica_id=replica_id,
                        current_leader_epoch=epoch,
                        fetch_offset=offset,
                        last_fetched_epoch=epoch,
                        max_wait_ms=0,
                        max_bytes=1024,
                    ),
                    timeout=DEADLINE_S,
                )

            huge = await fetch(4242, 2**62)
            negative_call = fetch(4242, -1)
            negative = await negative_call
            unnamed_call = fetch(-5, 0)
            unnamed = await unnamed_call
            assert "fetch offset -1" in await reason(negative_call)
            assert "sender -5" in await reason(unnamed_call)
        # Beyond the log end: the fetcher is told where the log diverges, given no records.
        assert huge.error_code == ErrorCode.NONE
        assert huge.records == b""
        assert huge.HasField("diverging_epoch")
        assert negative.error_code == unnamed.error_code == ErrorCode.INVALID_REQUEST
        # An observer's claim never moves the high watermark.
        assert leader.node.core.high_watermark == high_watermark
        await assert_still_leads(cluster, leader, epoch)

    run_scenario(scenario, NodeCluster(tmp_path))


def test_a_fetch_snapshot_with_negative_max_bytes_is_refused_in_one_line(tmp_path: Path) -> None:
    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        epoch = leader.node.core.epoch
        async with grpc.aio.insecure_channel(cluster.addresses[leader.node.node_id]) as channel:
            call = pb_grpc.RaftStub(channel).FetchSnapshot(
                pb.FetchSnapshotRequest(
                    cluster_id=CLUSTER_ID,
                    replica_id=4242,
                    current_leader_epoch=epoch,
                    snapshot_id=pb.SnapshotId(end_offset=1, epoch=epoch),
                    position=0,
                    max_bytes=-1,
                )
            )
            answer = await call
            why = await reason(call)
        assert answer.error_code == ErrorCode.INVALID_REQUEST
        assert "max bytes -1" in why and "\n" not in why
        await assert_still_leads(cluster, leader, epoch)

    run_scenario(scenario, NodeCluster(tmp_path))


METHODS = {
    "Vote": pb.VoteRequest,
    "BeginQuorumEpoch": pb.BeginQuorumEpochRequest,
    "EndQuorumEpoch": pb.EndQuorumEpochRequest,
    "Fetch": pb.FetchRequest,
    "FetchSnapshot": pb.FetchSnapshotRequest,
    "DescribeQuorum": pb.DescribeQuorumRequest,
}
ALLOWED = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    # A peer's re-sent request supersedes its earlier call, which then gets no answer.
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
}


def random_body(rng: random.Random, method: str, epoch: int) -> bytes:
    """Random bytes, half of them a well-formed request of ``method`` with one field garbled,
    so both the decoder and the range checks are exercised."""
    if rng.random() < 0.5:
        return rng.randbytes(rng.randrange(1, 64))
    message = METHODS[method]()
    values = [0, 1, 2, 3, -1, -5, epoch, epoch + 1, INT32_MAX, -INT32_MAX, 2**62]
    for field in message.DESCRIPTOR.fields:
        if field.type == field.TYPE_STRING:
            setattr(message, field.name, CLUSTER_ID if rng.random() < 0.8 else "x")
        elif field.name == "preferred_successors":
            message.preferred_successors.extend(rng.choice(values[:6]) for _ in range(2))
        elif field.name == "snapshot_id":
            message.snapshot_id.end_offset = rng.choice(values)
            message.snapshot_id.epoch = rng.choice(values[:-1])
        elif field.type in (field.TYPE_INT32, field.TYPE_INT64):
            value = rng.choice(values)
            if field.type == field.TYPE_INT32 and value > INT32_MAX:
                value = INT32_MAX
            setattr(message, field.name, value)
        elif field.type == field.TYPE_BOOL:
            setattr(message, field.name, rng.random() < 0.5)
    data = bytearray(message.SerializeToString())
    if data and rng.random() < 0.5:
        data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data)


def test_random_request_bodies_never_yield_unknown_and_never_stop_a_node(tmp_path: Path) -> None:
    rng = random.Random(12)
    outcomes: dict[grpc.StatusCode, int] = {}

    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        await cluster.append([b"before"])
        epoch = leader.node.core.epoch
        channels = {i: grpc.aio.insecure_channel(a) for i, a in cluster.addresses.items()}
        try:
            for _ in range(60):
                calls = []
                for method in METHODS:
                    channel = channels[rng.choice(cluster.ids)]
                    call = channel.unary_unary(f"/raftmeta.raft.v1.Raft/{method}")
                    calls.append(call(random_body(rng, method, epoch), timeout=2.0))
                results = await asyncio.gather(*calls, return_exceptions=True)
                for result in results:
                    code = (
                        result.code()
                        if isinstance(result, grpc.aio.AioRpcError)
                        else grpc.StatusCode.OK
                    )
                    assert not isinstance(result, Exception) or isinstance(
                        result, grpc.aio.AioRpcError
                    ), result
                    outcomes[code] = outcomes.get(code, 0) + 1
                    assert code in ALLOWED, result
                assert_all_running(cluster)
        finally:
            for channel in channels.values():
                await channel.close()
        # Forged votes may have moved leadership; the quorum must still serve writes.
        offset = await cluster.append([b"after the fuzz"])
        await cluster.wait_for_commit(offset + 1)
        assert_all_running(cluster)
        assert b"before" in cluster.members[cluster.ids[0]].recorder.values

    run_scenario(scenario, NodeCluster(tmp_path))
    assert sum(outcomes.values()) == 60 * len(METHODS)
    assert outcomes.get(grpc.StatusCode.INVALID_ARGUMENT, 0) > 0
