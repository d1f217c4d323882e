"""aiokafka's ``AIOKafkaAdminClient``, a real, unmodified asyncio client from the package index,
against the KAFKA listener of a three-controller quorum with six brokers, bootstrapped to a
standby: creates (and their errors), partitions, deletes, and the cluster, topics and configs it
describes, each compared with the gRPC Admin service's answer for the same state.

aiokafka has no ``elect_leaders`` and alters configs only through legacy AlterConfigs (key 33),
which replaces a topic's configs with the ones given."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import InvalidPartitionsError

from raftmeta.controller.result import MAX_RECORDS_PER_USER_OP
from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from tests.kafka.quorum import KafkaQuorum, kafka_quorum

BROKERS = 6
TIMEOUT_S = 15.0
RETENTION = "retention.ms"
WEEK_MS = "604800000"


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    root: Path = tmp_path_factory.mktemp("kafka-aiokafka")
    with kafka_quorum(root, brokers=BROKERS) as running:
        yield running


def grpc_topic(quorum: KafkaQuorum, name: str) -> apb.TopicDescription:
    described = quorum.grpc("DescribeTopics", apb.DescribeTopicsRequest(topic_names=[name]))
    (topic,) = described.topics
    assert isinstance(topic, apb.TopicDescription)
    return topic


def session(quorum: KafkaQuorum, steps: Any) -> Any:
    """Runs ``steps(admin)`` with a started client bootstrapped to a standby, in a loop of the
    test's own (the quorum runs in another thread's loop)."""

    async def run() -> Any:
        admin = AIOKafkaAdminClient(
            bootstrap_servers=quorum.kafka_address(quorum.follower()), request_timeout_ms=10_000
        )
        await admin.start()
        try:
            return await asyncio.wait_for(steps(admin), TIMEOUT_S)
        finally:
            await admin.close()

    return asyncio.run(run())


def codes(response: Any) -> dict[str, int]:
    return {topic: code for topic, code, *_ in response.topic_errors}


def test_create_topics_and_their_errors(quorum: KafkaQuorum) -> None:
    async def steps(admin: AIOKafkaAdminClient) -> list[Any]:
        return [
            await admin.create_topics(
                [
                    NewTopic("aio", 2, 2),
                    NewTopic("aio-wide", 1, BROKERS + 1),
                    NewTopic("aio-0", 0, 1),
                ]
            ),
            await admin.create_topics([NewTopic("aio", 2, 2)]),
            await admin.create_topics([NewTopic("aio-many", MAX_RECORDS_PER_USER_OP + 1, 1)]),
            await admin.create_topics([NewTopic("aio-dry", 3, 1)], validate_only=True),
        ]

    created, again, capped, dry = session(quorum, steps)
    assert codes(created) == {
        "aio": 0,
        "aio-wide": ErrorCode.INVALID_REPLICATION_FACTOR,
        "aio-0": ErrorCode.INVALID_PARTITIONS,
    }
    assert codes(again) == {"aio": ErrorCode.TOPIC_ALREADY_EXISTS}
    assert codes(capped) == {"aio-many": ErrorCode.POLICY_VIOLATION}
    assert codes(dry) == {"aio-dry": 0}
    assert len(grpc_topic(quorum, "aio").partitions) == 2
    for name in ("aio-wide", "aio-0", "aio-many", "aio-dry"):
        assert grpc_topic(quorum, name).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_partitions_deletes_and_descriptions_match_the_grpc_answers(quorum: KafkaQuorum) -> None:
    quorum.grpc(
        "CreateTopics",
        apb.CreateTopicsRequest(
            topics=[apb.NewTopic(name="aio-grown", num_partitions=2, replication_factor=3)]
        ),
    )
    quorum.wait_for_topic_everywhere("aio-grown")  # the standby answers Metadata itself

    async def steps(admin: AIOKafkaAdminClient) -> dict[str, Any]:
        seen: dict[str, Any] = {
            "grown": await admin.create_partitions({"aio-grown": NewPartitions(3)})
        }
        try:
            await admin.create_partitions({"aio-grown": NewPartitions(2)}, validate_only=True)
        except InvalidPartitionsError as error:
            seen["shrink"] = error
        seen["cluster"] = await admin.describe_cluster()
        seen["configs"] = await admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, "aio-grown")]
        )
        # The default value, so the configs described above stay the ones in effect.
        (altered,) = await admin.alter_configs(
            [ConfigResource(ConfigResourceType.TOPIC, "aio-grown", {RETENTION: WEEK_MS})]
        )
        seen["alter"] = altered.resources
        return seen

    seen = session(quorum, steps)
    assert codes(seen["grown"]) == {"aio-grown": 0}
    assert "higher than the requested 2" in str(seen["shrink"])
    # AlterConfigs goes to a random node: the active controller writes it, a standby refuses.
    ((alter_code, _, _, altered_name),) = seen["alter"]
    assert altered_name == "aio-grown"
    assert alter_code in (0, ErrorCode.NOT_CONTROLLER)
    grpc = grpc_topic(quorum, "aio-grown")
    assert len(grpc.partitions) == 3

    expected = quorum.grpc("DescribeCluster", apb.DescribeClusterRequest())
    cluster = seen["cluster"]
    assert cluster["cluster_id"] == expected.cluster_id
    assert cluster["controller_id"] == quorum.active().node_id
    assert {b["node_id"]: f"{b['host']}:{b['port']}" for b in cluster["brokers"]} == (
        quorum.kafka_addresses()
    )
    (described,) = seen["configs"]
    (resource,) = described.resources
    grpc_configs = quorum.grpc(
        "DescribeConfigs",
        apb.DescribeConfigsRequest(
            resources=[apb.ConfigResource(resource_type=2, resource_name="aio-grown")]
        ),
    )
    (grpc_resource,) = grpc_configs.results
    assert {entry[0]: entry[1] for entry in resource[4]} == {
        entry.name: entry.value for entry in grpc_resource.configs
    }
    retention = next(entry for entry in grpc_resource.configs if entry.name == RETENTION)
    assert (retention.value, retention.source) == (WEEK_MS, 1 if alter_code == 0 else 5)

    async def describe_then_delete(admin: AIOKafkaAdminClient) -> tuple[Any, Any]:
        return (
            await admin.describe_topics(["aio-grown"]),
            await admin.delete_topics(["aio-grown", "aio-nope"]),
        )

    quorum.wait_for_topic_everywhere("aio-grown")
    (topic,), deleted = session(quorum, describe_then_delete)
    assert [
        (p["partition"], p["leader"], p["replicas"], p["isr"])
        for p in sorted(topic["partitions"], key=lambda p: p["partition"])
    ] == [(p.partition_index, p.leader_id, list(p.replicas), list(p.isr)) for p in grpc.partitions]
    assert dict(deleted.topic_error_codes) == {
        "aio-grown": 0,
        "aio-nope": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    }
    assert grpc_topic(quorum, "aio-grown").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
