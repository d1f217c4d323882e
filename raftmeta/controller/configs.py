"""Which topic and broker configs the controller accepts, and how values are checked.

A value the controller writes is replayed by every node forever, so it is checked here, at the
edge, with INVALID_CONFIG and a message naming the key. Unknown names are refused too: a typo
such as ``min.insync.replica`` would otherwise be stored and silently do nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from raftmeta.common.configs import (
    AlterConfig,
    AlterConfigOp,
    AlterConfigsResult,
    ConfigEntry,
    ConfigResourceRef,
    ConfigSource,
    DescribeConfigsResult,
)
from raftmeta.common.features import elr_enabled
from raftmeta.common.items import OK, ItemError
from raftmeta.controller.result import ControllerResult
from raftmeta.controller.settings import ControllerSettings
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.records import ClearElrRecord, ConfigRecord, ConfigResourceType, Record

MIN_INSYNC_REPLICAS = "min.insync.replicas"
UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable"

Validator = Callable[[str], str | None]
"""Returns a reason the value is bad, or ``None``."""


INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
MAX_CONFIG_VALUE_LENGTH = 1024
"""The longest config value accepted. Every value the controller accepts is short (a number, a
boolean, a policy list); anything longer is refused before it is parsed, so a request cannot
make every node replay and keep a megabyte-long value forever."""
SHOWN_LENGTH = 100
"""How much of a refused name or value an error message repeats."""


def shown(text: str) -> str:
    """``text`` for an error message, cut short if it is long."""
    if len(text) <= SHOWN_LENGTH:
        return text
    return f"{text[:SHOWN_LENGTH]}... ({len(text)} characters)"


def _int_in(minimum: int, maximum: int) -> Validator:
    """An integer between the bounds: Kafka's INT configs are int32, its LONG ones int64."""

    def check(value: str) -> str | None:
        try:
            number = int(value.strip())
        except ValueError:
            return "must be an integer"
        if number < minimum:
            return f"must be at least {minimum}"
        if number > maximum:
            return f"must be at most {maximum}"
        return None

    return check


def _int_at_least(minimum: int) -> Validator:
    """A Kafka INT config (int32) of at least ``minimum``."""
    return _int_in(minimum, INT32_MAX)


def _long_at_least(minimum: int) -> Validator:
    """A Kafka LONG config (int64) of at least ``minimum``."""
    return _int_in(minimum, INT64_MAX)


def _boolean(value: str) -> str | None:
    return None if value.strip().lower() in ("true", "false") else "must be true or false"


def _one_of(*choices: str) -> Validator:
    def check(value: str) -> str | None:
        return None if value.strip() in choices else f"must be one of {', '.join(choices)}"

    return check


def _cleanup_policy(value: str) -> str | None:
    parts = [part.strip() for part in value.split(",")]
    if parts and all(part in ("delete", "compact") for part in parts):
        return None
    return "must be a list of delete and compact"


TOPIC_CONFIGS: Mapping[str, Validator] = {
    MIN_INSYNC_REPLICAS: _int_at_least(1),
    UNCLEAN_LEADER_ELECTION_ENABLE: _boolean,
    "cleanup.policy": _cleanup_policy,
    "retention.ms": _long_at_least(-1),
    "retention.bytes": _long_at_least(-1),
    "segment.bytes": _int_at_least(14),
    "segment.ms": _long_at_least(1),
    "max.message.bytes": _int_at_least(0),
    "compression.type": _one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    "min.compaction.lag.ms": _long_at_least(0),
    "delete.retention.ms": _long_at_least(0),
}

BROKER_CONFIGS: Mapping[str, Validator] = {
    MIN_INSYNC_REPLICAS: _int_at_least(1),
    UNCLEAN_LEADER_ELECTION_ENABLE: _boolean,
    "log.retention.ms": _long_at_least(-1),
    "log.retention.bytes": _long_at_least(-1),
    "log.cleanup.policy": _cleanup_policy,
    "compression.type": _one_of("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"),
    "message.max.bytes": _int_at_least(0),
}


