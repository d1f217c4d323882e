"""Metadata (key 3) and DescribeCluster (key 60), read through the Admin service's own reads.

Both wait, as the gRPC reads do, for the active controller's pending records to commit, so a
client sees its own writes. DescribeCluster lists the image's unfenced brokers (all with
include_fenced_brokers) with their first registered endpoint, as the gRPC call does. Metadata
lists only this controller, on this listener, as its node: a Kafka client dials every node
Metadata names, and raftmeta's brokers do not speak Kafka's protocol, so the ControllerId a
client reads names the one node it can reach with its admin calls.
"""

from __future__ import annotations

from typing import Any

from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server.kafka import codec
from raftmeta.server.kafka.context import Fields, KafkaContext, header_error

LEADER_NOT_AVAILABLE = 5
"""Kafka's retriable code for a partition (or a whole answer) without a leader yet."""
CONTROLLER_ENDPOINTS = 2
"""DescribeCluster v1's endpoint_type asking for the controllers (KIP-919)."""


def _self_node(context: KafkaContext) -> Fields:
    return {
        "node_id": context.owner.node_id,
        "host": context.endpoint.host,
        "port": context.endpoint.port,
        "rack": None,
    }


def _broker_nodes(brokers: Any, *, include_fenced: bool = False) -> list[Fields]:
    return [
        {
            "node_id": broker.broker_id,
            "host": broker.host,
            "port": broker.port,
            "rack": broker.rack if broker.has_rack else None,
            "is_fenced": broker.fenced,
        }
        for broker in brokers
        if include_fenced or not broker.fenced
    ]


def _partition(partition: apb.PartitionDescription, live: set[int]) -> Fields:
    no_leader = partition.leader_id < 0
    return {
        "error_code": LEADER_NOT_AVAILABLE if no_leader else int(ErrorCode.NONE),
        "partition_index": partition.partition_index,
        "leader_id": partition.leader_id,
        "leader_epoch": partition.leader_epoch,
        "replica_nodes": list(partition.replicas),
        "isr_nodes": list(partition.isr),
        "offline_replicas": [replica for replica in partition.replicas if replica not in live],
    }


def _topic(topic: apb.TopicDescription, live: set[int]) -> Fields:
    return {
        "error_code": topic.error_code,
        "name": topic.name,
        "topic_id": codec.uuid_value(topic.topic_id),
        "is_internal": False,
        "partitions": [_partition(partition, live) for partition in topic.partitions],
        "authorized_operations": codec.NO_AUTHORIZED_OPERATIONS,
    }


async def metadata(context: KafkaContext, request: Any, version: int) -> Fields:
    """Kafka's Metadata: a null topic list (or an empty one before v1) asks for every topic."""
    names = [topic.name for topic in request.topics or ()]
    all_topics = request.topics is None or (version == 0 and not names)
    cluster = await context.admin.DescribeCluster(apb.DescribeClusterRequest(), None)
    code, _ = header_error(cluster.header)
    if code:
        # Not the active controller (or not yet one): name the one that is and send the
        # requested topics back with a retriable error, so clients look again.
        return {
            "throttle_time_ms": 0,
            "brokers": [_self_node(context)],
            "cluster_id": None,
            "controller_id": cluster.header.controller_id,
            "topics": [
                {
                    "error_code": LEADER_NOT_AVAILABLE,
                    "name": name,
                    "topic_id": codec.uuid_value(None),
                    "is_internal": False,
                    "partitions": [],
                    "authorized_operations": codec.NO_AUTHORIZED_OPERATIONS,
                }
                for name in names
            ],
            "error_code": 0,
        }
    described = await context.admin.DescribeTopics(
        apb.DescribeTopicsRequest(topic_names=names, all_topics=all_topics), None
    )
    live = {broker.broker_id for broker in cluster.brokers if not broker.fenced}
    # Only nodes that speak Kafka's protocol are offered: clients dial every node Metadata
    # names, and raftmeta's brokers serve Raft and gRPC, not Kafka. Brokers stay visible in
    # DescribeCluster and as partition leaders, replicas and ISR members.
    nodes = [_self_node(context)]
    return {
        "throttle_time_ms": 0,
        "brokers": nodes,
        "cluster_id": cluster.cluster_id,
        "controller_id": cluster.controller_id,
        "topics": [_topic(topic, live) for topic in described.topics],
        "authorized_operations": codec.NO_AUTHORIZED_OPERATIONS,
        "error_code": header_error(described.header)[0],
    }


async def describe_cluster(context: KafkaContext, request: Any, version: int) -> Fields:
    """Kafka's DescribeCluster: the brokers, or this controller for endpoint_type 2."""
    cluster = await context.admin.DescribeCluster(apb.DescribeClusterRequest(), None)
    code, message = header_error(cluster.header)
    wants_controllers = version >= 1 and request.endpoint_type == CONTROLLER_ENDPOINTS
    if code:
        nodes: list[Fields] = []
        controller_id = cluster.header.controller_id
    elif wants_controllers:
        nodes = [dict(_self_node(context), broker_id=context.owner.node_id)]
        controller_id = cluster.controller_id
    else:
        include_fenced = version >= 2 and bool(request.include_fenced_brokers)
        nodes = [
            {"broker_id": node.pop("node_id"), **node}
            for node in _broker_nodes(cluster.brokers, include_fenced=include_fenced)
        ]
        controller_id = cluster.controller_id
    for node in nodes:
        node.pop("node_id", None)
        node.setdefault("is_fenced", False)
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "error_message": message,
        "endpoint_type": request.endpoint_type if version >= 1 else 1,
        "cluster_id": cluster.cluster_id,
        "controller_id": controller_id,
        "brokers": nodes,
        "authorized_operations": codec.NO_AUTHORIZED_OPERATIONS,
    }
