"""DescribeTopicPartitions (key 75, KIP-966): topics with their partitions' eligible leader
replicas, a page at a time.

Topics are read as Metadata reads them (:func:`cluster.read_topics`: the active controller after
its pending records commit, a standby from its committed image, the caller's ACLs either way)
and answered in name order. An empty topic list asks for every topic the caller may describe.
A page holds at most ``ResponsePartitionLimit`` partitions, capped at 2000 as Kafka's
``max.request.partition.size.limit`` caps it (and at least one, so every page moves on); when
partitions are left over, ``NextCursor`` names the first of them, and a request's ``Cursor``
starts there: topics ordered before its topic are skipped, and its topic starts at its
partition. A cursor naming a topic the request does not ask for is INVALID_REQUEST on every
requested topic, as Kafka refuses it.
"""

from __future__ import annotations

from typing import Any

from raftmeta.common.topics import PartitionDescription, TopicDescription
from raftmeta.errors import ErrorCode
from raftmeta.kafka_protocol import codec
from raftmeta.server.kafka.cluster import LEADER_NOT_AVAILABLE, read_topics
from raftmeta.server.kafka.context import Fields, KafkaContext

AUTHORIZED_OPERATIONS_NOT_ASKED = -(2**31)
"""Kafka's INT32_MIN: the request cannot ask for them; the library writes no default here."""
MAX_PARTITIONS_PER_PAGE = 2000
"""Kafka's ``max.request.partition.size.limit`` default."""


def _partition(partition: PartitionDescription, live: set[int]) -> Fields:
    return {
        "error_code": LEADER_NOT_AVAILABLE if partition.leader_id < 0 else int(ErrorCode.NONE),
        "partition_index": partition.partition_index,
        "leader_id": partition.leader_id,
        "leader_epoch": partition.leader_epoch,
        "replica_nodes": list(partition.replicas),
        "isr_nodes": list(partition.isr),
        "eligible_leader_replicas": list(partition.eligible_leader_replicas),
        "last_known_elr": list(partition.last_known_elr),
        "offline_replicas": [replica for replica in partition.replicas if replica not in live],
    }


def _topic(topic: TopicDescription, partitions: list[Fields], code: int | None = None) -> Fields:
    return {
        "error_code": int(topic.error.code) if code is None else code,
        "name": topic.name,
        "topic_id": codec.uuid_value(topic.topic_id or None),
        "is_internal": False,
        "partitions": partitions,
        "topic_authorized_operations": AUTHORIZED_OPERATIONS_NOT_ASKED,
    }


def _failed(names: list[str], code: int) -> Fields:
    return {
        "throttle_time_ms": 0,
        "topics": [_topic(TopicDescription(name), [], code) for name in names],
        "next_cursor": None,
    }


async def describe_topic_partitions(context: KafkaContext, request: Any, version: int) -> Fields:
    names = sorted({topic.name for topic in request.topics or ()})
    cursor = request.cursor
    if cursor is not None and names and cursor.topic_name not in names:
        return _failed(names, int(ErrorCode.INVALID_REQUEST))
    read = await read_topics(context, names or None)
    if read is None:
        return _failed(names, LEADER_NOT_AVAILABLE)  # not running yet: retriable
    if read.error_code:
        return _failed(names, read.error_code)
    live = read.live
    topics = sorted(read.topics, key=lambda topic: topic.name)
    if cursor is not None:
        topics = [topic for topic in topics if topic.name >= cursor.topic_name]
    remaining = max(1, min(request.response_partition_limit, MAX_PARTITIONS_PER_PAGE))
    answered: list[Fields] = []
    next_cursor: Fields | None = None
    for topic in topics:
        if not topic.error.ok:
            answered.append(_topic(topic, []))
            continue
        if remaining == 0:
            next_cursor = {"topic_name": topic.name, "partition_index": 0}
            break
        start = cursor.partition_index if cursor and topic.name == cursor.topic_name else 0
        left = [p for p in topic.partitions if p.partition_index >= start]
        page = left[:remaining]
        answered.append(_topic(topic, [_partition(partition, live) for partition in page]))
        remaining -= len(page)
        if len(left) > len(page):
            next_cursor = {
                "topic_name": topic.name,
                "partition_index": left[len(page)].partition_index,
            }
            break
    return {"throttle_time_ms": 0, "topics": answered, "next_cursor": next_cursor}


def describe_topic_partitions_failed(
    request: Any, version: int, code: int, message: str | None
) -> Fields:
    """Kafka's error response: ``code`` on every requested topic."""
    return _failed(sorted({topic.name for topic in request.topics or ()}), code)