def check_config(known: Mapping[str, Validator], kind: str, name: str, value: str | None) -> None:
    """Raises INVALID_CONFIG for an unknown name or a bad value; ``None`` (delete) is fine."""
    validator = known.get(name)
    if validator is None:
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown {kind} config name: {shown(name)}")
    if value is None:
        return
    if len(value) > MAX_CONFIG_VALUE_LENGTH:
        reason: str | None = f"longer than {MAX_CONFIG_VALUE_LENGTH} characters"
    else:
        reason = validator(value)
    if reason is not None:
        raise KafkaError(
            ErrorCode.INVALID_CONFIG,
            f"Invalid value {shown(value)} for configuration {name}: {reason}",
        )


def _resource_error(image: MetadataImage, resource: ConfigResourceRef) -> ItemError | None:
    if resource.resource_type == ConfigResourceType.TOPIC:
        if image.topic_by_name(resource.name) is None:
            return ItemError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic '{resource.name}' does not exist."
            )
        return None
    if resource.resource_type == ConfigResourceType.BROKER:
        # A broker's own configs are named by its id; "" holds the cluster-wide defaults.
        if resource.name == "" or (resource.name.isdigit() and resource.name.isascii()):
            return None
        return ItemError(ErrorCode.INVALID_REQUEST, f"Invalid broker name {resource.name!r}.")
    return ItemError(
        ErrorCode.INVALID_REQUEST, f"Unsupported config resource type {resource.resource_type}."
    )


def describe_config(
    image: MetadataImage, resource: ConfigResourceRef, static_defaults: Mapping[str, str]
) -> DescribeConfigsResult:
    """A resource's effective configs, each with the level it comes from.

    ``static_defaults`` are the node's own settings for the configs that have a cluster-wide
    default. A topic shows them, overridden by the dynamic cluster default, overridden by its
    own values; a broker shows the static ones, then the dynamic cluster default, then its own.
    """
    error = _resource_error(image, resource)
    if error is not None:
        return DescribeConfigsResult(resource, error)
    cluster_defaults = image.configs(int(ConfigResourceType.BROKER), "")
    entries: dict[str, ConfigEntry] = {}
    if resource.resource_type == ConfigResourceType.TOPIC:
        for name, value in static_defaults.items():
            entries[name] = ConfigEntry(name, value, ConfigSource.DEFAULT_CONFIG)
            if name in cluster_defaults:
                entries[name] = ConfigEntry(
                    name, cluster_defaults[name], ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
                )
        own = ConfigSource.TOPIC_CONFIG
    else:
        for name, value in static_defaults.items():
            entries[name] = ConfigEntry(name, value, ConfigSource.STATIC_BROKER_CONFIG)
        for name, value in cluster_defaults.items():
            entries[name] = ConfigEntry(name, value, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
        own = (
            ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
            if resource.name == ""
            else ConfigSource.DYNAMIC_BROKER_CONFIG
        )
    for name, value in image.configs(resource.resource_type, resource.name).items():
        entries[name] = ConfigEntry(name, value, own)
    return DescribeConfigsResult(resource, OK, tuple(entries[name] for name in sorted(entries)))


def alter_config_records(
    image: MetadataImage, resource: ConfigResourceRef, ops: Sequence[AlterConfig]
) -> list[Record]:
    """The ConfigRecords for one resource of IncrementalAlterConfigs, or its KafkaError."""
    error = _resource_error(image, resource)
    if error is not None:
        raise KafkaError(error.code, error.message or "")
    if resource.resource_type == ConfigResourceType.TOPIC:
        known, kind = TOPIC_CONFIGS, "topic"
    else:
        known, kind = BROKER_CONFIGS, "broker"
    names = [op.name for op in ops]
    if len(set(names)) != len(names):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    current = image.configs(resource.resource_type, resource.name)
    records: list[Record] = []
    for op in ops:
        value = _apply_op(op, current.get(op.name))
        check_config(known, kind, op.name, value)
        records.append(ConfigRecord(resource.resource_type, resource.name, op.name, value))
    if _clears_elr(image, resource, current, records):
        # An ELR was built against the old min ISR; under another it may name replicas that
        # do not hold every committed write (KIP-966), so the ELRs it covers are dropped.
        records.append(ClearElrRecord(resource.name))
    return records


def _clears_elr(
    image: MetadataImage,
    resource: ConfigResourceRef,
    current: Mapping[str, str],
    records: Sequence[Record],
) -> bool:
    """Whether ``records`` change the topic's or the cluster-wide ``min.insync.replicas``
    while eligible leader replicas are on (a broker's own override is not read by them)."""
    if not elr_enabled(image.features):
        return False
    if resource.resource_type == ConfigResourceType.BROKER and resource.name != "":
        return False
    return any(
        isinstance(record, ConfigRecord)
        and record.name == MIN_INSYNC_REPLICAS
        and record.value != current.get(MIN_INSYNC_REPLICAS)
        for record in records
    )


LIST_CONFIGS = frozenset({"cleanup.policy", "log.cleanup.policy"})
"""Configs holding comma-separated lists, the only ones APPEND and SUBTRACT apply to."""


def _apply_op(op: AlterConfig, current: str | None) -> str | None:
    """The value after ``op``; ``None`` removes the config."""
    if op.op == AlterConfigOp.SET:
        if op.value is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"No value given to set {op.name}.")
        return op.value
    if op.op == AlterConfigOp.DELETE:
        return None
    if op.op not in (AlterConfigOp.APPEND, AlterConfigOp.SUBTRACT):
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown config operation {op.op}.")
    if op.name not in LIST_CONFIGS:
        raise KafkaError(
            ErrorCode.INVALID_CONFIG,
            f"Config value append or subtract is not allowed for config key: {op.name}",
        )
    items = [item.strip() for item in (current or "").split(",") if item.strip()]
    given = [item.strip() for item in (op.value or "").split(",") if item.strip()]
    if op.op == AlterConfigOp.APPEND:
        items.extend(item for item in given if item not in items)
    else:
        items = [item for item in items if item not in given]
    return ",".join(items) if items else None


