"""DescribeConfigs and IncrementalAlterConfigs on the KAFKA listener: real clients
(confluent-kafka's ``describe_configs`` / ``incremental_alter_configs``, kafka-python's
``describe_configs`` / ``alter_configs``) and raw requests for what clients route elsewhere
(broker resources go to the node with the broker's id, which speaks gRPC only), each answer
compared with the gRPC Admin service's for the same state."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from kafka.admin import ConfigResource as KpConfigResource
from kafka.admin import ConfigResourceType as KpResourceType
from kafka.admin import KafkaAdminClient
from kafka.protocol.admin import (
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)

from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from tests.kafka.quorum import KafkaQuorum, kafka_quorum
from tests.kafka.test_wire import connect, read_response, request

TIMEOUT_S = 15.0
TOPIC = 2
BROKER = 4
MIN_ISR = "min.insync.replicas"
UNCLEAN = "unclean.leader.election.enable"


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    root: Path = tmp_path_factory.mktemp("kafka-configs")
    with kafka_quorum(root, brokers=1) as running:
        running.grpc(
            "CreateTopics",
            apb.CreateTopicsRequest(
                topics=[
                    apb.NewTopic(name=name, num_partitions=1, replication_factor=1)
                    for name in ("configured", "kp-configured", "raw-configured")
                ]
            ),
        )
        for name in ("configured", "kp-configured", "raw-configured"):
            running.wait_for_topic_everywhere(name)
        yield running


def grpc_configs(quorum: KafkaQuorum, kind: int, name: str) -> tuple[int, dict[str, Any]]:
    response = quorum.grpc(
        "DescribeConfigs",
        apb.DescribeConfigsRequest(
            resources=[apb.ConfigResource(resource_type=kind, resource_name=name)]
        ),
    )
    (result,) = response.results
    return result.error_code, {c.name: (c.value, c.source) for c in result.configs}


def grpc_synonyms(
    quorum: KafkaQuorum, kind: int, name: str, key: str
) -> list[tuple[str, str | None, int]]:
    """The synonyms of one config as the gRPC Admin service lists them, in its order."""
    response = quorum.grpc(
        "DescribeConfigs",
        apb.DescribeConfigsRequest(
            resources=[apb.ConfigResource(resource_type=kind, resource_name=name)],
            include_synonyms=True,
        ),
    )
    (result,) = response.results
    (config,) = [c for c in result.configs if c.name == key]
    return [(s.name, None if s.is_null else s.value, s.source) for s in config.synonyms]


def grpc_alter(
    quorum: KafkaQuorum, kind: int, name: str, key: str, value: str, *, validate_only: bool
) -> tuple[int, str]:
    response = quorum.grpc(
        "IncrementalAlterConfigs",
        apb.IncrementalAlterConfigsRequest(
            resources=[
                apb.AlterConfigsResource(
                    resource=apb.ConfigResource(resource_type=kind, resource_name=name),
                    configs=[apb.AlterableConfig(name=key, op=0, value=value)],
                )
            ],
            validate_only=validate_only,
        ),
    )
    (result,) = response.results
    return result.error_code, result.error_message


def confluent(quorum: KafkaQuorum) -> AdminClient:
    return AdminClient({"bootstrap.servers": quorum.kafka_address(quorum.active())})


def confluent_describe(admin: AdminClient, name: str) -> dict[str, Any]:
    (future,) = admin.describe_configs([ConfigResource(ResourceType.TOPIC, name)]).values()
    return {
        key: (entry.value, int(entry.source)) for key, entry in future.result(TIMEOUT_S).items()
    }


def confluent_alter(
    admin: AdminClient, name: str, entries: list[ConfigEntry], validate_only: bool = False
) -> int:
    (future,) = admin.incremental_alter_configs(
        [ConfigResource(ResourceType.TOPIC, name, incremental_configs=entries)],
        validate_only=validate_only,
    ).values()
    try:
        future.result(TIMEOUT_S)
    except KafkaException as error:
        return int(error.args[0].code())
    return 0


def test_confluent_describe_and_incremental_alter_configs(quorum: KafkaQuorum) -> None:
    admin = confluent(quorum)
    assert confluent_describe(admin, "configured") == grpc_configs(quorum, TOPIC, "configured")[1]

    set_min_isr = [ConfigEntry(MIN_ISR, "1", incremental_operation=AlterConfigOpType.SET)]
    assert confluent_alter(admin, "configured", set_min_isr, validate_only=True) == 0
    assert grpc_configs(quorum, TOPIC, "configured")[1][MIN_ISR][1] != 1  # nothing written

    assert confluent_alter(admin, "configured", set_min_isr) == 0
    assert grpc_configs(quorum, TOPIC, "configured")[1][MIN_ISR] == ("1", 1)  # TOPIC_CONFIG
    assert confluent_describe(admin, "configured") == grpc_configs(quorum, TOPIC, "configured")[1]

    unknown = [ConfigEntry("no.such.config", "1", incremental_operation=AlterConfigOpType.SET)]
    expected = grpc_alter(quorum, TOPIC, "configured", "no.such.config", "1", validate_only=True)
    assert expected[0] == ErrorCode.INVALID_CONFIG
    assert confluent_alter(admin, "configured", unknown) == expected[0]

    delete = [ConfigEntry(MIN_ISR, None, incremental_operation=AlterConfigOpType.DELETE)]
    assert confluent_alter(admin, "configured", delete) == 0
    assert grpc_configs(quorum, TOPIC, "configured")[1][MIN_ISR][1] == 5  # DEFAULT_CONFIG

    missing = confluent_alter(admin, "no-such-topic", set_min_isr)
    assert (
        missing == grpc_alter(quorum, TOPIC, "no-such-topic", MIN_ISR, "1", validate_only=True)[0]
    )
    assert missing == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_kafka_python_describe_configs_from_every_controller(quorum: KafkaQuorum) -> None:
    """kafka-python sends DescribeConfigs to any node it knows: every controller answers,
    a standby from its own committed image, as Kafka's controllers do."""
    expected = {
        name: {"value": value, "config_source": source}
        for name, (value, source) in grpc_configs(quorum, TOPIC, "kp-configured")[1].items()
    }
    for address in quorum.kafka_addresses().values():
        admin = KafkaAdminClient(bootstrap_servers=address, request_timeout_ms=10_000)
        try:
            described = admin.describe_configs(
                [KpConfigResource(KpResourceType.TOPIC, "kp-configured")], config_filter="all"
            )
        finally:
            admin.close()
        seen = {
            name: {"value": entry["value"], "config_source": entry["config_source"]}
            for name, entry in described["topic"]["kp-configured"].items()
        }
        assert seen == {
            name: {"value": entry["value"], "config_source": _source_name(entry)}
            for name, entry in expected.items()
        }


