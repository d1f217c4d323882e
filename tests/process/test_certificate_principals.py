"""Every door names its caller by the client certificate: real ``raftmeta serve`` processes over
mutual TLS, as ``raftmeta dev --tls`` sets them up (the StandardAuthorizer, the operator's
``CN=admin`` and the controllers super users, no ACL at all).

* Admin (gRPC) and the Kafka listener: a broker's certificate creates no topic; the operator's
  creates one through either door.
* BrokerLifecycle: the broker registers and unfences with nothing but its own certificate; it
  registers no controller, and nor does the operator's certificate.
* Raft: a broker's certificate changes no voter (nor validates a kraft.version upgrade); the
  operator's and a controller's may. A certificate naming no node and allowed nothing is not
  told the quorum. Without an authorizer, a broker's certificate still
  changes no voter, while a controller's and the operator's do.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import grpc

from raftmeta.admin import AsyncAdminClient, KafkaException, NewTopic
from raftmeta.admin.quorum import DescribeError, QuorumInfo, describe_quorum
from raftmeta.config.properties import format_properties, parse_properties
from raftmeta.devkit.cluster import DevCluster
from raftmeta.errors import ErrorCode
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC
from raftmeta.rpc import broker_pb2 as bpb
from raftmeta.rpc import broker_pb2_grpc as bpb_grpc
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from raftmeta.security.credentials import channel_credentials
from raftmeta.security.tls import parse_tls_settings
from raftmeta.storage.meta_properties import read_meta_properties
from tests.process.helpers import free_base_port
from tests.process.test_voter_change_tls import client_properties
from tests.support.waiting import wait_until

DEADLINE_S = 30.0
CALL_TIMEOUT_S = 10.0
VOTERS = {3000, 3001, 3002}


def certificate_properties(config: Path) -> dict[str, str]:
    """A client's settings presenting the certificate of the process ``config`` configures."""
    settings = parse_properties(config.read_text())
    return {
        "security.protocol": "SSL",
        **{key: value for key, value in settings.items() if key.startswith("ssl.")},
    }


def settled_quorum(cluster: DevCluster) -> QuorumInfo:
    """The quorum once it has a leader every voter has caught up with."""

    def found() -> QuorumInfo | None:
        for node in cluster.nodes.values():
            assert node.exit_status is None, node.log_tail()
        try:
            info = describe_quorum(
                cluster.bootstrap_servers,
                cluster.cluster_id,
                timeout_s=1.0,
                tls=cluster.client_tls(),
            )
        except DescribeError:
            return None
        leader = info.leader
        if leader is None or any(v.log_end_offset != leader.log_end_offset for v in info.voters):
            return None
        return info

    return wait_until(found, "a settled quorum", DEADLINE_S)


def voter_ids(info: QuorumInfo) -> set[int]:
    return {voter.node_id for voter in info.voters}


async def raft_change(
    cluster: DevCluster, node_id: int, caller: Mapping[str, str], request: object
) -> pb.VoterChangeResponse:
    """One voter-change call to node ``node_id`` with ``caller``'s certificate."""
    credentials = channel_credentials(parse_tls_settings(caller))
    async with grpc.aio.secure_channel(f"127.0.0.1:{cluster.ports[node_id]}", credentials) as ch:
        stub = pb_grpc.RaftStub(ch)
        method = {
            pb.UpdateKRaftVersionRequest: stub.UpdateKRaftVersion,
            pb.RemoveRaftVoterRequest: stub.RemoveRaftVoter,
        }[type(request)]
        answer = await method(request, timeout=CALL_TIMEOUT_S)
    assert isinstance(answer, pb.VoterChangeResponse)
    return answer


async def describe(cluster: DevCluster, node_id: int, caller: Mapping[str, str]) -> int:
    """The error code of a Raft DescribeQuorum to node ``node_id`` with ``caller``'s
    certificate."""
    credentials = channel_credentials(parse_tls_settings(caller))
    async with grpc.aio.secure_channel(f"127.0.0.1:{cluster.ports[node_id]}", credentials) as ch:
        answer = await pb_grpc.RaftStub(ch).DescribeQuorum(
            pb.DescribeQuorumRequest(cluster_id=cluster.cluster_id), timeout=CALL_TIMEOUT_S
        )
    return int(answer.error_code)


async def register_controller(
    cluster: DevCluster, node_id: int, caller: Mapping[str, str], controller_id: int
) -> int:
    """RegisterController for ``controller_id`` with ``caller``'s certificate; its error code."""
    credentials = channel_credentials(parse_tls_settings(caller))
    async with grpc.aio.secure_channel(f"127.0.0.1:{cluster.ports[node_id]}", credentials) as ch:
        answer = await bpb_grpc.BrokerLifecycleStub(ch).RegisterController(
            bpb.RegisterControllerRequest(
                controller_id=controller_id,
                cluster_id=cluster.cluster_id,
                incarnation_id=b"\x01" * 16,
                listeners=[bpb.Listener(name="KAFKA", host="attacker.example", port=9092)],
            ),
            timeout=CALL_TIMEOUT_S,
        )
    return int(answer.header.error_code)


async def create_topic(config: Mapping[str, str], name: str) -> ErrorCode:
    """CreateTopics of one topic with the client ``config``; its error code."""
    async with AsyncAdminClient(dict(config)) as admin:
        try:
            await admin.create_topics([NewTopic(name, 1, 1)])[name]
        except KafkaException as error:
            return error.code
    return ErrorCode.NONE


