"""Requests and replies of the controller's operations, as frozen values.

They mirror the fields of Kafka's CreateTopics, CreatePartitions, DeleteTopics, DescribeConfigs,
IncrementalAlterConfigs, BrokerRegistration, BrokerHeartbeat, UnregisterBroker and
AlterPartition messages, so the gRPC services can map them one to one. Per-item errors are
values (an :class:`~raftmeta.errors.ErrorCode` with a message); a whole request fails with
:class:`~raftmeta.errors.KafkaError` (NOT_CONTROLLER, REQUEST_TIMED_OUT, ...).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from raftmeta.errors import ErrorCode
from raftmeta.records import ZERO_UUID, BrokerEndpoint, BrokerFeature, TopicId, Uuid


@dataclass(frozen=True, slots=True)
class ItemError:
    """One item's outcome: NONE, or Kafka's code with a message."""

    code: ErrorCode = ErrorCode.NONE
    message: str | None = None

    @property
    def ok(self) -> bool:
        return self.code is ErrorCode.NONE


OK = ItemError()


# --- topics -----------------------------------------------------------------------------------


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


# --- configs ----------------------------------------------------------------------------------


class AlterConfigOp(enum.IntEnum):
    """Kafka's IncrementalAlterConfigs operation ids."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True, slots=True)
class ConfigResourceRef:
    """A resource as requests name it: a :class:`ConfigResourceType` id and a name."""

    resource_type: int
    name: str


@dataclass(frozen=True, slots=True)
class AlterConfig:
    name: str
    op: AlterConfigOp
    value: str | None = None


class ConfigSource(enum.IntEnum):
    """Where a described value comes from (Kafka's DescribeConfigs source ids)."""

    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True, slots=True)
class DescribeConfigsResult:
    resource: ConfigResourceRef
    error: ItemError = OK
    entries: tuple[ConfigEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class AlterConfigsResult:
    resource: ConfigResourceRef
    error: ItemError = OK


# --- brokers ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BrokerRegistrationRequest:
    broker_id: int
    cluster_id: str
    incarnation_id: Uuid
    endpoints: tuple[BrokerEndpoint, ...] = ()
    features: tuple[BrokerFeature, ...] = ()
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatRequest:
    broker_id: int
    broker_epoch: int
    current_metadata_offset: int
    want_fence: bool
    want_shut_down: bool = False


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatReply:
    is_caught_up: bool
    is_fenced: bool
    should_shut_down: bool


# --- AlterPartition ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IsrMember:
    """A proposed ISR member with the broker epoch the leader saw it at (-1: not known)."""

    broker_id: int
    broker_epoch: int = -1


@dataclass(frozen=True, slots=True)
class PartitionIsrChange:
    partition_id: int
    leader_epoch: int
    new_isr: tuple[IsrMember, ...]
    partition_epoch: int
    leader_recovery_state: int = 0


@dataclass(frozen=True, slots=True)
class AlterPartitionRequest:
    broker_id: int
    broker_epoch: int
    topic_id: TopicId
    partitions: tuple[PartitionIsrChange, ...]


@dataclass(frozen=True, slots=True)
class AlterPartitionResult:
    """A partition's state after the change, or its error."""

    partition_id: int
    error: ItemError = OK
    leader: int = -1
    leader_epoch: int = -1
    isr: tuple[int, ...] = ()
    partition_epoch: int = -1
    leader_recovery_state: int = 0