class ConfigurationControlManager:
    """IncrementalAlterConfigs and DescribeConfigs: Kafka's ``ConfigurationControlManager``.

    The node's static settings are the defaults a described config falls back to; everything
    else comes from the image it is handed.
    """

    def __init__(self, settings: ControllerSettings) -> None:
        self.settings = settings

    def static_defaults(self) -> dict[str, str]:
        """This node's settings for the configs that have a cluster-wide default."""
        return {
            MIN_INSYNC_REPLICAS: str(self.settings.min_insync_replicas),
            UNCLEAN_LEADER_ELECTION_ENABLE: str(
                self.settings.unclean_leader_election_enable
            ).lower(),
        }

    def alter_configs(
        self,
        image: MetadataImage,
        resource: ConfigResourceRef,
        ops: Sequence[AlterConfig],
        validate_only: bool,
    ) -> ControllerResult[AlterConfigsResult]:
        """One resource of IncrementalAlterConfigs: its records, or its error as the item's
        result (the request's other resources go on)."""
        try:
            records = alter_config_records(image, resource, ops)
        except KafkaError as error:
            return ControllerResult(
                (), AlterConfigsResult(resource, ItemError(error.code, error.message))
            )
        return ControllerResult(
            () if validate_only else tuple(records), AlterConfigsResult(resource)
        )

    def describe_configs(
        self, image: MetadataImage, resources: Sequence[ConfigResourceRef]
    ) -> ControllerResult[list[DescribeConfigsResult]]:
        """DescribeConfigs; writes nothing."""
        defaults = self.static_defaults()
        return ControllerResult(
            (), [describe_config(image, resource, defaults) for resource in resources]
        )
