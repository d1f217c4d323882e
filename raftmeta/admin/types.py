"""What the AdminClient takes and gives: requests, descriptions and the error it raises.

Names and shapes follow confluent-kafka's ``confluent_kafka.admin`` (NewTopic, NewPartitions,
ConfigResource, ConfigEntry, TopicDescription, ...) so code written against it reads the same;
they are frozen values here rather than confluent's mutable objects.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from raftmeta.common.configs import AlterConfigOp, ConfigSource
from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.errors import ErrorCode, KafkaError

__all__ = [
    "AlterConfigOp",
    "AlterConfigOpType",
    "BrokerDescription",
    "ClusterDescription",
    "ConfigEntry",
    "ConfigResource",
    "ConfigSource",
    "ElectionType",
    "KafkaException",
    "NewPartitions",
    "NewTopic",
    "PartitionDescription",
    "ResourceType",
    "TopicDescription",
    "TopicPartition",
]

AlterConfigOpType = AlterConfigOp
"""confluent-kafka's name for the IncrementalAlterConfigs operation (SET, DELETE, APPEND,
SUBTRACT)."""


class KafkaException(KafkaError):
    """What a failed admin future raises: Kafka's error code, its name and a message.

    A subclass of :class:`raftmeta.errors.KafkaError`, so ``except KafkaError`` catches it too.
    confluent-kafka wraps a KafkaError in a KafkaException and reads it as ``e.args[0]``; here
    the exception is the error, and ``e.error`` returns it for code written that way. ``code``
    is an :class:`~raftmeta.errors.ErrorCode` (an int), an attribute rather than confluent's
    method.
    """

    def __init__(self, code: ErrorCode | int, message: str = "") -> None:
        try:
            known = ErrorCode(code)
        except ValueError:
            known = ErrorCode.UNKNOWN_SERVER_ERROR
            message = f"error code {int(code)}: {message}" if message else f"error code {code}"
        super().__init__(known, message)

    @classmethod
    def of(cls, error: KafkaError) -> KafkaException:
        return error if isinstance(error, KafkaException) else cls(error.code, error.message)

    @property
    def error(self) -> KafkaException:
        return self

    @property
    def name(self) -> str:
        """The code's name, as Kafka spells it (``TOPIC_ALREADY_EXISTS``)."""
        return self.code.name

    def __str__(self) -> str:
        return f"{self.code.name} ({int(self.code)}): {self.message}"

    def __repr__(self) -> str:
        return f"KafkaException({self.code.name}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, KafkaError):
            return NotImplemented
        return (self.code, self.message) == (other.code, other.message)

    def __hash__(self) -> int:
        return hash((self.code, self.message))


@dataclass(frozen=True, slots=True)
class NewTopic:
    """A topic to create. -1 partitions or replication factor means the cluster's default
    (``num.partitions``, ``default.replication.factor``); ``replica_assignment`` lists each
    partition's replicas by partition index and excludes both counts."""

    topic: str
    num_partitions: int = -1
    replication_factor: int = -1
    replica_assignment: Sequence[Sequence[int]] | None = None
    config: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class NewPartitions:
    """Grow ``topic`` to ``new_total_count`` partitions; ``replica_assignment`` lists the
    replicas of each new partition in order (None lets the placer choose)."""

    topic: str
    new_total_count: int
    replica_assignment: Sequence[Sequence[int]] | None = None


class ResourceType(enum.IntEnum):
    """Kafka's ConfigResource.Type ids for the resources raftmeta keeps configs for."""

    TOPIC = 2
    BROKER = 4


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """A config value as described, or (with ``incremental_operation``) a change to make.

    A described one says, as confluent-kafka's does, whether it is read-only and sensitive
    (its value then ``None``: never shown), and lists its ``synonyms`` by name, the one in
    effect first, each itself a ConfigEntry with ``is_synonym`` set.
    """

    name: str
    value: str | None
    source: ConfigSource | None = None
    incremental_operation: AlterConfigOp | None = None
    is_read_only: bool = False
    is_sensitive: bool = False
    is_synonym: bool = False
    synonyms: Mapping[str, ConfigEntry] = field(default_factory=dict, hash=False)

    @property
    def is_default(self) -> bool:
        return self.source is ConfigSource.DEFAULT_CONFIG


@dataclass(frozen=True, slots=True)
class ConfigResource:
    """A topic or broker whose configs to describe or alter. ``restype`` takes a
    :class:`ResourceType` or its name (``"topic"``, ``"BROKER"``); ``incremental_configs``
    holds the changes for :meth:`AdminClient.incremental_alter_configs`.

    Equal resources hash alike whatever changes they carry, so a result dict can be indexed
    with a fresh ``ConfigResource(type, name)``.
    """

    restype: ResourceType
    name: str
    incremental_configs: tuple[ConfigEntry, ...] = field(default=(), compare=False)

    def __init__(
        self,
        restype: ResourceType | int | str,
        name: str,
        incremental_configs: Sequence[ConfigEntry] = (),
    ) -> None:
        object.__setattr__(self, "restype", _resource_type(restype))
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "incremental_configs", tuple(incremental_configs))

    def __str__(self) -> str:
        return f"ConfigResource({self.restype.name},{self.name})"


def _resource_type(value: ResourceType | int | str) -> ResourceType:
    if isinstance(value, str):
        try:
            return ResourceType[value.strip().upper()]
        except KeyError:
            raise ValueError(
                f"unknown config resource type {value!r}; use TOPIC or BROKER"
            ) from None
    try:
        return ResourceType(value)
    except ValueError:
        raise ValueError(
            f"unknown config resource type {value!r}; use TOPIC (2) or BROKER (4)"
        ) from None


@dataclass(frozen=True, slots=True)
class PartitionDescription:
    """One partition: its leader (-1 when none), replicas in preference order, and ISR."""

    id: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader_epoch: int = 0
    partition_epoch: int = 0
    leader_recovery_state: int = 0
    elr: tuple[int, ...] = ()
    """Eligible leader replicas (KIP-966); empty while the feature is off."""
    last_known_elr: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TopicDescription:
    """A topic as the controller's committed image holds it. ``topic_id`` is Kafka's printed
    form (unpadded URL-safe base64); ``configs`` are the topic's own settings only."""

    name: str
    topic_id: str
    partitions: tuple[PartitionDescription, ...]
    configs: Mapping[str, str] = field(default_factory=dict)

    @property
    def replication_factor(self) -> int:
        return len(self.partitions[0].replicas) if self.partitions else 0


@dataclass(frozen=True, slots=True)
class BrokerDescription:
    """A registered broker as the controller sees it."""

    id: int
    host: str
    port: int
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    epoch: int
    leader_count: int
    replica_count: int


@dataclass(frozen=True, slots=True)
class ClusterDescription:
    """The cluster id, the active controller's node id and the registered brokers by id."""

    cluster_id: str
    controller_id: int
    brokers: tuple[BrokerDescription, ...]
    metadata_offset: int = -1
    image_digest: str = ""

    @property
    def nodes(self) -> tuple[BrokerDescription, ...]:
        """confluent-kafka's name for the brokers."""
        return self.brokers


@dataclass(frozen=True, slots=True)
class FeatureMetadata:
    """DescribeFeatures: the finalized levels, and per feature the range every unfenced broker
    and the controller support (``(min, max)``); ``finalized_epoch`` is the metadata offset
    they were read at."""

    finalized: dict[str, int]
    supported: dict[str, tuple[int, int]]
    finalized_epoch: int
