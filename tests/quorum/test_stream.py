"""The Raft stream transport on loopback: replication really rides it, bad frames close only
their own connection, TLS and the identity rule hold as on gRPC, and a node without a RAFT
listener is reached over gRPC."""

from __future__ import annotations

import asyncio
import logging
import ssl
import struct
from pathlib import Path

import grpc
import pytest
from cryptography import x509

from raftmeta.errors import ErrorCode
from raftmeta.quorum.grpc_server import RaftServer
from raftmeta.quorum.stream.connection import StreamConnection
from raftmeta.quorum.stream.frames import Kind, Status, encode_frame
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from raftmeta.security.credentials import channel_credentials
from raftmeta.security.ssl_contexts import client_ssl_context
from raftmeta.security.tls import TlsSettings, parse_tls_settings
from tests.quorum.harness import CLUSTER_ID, DEADLINE_S, Member, NodeCluster
from tests.security.support import TestPki
from tests.support.scenario import run_scenario


def stream_of(member: Member) -> tuple[int, int]:
    """The member's stream listener port and how many requests it answered."""
    server = member.server
    assert isinstance(server, RaftServer) and server.stream is not None
    assert server.stream.port is not None
    return server.stream.port, server.stream.requests_answered


async def closed_by_server(reader: asyncio.StreamReader) -> bool:
    """True when the server closes the connection (EOF or reset) before the deadline."""
    try:
        data = await asyncio.wait_for(reader.read(), DEADLINE_S)
    except ConnectionError:
        return True
    return data == b""


