"""The admin client with ``bootstrap.controllers``: Kafka's protocol to the KAFKA listeners
gives the same answers as gRPC on the same state, for the operations both transports carry."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from raftmeta.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ErrorCode,
    KafkaException,
    NewTopic,
)
from tests.kafka.quorum import KafkaQuorum, kafka_quorum

TIMEOUT_S = 15.0


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    with kafka_quorum(tmp_path_factory.mktemp("admin-over-kafka"), brokers=1) as running:
        yield running


def clients(quorum: KafkaQuorum) -> tuple[AdminClient, AdminClient]:
    """A gRPC client and a Kafka-protocol one (a standby listed first)."""
    grpc = AdminClient({"bootstrap.servers": ",".join(quorum.quorum.addresses.values())})
    standby = quorum.kafka_address(quorum.follower())
    kafka = AdminClient(
        {"bootstrap.controllers": f"{standby},{quorum.kafka_address(quorum.active())}"}
    )
    return grpc, kafka


def test_configs_through_either_transport(quorum: KafkaQuorum) -> None:
    grpc, kafka = clients(quorum)
    with grpc, kafka:
        kafka.create_topics([NewTopic("configured", 1, 1)])["configured"].result(TIMEOUT_S)
        topic = ConfigResource("topic", "configured")
        change = ConfigResource(
            "topic",
            "configured",
            [ConfigEntry("retention.ms", "1234", incremental_operation=AlterConfigOpType.SET)],
        )
        assert kafka.incremental_alter_configs([change])[topic].result(TIMEOUT_S) is None
        over_kafka = kafka.describe_configs([topic])[topic].result(TIMEOUT_S)
        assert over_kafka == grpc.describe_configs([topic])[topic].result(TIMEOUT_S)
        assert over_kafka["retention.ms"].value == "1234"

        bad = ConfigResource(
            "topic",
            "configured",
            [ConfigEntry("no.such.key", "1", incremental_operation=AlterConfigOpType.SET)],
        )
        refusals = []
        for client in (grpc, kafka):
            with pytest.raises(KafkaException) as raised:
                client.incremental_alter_configs([bad])[topic].result(TIMEOUT_S)
            refusals.append(raised.value.code)
        assert refusals[0] == refusals[1] == ErrorCode.INVALID_CONFIG

        missing = ConfigResource("topic", "missing")
        with pytest.raises(KafkaException) as raised:
            kafka.describe_configs([missing])[missing].result(TIMEOUT_S)
        assert raised.value.code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_topics_and_elections_through_the_kafka_transport(quorum: KafkaQuorum) -> None:
    _, kafka = clients(quorum)
    with kafka:
        created = kafka.create_topics([NewTopic("kt", 2, 1), NewTopic("kt-dup", 1, 1)])
        for future in created.values():
            assert future.result(TIMEOUT_S) is None
        again = kafka.create_topics([NewTopic("kt", 2, 1)])["kt"]
        with pytest.raises(KafkaException) as raised:
            again.result(TIMEOUT_S)
        assert raised.value.code is ErrorCode.TOPIC_ALREADY_EXISTS
        assert kafka.describe_topics(["kt"])["kt"].result(TIMEOUT_S).partitions[1].id == 1
        assert {"kt", "kt-dup"} <= set(kafka.describe_topics().result(TIMEOUT_S))
        info = kafka.describe_quorum().result(TIMEOUT_S)
        assert info.leader_id == quorum.active().node_id
        assert kafka.delete_topics(["kt-dup"])["kt-dup"].result(TIMEOUT_S) is None
