"""CreateTopics, CreatePartitions and DeleteTopics as values, field for field Kafka's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from raftmeta.common.items import OK, ItemError
from raftmeta.records import ZERO_UUID, TopicId


@dataclass(frozen=True, slots=True)
class NewTopic:
    """A topic to create; -1 asks for ``num.partitions`` / ``default.replication.factor``."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    assignments: Mapping[int, tuple[int, ...]] | None = None
    """Manual replica lists by partition id; then both counts must be -1."""
    configs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CreateTopicResult:
    name: str
    error: ItemError = OK
    topic_id: TopicId = ZERO_UUID
    num_partitions: int = -1
    replication_factor: int = -1
    configs: Mapping[str, str] = field(default_factory=dict)
    """The topic's own configs as created."""


@dataclass(frozen=True, slots=True)
class NewPartitions:
    """Grow ``topic`` to ``count`` partitions, optionally with manual lists for the new ones."""

    topic: str
    count: int
    assignments: tuple[tuple[int, ...], ...] | None = None


@dataclass(frozen=True, slots=True)
class TopicResult:
    """The result of CreatePartitions or DeleteTopics for one topic."""

    name: str
    error: ItemError = OK


@dataclass(frozen=True, slots=True)
class CreateTopicsRequest:
    """A CreateTopics call as either wire carries it (``timeout_ms <= 0``: the default;
    ``request_id`` empty: no retry protection)."""

    topics: tuple[NewTopic, ...]
    validate_only: bool = False
    timeout_ms: int = 0
    request_id: bytes = b""


@dataclass(frozen=True, slots=True)
class CreatePartitionsRequest:
    topics: tuple[NewPartitions, ...]
    validate_only: bool = False
    timeout_ms: int = 0
    request_id: bytes = b""


@dataclass(frozen=True, slots=True)
class DeleteTopicsRequest:
    names: tuple[str, ...]
    timeout_ms: int = 0
    request_id: bytes = b""


@dataclass(frozen=True, slots=True)
class PartitionDescription:
    """One partition as DescribeTopics and Metadata report it."""

    partition_index: int
    leader_id: int
    leader_epoch: int
    partition_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader_recovery_state: int = 0
    eligible_leader_replicas: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TopicDescription:
    """One described topic, or the error that topic is answered with."""

    name: str
    error: ItemError = OK
    topic_id: TopicId = b""
    """Empty for a topic answered with an error."""
    partitions: tuple[PartitionDescription, ...] = ()
    configs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DescribedTopics:
    """DescribeTopics' answer: the topics, read at the image at ``offset``."""

    topics: tuple[TopicDescription, ...]
    offset: int
