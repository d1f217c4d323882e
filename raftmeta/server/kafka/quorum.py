"""DescribeQuorum (key 55, versions 0-2; flexible throughout), over the API layer.

Kafka's request names the metadata log's partition (``__cluster_metadata``-0); any other is an
INVALID_REQUEST, as Kafka's Raft client answers it. Only the leader tracks replication
progress, so a controller that does not lead answers NOT_LEADER_OR_FOLLOWER on the partition
(with the leader and epoch it knows), as Kafka's does; a refused caller gets
CLUSTER_AUTHORIZATION_FAILED at the top, since DescribeQuorum needs DESCRIBE on the cluster.
From v2 the answer lists the controllers' registered listeners (KIP-853's ``nodes``), from
the committed image; replica directory ids are all zeros (raftmeta keeps none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.kafka_protocol import codec
from raftmeta.raft.core import NotLeaderError, ReplicaState
from raftmeta.server.kafka.context import Fields, KafkaContext

UNKNOWN = -1

METADATA_TOPIC = "__cluster_metadata"
METADATA_PARTITION = 0
TOP_LEVEL_ERRORS = frozenset(
    {
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        ErrorCode.SASL_AUTHENTICATION_FAILED,
        ErrorCode.INCONSISTENT_CLUSTER_ID,
    }
)
"""Refusals of the caller or the request, not answers about the partition."""


def _asks_for_the_metadata_partition(request: Any) -> bool:
    topics = list(request.topics or ())
    return (
        len(topics) == 1
        and topics[0].topic_name == METADATA_TOPIC
        and [p.partition_index for p in topics[0].partitions or ()] == [METADATA_PARTITION]
    )


def _known(value: int | None) -> int:
    return UNKNOWN if value is None else value


def _replicas(states: Sequence[ReplicaState]) -> list[Fields]:
    return [
        {
            "replica_id": state.replica_id,
            "replica_directory_id": codec.uuid_value(None),
            "log_end_offset": _known(state.log_end_offset),
            "last_fetch_timestamp": _known(state.last_fetch_ms),
            "last_caught_up_timestamp": _known(state.last_caught_up_ms),
        }
        for state in states
    ]


def _nodes(context: KafkaContext) -> list[Fields]:
    controller = context.owner.maybe_controller
    if controller is None:
        return []
    return [
        {
            "node_id": controller_id,
            "listeners": [
                {"name": endpoint.name, "host": endpoint.host, "port": endpoint.port}
                for endpoint in registration.endpoints
            ],
        }
        for controller_id, registration in sorted(controller.committed_image.controllers.items())
    ]


def _answer(code: int, message: str | None, partition: Fields, nodes: list[Fields]) -> Fields:
    return {
        "error_code": code,
        "error_message": message,
        "topics": [
            {
                "topic_name": METADATA_TOPIC,
                "partitions": [{"partition_index": METADATA_PARTITION, **partition}],
            }
        ],
        "nodes": nodes,
    }


async def describe_quorum(context: KafkaContext, request: Any, version: int) -> Fields:
    if not _asks_for_the_metadata_partition(request):
        return {
            "error_code": int(ErrorCode.INVALID_REQUEST),
            "error_message": f"DescribeQuorum describes only {METADATA_TOPIC}-"
            f"{METADATA_PARTITION}.",
            "topics": [],
            "nodes": [],
        }
    try:
        described = context.apis.describe_quorum(context.principal)
    except NotLeaderError as error:
        return _not_answered(ErrorCode.NOT_LEADER_OR_FOLLOWER, error.leader_id, error.epoch)
    except KafkaError as error:
        return _not_answered(error.code, None, UNKNOWN)
    return _answer(
        0,
        None,
        {
            "error_code": 0,
            "error_message": None,
            "leader_id": _known(described.leader_id),
            "leader_epoch": described.leader_epoch,
            "high_watermark": described.high_watermark,
            "current_voters": _replicas(described.voters),
            "observers": _replicas(described.observers),
        },
        _nodes(context),
    )


def _not_answered(code: ErrorCode, leader_id: int | None, leader_epoch: int) -> Fields:
    """A refusal at the top, or the partition's error naming the leader known."""
    if code in TOP_LEVEL_ERRORS:
        return {"error_code": int(code), "error_message": code.name, "topics": [], "nodes": []}
    unknown = {
        "leader_id": _known(leader_id),
        "leader_epoch": leader_epoch,
        "high_watermark": -1,
        "current_voters": [],
        "observers": [],
    }
    return _answer(0, None, {"error_code": int(code), "error_message": code.name, **unknown}, [])
