"""A broker of a dynamic quorum (KIP-853) configured with ``controller.quorum.bootstrap.servers``
only, as Kafka's brokers are: it learns the voters from the quorum and follows them as they
change. Real ``raftmeta serve`` controllers under a writer and a ``raftmeta broker`` process:
the broker keeps following the log after a controller joins, a first voter is removed and its
process is gone. Node ids stay unique across the cluster: the quorum refuses a broker
registration under a voter's id (INVALID_REGISTRATION) and AddRaftVoter of a registered
broker's id (INVALID_REQUEST)."""

from __future__ import annotations

import uuid
from pathlib import Path

import grpc

from raftmeta.admin.quorum import QuorumInfo
from raftmeta.config.properties import format_properties
from raftmeta.devkit.cluster import BrokerProcess, broker_properties
from raftmeta.errors import ErrorCode
from raftmeta.rpc import broker_pb2 as bpb
from raftmeta.rpc import broker_pb2_grpc as bpb_grpc
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from tests.admin.brokers import SUPPORTED_BY_THIS_BUILD
from tests.process.membership_changes import DynamicQuorum, dynamic_quorum
from tests.support.waiting import wait_until

BROKER_ID = 1


def observer_end(info: QuorumInfo, node_id: int) -> int:
    return next((o.log_end_offset for o in info.observers if o.node_id == node_id), -1)


def leader_address(quorum: DynamicQuorum) -> str:
    info = quorum.wait_for(lambda info: info.leader is not None, "a leader")
    return f"127.0.0.1:{quorum.cluster.ports[info.leader_id]}"


def register_broker_as(quorum: DynamicQuorum, broker_id: int) -> bpb.RegisterBrokerResponse:
    request = bpb.RegisterBrokerRequest(
        broker_id=broker_id,
        cluster_id=quorum.cluster_id,
        incarnation_id=uuid.uuid4().bytes,
        features=SUPPORTED_BY_THIS_BUILD,
    )
    with grpc.insecure_channel(leader_address(quorum)) as channel:
        answer = bpb_grpc.BrokerLifecycleStub(channel).RegisterBroker(request, timeout=10)
    assert isinstance(answer, bpb.RegisterBrokerResponse)
    return answer


def add_voter_as(quorum: DynamicQuorum, node_id: int) -> pb.VoterChangeResponse:
    voter = pb.Voter(
        voter_id=node_id,
        directory_id="AAAAAAAAAAAAAAAAAAAAAA",
        endpoints=[pb.Endpoint(name="CONTROLLER", host="127.0.0.1", port=1)],
    )
    request = pb.AddRaftVoterRequest(cluster_id=quorum.cluster_id, timeout_ms=500, voter=voter)
    with grpc.insecure_channel(leader_address(quorum)) as channel:
        answer = pb_grpc.RaftStub(channel).AddRaftVoter(request, timeout=10)
    assert isinstance(answer, pb.VoterChangeResponse)
    return answer


def test_a_broker_given_bootstrap_servers_follows_the_voters_as_they_change(
    tmp_path: Path,
) -> None:
    with dynamic_quorum(tmp_path) as quorum:
        properties = broker_properties(
            BROKER_ID,
            quorum.first_ports,
            tmp_path / "broker-1",
            quorum.cluster_id,
            None,
            dynamic=True,
        )
        assert "controller.quorum.voters" not in properties
        config = tmp_path / "broker-1.properties"
        config.write_text(format_properties(properties))
        broker = BrokerProcess(BROKER_ID, config, tmp_path / "broker-1.log")
        quorum.start_all()
        broker.start()
        try:
            quorum.wait_for(
                lambda info: (
                    info.leader is not None
                    and observer_end(info, BROKER_ID) >= info.high_watermark > 0
                ),
                "the broker to follow the log",
            )
            refused = register_broker_as(quorum, 3001)
            assert refused.header.error_code == ErrorCode.INVALID_REGISTRATION, refused
            assert "voter" in refused.header.error_message
            # Once broker 1's registration committed, its id cannot become a voter's.
            wait_until(
                lambda: add_voter_as(quorum, BROKER_ID).error_code == ErrorCode.INVALID_REQUEST,
                "AddRaftVoter of the broker's id to be refused",
                30.0,
            )
            quorum.new_controller(3003)
            quorum.start(3003)
            added = quorum.add_controller(3003)
            assert added.returncode == 0, added.stderr
            removed = quorum.remove_controller(3000, quorum.directory_id(3000))
            assert removed.returncode == 0, removed.stderr
            quorum.nodes[3000].kill()
            after = quorum.wait_for(
                lambda info: {v.node_id for v in info.voters} == {3001, 3002, 3003},
                "voters 3001-3003",
            )
            # The broker follows the new leader and voters: its log end passes what was
            # committed once the first voter was gone.
            quorum.wait_for(
                lambda info: observer_end(info, BROKER_ID) > after.high_watermark,
                "the broker to follow the changed quorum",
            )
            assert broker.running, broker.log_tail()
            assert "Traceback" not in (tmp_path / "broker-1.log").read_text()
        finally:
            broker.signal(15)
            broker.wait(30)
            if broker.running:
                broker.kill()