def _source_name(entry: dict[str, Any]) -> str:
    return {1: "DYNAMIC_TOPIC_CONFIG", 5: "DEFAULT_CONFIG"}[entry["config_source"]]


def test_kafka_python_alter_configs_is_written_or_refused_as_not_controller(
    quorum: KafkaQuorum,
) -> None:
    """kafka-python sends IncrementalAlterConfigs to whichever controller it holds an idle
    connection to and does not retry NOT_CONTROLLER, which a standby answers (as Kafka's
    controllers do): the answer is either OK with the value written, or NOT_CONTROLLER
    naming the active controller with nothing written."""
    active_id = quorum.active().node_id
    for address in quorum.kafka_addresses().values():
        admin = KafkaAdminClient(bootstrap_servers=address, request_timeout_ms=10_000)
        try:
            before = grpc_configs(quorum, TOPIC, "kp-configured")[1][MIN_ISR]
            value = "3" if before[0] == "2" else "2"
            resource = KpConfigResource(KpResourceType.TOPIC, "kp-configured", {MIN_ISR: value})
            answer = admin.alter_configs([resource], incremental=True)["topic"]["kp-configured"]
        finally:
            admin.close()
        written = grpc_configs(quorum, TOPIC, "kp-configured")[1][MIN_ISR]
        if answer == "OK":
            assert written == (value, 1)  # TOPIC_CONFIG
        else:
            assert "NotControllerError" in answer and f"node {active_id}" in answer, answer
            assert written == before


