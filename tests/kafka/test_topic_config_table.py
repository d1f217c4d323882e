"""Every Kafka topic config of the table, at a valid value and at an invalid one, on a topic
created through either door: the gRPC Admin service and the KAFKA listener with a real client
(confluent-kafka). The valid one creates the topic and is described back as its own value; the
invalid one is refused with INVALID_CONFIG and a message naming the config and why."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    ConfigResource,
    NewTopic,
    ResourceType,
)

from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from tests.controller.test_kafka_configs import TOPIC_VALUES
from tests.kafka.quorum import KafkaQuorum, kafka_quorum

TIMEOUT_S = 20.0
TOPIC = 2


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    with kafka_quorum(tmp_path_factory.mktemp("topic-config-table"), brokers=1) as running:
        yield running


def topic_name(door: str, outcome: str, config: str) -> str:
    return f"{door}-{outcome}-{config}"


def refusal(config: str, bad: str) -> str:
    return f"Invalid value {bad} for configuration {config}: "


def grpc_create(
    quorum: KafkaQuorum, topics: dict[str, dict[str, str]]
) -> dict[str, tuple[int, str]]:
    response = quorum.grpc(
        "CreateTopics",
        apb.CreateTopicsRequest(
            topics=[
                apb.NewTopic(name=name, num_partitions=1, replication_factor=1, configs=configs)
                for name, configs in topics.items()
            ]
        ),
    )
    assert response.header.error_code == 0, response.header.error_message
    return {result.name: (result.error_code, result.error_message) for result in response.topics}


def test_every_topic_config_through_grpc(quorum: KafkaQuorum) -> None:
    valid = {
        topic_name("grpc", "ok", name): {name: good} for name, (good, _) in TOPIC_VALUES.items()
    }
    invalid = {
        topic_name("grpc", "bad", name): {name: bad} for name, (_, bad) in TOPIC_VALUES.items()
    }
    answered = grpc_create(quorum, {**valid, **invalid})
    for name, (_, bad) in TOPIC_VALUES.items():
        assert answered[topic_name("grpc", "ok", name)] == (0, ""), name
        code, message = answered[topic_name("grpc", "bad", name)]
        assert code == ErrorCode.INVALID_CONFIG, name
        assert message.startswith(refusal(name, bad)), message
    described = quorum.grpc(
        "DescribeConfigs",
        apb.DescribeConfigsRequest(
            resources=[
                apb.ConfigResource(resource_type=TOPIC, resource_name=topic) for topic in valid
            ]
        ),
    )
    for result, (topic, configs) in zip(described.results, valid.items(), strict=True):
        assert result.resource.resource_name == topic
        ((name, good),) = configs.items()
        (entry,) = [config for config in result.configs if config.name == name]
        assert (entry.value, entry.source) == (good, 1), name
    existing = quorum.grpc("DescribeTopics", apb.DescribeTopicsRequest(all_topics=True))
    names = {topic.name for topic in existing.topics}
    assert set(valid) <= names
    assert not set(invalid) & names


def outcomes(futures: dict[str, Future[Any]]) -> dict[str, tuple[int, str]]:
    answered = {}
    for name, future in futures.items():
        try:
            future.result(TIMEOUT_S)
            answered[name] = (0, "")
        except KafkaException as error:
            answered[name] = (error.args[0].code(), error.args[0].str())
    return answered


def test_every_topic_config_through_the_kafka_listener_with_confluent_kafka(
    quorum: KafkaQuorum,
) -> None:
    admin = AdminClient({"bootstrap.servers": quorum.kafka_address(quorum.active())})
    valid = {
        topic_name("kafka", "ok", name): {name: good} for name, (good, _) in TOPIC_VALUES.items()
    }
    invalid = {
        topic_name("kafka", "bad", name): {name: bad} for name, (_, bad) in TOPIC_VALUES.items()
    }
    answered = outcomes(
        admin.create_topics(
            [
                NewTopic(name, num_partitions=1, replication_factor=1, config=configs)
                for name, configs in {**valid, **invalid}.items()
            ],
            operation_timeout=TIMEOUT_S,
        )
    )
    for name, (_, bad) in TOPIC_VALUES.items():
        assert answered[topic_name("kafka", "ok", name)] == (0, ""), name
        code, message = answered[topic_name("kafka", "bad", name)]
        assert code == ErrorCode.INVALID_CONFIG, name
        assert refusal(name, bad) in message, message
    resources = [ConfigResource(ResourceType.TOPIC, topic) for topic in valid]
    described = admin.describe_configs(resources)
    for resource, future in described.items():
        ((name, good),) = valid[resource.name].items()
        entry = future.result(TIMEOUT_S)[name]
        assert entry.value == good, name
        assert entry.source == 1, name  # DYNAMIC_TOPIC_CONFIG
