"""Metadata (key 3) and DescribeCluster (key 60), read through the API layer's own reads.

To a client bootstrapped to the controllers, the controllers are the cluster (KIP-919): both
APIs name as their nodes the controllers whose registration (``RegisterControllerRecord``)
carries a KAFKA listener, as this node's committed image holds them, plus this controller on
this listener, and the active controller as ControllerId. So a client that bootstrapped to a
standby finds the active controller and sends its admin calls there, and moves on when
leadership does. A Kafka client dials every node these answers name, and raftmeta's brokers do
not speak Kafka's protocol, so brokers appear only as partition leaders, replicas and ISR.

Metadata leaves out a controller this node saw die, as a Kafka broker's Metadata names only
live brokers: kafka-python and aiokafka send their next Metadata, and kafka-python its
controller lookup, to a node of the last answer picked at random, and a dead controller stays
registered, so with a killed controller named, half of the new kafka-python admin clients
failed their first call. "Saw die": this node's last Raft call to it found the connection
refused or closed by its end (how a killed process looks) after its current registration was
first seen here; a restarted controller registers a new incarnation and is named again, and
one that answers or calls this node again is named at once. Only that evidence counts, so a
controller is never left out on a guess (nor the active one, nor this one), and DescribeCluster
keeps naming every registered controller, as Kafka's controllers do.

Metadata's topics are read through the API layer on the active controller, waiting as the
gRPC reads do for its pending records to commit, so a client sees its own writes; a standby
answers them from its own committed image (with the same ACL checks), as a Kafka broker
answers from its metadata cache: a client may send Metadata to any node it was told of.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from raftmeta.common.topics import PartitionDescription, TopicDescription
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.kafka_protocol import codec
from raftmeta.quorum.node import monotonic_ms
from raftmeta.server.kafka import KAFKA_LISTENER
from raftmeta.server.kafka.context import Fields, KafkaContext

TOPIC_ID_LOOKUP_VERSION = 12
"""From this version a Metadata topic may be named by its id alone (a null name)."""
LEADER_NOT_AVAILABLE = 5
"""Kafka's retriable code for a partition (or a whole answer) without a leader yet."""


def _self_node(context: KafkaContext) -> Fields:
    return {
        "node_id": context.owner.node_id,
        "host": context.endpoint.host,
        "port": context.endpoint.port,
        "rack": None,
    }


def controller_nodes(context: KafkaContext) -> tuple[list[Fields], int]:
    """The controllers reachable on a KAFKA listener, by id, and the active one's id (-1 when
    none is known or it has no KAFKA listener registered yet, so clients ask again)."""
    nodes = {context.owner.node_id: _self_node(context)}
    controller = context.owner.maybe_controller
    if controller is None:
        return list(nodes.values()), -1
    for controller_id, registration in controller.committed_image.controllers.items():
        for endpoint in registration.endpoints:
            if endpoint.name == KAFKA_LISTENER and controller_id != context.owner.node_id:
                nodes[controller_id] = {
                    "node_id": controller_id,
                    "host": endpoint.host,
                    "port": endpoint.port,
                    "rack": None,
                }
    leader_id = controller.leader_id
    active = leader_id if leader_id is not None and leader_id in nodes else -1
    return [nodes[node_id] for node_id in sorted(nodes)], active


def active_controller_id(context: KafkaContext) -> int:
    """The active controller's id as :func:`controller_nodes` names it, without building the
    nodes: the listener asks after every write, and at every change of the node's state."""
    owner = context.owner
    controller = owner.maybe_controller
    if controller is None:
        return -1
    leader_id = controller.leader_id
    if leader_id is None:
        return -1
    if leader_id == owner.node_id:
        return leader_id
    registration = controller.committed_image.controllers.get(leader_id)
    if registration is not None and any(
        endpoint.name == KAFKA_LISTENER for endpoint in registration.endpoints
    ):
        return leader_id
    return -1


def note_registrations(context: KafkaContext) -> None:
    """Remember when each controller's current registration was first seen here: a refusal
    after that time means that incarnation died; a new one (a restart) revives it."""
    controller = context.owner.maybe_controller
    if controller is None:
        return
    seen = context.registrations_seen
    now_ms = monotonic_ms()
    for controller_id, registration in controller.committed_image.controllers.items():
        incarnation = bytes(registration.incarnation_id)
        if controller_id not in seen or seen[controller_id][0] != incarnation:
            seen[controller_id] = (incarnation, now_ms)


def metadata_nodes(context: KafkaContext) -> tuple[list[Fields], int]:
    """:func:`controller_nodes` less the controllers this node saw die since they registered
    (see the module's docstring)."""
    nodes, active = controller_nodes(context)
    note_registrations(context)
    seen = context.registrations_seen
    dead = {
        peer
        for peer, refused_ms in context.owner.node.refused_peers.items()
        if peer in seen and refused_ms > seen[peer][1]
    } - {active, context.owner.node_id}
    return [node for node in nodes if node["node_id"] not in dead], active


def _partition(partition: PartitionDescription, live: set[int]) -> Fields:
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


def _topic(topic: TopicDescription, live: set[int]) -> Fields:
    return {
        "error_code": int(topic.error.code),
        "name": topic.name,
        "topic_id": codec.uuid_value(topic.topic_id),
        "is_internal": False,
        "partitions": [_partition(partition, live) for partition in topic.partitions],
        "authorized_operations": codec.NO_AUTHORIZED_OPERATIONS,
    }


