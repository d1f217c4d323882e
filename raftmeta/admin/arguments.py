"""The admin client's checks of its callers' arguments, made before anything is sent.

A shape the wire cannot carry (a duplicate topic, a string where a list belongs, a NewTopic
whose counts are not ints) is the caller's mistake and fails at once as a ValueError, in the
caller's own frame, rather than later in a future; what the controller judges (counts, names,
config values) it answers per item.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from raftmeta.admin.types import ConfigResource, NewPartitions, NewTopic
from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.common.reassignments import ReassignmentTarget

K = TypeVar("K", bound=Hashable)


def timeout_ms(request_timeout: float | None) -> int | None:
    """confluent's per-call ``request_timeout`` is in seconds; None keeps request.timeout.ms."""
    if request_timeout is None:
        return None
    if isinstance(request_timeout, bool) or not isinstance(request_timeout, int | float):
        raise ValueError(f"request_timeout is in seconds, got {request_timeout!r}")
    if not request_timeout > 0 or math.isinf(request_timeout):
        raise ValueError(
            f"request_timeout must be a finite number of seconds above 0, got {request_timeout}"
        )
    return max(1, math.ceil(request_timeout * 1000))


def unique(keys: Iterable[K], what: str) -> list[K]:
    """The keys in order; one that repeats, or none at all, is a ValueError."""
    seen: list[K] = []
    found: set[K] = set()
    for key in keys:
        if key in found:
            raise ValueError(f"duplicate {what} {key!r} in the request")
        found.add(key)
        seen.append(key)
    if not seen:
        raise ValueError(f"expected at least one {what}")
    return seen


def checked(items: Sequence[Any] | Any, kind: type, what: str) -> list[Any]:
    """``items`` as a list of ``kind``; a lone item or a string (iterable, but not a list of
    items) is a ValueError."""
    if isinstance(items, (kind, str, bytes)) or not isinstance(items, Iterable):
        raise ValueError(f"expected a list of {what}, got {type(items).__name__}")
    listed = list(items)
    for item in listed:
        if not isinstance(item, kind):
            raise ValueError(f"expected a list of {what}, found {item!r}")
    return listed


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_replicas(owner: str, assignment: Sequence[Sequence[int]] | None) -> None:
    if assignment is None:
        return
    if isinstance(assignment, str) or not all(
        isinstance(replicas, Sequence) and all(_is_int(b) for b in replicas)
        for replicas in assignment
    ):
        raise ValueError(f"{owner}: replica_assignment must be lists of broker ids")


def check_new_topic(topic: NewTopic) -> None:
    """Shapes the wire cannot carry fail here, as ValueError, rather than in the background;
    what the controller judges (counts, names, config values) it answers per topic."""
    if not isinstance(topic.topic, str):
        raise ValueError(f"NewTopic: the topic name must be a string, got {topic.topic!r}")
    if not _is_int(topic.num_partitions) or not _is_int(topic.replication_factor):
        raise ValueError(f"NewTopic {topic.topic!r}: counts must be ints (-1: the default)")
    _check_replicas(f"NewTopic {topic.topic!r}", topic.replica_assignment)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in topic.config.items()):
        raise ValueError(f"NewTopic {topic.topic!r}: config keys and values must be strings")


def check_new_partitions(partitions: NewPartitions) -> None:
    if not isinstance(partitions.topic, str) or not _is_int(partitions.new_total_count):
        raise ValueError(
            f"NewPartitions {partitions.topic!r}: needs a topic name and an int new_total_count"
        )
    _check_replicas(f"NewPartitions {partitions.topic!r}", partitions.replica_assignment)


def check_alterations(resources: Sequence[ConfigResource]) -> None:
    for resource in resources:
        if not resource.incremental_configs:
            raise ValueError(f"{resource} has no incremental_configs to apply")
        for entry in resource.incremental_configs:
            if entry.incremental_operation is None:
                raise ValueError(
                    f"{resource}: config {entry.name!r} needs an incremental_operation "
                    "(SET, DELETE, APPEND or SUBTRACT)"
                )


def wire_election_type(value: ElectionType | int) -> int:
    """The wire value; an unknown one is sent as it is and the controller answers
    INVALID_REQUEST, as Kafka's does."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"election_type must be an ElectionType, got {value!r}")
    return int(value)


def reassignment_targets(
    reassignments: Mapping[TopicPartition, Sequence[int] | None],
) -> list[ReassignmentTarget]:
    """kafka-python's argument, ``{TopicPartition: [broker ids] or None}``, as the request's
    targets in the mapping's order. An empty list is sent as asked: the controller answers it
    per partition (INVALID_REPLICA_ASSIGNMENT), as Kafka's does."""
    if not isinstance(reassignments, Mapping):
        raise ValueError(
            "expected a dict of TopicPartition to a list of broker ids (or None to cancel), "
            f"got {type(reassignments).__name__}"
        )
    if not reassignments:
        raise ValueError("expected at least one TopicPartition")
    targets: list[ReassignmentTarget] = []
    for partition, replicas in reassignments.items():
        if not isinstance(partition, TopicPartition):
            raise ValueError(f"expected TopicPartition keys, found {partition!r}")
        if replicas is None:
            targets.append(ReassignmentTarget(partition, None))
            continue
        if isinstance(replicas, (str, bytes)) or not isinstance(replicas, Iterable):
            raise ValueError(f"{partition}: the replicas must be a list of broker ids")
        listed = tuple(replicas)
        if not all(_is_int(broker) for broker in listed):
            raise ValueError(f"{partition}: the replicas must be int broker ids, got {listed!r}")
        targets.append(ReassignmentTarget(partition, listed))
    return targets


def named_partitions(
    topic_partitions: Sequence[TopicPartition] | Mapping[str, Sequence[int]] | None,
) -> tuple[TopicPartition, ...] | None:
    """kafka-python's ``topic_partitions``: a list of TopicPartition, a dict of topic name to
    partition numbers, or None for every partition being moved."""
    if topic_partitions is None:
        return None
    if isinstance(topic_partitions, Mapping):
        named: list[TopicPartition] = []
        for topic, numbers in topic_partitions.items():
            if not isinstance(topic, str) or isinstance(numbers, (str, bytes)):
                raise ValueError("expected a dict of topic name to a list of partition numbers")
            for number in numbers:
                if not _is_int(number):
                    raise ValueError(f"{topic}: partition numbers must be ints, got {number!r}")
                named.append(TopicPartition(topic, number))
        return tuple(unique(named, "TopicPartition"))
    return tuple(
        unique(checked(topic_partitions, TopicPartition, "TopicPartition"), "TopicPartition")
    )
