"""ElectLeaders (key 43, versions 0-2; flexible from v2), over the API layer.

v0 carries no election type: it is always PREFERRED (0). A null partition list asks for every
partition. From v1 a failure of the whole call is the top-level error code, and the results
carry it per requested partition, as Kafka's error response does
(:func:`raftmeta.common.elections.failed_election`).
"""

from __future__ import annotations

from typing import Any

from raftmeta.common.elections import (
    ElectionType,
    ElectLeadersRequest,
    TopicPartition,
    TopicResults,
    failed_election,
)
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.server.kafka.context import Fields, KafkaContext


def _election(request: Any, version: int) -> ElectLeadersRequest:
    partitions = None
    if request.topic_partitions is not None:
        partitions = tuple(
            TopicPartition(item.topic, partition)
            for item in request.topic_partitions
            for partition in item.partitions or ()
        )
    election_type = int(request.election_type) if version >= 1 else int(ElectionType.PREFERRED)
    return ElectLeadersRequest(election_type, partitions, request.timeout_ms)


def _results(results: list[TopicResults]) -> list[Fields]:
    return [
        {
            "topic": topic.topic,
            "partition_result": [
                {
                    "partition_id": partition,
                    "error_code": int(result.error),
                    "error_message": None if result.succeeded else (result.message or None),
                }
                for partition, result in topic.partitions
            ],
        }
        for topic in results
    ]


async def elect_leaders(context: KafkaContext, request: Any, version: int) -> Fields:
    election = _election(request, version)
    code = ErrorCode.NONE
    try:
        results = await context.apis.elect_leaders(context.principal, election)
    except KafkaError as error:
        code = error.code
        results = failed_election(election.partitions, error.code, error.message)
    return {
        "throttle_time_ms": 0,
        "error_code": int(code),
        "replica_election_results": _results(results),
    }


def elect_leaders_failed(request: Any, version: int, code: int, message: str | None) -> Fields:
    """Kafka's error response: ``code`` at the top (v1+) and on every requested partition."""
    election = _election(request, version)
    failed = failed_election(election.partitions, ErrorCode(code), message or "")
    return {"throttle_time_ms": 0, "error_code": code, "replica_election_results": _results(failed)}
