"""DescribeConfigs, IncrementalAlterConfigs and legacy AlterConfigs as values: resources,
operations, sources.

The numeric values are Kafka's wire ids, so a client and the controller agree on them without
a table of their own.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from raftmeta.common.items import OK, ItemError


class AlterConfigOp(enum.IntEnum):
    """Kafka's IncrementalAlterConfigs operation ids."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True, slots=True)
class ConfigResourceRef:
    """A resource as requests name it: a :class:`~raftmeta.records.ConfigResourceType` id and
    a name. The id stays an int: an unsupported one is that resource's error, not the
    request's, so the controller answers it per item."""

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


class ConfigType(enum.IntEnum):
    """A config's value type (Kafka's DescribeConfigs v3+ ``ConfigType`` ids)."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


@dataclass(frozen=True, slots=True)
class ConfigSynonym:
    """One level a described value could come from, as Kafka's DescribeConfigs synonyms: the
    name at that level (a broker synonym may differ from the topic's), its value there and
    the level."""

    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    """A described config. ``value`` is ``None`` for a sensitive one, which is never shown;
    ``synonyms`` list every level that sets it, the one in effect first."""

    name: str
    value: str | None
    source: ConfigSource
    is_sensitive: bool = False
    read_only: bool = False
    synonyms: tuple[ConfigSynonym, ...] = ()
    documentation: str | None = None
    config_type: ConfigType = ConfigType.UNKNOWN


@dataclass(frozen=True, slots=True)
class DescribeConfigsResult:
    resource: ConfigResourceRef
    error: ItemError = OK
    entries: tuple[ConfigEntry, ...] = ()


@dataclass(frozen=True, slots=True)
class AlterConfigsResult:
    resource: ConfigResourceRef
    error: ItemError = OK


@dataclass(frozen=True, slots=True)
class RequestedConfigChange:
    """One IncrementalAlterConfigs row as the wire carries it: ``op`` is not yet checked to be
    an :class:`AlterConfigOp` (an unknown one fails its resource, not the request)."""

    name: str
    op: int
    value: str | None = None


@dataclass(frozen=True, slots=True)
class AlterConfigsResource:
    resource: ConfigResourceRef
    changes: tuple[RequestedConfigChange, ...]


@dataclass(frozen=True, slots=True)
class IncrementalAlterConfigsRequest:
    resources: tuple[AlterConfigsResource, ...]
    validate_only: bool = False
    timeout_ms: int = 0
    request_id: bytes = b""


@dataclass(frozen=True, slots=True)
class ReplacedConfigs:
    """One resource of legacy AlterConfigs: its configs become exactly ``configs`` (a stored
    name left out is deleted). A ``None`` value, which Kafka's wire allows, sets nothing."""

    resource: ConfigResourceRef
    configs: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, slots=True)
class AlterConfigsRequest:
    """Legacy AlterConfigs (Kafka's key 33): every resource's configs replaced."""

    resources: tuple[ReplacedConfigs, ...]
    validate_only: bool = False
    timeout_ms: int = 0
    request_id: bytes = b""