def test_every_door_names_the_caller_by_its_certificate(tmp_path: Path) -> None:
    # A static quorum: its controllers register their KAFKA listeners (KIP-919).
    cluster = DevCluster(tmp_path / "dev", free_base_port(), tls=True, kafka=True, brokers=1)
    cluster.prepare()
    operator = parse_properties(cluster.client_config.read_text())
    broker = certificate_properties(cluster.brokers[1].config)
    controller = certificate_properties(cluster.nodes[3001].config)
    intruder = parse_properties(client_properties(cluster, "intruder").read_text())
    grpc_door = {"bootstrap.servers": cluster.bootstrap_servers}
    kafka_door = {"bootstrap.controllers": cluster.kafka_bootstrap}
    directory = read_meta_properties(cluster.data_dir(3002) / "meta.properties").directory_id
    assert directory is not None
    cluster.start()
    try:
        leader = settled_quorum(cluster).leader
        assert leader is not None
        cluster.start_brokers()

        async def unfenced() -> bool:
            async with AsyncAdminClient({**grpc_door, **operator}) as admin:
                described = await admin.describe_cluster()
            return any(b.id == 1 and not b.fenced for b in described.brokers)

        # BrokerLifecycle: the broker's own certificate is all it needs to join.
        wait_until(lambda: asyncio.run(unfenced()), "broker 1 registered, unfenced", DEADLINE_S)

        async def doors() -> None:
            # Admin (gRPC) and the Kafka listener: a broker is no operator.
            for door in (grpc_door, kafka_door):
                refused = await create_topic({**door, **broker}, "from-a-broker")
                assert refused in (
                    ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                    ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                ), (door, refused)
            assert await create_topic({**grpc_door, **operator}, "over-grpc") is ErrorCode.NONE
            assert await create_topic({**kafka_door, **operator}, "over-kafka") is ErrorCode.NONE

            # BrokerLifecycle: a controller's registration is its own certificate's alone.
            for caller in (broker, operator):
                code = await register_controller(cluster, leader.node_id, caller, 3001)
                assert code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, code

            # Raft: a broker changes no voter; the operator and a controller may.
            upgrade = pb.UpdateKRaftVersionRequest(
                cluster_id=cluster.cluster_id,
                kraft_version=KRAFT_VERSION_DYNAMIC,
                validate_only=True,
                timeout_ms=5000,
            )
            remove = pb.RemoveRaftVoterRequest(
                cluster_id=cluster.cluster_id, voter_id=3002, voter_directory_id=directory
            )
            for request in (upgrade, remove):
                answer = await raft_change(cluster, leader.node_id, broker, request)
                assert answer.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, answer
                assert "User:broker-1" in answer.error_message
            for caller in (operator, controller):
                answer = await raft_change(cluster, leader.node_id, caller, upgrade)
                assert answer.error_code == ErrorCode.NONE, answer

            # Raft: the quorum is described to nodes and to those allowed DESCRIBE on it.
            described = await describe(cluster, leader.node_id, intruder)
            assert described == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            for caller in (operator, controller, broker):
                assert await describe(cluster, leader.node_id, caller) == ErrorCode.NONE

        asyncio.run(doors())
        info = settled_quorum(cluster)
        assert voter_ids(info) == VOTERS
        assert {topic for topic in topics(cluster, operator)} >= {"over-grpc", "over-kafka"}
        assert "from-a-broker" not in topics(cluster, operator)
    finally:
        cluster.stop()


def topics(cluster: DevCluster, operator: Mapping[str, str]) -> set[str]:
    config = cluster.root / "operator.properties"
    config.write_text(format_properties(dict(operator)))
    listed = subprocess.run(
        [
            sys.executable,
            "-m",
            "raftmeta",
            "topics",
            "--bootstrap-server",
            cluster.bootstrap_servers,
            "--command-config",
            str(config),
            "--list",
        ],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )
    assert listed.returncode == 0, listed.stderr
    return set(listed.stdout.split())


def test_without_an_authorizer_only_controllers_and_super_users_change_the_voters(
    tmp_path: Path,
) -> None:
    """No authorizer, as a cluster without one runs: every certificate the CA signed may do
    what the Admin service serves, but a voter change is a controller's or a super user's."""
    cluster = DevCluster(
        tmp_path / "dev",
        free_base_port(),
        {"authorizer.class.name": ""},
        tls=True,
        brokers=1,
        dynamic=True,
    )
    cluster.prepare()
    operator = parse_properties(cluster.client_config.read_text())
    controller = certificate_properties(cluster.nodes[3001].config)
    broker = certificate_properties(cluster.brokers[1].config)
    intruder = parse_properties(client_properties(cluster, "intruder").read_text())
    directory = read_meta_properties(cluster.data_dir(3002) / "meta.properties").directory_id
    assert directory is not None
    cluster.start()
    try:
        leader = settled_quorum(cluster).leader
        assert leader is not None

        async def changes() -> None:
            upgrade = pb.UpdateKRaftVersionRequest(
                cluster_id=cluster.cluster_id,
                kraft_version=KRAFT_VERSION_DYNAMIC,
                validate_only=True,
                timeout_ms=5000,
            )
            remove = pb.RemoveRaftVoterRequest(
                cluster_id=cluster.cluster_id, voter_id=3002, voter_directory_id=directory
            )
            for caller, name in ((broker, "User:broker-1"), (intruder, "User:CN=intruder")):
                for request in (upgrade, remove):
                    answer = await raft_change(cluster, leader.node_id, caller, request)
                    assert answer.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, answer
                    assert name in answer.error_message
            for caller in (operator, controller):
                answer = await raft_change(cluster, leader.node_id, caller, upgrade)
                assert answer.error_code == ErrorCode.NONE, answer

        asyncio.run(changes())
        assert voter_ids(settled_quorum(cluster)) == VOTERS
    finally:
        cluster.stop()