@dataclass(frozen=True, slots=True)
class TopicsRead:
    """Topics as Metadata reads them: the topics, the live brokers, and the error of the
    whole read (0: none; then ``topics`` is empty)."""

    error_code: int
    topics: tuple[TopicDescription, ...]
    live: set[int]


async def read_topics(context: KafkaContext, names: Sequence[str] | None) -> TopicsRead | None:
    """The topics ``names`` names (``None``: all) and the live (registered, unfenced)
    brokers, with the caller's ACL checks: on the active controller after its pending records
    commit, on a standby (or for a caller that may not describe the cluster) from this node's
    committed image; ``None`` before this node's controller runs."""
    apis, principal = context.apis, context.principal
    try:
        live = set(await apis.live_brokers(principal))
    except KafkaError:
        here = apis.describe_topics_here(principal, names)
        controller = context.owner.maybe_controller
        if here is None or controller is None:
            return None
        live = {
            broker_id
            for broker_id, broker in controller.committed_image.brokers.items()
            if not broker.fenced
        }
        return TopicsRead(0, here.topics, live)
    try:
        described = await apis.describe_topics(principal, names)
    except KafkaError as error:
        return TopicsRead(int(error.code), (), live)
    return TopicsRead(0, described.topics, live)


def _unnamed(code: int, topic_id: Any, version: int) -> Fields:
    """The answer to a requested topic without a name: null from v12, empty before."""
    return {
        "error_code": code,
        "name": None if version >= TOPIC_ID_LOOKUP_VERSION else "",
        "topic_id": topic_id,
        "is_internal": False,
        "partitions": [],
        "authorized_operations": codec.NO_AUTHORIZED_OPERATIONS,
    }


def _names_of(context: KafkaContext, request: Any, version: int) -> tuple[list[str], list[Fields]]:
    """The requested topics' names (v12's topics asked by id alone found by it in this node's
    committed image), and the answers for those that cannot be looked up: a null name before
    v12 or without a topic id is INVALID_REQUEST, an id no topic has is UNKNOWN_TOPIC_ID."""
    names: list[str] = []
    unnamed: list[Fields] = []
    controller = context.owner.maybe_controller
    for topic in request.topics or ():
        if topic.name is not None:
            names.append(topic.name)
            continue
        topic_id = getattr(topic, "topic_id", None)
        raw = topic_id.bytes if isinstance(topic_id, uuid.UUID) else b""
        if version < TOPIC_ID_LOOKUP_VERSION or not any(raw):
            unnamed.append(_unnamed(int(ErrorCode.INVALID_REQUEST), codec.uuid_value(raw), version))
            continue
        found = None if controller is None else controller.committed_image.topics.get(raw)
        if found is None:
            unnamed.append(_unnamed(int(ErrorCode.UNKNOWN_TOPIC_ID), topic_id, version))
        else:
            names.append(found.name)
    return names, unnamed


def metadata_failed(request: Any, version: int, code: int, message: str | None) -> Fields:
    """Kafka's error response: ``code`` on every requested topic, no brokers."""
    topics = []
    for topic in request.topics or ():
        if topic.name is None:
            topics.append(_unnamed(code, getattr(topic, "topic_id", None), version))
        else:
            topics.append(
                {**_unnamed(code, getattr(topic, "topic_id", None), version), "name": topic.name}
            )
    return {
        "throttle_time_ms": 0,
        "brokers": [],
        "cluster_id": None,
        "controller_id": -1,
        "topics": topics,
        "error_code": code,
    }


async def metadata(context: KafkaContext, request: Any, version: int) -> Fields:
    """Kafka's Metadata: a null topic list (or an empty one before v1) asks for every topic.

    The active controller answers after its pending records commit (a client sees its own
    writes); a standby answers from its own committed image, as a Kafka broker answers from
    its metadata cache."""
    names, unnamed = _names_of(context, request, version)
    all_topics = request.topics is None or (version == 0 and not names)
    nodes, active = metadata_nodes(context)
    read = await read_topics(context, None if all_topics else names)
    if read is None:
        # Not running yet: send the requested topics back with a retriable error.
        return {
            "throttle_time_ms": 0,
            "brokers": nodes,
            "cluster_id": context.owner.node.cluster_id or None,
            "controller_id": active,
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
            ]
            + unnamed,
            "error_code": 0,
        }
    return {
        "throttle_time_ms": 0,
        "brokers": nodes,
        "cluster_id": context.owner.node.cluster_id,
        "controller_id": active,
        "topics": [_topic(topic, read.live) for topic in read.topics] + unnamed,
        "authorized_operations": codec.NO_AUTHORIZED_OPERATIONS,
        "error_code": read.error_code,
    }


async def describe_cluster(context: KafkaContext, request: Any, version: int) -> Fields:
    """Kafka's DescribeCluster, answered by any controller: the controllers as the nodes
    (for either endpoint_type: to a client bootstrapped to the controllers they are the
    cluster) and the active controller as ControllerId."""
    nodes, active = controller_nodes(context)
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "endpoint_type": request.endpoint_type if version >= 1 else 1,
        "cluster_id": context.owner.node.cluster_id,
        "controller_id": active,
        "brokers": [
            {
                "broker_id": node["node_id"],
                "host": node["host"],
                "port": node["port"],
                "rack": None,
                "is_fenced": False,
            }
            for node in nodes
        ],
        "authorized_operations": codec.NO_AUTHORIZED_OPERATIONS,
    }
