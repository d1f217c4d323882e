"""Partition reassignment over Kafka's protocol (keys 45 and 46) and over gRPC: kafka-python's
``alter_partition_reassignments``/``list_partition_reassignments`` against the KAFKA listener,
raftmeta's AdminClient over gRPC and over ``bootstrap.controllers``, each on a topic of the same
layout, give the same answers. The embedded brokers here never report a replica caught up, so
every move started stays in progress and can be listed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from kafka.admin import KafkaAdminClient
from kafka.structs import TopicPartition as KpTopicPartition

from raftmeta.admin import AdminClient, KafkaException, NewTopic, TopicPartition
from raftmeta.admin.kafka_transport import KafkaTransport
from raftmeta.errors import ErrorCode
from tests.kafka.quorum import KafkaQuorum, kafka_quorum

TIMEOUT_S = 15.0
LAYOUT = [[1, 2], [2, 3], [3, 1]]
MOVES: dict[int, list[int] | None] = {0: [4, 2], 1: [3, 4, 1], 2: None, 7: [1, 2]}
"""Partition number to target: two moves, a cancel with none in progress, an unknown one."""
REFUSED: dict[int, list[int]] = {0: [1, 1], 1: [2, 99]}
"""A repeated broker and an unregistered one."""


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    with kafka_quorum(tmp_path_factory.mktemp("reassignments"), brokers=4) as running:
        yield running


def kafka_python(quorum: KafkaQuorum) -> KafkaAdminClient:
    return KafkaAdminClient(
        bootstrap_servers=quorum.kafka_address(quorum.active()), request_timeout_ms=10_000
    )


def grpc_client(quorum: KafkaQuorum) -> AdminClient:
    return AdminClient({"bootstrap.servers": ",".join(quorum.quorum.addresses.values())})


def kafka_transport_client(quorum: KafkaQuorum) -> AdminClient:
    return AdminClient({"bootstrap.controllers": quorum.kafka_address(quorum.active())})


def kp_codes(results: Mapping[Any, Any]) -> dict[int, int]:
    """kafka-python's answer (an error class or None per partition) as codes by partition."""
    return {tp.partition: 0 if error is None else error.errno for tp, error in results.items()}


def raftmeta_codes(client: AdminClient, topic: str, moves: Mapping[int, Any]) -> dict[int, int]:
    futures = client.alter_partition_reassignments(
        {TopicPartition(topic, number): target for number, target in moves.items()}
    )
    codes = {}
    for partition, future in futures.items():
        try:
            future.result(TIMEOUT_S)
            codes[partition.partition] = 0
        except KafkaException as error:
            codes[partition.partition] = int(error.code)
    return codes


def raftmeta_listing(
    client: AdminClient, topic: str, numbers: Sequence[int] | None = None
) -> dict[int, dict[str, list[int]]]:
    named = None if numbers is None else [TopicPartition(topic, n) for n in numbers]
    listed = client.list_partition_reassignments(named).result(TIMEOUT_S)
    return {p.partition: moving.as_dict() for p, moving in listed.items() if p.topic == topic}


def kp_listing(
    client: KafkaAdminClient, topic: str, numbers: Sequence[int] | None = None
) -> dict[int, dict[str, list[int]]]:
    listed = client.list_partition_reassignments(None if numbers is None else {topic: numbers})
    return {tp.partition: moving for tp, moving in listed.items() if tp.topic == topic}


def test_kafka_python_and_both_admin_transports_agree(quorum: KafkaQuorum) -> None:
    grpc = grpc_client(quorum)
    over_kafka = kafka_transport_client(quorum)
    kp = kafka_python(quorum)
    try:
        created = grpc.create_topics(
            [NewTopic(name, replica_assignment=LAYOUT) for name in ("kp", "grpc", "kt")]
        )
        for future in created.values():
            future.result(TIMEOUT_S)

        kp_answer = kp_codes(
            kp.alter_partition_reassignments(
                {KpTopicPartition("kp", n): target for n, target in MOVES.items()}
            )
        )
        assert kp_answer == {
            0: 0,
            1: 0,
            2: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
            7: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        }
        assert raftmeta_codes(grpc, "grpc", MOVES) == kp_answer
        assert raftmeta_codes(over_kafka, "kt", MOVES) == kp_answer

        refused = kp_codes(
            kp.alter_partition_reassignments(
                {KpTopicPartition("kp", n): target for n, target in REFUSED.items()}
            )
        )
        assert refused == {0: ErrorCode.INVALID_REPLICA_ASSIGNMENT, 1: 39}
        assert raftmeta_codes(grpc, "grpc", REFUSED) == refused
        assert raftmeta_codes(over_kafka, "kt", REFUSED) == refused

        expected = {
            0: {"replicas": [4, 2, 1], "adding_replicas": [4], "removing_replicas": [1]},
            1: {"replicas": [3, 4, 1, 2], "adding_replicas": [1, 4], "removing_replicas": [2]},
        }
        assert kp_listing(kp, "kp") == expected
        assert raftmeta_listing(grpc, "grpc") == expected
        assert raftmeta_listing(over_kafka, "kt") == expected
        assert kp_listing(kp, "kp", [1, 2, 9]) == {1: expected[1]}
        assert raftmeta_listing(grpc, "grpc", [1, 2, 9]) == {1: expected[1]}
        assert raftmeta_listing(over_kafka, "kt", [1, 2, 9]) == {1: expected[1]}

        cancel = {0: None}
        assert kp_codes(kp.alter_partition_reassignments({KpTopicPartition("kp", 0): None})) == {
            0: 0
        }
        assert raftmeta_codes(grpc, "grpc", cancel) == {0: 0}
        assert raftmeta_codes(over_kafka, "kt", cancel) == {0: 0}
        assert kp_listing(kp, "kp") == {1: expected[1]}
        assert raftmeta_listing(grpc, "grpc") == {1: expected[1]}
        assert raftmeta_listing(over_kafka, "kt") == {1: expected[1]}
    finally:
        kp.close()
        grpc.close()
        over_kafka.close()


def test_every_version_served_is_answered(quorum: KafkaQuorum) -> None:
    """AlterPartitionReassignments 0 (no replication-factor flag) and 1, and
    ListPartitionReassignments 0, sent raw to the active controller's KAFKA listener."""
    address = quorum.kafka_address(quorum.active())
    unknown = {"name": "absent", "partitions": [{"partition_index": 0, "replicas": [1]}]}

    async def ask() -> list[Any]:
        transport = KafkaTransport([address], 10_000, None)
        try:
            answers = [
                await transport.call(
                    address, (45, version), {"timeout_ms": 5000, "topics": [unknown]}, 10_000
                )
                for version in (0, 1)
            ]
            answers.append(
                await transport.call(address, (46, 0), {"timeout_ms": 5000, "topics": None}, 10_000)
            )
            return answers
        finally:
            await transport.close()

    v0, v1, listing = quorum.call(ask())
    for answer in (v0, v1):
        assert answer.error_code == 0
        [topic] = answer.responses
        assert (topic.name, topic.partitions[0].error_code) == (
            "absent",
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        )
    assert v1.allow_replication_factor_change is True
    assert listing.error_code == 0
