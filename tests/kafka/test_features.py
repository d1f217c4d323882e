"""Feature levels and eligible leader replicas over the KAFKA listener, with kafka-python 3's
``KafkaAdminClient`` (``describe_features``, ``update_features``, ``describe_topic_partitions``)
and raw requests through the codec: what the clients read equals the committed image."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import TopicCollection
from confluent_kafka.admin import AdminClient
from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaError
from kafka.protocol.admin import DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from raftmeta.common.features import ELIGIBLE_LEADER_REPLICAS_VERSION, METADATA_VERSION
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server.kafka.cluster import LEADER_NOT_AVAILABLE
from tests.kafka.quorum import KafkaQuorum, kafka_quorum
from tests.support.waiting import wait_until

TIMEOUT_S = 15.0


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    root: Path = tmp_path_factory.mktemp("kafka-features")
    with kafka_quorum(root, brokers=3, extra_config={"min.insync.replicas": "2"}) as running:
        yield running


def kafka_python(quorum: KafkaQuorum) -> KafkaAdminClient:
    return KafkaAdminClient(
        bootstrap_servers=quorum.kafka_address(quorum.active()), request_timeout_ms=10_000
    )


def committed(quorum: KafkaQuorum) -> MetadataImage:
    controller = quorum.active().maybe_controller
    assert controller is not None
    return controller.committed_image


def exchange(address: str, frame: bytes) -> bytes:
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=TIMEOUT_S) as sock:
        sock.sendall(frame)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack_from(">i", data)[0]:
            chunk = sock.recv(65536)
            assert chunk, "the listener closed the connection"
            data += chunk
    return data[4:]


def raw_api_versions(address: str, version: int) -> ApiVersionsResponse:
    message = ApiVersionsRequest[version]()
    message.with_header(correlation_id=7, client_id="features-test")
    payload = exchange(address, bytes(message.encode(header=True, framed=True)))
    return ApiVersionsResponse.decode(payload, version=version, header=True)


def test_api_versions_carries_the_supported_and_finalized_feature_levels(
    quorum: KafkaQuorum,
) -> None:
    upgraded = quorum.grpc(
        "UpdateFeatures",
        apb.UpdateFeaturesRequest(
            feature_updates=[
                apb.FeatureUpdate(feature=METADATA_VERSION, max_version_level=27, upgrade_type=1)
            ]
        ),
    )
    assert upgraded.header.error_code == 0
    wait_until(
        lambda: all(
            node.maybe_controller is not None
            and node.maybe_controller.committed_image.features.get(METADATA_VERSION) == 27
            for node in quorum.quorum.controllers.values()
        ),
        "metadata.version 27 committed on every controller",
        TIMEOUT_S,
    )
    before = committed(quorum).offset
    admin = kafka_python(quorum)
    try:
        described = admin.describe_features()  # ApiVersions v4
    finally:
        admin.close()
    image = committed(quorum)
    assert described[METADATA_VERSION]["supported"] == (7, 27)
    assert described[ELIGIBLE_LEADER_REPLICAS_VERSION]["supported"] == (0, 1)
    finalized = {
        name: features["finalized"]
        for name, features in described.items()
        if "finalized" in features
    }
    assert finalized == {name: (level, level) for name, level in image.features.items() if level}
    assert finalized[METADATA_VERSION] == (27, 27)
    epochs = {
        features["finalized_epoch"] for features in described.values() if "finalized" in features
    }
    (epoch,) = epochs
    assert before <= epoch <= image.offset, "the epoch is the committed image's offset"

    # v3 cannot carry a supported range starting at 0, as in Kafka: that feature is left out.
    v3 = raw_api_versions(quorum.kafka_address(quorum.follower()), 3)
    assert {f.name: (f.min_version, f.max_version) for f in v3.supported_features} == {
        METADATA_VERSION: (7, 27)
    }
    assert v3.finalized_features_epoch >= 0
    assert {f.name for f in v3.finalized_features} == set(finalized)


def upgrade(quorum: KafkaQuorum, levels: dict[str, int]) -> None:
    """Finalizes ``levels`` over gRPC and waits until every controller has committed them."""
    upgraded = quorum.grpc(
        "UpdateFeatures",
        apb.UpdateFeaturesRequest(
            feature_updates=[
                apb.FeatureUpdate(feature=name, max_version_level=level, upgrade_type=1)
                for name, level in levels.items()
            ]
        ),
    )
    assert upgraded.header.error_code == 0, upgraded.header
    wait_until(
        lambda: all(
            node.maybe_controller is not None
            and all(
                node.maybe_controller.committed_image.features.get(name) == level
                for name, level in levels.items()
            )
            for node in quorum.quorum.controllers.values()
        ),
        f"{levels} committed on every controller",
        TIMEOUT_S,
    )


def test_update_features_with_kafka_python_equals_the_grpc_call(quorum: KafkaQuorum) -> None:
    upgrade(quorum, {METADATA_VERSION: 27})
    admin = kafka_python(quorum)
    try:
        checked = admin.update_features({ELIGIBLE_LEADER_REPLICAS_VERSION: 1}, validate_only=True)
        assert checked == {ELIGIBLE_LEADER_REPLICAS_VERSION: "OK"}
        assert committed(quorum).features.get(ELIGIBLE_LEADER_REPLICAS_VERSION, 0) == 0

        assert admin.update_features({ELIGIBLE_LEADER_REPLICAS_VERSION: 1}) == {
            ELIGIBLE_LEADER_REPLICAS_VERSION: "OK"
        }
        assert committed(quorum).features[ELIGIBLE_LEADER_REPLICAS_VERSION] == 1

        with pytest.raises(KafkaError) as refused:
            admin.update_features({METADATA_VERSION: 99})
    finally:
        admin.close()
    grpc = quorum.grpc(
        "UpdateFeatures",
        apb.UpdateFeaturesRequest(
            feature_updates=[
                apb.FeatureUpdate(feature=METADATA_VERSION, max_version_level=99, upgrade_type=1)
            ]
        ),
    )
    assert grpc.header.error_code != 0
    assert refused.value.errno == grpc.header.error_code
    assert grpc.header.error_message in str(refused.value)
    assert committed(quorum).features[METADATA_VERSION] == 27


def describe_partitions(
    quorum: KafkaQuorum, topics: list[str], limit: int = 2000, cursor: dict[str, Any] | None = None
) -> dict[str, Any]:
    admin = kafka_python(quorum)
    try:
        answer: dict[str, Any] = admin.describe_topic_partitions(topics, limit, cursor)
    finally:
        admin.close()
    return answer


def test_describe_topic_partitions_pages_with_a_cursor(quorum: KafkaQuorum) -> None:
    quorum.call(quorum.quorum.create_topic("paged-a", 1, 1))
    quorum.call(quorum.quorum.create_topic("paged-b", 5, 1))
    quorum.wait_for_topic_everywhere("paged-a")
    quorum.wait_for_topic_everywhere("paged-b")
    pages: list[list[tuple[str, int]]] = []
    cursor = None
    while True:
        answer = describe_partitions(quorum, ["paged-b", "paged-a"], limit=2, cursor=cursor)
        pages.append(
            [(t["name"], p["partition_index"]) for t in answer["topics"] for p in t["partitions"]]
        )
        cursor = answer["next_cursor"]
        if cursor is None or len(pages) > 5:
            break
    assert pages == [
        [("paged-a", 0), ("paged-b", 0)],
        [("paged-b", 1), ("paged-b", 2)],
        [("paged-b", 3), ("paged-b", 4)],
    ]

    # confluent-kafka 2.16's describe_topics agrees (librdkafka 2.16 sends Metadata v12 for it).
    client = AdminClient({"bootstrap.servers": quorum.kafka_address(quorum.active())})
    futures = client.describe_topics(TopicCollection(["paged-b"]), request_timeout=TIMEOUT_S)
    seen = futures["paged-b"].result(TIMEOUT_S)
    image = committed(quorum)
    topic = image.topic_by_name("paged-b")
    assert topic is not None
    assert [
        (p.id, p.leader.id if p.leader else -1, [r.id for r in p.replicas], [r.id for r in p.isr])
        for p in seen.partitions
    ] == [
        (index, partition.leader, list(partition.replicas), list(partition.isr))
        for index, partition in sorted(topic.partitions.items())
    ]

    # Every topic (an empty list) in one page; an unknown topic named gets its error.
    everything = describe_partitions(quorum, [])
    assert {"paged-a", "paged-b"} <= {t["name"] for t in everything["topics"]}
    assert everything["next_cursor"] is None
    (unknown,) = describe_partitions(quorum, ["no-such-topic"])["topics"]
    assert unknown["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert unknown["partitions"] == []

    # A cursor on a topic the request does not name is refused, as Kafka refuses it.
    message = DescribeTopicPartitionsRequest[0](
        topics=[DescribeTopicPartitionsRequest.TopicRequest(name="paged-a")],
        response_partition_limit=10,
        cursor=DescribeTopicPartitionsRequest.Cursor(topic_name="paged-b", partition_index=0),
    )
    message.with_header(correlation_id=3, client_id="features-test")
    payload = exchange(
        quorum.kafka_address(quorum.active()), bytes(message.encode(header=True, framed=True))
    )
    refused = DescribeTopicPartitionsResponse.decode(payload, version=0, header=True)
    assert [(t.name, t.error_code) for t in refused.topics] == [
        ("paged-a", ErrorCode.INVALID_REQUEST)
    ]


def test_describe_topic_partitions_carries_the_eligible_leader_replicas(
    quorum: KafkaQuorum,
) -> None:
    upgrade(quorum, {METADATA_VERSION: 27, ELIGIBLE_LEADER_REPLICAS_VERSION: 1})
    topic_id = quorum.call(quorum.quorum.create_topic("guarded", 1, 3))
    # Stop every replica cleanly, one by one: with min.insync.replicas=2 the ones that leave
    # the ISR below it become the ELR, the last one also the last known ELR (KIP-966).
    for broker_id in sorted(quorum.quorum.brokers):
        broker = quorum.quorum.brokers.pop(broker_id)
        assert quorum.call(broker.controlled_shutdown(timeout_s=TIMEOUT_S))
        quorum.call(broker.stop())

        def out(broker_id: int = broker_id) -> bool:
            partition = committed(quorum).partition(topic_id, 0)
            return partition is not None and (
                broker_id not in partition.isr or partition.leader == -1
            )

        wait_until(out, f"broker {broker_id} out of the ISR", TIMEOUT_S)
    quorum.wait_for_topic_everywhere("guarded")
    drained = committed(quorum).partition(topic_id, 0)
    assert drained is not None and drained.leader == -1
    assert len(drained.elr) == 2 and len(drained.last_known_elr) == 1

    def described() -> dict[str, Any] | None:
        (topic,) = describe_partitions(quorum, ["guarded"])["topics"]
        (partition,) = topic["partitions"]
        return partition if partition["eligible_leader_replicas"] else None

    partition = wait_until(described, "the ELR described", TIMEOUT_S)
    assert partition["error_code"] == LEADER_NOT_AVAILABLE
    assert partition["leader_id"] == -1 and partition["isr_nodes"] == []
    assert sorted(partition["eligible_leader_replicas"]) == sorted(drained.elr)
    assert partition["last_known_elr"] == list(drained.last_known_elr)
    assert sorted(partition["offline_replicas"]) == sorted(drained.replicas)
