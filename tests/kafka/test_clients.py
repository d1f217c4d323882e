"""Real, unmodified Kafka admin clients from the package index (kafka-python's
``KafkaAdminClient`` and confluent-kafka's ``AdminClient``) against the KAFKA listener of a
real three-controller quorum with three brokers, each answer compared with the gRPC Admin
service's for the same state."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import ElectionType, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from kafka.admin import KafkaAdminClient
from kafka.admin import NewTopic as KpNewTopic
from kafka.errors import TopicAlreadyExistsError

from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import broker_pb2 as bpb
from tests.kafka.quorum import KafkaQuorum, kafka_quorum
from tests.support.waiting import wait_until

TIMEOUT_S = 15.0


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    root: Path = tmp_path_factory.mktemp("kafka-clients")
    with kafka_quorum(root, brokers=3) as running:
        yield running


def confluent(quorum: KafkaQuorum) -> AdminClient:
    return AdminClient({"bootstrap.servers": quorum.kafka_address(quorum.active())})


def kafka_python(quorum: KafkaQuorum) -> KafkaAdminClient:
    return KafkaAdminClient(
        bootstrap_servers=quorum.kafka_address(quorum.active()), request_timeout_ms=10_000
    )


def confluent_errors(futures: Mapping[str, Future[Any]]) -> dict[str, int]:
    codes = {}
    for name, future in futures.items():
        try:
            future.result(TIMEOUT_S)
            codes[name] = 0
        except KafkaException as error:
            codes[name] = error.args[0].code()
    return codes


def grpc_topic(quorum: KafkaQuorum, name: str) -> apb.TopicDescription:
    described = quorum.grpc("DescribeTopics", apb.DescribeTopicsRequest(topic_names=[name]))
    (topic,) = described.topics
    assert isinstance(topic, apb.TopicDescription)
    return topic


def test_confluent_create_topics_and_its_errors(quorum: KafkaQuorum) -> None:
    admin = confluent(quorum)
    codes = confluent_errors(
        admin.create_topics(
            [
                NewTopic("orders", num_partitions=3, replication_factor=2),
                NewTopic("too-wide", num_partitions=1, replication_factor=5),
            ],
            operation_timeout=10,
        )
    )
    assert codes == {"orders": 0, "too-wide": int(ErrorCode.INVALID_REPLICATION_FACTOR)}
    assert len(grpc_topic(quorum, "orders").partitions) == 3
    assert grpc_topic(quorum, "too-wide").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    again = confluent_errors(admin.create_topics([NewTopic("orders", 1, 1)]))
    assert again == {"orders": int(ErrorCode.TOPIC_ALREADY_EXISTS)}

    checked = confluent_errors(admin.create_topics([NewTopic("dry-run", 2, 1)], validate_only=True))
    assert checked == {"dry-run": 0}
    assert grpc_topic(quorum, "dry-run").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_kafka_python_create_topics_and_topic_already_exists(quorum: KafkaQuorum) -> None:
    admin = kafka_python(quorum)
    try:
        created = admin.create_topics([KpNewTopic("payments", 2, 2)])
        (result,) = created["topics"]
        assert result["error_code"] == 0
        topic = grpc_topic(quorum, "payments")
        assert result["topic_id"].replace("-", "") == topic.topic_id.hex()
        with pytest.raises(TopicAlreadyExistsError):
            admin.create_topics([KpNewTopic("payments", 2, 2)])
    finally:
        admin.close()


def test_describe_cluster_and_topics_match_the_grpc_answers(quorum: KafkaQuorum) -> None:
    quorum.grpc(
        "CreateTopics",
        apb.CreateTopicsRequest(
            topics=[apb.NewTopic(name="described", num_partitions=3, replication_factor=3)]
        ),
    )
    quorum.wait_for_topic_everywhere("described")  # kafka-python may ask any controller
    expected = quorum.grpc("DescribeCluster", apb.DescribeClusterRequest())
    # KIP-919: to a client bootstrapped to the controllers, the controllers are the nodes.
    controllers = quorum.kafka_addresses()

    admin = kafka_python(quorum)
    try:
        cluster = admin.describe_cluster()
        assert cluster["cluster_id"] == expected.cluster_id
        assert cluster["controller_id"] == quorum.active().node_id
        assert {
            b["broker_id"]: f"{b['host']}:{b['port']}" for b in cluster["brokers"]
        } == controllers
        (topic,) = admin.describe_topics(["described"])
    finally:
        admin.close()
    grpc = grpc_topic(quorum, "described")
    assert topic["topic_id"].replace("-", "") == grpc.topic_id.hex()
    assert [
        (p["partition_index"], p["leader_id"], p["replica_nodes"], p["isr_nodes"])
        for p in sorted(topic["partitions"], key=lambda p: p["partition_index"])
    ] == [(p.partition_index, p.leader_id, list(p.replicas), list(p.isr)) for p in grpc.partitions]

    client = confluent(quorum)  # kept alive until its future is done
    described = client.describe_cluster().result(TIMEOUT_S)
    assert described.cluster_id == expected.cluster_id
    # librdkafka describes the cluster from Metadata, whose nodes are the Kafka-speaking ones:
    # the controllers on their KAFKA listeners, the active one named as the controller.
    assert described.controller.id == quorum.active().node_id
    assert {node.id: f"{node.host}:{node.port}" for node in described.nodes} == controllers


def test_elect_leaders_preferred_per_partition_equals_the_grpc_result(
    quorum: KafkaQuorum,
) -> None:
    """Broker 1 stops: the partitions it led move away and it leaves their ISRs, so a
    PREFERRED election finds some partitions without their preferred leader and the others
    already led by it. Each client's per-partition code equals the gRPC one for that state."""
    quorum.grpc(
        "CreateTopics",
        apb.CreateTopicsRequest(
            topics=[apb.NewTopic(name="elected", num_partitions=3, replication_factor=2)]
        ),
    )
    asked = [("elected", 0), ("elected", 1), ("elected", 2), ("elected", 7)]
    quorum.call(quorum.quorum.brokers[1].stop())
    try:
        wait_until(lambda: 1 not in quorum.unfenced(), "broker 1 to be fenced", TIMEOUT_S)
        expected = quorum.grpc_elect(0, asked)
        assert set(expected.values()) >= {
            int(ErrorCode.ELECTION_NOT_NEEDED),
            int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        }
        assert set(expected.values()) - {
            int(ErrorCode.ELECTION_NOT_NEEDED),
            int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        }, expected  # at least one partition whose preferred leader is broker 1

        client = confluent(quorum)
        result = client.elect_leaders(
            ElectionType.PREFERRED, [TopicPartition(t, p) for t, p in asked]
        ).result(TIMEOUT_S)
        seen = {
            (tp.topic, tp.partition): 0 if error is None else error.code()
            for tp, error in result.items()
        }
        assert seen == expected

        admin = kafka_python(quorum)
        try:
            response = admin.elect_leaders(0, {"elected": [0, 1, 2, 7]}, raise_errors=False)
        finally:
            admin.close()
        assert {
            (result.topic, partition.partition_id): partition.error_code
            for result in response.replica_election_results
            for partition in result.partition_result
        } == expected
    finally:
        quorum.call(quorum.quorum.start_broker(1))


def test_a_registration_for_an_id_that_is_not_a_voter_is_refused_over_grpc(
    quorum: KafkaQuorum,
) -> None:
    request = bpb.RegisterControllerRequest(
        controller_id=7,
        cluster_id=quorum.active().node.cluster_id,
        incarnation_id=bytes(16),
        listeners=[bpb.Listener(name="KAFKA", host="6.6.6.6", port=9092)],
    )
    response = quorum.call(
        quorum.quorum.channel.call("BrokerLifecycle/RegisterController", request)
    )
    assert response.header.error_code == ErrorCode.INVALID_REGISTRATION
    assert "not a voter" in response.header.error_message
    assert "\n" not in response.header.error_message
    assert 7 not in quorum.active().controller.committed_image.controllers
