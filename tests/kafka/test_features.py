"""Feature levels and eligible leader replicas over the KAFKA listener, with kafka-python 3's
``KafkaAdminClient`` (``describe_features``, ``update_features``, ``describe_topic_partitions``)
and raw requests through the codec: what the clients read equals the committed image."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka.admin import KafkaAdminClient
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from raftmeta.common.features import ELIGIBLE_LEADER_REPLICAS_VERSION, METADATA_VERSION
from raftmeta.image import MetadataImage
from raftmeta.rpc import admin_pb2 as apb
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
