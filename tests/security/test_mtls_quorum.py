"""A three-controller quorum with mutual TLS on real gRPC servers on 127.0.0.1, and the
identity rule on every Raft and BrokerLifecycle call.

Controllers 3000-3002 present ``CN=controller-<id>`` certificates, brokers ``CN=broker-<id>``,
the admin channel ``CN=admin``, all from one test CA. Each forged call is sent with a real
certificate over a real TLS connection; the rule answers CLUSTER_AUTHORIZATION_FAILED (31)
and the quorum keeps its leader and its epoch.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any

import grpc
import pytest

from raftmeta.broker import BrokerState
from raftmeta.channel import ControllerChannel
from raftmeta.cli.main import main
from raftmeta.config.node import parse_config
from raftmeta.errors import ErrorCode
from raftmeta.rpc import broker_pb2 as bpb
from raftmeta.rpc import broker_pb2_grpc as bpb_grpc
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from raftmeta.security.credentials import channel_credentials
from raftmeta.security.tls import parse_tls_settings
from raftmeta.server.controller_node import ControllerNode
from raftmeta.storage import MetadataDir
from tests.security.support import TestPki
from tests.support.broker_quorum import CLUSTER_ID, CONTROLLER_IDS, BrokerQuorum, Timings
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async

CALL_TIMEOUT_S = 10.0
SLOW = Timings(
    raft=dataclasses.replace(Timings().raft, election_timeout_ms=300, fetch_timeout_ms=1500),
    heartbeat_ms=200,
    session_timeout_ms=5000,
)
"""A leader that stays put on a loaded machine, so an unchanged epoch means the rule held."""


class TlsBrokerQuorum(BrokerQuorum):
    """``BrokerQuorum`` whose controllers serve SSL with client certificates required."""

    def __init__(self, root: Path, pki: TestPki) -> None:
        super().__init__(root, timings=SLOW)
        self.pki = pki

    def _config(self, node_id: int) -> Any:
        base = super()._config(node_id)
        return parse_config(
            {
                **base.originals,
                "listener.security.protocol.map": "CONTROLLER:SSL",
                **self.pki.properties(f"controller-{node_id}"),
            }
        )

    @property
    def channel(self) -> ControllerChannel:
        if self._channel is None:
            self._channel = ControllerChannel(
                self.bootstrap_servers,
                request_timeout_ms=10_000,
                tls=parse_tls_settings(self.pki.properties("admin")),
            )
        return self._channel


def _run(scenario: Callable[[TlsBrokerQuorum], Coroutine[Any, Any, None]], root: Path) -> None:
    pki = TestPki.create(root / "pki")
    run_scenario(scenario, TlsBrokerQuorum(root, pki))


async def _leader(quorum: TlsBrokerQuorum) -> ControllerNode:
    def found() -> bool:
        return any(
            node.maybe_controller is not None and node.maybe_controller.is_active
            for node in quorum.controllers.values()
        )

    await wait_until_async(found, "an active controller", 15.0)
    return next(
        node
        for node in quorum.controllers.values()
        if node.maybe_controller is not None and node.maybe_controller.is_active
    )


def _channel(target: str, properties: Mapping[str, str] | None) -> grpc.aio.Channel:
    if properties is None:
        return grpc.aio.insecure_channel(target)
    credentials = channel_credentials(parse_tls_settings(properties))
    return grpc.aio.secure_channel(target, credentials)


async def _test_a_mtls_quorum_elects_commits_and_a_broker_with_its_certificate_follows(
    quorum: TlsBrokerQuorum,
) -> None:
    pki = quorum.pki
    await _leader(quorum)
    settings = dataclasses.replace(
        quorum.broker_settings(1), tls=parse_tls_settings(pki.properties("broker-1"))
    )
    MetadataDir.format(settings.data_dir, 1, CLUSTER_ID)
    broker = await _start(quorum, settings)
    await wait_until_async(
        lambda: broker.state is BrokerState.RUNNING, "broker 1 running (unfenced)", 15.0
    )
    await quorum.create_topic("encrypted", 3, 1)
    await quorum.wait_for_image(broker)
    assert "encrypted" in {topic.name for topic in broker.image.topics.values()}


async def _start(quorum: TlsBrokerQuorum, settings: Any) -> Any:
    from raftmeta.broker import Broker

    broker = Broker(settings)
    await broker.start()
    quorum.brokers[settings.broker_id] = broker
    return broker


async def _refused_at_the_handshake(quorum: TlsBrokerQuorum, tmp_path: Path) -> None:
    leader = await _leader(quorum)
    stranger = TestPki.create(tmp_path / "stranger", "another CA")
    for client in (None, stranger.properties("controller-3001")):
        async with _channel(leader.address, client) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await pb_grpc.RaftStub(channel).DescribeQuorum(
                    pb.DescribeQuorumRequest(), timeout=CALL_TIMEOUT_S
                )
            assert raised.value.code() is grpc.StatusCode.UNAVAILABLE


async def _test_voter_calls_from_a_broker_certificate_are_refused(quorum: TlsBrokerQuorum) -> None:
    pki = quorum.pki
    leader = await _leader(quorum)
    epoch = leader.node.core.epoch
    follower_id = next(n for n in CONTROLLER_IDS if n != leader.node_id)
    async with _channel(leader.address, pki.properties("broker-1")) as channel:
        stub = pb_grpc.RaftStub(channel)
        vote = await stub.Vote(
            pb.VoteRequest(
                cluster_id=CLUSTER_ID,
                candidate_epoch=epoch + 1,
                candidate_id=follower_id,
                last_offset_epoch=epoch,
                last_offset=10**9,
            ),
            timeout=CALL_TIMEOUT_S,
        )
        begin = await stub.BeginQuorumEpoch(
            pb.BeginQuorumEpochRequest(
                cluster_id=CLUSTER_ID, leader_id=follower_id, leader_epoch=epoch + 1
            ),
            timeout=CALL_TIMEOUT_S,
        )
        end = await stub.EndQuorumEpoch(
            pb.EndQuorumEpochRequest(
                cluster_id=CLUSTER_ID,
                leader_id=leader.node_id,
                leader_epoch=epoch,
                preferred_successors=[follower_id],
            ),
            timeout=CALL_TIMEOUT_S,
        )
    for response in (vote, begin, end):
        assert response.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, response
    assert not vote.vote_granted
    assert leader.node.core.leader_id == leader.node_id
    assert leader.node.core.epoch == epoch


async def _test_a_controller_certificate_may_not_fetch_or_vote_as_another_voter(
    quorum: TlsBrokerQuorum,
) -> None:
    pki = quorum.pki
    leader = await _leader(quorum)
    epoch = leader.node.core.epoch
    impostor, victim = (n for n in CONTROLLER_IDS if n != leader.node_id)
    async with _channel(leader.address, pki.properties(f"controller-{impostor}")) as channel:
        stub = pb_grpc.RaftStub(channel)
        fetch = await stub.Fetch(
            pb.FetchRequest(
                cluster_id=CLUSTER_ID,
                replica_id=victim,
                current_leader_epoch=epoch,
                fetch_offset=0,
                last_fetched_epoch=0,
                max_wait_ms=0,
                max_bytes=1024,
            ),
            timeout=CALL_TIMEOUT_S,
        )
        vote = await stub.Vote(
            pb.VoteRequest(
                cluster_id=CLUSTER_ID,
                candidate_epoch=epoch + 1,
                candidate_id=victim,
                last_offset_epoch=epoch,
                last_offset=10**9,
            ),
            timeout=CALL_TIMEOUT_S,
        )
    assert fetch.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, fetch
    assert not fetch.records
    assert vote.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, vote
    assert leader.node.core.epoch == epoch


async def _test_a_broker_certificate_may_fetch_as_itself_but_not_as_a_voter_or_another_broker(
    quorum: TlsBrokerQuorum,
) -> None:
    pki = quorum.pki
    leader = await _leader(quorum)
    epoch = leader.node.core.epoch

    def fetch(replica_id: int) -> pb.FetchRequest:
        return pb.FetchRequest(
            cluster_id=CLUSTER_ID,
            replica_id=replica_id,
            current_leader_epoch=epoch,
            fetch_offset=0,
            last_fetched_epoch=0,
            max_wait_ms=0,
            max_bytes=1024,
        )

    async with _channel(leader.address, pki.properties("broker-7")) as channel:
        stub = pb_grpc.RaftStub(channel)
        as_itself = await stub.Fetch(fetch(7), timeout=CALL_TIMEOUT_S)
        as_voter = await stub.Fetch(fetch(leader.node_id), timeout=CALL_TIMEOUT_S)
        as_other = await stub.Fetch(fetch(8), timeout=CALL_TIMEOUT_S)
    assert as_itself.error_code == ErrorCode.NONE, as_itself
    assert as_voter.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, as_voter
    assert as_other.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, as_other


async def _test_broker_lifecycle_calls_only_from_the_broker_they_name(
    quorum: TlsBrokerQuorum,
) -> None:
    pki = quorum.pki
    leader = await _leader(quorum)

    def register(broker_id: int) -> bpb.RegisterBrokerRequest:
        return bpb.RegisterBrokerRequest(
            broker_id=broker_id,
            cluster_id=CLUSTER_ID,
            incarnation_id=uuid.uuid4().bytes,
            listeners=[bpb.Listener(name="PLAINTEXT", host="127.0.0.1", port=9092)],
        )

    async with _channel(leader.address, pki.properties("broker-5")) as channel:
        stub = bpb_grpc.BrokerLifecycleStub(channel)
        other = await stub.RegisterBroker(register(66), timeout=CALL_TIMEOUT_S)
        unregister = await stub.UnregisterBroker(
            bpb.UnregisterBrokerRequest(broker_id=6), timeout=CALL_TIMEOUT_S
        )
        own = await stub.RegisterBroker(register(5), timeout=CALL_TIMEOUT_S)
    async with _channel(leader.address, pki.properties("controller-3000")) as channel:
        stub = bpb_grpc.BrokerLifecycleStub(channel)
        from_controller = await stub.RegisterBroker(register(5), timeout=CALL_TIMEOUT_S)
    for refused in (other, unregister, from_controller):
        assert refused.header.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, refused
    assert own.header.error_code == ErrorCode.NONE, own
    assert own.broker_epoch >= 0


def test_a_mtls_quorum_elects_commits_and_a_broker_with_its_certificate_follows(
    tmp_path: Path,
) -> None:
    _run(_test_a_mtls_quorum_elects_commits_and_a_broker_with_its_certificate_follows, tmp_path)


def test_plaintext_and_foreign_certificates_are_refused_at_the_handshake(tmp_path: Path) -> None:
    _run(lambda quorum: _refused_at_the_handshake(quorum, tmp_path), tmp_path)


def test_voter_calls_from_a_broker_certificate_are_refused(tmp_path: Path) -> None:
    _run(_test_voter_calls_from_a_broker_certificate_are_refused, tmp_path)


def test_a_controller_certificate_may_not_fetch_or_vote_as_another_voter(tmp_path: Path) -> None:
    _run(_test_a_controller_certificate_may_not_fetch_or_vote_as_another_voter, tmp_path)


def test_a_broker_certificate_may_fetch_as_itself_but_not_as_a_voter_or_another_broker(
    tmp_path: Path,
) -> None:
    _run(
        _test_a_broker_certificate_may_fetch_as_itself_but_not_as_a_voter_or_another_broker,
        tmp_path,
    )


def test_broker_lifecycle_calls_only_from_the_broker_they_name(tmp_path: Path) -> None:
    _run(_test_broker_lifecycle_calls_only_from_the_broker_they_name, tmp_path)


async def _admin_cli_creates_a_topic(quorum: TlsBrokerQuorum, tmp_path: Path) -> None:
    pki = quorum.pki
    await _leader(quorum)
    settings = dataclasses.replace(
        quorum.broker_settings(1), tls=parse_tls_settings(pki.properties("broker-1"))
    )
    MetadataDir.format(settings.data_dir, 1, CLUSTER_ID)
    broker = await _start(quorum, settings)
    await wait_until_async(
        lambda: broker.state is BrokerState.RUNNING, "broker 1 running (unfenced)", 15.0
    )
    secure = tmp_path / "client-ssl.properties"
    lines = {"security.protocol": "SSL", **pki.properties("admin"), "request.timeout.ms": "5000"}
    secure.write_text("".join(f"{key}={value}\n" for key, value in lines.items()))
    plain = tmp_path / "client-plain.properties"
    plain.write_text("request.timeout.ms=2000\ndefault.api.timeout.ms=2000\n")
    servers = quorum.bootstrap_servers

    def topics(config: Path, name: str) -> int:
        create = ["--create", "--topic", name, "--command-config", str(config)]
        return main(["topics", "--bootstrap-server", servers, *create])

    assert await asyncio.to_thread(topics, plain, "refused") != 0
    assert await asyncio.to_thread(topics, secure, "over-tls") == 0
    await quorum.wait_for_image(broker)
    names = {topic.name for topic in broker.image.topics.values()}
    assert "over-tls" in names and "refused" not in names


def test_the_admin_cli_with_ssl_keys_in_its_client_properties_creates_a_topic(
    tmp_path: Path,
) -> None:
    _run(lambda quorum: _admin_cli_creates_a_topic(quorum, tmp_path), tmp_path)