def test_a_stream_quorum_replicates_over_the_stream_and_hands_over(tmp_path: Path) -> None:
    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        offset = 0
        for i in range(10):
            offset = await cluster.append([f"value-{i}".encode()])
        await cluster.wait_for_commit(offset + 1)
        # Every follower fetched over the leader's stream listener, not over gRPC.
        _, answered = stream_of(leader)
        assert answered >= 10
        old_epoch = leader.node.core.epoch
        await cluster.stop(leader.node.node_id, graceful=True)
        successor = await cluster.wait_for_leader(newer_than=old_epoch)
        offset = await cluster.append([b"after the handover"])
        await cluster.wait_for_commit(offset + 1)
        assert stream_of(successor)[1] > 0
        assert successor.recorder.values[-1] == b"after the handover"

    run_scenario(scenario, NodeCluster(tmp_path, transport="stream"))


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(struct.pack(">I", 0xFFFFFFF0), id="over-the-cap"),
        pytest.param(struct.pack(">I", 3) + b"abc", id="shorter-than-its-header"),
        pytest.param(encode_frame(1, Kind.VOTE, Status.REQUEST, b"\xff\xff\xff"), id="undecodable"),
        pytest.param(struct.pack(">IQBB", 10, 1, 99, 0), id="unknown-kind"),
        pytest.param(encode_frame(1, Kind.FETCH, Status.ANSWER, b""), id="answer-as-request"),
    ],
)
def test_a_malformed_frame_closes_its_connection_and_the_node_keeps_serving(
    tmp_path: Path, frame: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        await cluster.append([b"before"])
        port, _ = stream_of(leader)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        with caplog.at_level(logging.WARNING):
            writer.write(frame)
            await writer.drain()
            assert await closed_by_server(reader)
        writer.close()
        assert any(
            "Raft stream frame" in r.getMessage() and "connection closed" in r.getMessage()
            for r in caplog.records
        ), [r.getMessage() for r in caplog.records]
        # The leader still leads and replicates to its followers over their connections.
        offset = await cluster.append([b"after"])
        await cluster.wait_for_commit(offset + 1)
        assert all(m.node.failure is None for m in cluster.members.values())

    run_scenario(scenario, NodeCluster(tmp_path, transport="stream"))


def test_the_edge_checks_hold_on_the_stream(tmp_path: Path) -> None:
    """Another cluster's request and a value no node may act on are refused in kind, as on
    the gRPC listener, and the leader keeps its epoch."""

    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        epoch = leader.node.core.epoch
        port, _ = stream_of(leader)
        connection = await StreamConnection.open(
            "127.0.0.1", port, name="test", timeout_s=DEADLINE_S
        )

        async def vote(cluster_id: str, candidate_epoch: int) -> pb.VoteResponse:
            request = pb.VoteRequest(
                cluster_id=cluster_id,
                candidate_epoch=candidate_epoch,
                candidate_id=2,
                last_offset_epoch=0,
                last_offset=0,
            )
            frame = await connection.call(Kind.VOTE, request.SerializeToString(), DEADLINE_S)
            assert frame.status is Status.ANSWER
            answer: pb.VoteResponse = pb.VoteResponse.FromString(frame.body)
            return answer

        foreign = await vote("another-cluster", epoch + 1)
        assert foreign.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
        at_limit = await vote(CLUSTER_ID, 2**31 - 1)
        assert at_limit.error_code == ErrorCode.INVALID_REQUEST
        await connection.close()
        assert leader.node.core.epoch == epoch
        offset = await cluster.append([b"still leading"])
        await cluster.wait_for_commit(offset + 1)
        assert cluster.leader() is leader

    run_scenario(scenario, NodeCluster(tmp_path, transport="stream"))


def test_a_quorum_with_one_node_without_a_stream_listener_works(tmp_path: Path) -> None:
    async def scenario(cluster: NodeCluster) -> None:
        await cluster.wait_for_leader()
        offset = await cluster.append([b"mixed"])
        await cluster.wait_for_commit(offset + 1)
        without = cluster.members[3]
        assert without.server is not None and without.server.stream is None
        # Make node 3 the only voter that can win: with one follower down, the leader commits
        # a record with node 3 alone, then hands over; the follower comes back behind.
        leader = await cluster.wait_for_leader()
        if leader.node.node_id != 3:
            behind = next(i for i in cluster.ids if i not in (3, leader.node.node_id))
            await cluster.stop(behind, graceful=False)
            ahead = [m for i, m in cluster.members.items() if i != behind]
            offset = await cluster.append([b"while one follower is down"])
            await cluster.wait_for_commit(offset + 1, ahead)
            epoch = leader.node.core.epoch
            await cluster.stop(leader.node.node_id, graceful=True)
            await cluster.restart(behind)
            assert (await cluster.wait_for_leader(newer_than=epoch)).node.node_id == 3
            await cluster.restart(leader.node.node_id)
        offset = await cluster.append([b"led by the node without a stream"])
        await cluster.wait_for_commit(offset + 1)
        assert all(
            m.recorder.values[-1] == b"led by the node without a stream"
            for m in cluster.members.values()
        )

    run_scenario(scenario, NodeCluster(tmp_path, transport="stream", without_stream=[3]))


def node_tls(pki: TestPki, node_id: int) -> TlsSettings:
    return parse_tls_settings(pki.properties(f"controller-{node_id}"))


def test_a_tls_stream_quorum_commits_and_refuses_a_peer_speaking_as_another_node(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pki = TestPki.create(tmp_path / "pki")

    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        offset = await cluster.append([b"encrypted"])
        await cluster.wait_for_commit(offset + 1)
        port, answered = stream_of(leader)
        assert answered > 0
        leader_id = leader.node.node_id
        other, impostor = (i for i in cluster.ids if i != leader_id)
        # A voter's own certificate, used to speak for another voter: refused, and logged.
        context = client_ssl_context(node_tls(pki, impostor))
        connection = await StreamConnection.open(
            "127.0.0.1", port, name="test", ssl_context=context, timeout_s=DEADLINE_S
        )
        vote = pb.VoteRequest(
            cluster_id=CLUSTER_ID,
            candidate_epoch=leader.node.core.epoch + 5,
            candidate_id=other,
            last_offset_epoch=0,
            last_offset=0,
        )
        with caplog.at_level(logging.WARNING):
            frame = await connection.call(Kind.VOTE, vote.SerializeToString(), DEADLINE_S)
        await connection.close()
        assert frame.status is Status.ANSWER
        answer = pb.VoteResponse.FromString(frame.body)
        assert answer.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        assert not answer.vote_granted
        assert any(
            f"as node {other} refused from User:controller-{impostor}" in r.getMessage()
            for r in caplog.records
        ), [r.getMessage() for r in caplog.records]
        # A client without a certificate does not get past the handshake.
        anonymous = client_ssl_context(TlsSettings(truststore=node_tls(pki, impostor).truststore))
        with pytest.raises((ssl.SSLError, ConnectionError)):
            bare = await StreamConnection.open(
                "127.0.0.1", port, name="test", ssl_context=anonymous, timeout_s=DEADLINE_S
            )
            await bare.call(Kind.VOTE, vote.SerializeToString(), DEADLINE_S)
        # DescribeEndpoints names the stream only to a certificate of a cluster node.
        assert leader.server is not None
        admin = channel_credentials(parse_tls_settings(pki.properties("admin")))
        grpc_port = cluster.ports[leader_id]
        async with grpc.aio.secure_channel(f"127.0.0.1:{grpc_port}", admin) as channel:
            endpoints = await pb_grpc.RaftStub(channel).DescribeEndpoints(
                pb.DescribeEndpointsRequest(cluster_id=CLUSTER_ID, replica_id=other),
                timeout=DEADLINE_S,
            )
        assert endpoints.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        assert endpoints.raft_stream_port == 0
        assert leader.node.core.role.name == "LEADER"
        offset = await cluster.append([b"still encrypted"])
        await cluster.wait_for_commit(offset + 1)

    run_scenario(
        scenario,
        NodeCluster(tmp_path / "nodes", transport="stream", tls=lambda i: node_tls(pki, i)),
    )


def test_a_renewed_certificate_serves_new_stream_connections(tmp_path: Path) -> None:
    pki = TestPki.create(tmp_path / "pki")

    async def served_serial(port: int) -> int:
        context = client_ssl_context(node_tls(pki, 2))
        _, writer = await asyncio.open_connection(
            "127.0.0.1", port, ssl=context, server_hostname="127.0.0.1"
        )
        ssl_object = writer.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True)
        writer.close()
        return x509.load_der_x509_certificate(der).serial_number

    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        port, _ = stream_of(leader)
        before = await served_serial(port)
        pki.node(f"controller-{leader.node.node_id}")  # a new certificate over the old file
        after = await served_serial(port)
        assert after != before
        offset = await cluster.append([b"after the renewal"])
        await cluster.wait_for_commit(offset + 1)

    run_scenario(
        scenario,
        NodeCluster(tmp_path / "nodes", transport="stream", tls=lambda i: node_tls(pki, i)),
    )
