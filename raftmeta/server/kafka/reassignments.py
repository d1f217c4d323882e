"""AlterPartitionReassignments (key 45, versions 0-1) and ListPartitionReassignments (key 46,
version 0), both flexible, over the API layer.

v1 of AlterPartitionReassignments adds KIP-860's ``AllowReplicationFactorChange`` (true by
default, and echoed in the answer). A failure of the whole call (authorization, not the
controller) is the top-level error code and message with no per-partition results, as Kafka's
answers are; per-partition refusals carry their own code and message.
"""

from __future__ import annotations

from typing import Any

from raftmeta.common.elections import TopicPartition
from raftmeta.common.reassignments import (
    AlterPartitionReassignmentsRequest,
    ListPartitionReassignmentsRequest,
    ReassignmentResult,
    ReassignmentTarget,
)
from raftmeta.errors import KafkaError
from raftmeta.server.kafka.context import Fields, KafkaContext, error_fields


def _targets(request: Any) -> tuple[ReassignmentTarget, ...]:
    return tuple(
        ReassignmentTarget(
            TopicPartition(topic.name, partition.partition_index),
            None if partition.replicas is None else tuple(partition.replicas),
        )
        for topic in request.topics or ()
        for partition in topic.partitions or ()
    )


def _responses(results: list[ReassignmentResult]) -> list[Fields]:
    """Grouped by topic, in the order the request first named each."""
    by_topic: dict[str, list[Fields]] = {}
    for result in results:
        by_topic.setdefault(result.partition.topic, []).append(
            {
                "partition_index": result.partition.partition,
                "error_code": int(result.error.code),
                "error_message": result.error.message if not result.error.ok else None,
            }
        )
    return [{"name": name, "partitions": partitions} for name, partitions in by_topic.items()]


async def alter_partition_reassignments(
    context: KafkaContext, request: Any, version: int
) -> Fields:
    allow = bool(request.allow_replication_factor_change) if version >= 1 else True
    wanted = AlterPartitionReassignmentsRequest(_targets(request), request.timeout_ms, allow)
    code, message = 0, None
    results: list[ReassignmentResult] = []
    try:
        results = await context.apis.alter_partition_reassignments(context.principal, wanted)
    except KafkaError as error:
        code, message = error_fields(error)
    fields: Fields = {
        "throttle_time_ms": 0,
        "error_code": code,
        "error_message": message,
        "responses": _responses(results),
    }
    if version >= 1:
        fields["allow_replication_factor_change"] = allow
    return fields


async def list_partition_reassignments(
    context: KafkaContext, request: Any, _version: int
) -> Fields:
    partitions = None
    if request.topics is not None:
        partitions = tuple(
            TopicPartition(topic.name, index)
            for topic in request.topics
            for index in topic.partition_indexes or ()
        )
    code, message = 0, None
    topics: dict[str, list[Fields]] = {}
    try:
        moving = await context.apis.list_partition_reassignments(
            context.principal, ListPartitionReassignmentsRequest(partitions, request.timeout_ms)
        )
    except KafkaError as error:
        code, message = error_fields(error)
    else:
        for partition, reassignment in moving.items():
            topics.setdefault(partition.topic, []).append(
                {
                    "partition_index": partition.partition,
                    "replicas": list(reassignment.replicas),
                    "adding_replicas": list(reassignment.adding_replicas),
                    "removing_replicas": list(reassignment.removing_replicas),
                }
            )
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "error_message": message,
        "topics": [{"name": name, "partitions": found} for name, found in topics.items()],
    }
