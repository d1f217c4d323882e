"""The configs' full description on the KAFKA listener, and legacy AlterConfigs (key 33).

confluent-kafka's ``describe_configs`` lists every topic config with its source, read-only
flag and synonyms; raw DescribeConfigs shows the type and documentation (v3+, documentation
only when asked for) and hides sensitive broker values; kafka-python's and aiokafka's
``alter_configs`` (legacy, replace-all) write through the listener, as CreateTopics v5+
answers a created topic's described configs. Each answer is compared with the gRPC Admin
service's for the same state."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource as AioConfigResource
from aiokafka.admin.config_resource import ConfigResourceType as AioResourceType
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    ConfigResource,
    ConfigSource,
    ResourceType,
)
from kafka.admin import ConfigResource as KpConfigResource
from kafka.admin import ConfigResourceType as KpResourceType
from kafka.admin import KafkaAdminClient
from kafka.protocol.admin import (
    AlterConfigsRequest,
    AlterConfigsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
)

from raftmeta.admin import AdminClient as RaftmetaAdmin
from raftmeta.admin import ConfigResource as RaftmetaResource
from raftmeta.common.config_defs import TOPIC_CONFIG_DEFS, UpdateMode, broker_config_def
from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from tests.kafka.quorum import KafkaQuorum, kafka_quorum
from tests.kafka.test_configs import grpc_configs, raw
from tests.kafka.test_wire import api_versions, connect, read_response, request

TIMEOUT_S = 15.0
TOPIC = 2
BROKER = 4
RETENTION = "retention.ms"
MIN_ISR = "min.insync.replicas"
CLEANUP = "cleanup.policy"


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    root: Path = tmp_path_factory.mktemp("kafka-config-fields")
    with kafka_quorum(root, brokers=1) as running:
        names = ("described", "kp-legacy", "aio-legacy", "raw-legacy")
        running.grpc(
            "CreateTopics",
            apb.CreateTopicsRequest(
                topics=[
                    apb.NewTopic(
                        name=name,
                        num_partitions=1,
                        replication_factor=1,
                        configs={RETENTION: "3600000", CLEANUP: "compact"},
                    )
                    for name in names
                ]
            ),
        )
        for name in names:
            running.wait_for_topic_everywhere(name)
        yield running


def test_confluent_describe_lists_every_topic_config_with_sources_and_synonyms(
    quorum: KafkaQuorum,
) -> None:
    admin = AdminClient({"bootstrap.servers": quorum.kafka_address(quorum.active())})
    (future,) = admin.describe_configs([ConfigResource(ResourceType.TOPIC, "described")]).values()
    described = future.result(TIMEOUT_S)
    expected = grpc_configs(quorum, TOPIC, "described")[1]

    assert set(described) == set(TOPIC_CONFIG_DEFS)
    assert {name: (e.value, int(e.source)) for name, e in described.items()} == expected
    assert int(described[RETENTION].source) == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert int(described[MIN_ISR].source) != ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert not any(entry.is_read_only or entry.is_sensitive for entry in described.values())

    # The topic's own value first, then its broker synonyms down to the defaults.
    retention = described[RETENTION].synonyms
    assert next(iter(retention)) == RETENTION
    assert int(retention[RETENTION].source) == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert retention[RETENTION].value == "3600000"
    assert int(retention["log.retention.hours"].source) == ConfigSource.DEFAULT_CONFIG.value
    assert retention["log.retention.hours"].value == "168"


def describe_raw(quorum: KafkaQuorum, version: int, resource: Any, **flags: bool) -> Any:
    described = raw(
        quorum.kafka_address(quorum.active()),
        DescribeConfigsRequest(version=version, resources=[resource], **flags),
        DescribeConfigsResponse,
        version,
    )
    (result,) = described.results
    assert result.error_code == 0
    return {entry.name: entry for entry in result.configs}


def test_raw_describe_carries_types_documentation_sensitivity_and_read_only(
    quorum: KafkaQuorum,
) -> None:
    topic = (TOPIC, "described", None)
    plain = describe_raw(quorum, 4, topic, include_synonyms=False, include_documentation=False)
    assert all(entry.synonyms == [] and entry.documentation is None for entry in plain.values())
    assert {name: entry.config_type for name, entry in plain.items()} == {
        name: int(definition.type) for name, definition in TOPIC_CONFIG_DEFS.items()
    }
    documented = describe_raw(quorum, 4, topic, include_synonyms=True, include_documentation=True)
    assert {name: entry.documentation for name, entry in documented.items()} == {
        name: definition.doc for name, definition in TOPIC_CONFIG_DEFS.items()
    }
    assert [(s.name, s.source) for s in documented[CLEANUP].synonyms][:2] == [
        (CLEANUP, 1),  # TOPIC_CONFIG
        ("log.cleanup.policy", 5),  # DEFAULT_CONFIG
    ]
    before_types = describe_raw(quorum, 2, topic, include_synonyms=True)
    assert all(entry.config_type == 0 for entry in before_types.values())  # UNKNOWN before v3

    broker = describe_raw(quorum, 4, (BROKER, "1", None), include_synonyms=True)
    sensitive = {name for name, entry in broker.items() if entry.is_sensitive}
    assert "ssl.keystore.password" in sensitive
    assert all(broker[name].value is None for name in sensitive)
    read_only = {name for name, entry in broker.items() if entry.read_only}
    assert "log.retention.hours" in read_only
    for name, entry in broker.items():
        definition = broker_config_def(name)
        assert definition is not None, name
        assert entry.read_only == (definition.mode is UpdateMode.READ_ONLY), name
        assert entry.is_sensitive == definition.sensitive, name


def until_written(attempt: Callable[[], str], deadline_s: float = TIMEOUT_S) -> list[str]:
    """Runs ``attempt`` (one client's legacy alter, its answer as a string) until it answers
    OK; clients send AlterConfigs to any node, and a standby refuses it as NOT_CONTROLLER."""
    answers: list[str] = []
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        answers.append(attempt())
        if answers[-1] == "OK":
            return answers
    pytest.fail(f"never written: {answers}")


def test_kafka_python_legacy_alter_configs_replaces_the_topics_configs(
    quorum: KafkaQuorum,
) -> None:
    address = quorum.kafka_address(quorum.active())

    def attempt() -> str:
        admin = KafkaAdminClient(bootstrap_servers=address, request_timeout_ms=10_000)
        try:
            resource = KpConfigResource(KpResourceType.TOPIC, "kp-legacy", {MIN_ISR: "1"})
            answer = admin.alter_configs([resource], incremental=False)
        finally:
            admin.close()
        return str(answer["topic"]["kp-legacy"])

    answers = until_written(attempt)
    assert all("NotControllerError" in answer for answer in answers[:-1]), answers
    configs = grpc_configs(quorum, TOPIC, "kp-legacy")[1]
    assert configs[MIN_ISR] == ("1", 1)  # TOPIC_CONFIG
    # kafka-python keeps the topic's other overrides by sending them again.
    assert configs[RETENTION] == ("3600000", 1)


def test_aiokafka_legacy_alter_configs_replaces_the_topics_configs(quorum: KafkaQuorum) -> None:
    address = quorum.kafka_address(quorum.active())

    async def alter() -> list[Any]:
        admin = AIOKafkaAdminClient(bootstrap_servers=address, request_timeout_ms=10_000)
        await admin.start()
        try:
            resource = AioConfigResource(AioResourceType.TOPIC, "aio-legacy", {MIN_ISR: "1"})
            return await asyncio.wait_for(admin.alter_configs([resource]), TIMEOUT_S)
        finally:
            await admin.close()

    def attempt() -> str:
        (response,) = asyncio.run(alter())
        ((code, message, _, name),) = response.resources
        assert name == "aio-legacy"
        return "OK" if code == 0 else f"{code}: {message}"

    answers = until_written(attempt)
    assert all(a.startswith(f"{int(ErrorCode.NOT_CONTROLLER)}:") for a in answers[:-1]), answers
    configs = grpc_configs(quorum, TOPIC, "aio-legacy")[1]
    assert configs[MIN_ISR] == ("1", 1)  # TOPIC_CONFIG
    # Replace-all: the overrides left out are gone.
    assert configs[RETENTION][1] != 1 and configs[CLEANUP][1] != 1


def legacy_alter(quorum: KafkaQuorum, version: int, resources: list[Any], validate: bool) -> Any:
    answered = raw(
        quorum.kafka_address(quorum.active()),
        AlterConfigsRequest(version=version, resources=resources, validate_only=validate),
        AlterConfigsResponse,
        version,
    )
    return [(r.resource_name, r.error_code) for r in answered.responses]


def test_raw_legacy_alter_configs_every_version_validate_only_and_errors(
    quorum: KafkaQuorum,
) -> None:
    ranges = {k.api_key: (k.min_version, k.max_version) for k in api_versions(
        quorum.kafka_address(quorum.active()), 3
    ).api_keys}  # fmt: skip
    assert ranges[33] == (0, 2)

    assert legacy_alter(quorum, 0, [(TOPIC, "raw-legacy", [(MIN_ISR, "1")])], True) == [
        ("raw-legacy", 0)
    ]
    assert grpc_configs(quorum, TOPIC, "raw-legacy")[1][RETENTION] == ("3600000", 1)  # unchanged

    for version, value in ((0, "1"), (1, "2"), (2, "3")):
        answer = legacy_alter(quorum, version, [(TOPIC, "raw-legacy", [(MIN_ISR, value)])], False)
        assert answer == [("raw-legacy", 0)]
        configs = grpc_configs(quorum, TOPIC, "raw-legacy")[1]
        assert configs[MIN_ISR] == (value, 1)
        assert configs[RETENTION][1] != 1  # replaced, not merged

    refused = legacy_alter(
        quorum,
        2,
        [
            (TOPIC, "raw-legacy", [("no.such.config", "1")]),
            (TOPIC, "no-such-topic", [(MIN_ISR, "1")]),
            (BROKER, "1", [(MIN_ISR, "1")]),
            (BROKER, "1", [(MIN_ISR, "2")]),
        ],
        False,
    )
    assert refused == [
        ("raw-legacy", ErrorCode.INVALID_CONFIG),
        ("no-such-topic", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ("1", ErrorCode.INVALID_REQUEST),
        ("1", ErrorCode.INVALID_REQUEST),
    ]
    assert grpc_configs(quorum, TOPIC, "raw-legacy")[1][MIN_ISR] == ("3", 1)


def test_create_topics_v5_answers_the_described_configs(quorum: KafkaQuorum) -> None:
    topic = CreateTopicsRequest.CreatableTopic(
        name="created-described",
        num_partitions=1,
        replication_factor=1,
        assignments=[],
        configs=[
            CreateTopicsRequest.CreatableTopic.CreatableTopicConfig(name=RETENTION, value="60000")
        ],
    )
    with connect(quorum.kafka_address(quorum.active())) as sock:
        sock.sendall(request(CreateTopicsRequest[7](topics=[topic], timeout_ms=5000), 9))
        payload = read_response(sock)
    assert payload is not None
    (result,) = CreateTopicsResponse.decode(payload, version=7, header=True).topics
    assert result.error_code == 0
    answered = {c.name: (c.value, c.config_source) for c in result.configs}
    assert answered == grpc_configs(quorum, TOPIC, "created-described")[1]
    assert set(answered) == set(TOPIC_CONFIG_DEFS)
    assert answered[RETENTION] == ("60000", 1)
    assert not any(c.read_only or c.is_sensitive for c in result.configs)


def test_the_admin_clients_kafka_transport_sees_synonyms_and_sensitivity(
    quorum: KafkaQuorum,
) -> None:
    grpc = RaftmetaAdmin({"bootstrap.servers": ",".join(quorum.quorum.addresses.values())})
    kafka = RaftmetaAdmin({"bootstrap.controllers": quorum.kafka_address(quorum.active())})
    with grpc, kafka:
        topic = RaftmetaResource("topic", "described")
        broker = RaftmetaResource("broker", "1")
        over_kafka = kafka.describe_configs([topic, broker])
        over_grpc = grpc.describe_configs([topic, broker])
        for key in (topic, broker):
            assert over_kafka[key].result(TIMEOUT_S) == over_grpc[key].result(TIMEOUT_S)
        retention = over_kafka[topic].result(TIMEOUT_S)[RETENTION]
        assert next(iter(retention.synonyms)) == RETENTION
        assert "log.retention.hours" in retention.synonyms
        secret = over_kafka[broker].result(TIMEOUT_S)["ssl.keystore.password"]
        assert secret.is_sensitive and secret.value is None
