"""DescribeQuorum on the KAFKA listener: the leader's view, equal to the gRPC answer; a
controller that does not lead answers NOT_LEADER_OR_FOLLOWER on the partition, naming the
leader; a request for another partition is INVALID_REQUEST. Raw requests (every version) and
kafka-python's ``describe_metadata_quorum``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka.admin import KafkaAdminClient
from kafka.protocol.admin import DescribeQuorumRequest, DescribeQuorumResponse

from raftmeta.errors import ErrorCode
from raftmeta.rpc import raft_pb2 as rpb
from tests.kafka.quorum import KafkaQuorum, kafka_quorum
from tests.kafka.test_wire import connect, read_response, request

METADATA = "__cluster_metadata"


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    root: Path = tmp_path_factory.mktemp("kafka-quorum")
    with kafka_quorum(root, brokers=2) as running:
        yield running


def ask(address: str, version: int, topic: str = METADATA, partition: int = 0) -> Any:
    message = DescribeQuorumRequest(
        version=version,
        topics=[
            DescribeQuorumRequest.TopicData(
                topic_name=topic,
                partitions=[
                    DescribeQuorumRequest.TopicData.PartitionData(partition_index=partition)
                ],
            )
        ],
    )
    with connect(address) as sock:
        sock.sendall(request(message, 3))
        payload = read_response(sock)
    assert payload is not None, "the listener answered"
    return DescribeQuorumResponse.decode(payload, version=version, header=True)


def grpc_quorum(quorum: KafkaQuorum) -> rpb.DescribeQuorumResponse:
    described = quorum.grpc("DescribeQuorum", rpb.DescribeQuorumRequest())
    assert isinstance(described, rpb.DescribeQuorumResponse) and described.error_code == 0
    return described


@pytest.mark.parametrize("version", [0, 1, 2])
def test_the_leader_describes_the_quorum_as_the_grpc_call_does(
    quorum: KafkaQuorum, version: int
) -> None:
    active = quorum.active()
    before = grpc_quorum(quorum)
    answer = ask(quorum.kafka_address(active), version)
    after = grpc_quorum(quorum)
    assert answer.error_code == 0
    ((topic_name, partition),) = [(t.topic_name, p) for t in answer.topics for p in t.partitions]
    assert (topic_name, partition.partition_index, partition.error_code) == (METADATA, 0, 0)
    assert (partition.leader_id, partition.leader_epoch) == (before.leader_id, before.leader_epoch)
    assert before.high_watermark <= partition.high_watermark <= after.high_watermark
    assert sorted(v.replica_id for v in partition.current_voters) == sorted(
        v.replica_id for v in before.voters
    )
    assert sorted(o.replica_id for o in partition.observers) == sorted(
        o.replica_id for o in before.observers
    )
    leader_state = next(v for v in partition.current_voters if v.replica_id == active.node_id)
    assert leader_state.log_end_offset >= partition.high_watermark
    if version >= 1:  # the followers' last fetch, in wall-clock ms as the gRPC call gives it
        earlier = {v.replica_id: v.last_fetch_timestamp for v in before.voters}
        fetched = {
            v.replica_id: v.last_fetch_timestamp
            for v in partition.current_voters
            if v.replica_id != active.node_id
        }
        # Converted from the monotonic clock at each answer, so they may differ by a few ms.
        assert fetched and all(abs(earlier[i] - fetched[i]) < 10_000 for i in fetched), (
            earlier,
            fetched,
        )
    if version >= 2:
        listeners = {
            n.node_id: {(e.name, e.host, e.port) for e in n.listeners} for n in answer.nodes
        }
        for node_id, address in quorum.kafka_addresses().items():
            host, port = address.rsplit(":", 1)
            assert ("KAFKA", host, int(port)) in listeners[node_id]


def test_a_standby_answers_not_leader_or_follower_naming_the_leader(quorum: KafkaQuorum) -> None:
    answer = ask(quorum.kafka_address(quorum.follower()), 2)
    assert answer.error_code == 0
    ((partition,),) = [t.partitions for t in answer.topics]
    assert partition.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert partition.leader_id == quorum.active().node_id
    assert partition.current_voters == []


def test_another_partition_is_an_invalid_request(quorum: KafkaQuorum) -> None:
    address = quorum.kafka_address(quorum.active())
    assert ask(address, 1, topic="orders").error_code == ErrorCode.INVALID_REQUEST
    assert ask(address, 2, partition=1).error_code == ErrorCode.INVALID_REQUEST


def test_kafka_python_describe_metadata_quorum(quorum: KafkaQuorum) -> None:
    """kafka-python sends DescribeQuorum to whichever controller it holds a connection to: the
    leader answers its view, a standby NOT_LEADER_OR_FOLLOWER (kafka-python puts that in the
    partition's ``error``)."""
    active_id = quorum.active().node_id
    voters = sorted(v.replica_id for v in grpc_quorum(quorum).voters)
    for address in quorum.kafka_addresses().values():
        admin = KafkaAdminClient(bootstrap_servers=address, request_timeout_ms=10_000)
        try:
            described = admin.describe_metadata_quorum()
        finally:
            admin.close()
        ((partition,),) = [t["partitions"] for t in described["topics"]]
        assert partition["leader_id"] == active_id
        if partition["error"] is None:
            assert sorted(v["replica_id"] for v in partition["current_voters"]) == voters
        else:
            assert "NOT_LEADER_OR_FOLLOWER" in partition["error"], partition