def raw(address: str, message: Any, response_class: Any, version: int) -> Any:
    with connect(address) as sock:
        sock.sendall(request(message, 7))
        payload = read_response(sock)
    assert payload is not None, "the listener answered"
    return response_class.decode(payload, version=version, header=True)


def test_broker_resources_and_the_key_filter_through_raw_requests(quorum: KafkaQuorum) -> None:
    address = quorum.kafka_address(quorum.active())
    altered = raw(
        address,
        IncrementalAlterConfigsRequest(
            version=1,
            resources=[(BROKER, "1", [(MIN_ISR, 0, "1")]), (BROKER, "", [(UNCLEAN, 0, "yes")])],
            validate_only=False,
        ),
        IncrementalAlterConfigsResponse,
        1,
    )
    bad_value = grpc_alter(quorum, BROKER, "", UNCLEAN, "yes", validate_only=True)
    assert [(r.resource_name, r.error_code, r.error_message) for r in altered.responses] == [
        ("1", 0, None),
        ("", *bad_value),
    ]
    assert bad_value[0] == ErrorCode.INVALID_CONFIG

    for version in (1, 4):
        described = raw(
            address,
            DescribeConfigsRequest(
                version=version,
                resources=[(BROKER, "1", [MIN_ISR]), (BROKER, "not-a-number", None)],
                include_synonyms=True,
            ),
            DescribeConfigsResponse,
            version,
        )
        found, missing = described.results
        assert (found.error_code, [c.name for c in found.configs]) == (0, [MIN_ISR])
        (entry,) = found.configs
        assert (entry.value, entry.config_source) == grpc_configs(quorum, BROKER, "1")[1][MIN_ISR]
        synonyms = [(s.name, s.value, s.source) for s in entry.synonyms]
        assert synonyms[0] == (MIN_ISR, "1", 2)  # DYNAMIC_BROKER_CONFIG, in effect
        assert synonyms == grpc_synonyms(quorum, BROKER, "1", MIN_ISR)
        assert missing.error_code == grpc_configs(quorum, BROKER, "not-a-number")[0] != 0


def test_a_standby_answers_alter_with_not_controller_and_writes_nothing(
    quorum: KafkaQuorum,
) -> None:
    standby = quorum.kafka_address(quorum.follower())
    answered = raw(
        standby,
        IncrementalAlterConfigsRequest(
            version=0,
            resources=[(TOPIC, "raw-configured", [(MIN_ISR, 0, "1")])],
            validate_only=False,
        ),
        IncrementalAlterConfigsResponse,
        0,
    )
    (result,) = answered.responses
    assert result.error_code == ErrorCode.NOT_CONTROLLER
    assert str(quorum.active().node_id) in result.error_message
    assert grpc_configs(quorum, TOPIC, "raw-configured")[1][MIN_ISR][1] != 1


def test_describe_configs_is_answered_with_unsupported_version_below_v1(
    quorum: KafkaQuorum,
) -> None:
    """Kafka 4 dropped DescribeConfigs v0; so does this listener, with an error, not a hang."""
    with connect(quorum.kafka_address(quorum.active())) as sock:
        frame = bytearray(request(DescribeConfigsRequest(version=1, resources=[]), 9))
        frame[6:8] = (0).to_bytes(2, "big")  # the header's api_version: 0
        sock.sendall(bytes(frame))
        sock.settimeout(TIMEOUT_S)
        try:
            payload = read_response(sock)
        except TimeoutError:
            pytest.fail("no answer to DescribeConfigs v0")
    # No DescribeConfigs response carries a top-level error: the connection closes.
    assert payload is None
