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
