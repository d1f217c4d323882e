"""Partition reassignment (KIP-455) as values: what a request asks, what a listing shows.

AlterPartitionReassignments names partitions with a target replica list each, or ``None`` to
cancel the partition's reassignment; ListPartitionReassignments names partitions (or none,
meaning every one) and is answered with the replicas, adding and removing sets of each
partition that is moving. Both wires decode into these and encode from them.
"""

from __future__ import annotations

from dataclasses import dataclass

from raftmeta.common.elections import TopicPartition
from raftmeta.common.items import ItemError


@dataclass(frozen=True, slots=True)
class PartitionReassignment:
    """A partition being moved: ``replicas`` is the target followed by the replicas being
    removed (the partition's whole replica set while it moves); ``adding_replicas`` are the
    target's new brokers, ``removing_replicas`` the current ones it drops.

    The names are kafka-python's ``list_partition_reassignments`` keys (and Kafka's
    ``PartitionReassignment`` accessors), so one reads as the other.
    """

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]

    def as_dict(self) -> dict[str, list[int]]:
        """kafka-python's shape: ``{'replicas': [...], 'adding_replicas': [...],
        'removing_replicas': [...]}``."""
        return {
            "replicas": list(self.replicas),
            "adding_replicas": list(self.adding_replicas),
            "removing_replicas": list(self.removing_replicas),
        }


@dataclass(frozen=True, slots=True)
class ReassignmentTarget:
    """One partition of an AlterPartitionReassignments request: the replica list to move to,
    or ``None`` to cancel the reassignment in progress."""

    partition: TopicPartition
    replicas: tuple[int, ...] | None


@dataclass(frozen=True, slots=True)
class AlterPartitionReassignmentsRequest:
    """The partitions in request order. ``allow_replication_factor_change`` is KIP-860's flag
    (version 1 of the Kafka API; true by default): false refuses a target whose length
    differs from the partition's replica count."""

    targets: tuple[ReassignmentTarget, ...]
    timeout_ms: int = 0
    allow_replication_factor_change: bool = True
    request_id: bytes = b""


@dataclass(frozen=True, slots=True)
class ReassignmentResult:
    """One partition's answer to AlterPartitionReassignments."""

    partition: TopicPartition
    error: ItemError


@dataclass(frozen=True, slots=True)
class ListPartitionReassignmentsRequest:
    """``partitions`` ``None`` lists every partition being moved; named partitions that are
    unknown or not moving are left out of the answer, as Kafka does."""

    partitions: tuple[TopicPartition, ...] | None
    timeout_ms: int = 0


def grouped_by_topic(partitions: tuple[TopicPartition, ...]) -> dict[str, list[int]]:
    """The partitions as the wires carry them: each topic once, in first-named order, with
    its partition numbers in request order."""
    by_topic: dict[str, list[int]] = {}
    for partition in partitions:
        by_topic.setdefault(partition.topic, []).append(partition.partition)
    return by_topic
