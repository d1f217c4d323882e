"""Which topic and broker configs the controller accepts, how values are checked, and how
they are described.

A value the controller writes is replayed by every node forever, so it is checked here, at the
edge, with INVALID_CONFIG and a message naming the key, against Kafka's table of configs
(:mod:`raftmeta.common.config_defs`). Unknown names are refused too: a typo such as
``min.insync.replica`` would otherwise be stored and silently do nothing. A broker config is
also refused when Kafka would not change it while running (read-only), or would only change it
for one broker and the request names the cluster-wide default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from raftmeta.common.config_defs import (
    BROKER_CONFIG_DEFS,
    TOPIC_CONFIG_DEFS,
    TOPIC_SYNONYM_NAMES,
    ConfigDef,
    UpdateMode,
    broker_config_def,
    check_value,
    list_items,
)
from raftmeta.common.config_levels import (
    BrokerConfigLevels,
    broker_entry,
    topic_entry,
    unknown_entry,
)
from raftmeta.common.configs import (
    AlterConfig,
    AlterConfigOp,
    AlterConfigsResult,
    ConfigEntry,
    ConfigResourceRef,
    ConfigSource,
    ConfigType,
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

SHOWN_LENGTH = 100
"""How much of a refused name or value an error message repeats."""


def shown(text: str) -> str:
    """``text`` for an error message, cut short if it is long."""
    if len(text) <= SHOWN_LENGTH:
        return text
    return f"{text[:SHOWN_LENGTH]}... ({len(text)} characters)"


def _checked(definition: ConfigDef, value: str | None) -> None:
    if value is None:
        return
    reason = check_value(definition, value)
    if reason is not None:
        raise KafkaError(
            ErrorCode.INVALID_CONFIG,
            f"Invalid value {shown(value)} for configuration {definition.name}: {reason}",
        )


def check_topic_config(name: str, value: str | None) -> None:
    """Raises INVALID_CONFIG for an unknown topic config or a bad value; ``None`` (delete)
    is fine."""
    definition = TOPIC_CONFIG_DEFS.get(name)
    if definition is None:
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {shown(name)}")
    _checked(definition, value)


def check_broker_config(name: str, value: str | None, cluster_default: bool) -> None:
    """Raises INVALID_CONFIG for an unknown broker config, one that cannot change while the
    cluster runs, one that only one broker may set when ``cluster_default``, or a bad value.
    Deleting is checked as setting is: a read-only name was never stored dynamically."""
    definition = broker_config_def(name)
    if definition is None:
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"Unknown broker config name: {shown(name)}")
    if definition.mode is UpdateMode.READ_ONLY:
        raise KafkaError(
            ErrorCode.INVALID_CONFIG,
            f"Broker config {name} is read-only: it cannot be updated dynamically.",
        )
    if cluster_default and definition.mode is UpdateMode.PER_BROKER:
        raise KafkaError(
            ErrorCode.INVALID_CONFIG,
            f"Broker config {name} cannot be set as the cluster-wide default: name the "
            "broker id to set it for one broker.",
        )
    _checked(definition, value)


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
    image: MetadataImage,
    resource: ConfigResourceRef,
    static: Mapping[str, str],
    set_in_file: Mapping[str, str] | None = None,
) -> DescribeConfigsResult:
    """A resource's configs, every one the table knows, each with the level it comes from,
    its synonyms, type and documentation; a sensitive value is never shown.

    ``static`` is the node's static broker configs, ``set_in_file`` those of them its file
    names. A broker shows the static ones, overridden by the dynamic cluster default,
    overridden by its own dynamic values. A topic shows its own value or else its broker
    synonyms': the dynamic cluster default, then the ones its file sets or its settings where
    they differ from Kafka's default (a setting built without a file cannot tell), then the
    default.
    """
    error = _resource_error(image, resource)
    if error is not None:
        return DescribeConfigsResult(resource, error)
    cluster_default = image.configs(int(ConfigResourceType.BROKER), "")
    own = image.configs(resource.resource_type, resource.name)
    entries: list[ConfigEntry] = []
    if resource.resource_type == ConfigResourceType.TOPIC:
        entries = topic_entries(image, own, static, set_in_file)
    else:
        levels = BrokerConfigLevels(
            per_broker=own if resource.name != "" else {},
            cluster_default=cluster_default,
            static=static,
        )
        entries = [broker_entry(name, levels) for name in _described_broker_names(levels)]
    return DescribeConfigsResult(resource, OK, tuple(sorted(entries, key=lambda entry: entry.name)))


def topic_entries(
    image: MetadataImage,
    own: Mapping[str, str],
    static: Mapping[str, str],
    set_in_file: Mapping[str, str] | None = None,
) -> list[ConfigEntry]:
    """Every config of a topic whose own configs are ``own`` (see :func:`describe_config`)."""
    levels = BrokerConfigLevels(
        cluster_default=image.configs(int(ConfigResourceType.BROKER), ""),
        static={**_differing_from_default(static), **(set_in_file or {})},
    )
    entries = [
        topic_entry(definition, own.get(name), levels)
        for name, definition in TOPIC_CONFIG_DEFS.items()
    ]
    entries.extend(
        unknown_entry(name, value, ConfigSource.TOPIC_CONFIG)
        for name, value in own.items()
        if name not in TOPIC_CONFIG_DEFS
    )
    return entries


def _differing_from_default(static: Mapping[str, str]) -> dict[str, str]:
    differing: dict[str, str] = {}
    for name, value in static.items():
        definition = broker_config_def(name)
        if definition is None or definition.default != value:
            differing[name] = value
    return differing


def _described_broker_names(levels: BrokerConfigLevels) -> list[str]:
    """The dynamic broker configs, the topic configs' synonyms (read-only ones such as
    ``log.retention.hours`` among them) and any other name set at some level. Any other
    read-only config (``node.id``, ``log.dirs``) lives in each broker's own file, which the
    controller does not hold."""
    names = {
        name
        for name, definition in BROKER_CONFIG_DEFS.items()
        if definition.mode is not UpdateMode.READ_ONLY
    }
    names.update(TOPIC_SYNONYM_NAMES)
    for _, values in levels.set_levels():
        names.update(values)
    return sorted(names)


def alter_config_records(
    image: MetadataImage, resource: ConfigResourceRef, ops: Sequence[AlterConfig]
) -> list[Record]:
    """The ConfigRecords for one resource of IncrementalAlterConfigs, or its KafkaError."""
    error = _resource_error(image, resource)
    if error is not None:
        raise KafkaError(error.code, error.message or "")
    names = [op.name for op in ops]
    if len(set(names)) != len(names):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    current = image.configs(resource.resource_type, resource.name)
    records: list[Record] = []
    for op in ops:
        value = _apply_op(op, current.get(op.name), _config_type(resource, op.name))
        if resource.resource_type == ConfigResourceType.TOPIC:
            check_topic_config(op.name, value)
        else:
            check_broker_config(op.name, value, cluster_default=resource.name == "")
        records.append(ConfigRecord(resource.resource_type, resource.name, op.name, value))
    if _clears_elr(image, resource, current, records):
        # An ELR was built against the old min ISR; under another it may name replicas that
        # do not hold every committed write (KIP-966), so the ELRs it covers are dropped.
        records.append(ClearElrRecord(resource.name))
    return records


def replacing_ops(
    image: MetadataImage, resource: ConfigResourceRef, configs: Mapping[str, str]
) -> list[AlterConfig]:
    """Legacy AlterConfigs as operations: the given configs replace the resource's whole set,
    so every stored name the request leaves out is deleted."""
    current = image.configs(resource.resource_type, resource.name)
    ops = [AlterConfig(name, AlterConfigOp.SET, value) for name, value in configs.items()]
    ops.extend(
        AlterConfig(name, AlterConfigOp.DELETE) for name in sorted(current) if name not in configs
    )
    return ops


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


def _config_type(resource: ConfigResourceRef, name: str) -> ConfigType:
    if resource.resource_type == ConfigResourceType.TOPIC:
        definition = TOPIC_CONFIG_DEFS.get(name)
    else:
        definition = broker_config_def(name)
    return ConfigType.UNKNOWN if definition is None else definition.type


def _apply_op(op: AlterConfig, current: str | None, config_type: ConfigType) -> str | None:
    """The value after ``op``; ``None`` removes the config. APPEND and SUBTRACT apply to
    LIST configs only."""
    if op.op == AlterConfigOp.SET:
        if op.value is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"No value given to set {op.name}.")
        return op.value
    if op.op == AlterConfigOp.DELETE:
        return None
    if op.op not in (AlterConfigOp.APPEND, AlterConfigOp.SUBTRACT):
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown config operation {op.op}.")
    if config_type is not ConfigType.LIST:
        raise KafkaError(
            ErrorCode.INVALID_CONFIG,
            f"Config value append or subtract is not allowed for config key: {op.name}",
        )
    items = list_items(current or "")
    given = list_items(op.value or "")
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

    def static_configs(self) -> dict[str, str]:
        """This node's static broker configs: those its file sets, and its settings for the
        two configs the controller itself reads."""
        return {
            **dict(self.settings.static_broker_configs),
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

    def replace_configs(
        self,
        image: MetadataImage,
        resource: ConfigResourceRef,
        configs: Mapping[str, str],
        validate_only: bool,
    ) -> ControllerResult[AlterConfigsResult]:
        """One resource of legacy AlterConfigs: its configs become exactly ``configs``."""
        if _resource_error(image, resource) is None:
            ops = replacing_ops(image, resource, configs)
        else:
            ops = []
        return self.alter_configs(image, resource, ops, validate_only)

    def describe_topic_configs(
        self, image: MetadataImage, own: Mapping[str, str]
    ) -> tuple[ConfigEntry, ...]:
        """Every config of a topic created with ``own``, as DescribeConfigs would show it:
        what CreateTopics answers for a topic it created (or would create)."""
        entries = topic_entries(
            image, own, self.static_configs(), dict(self.settings.static_broker_configs)
        )
        return tuple(sorted(entries, key=lambda entry: entry.name))

    def describe_configs(
        self, image: MetadataImage, resources: Sequence[ConfigResourceRef]
    ) -> ControllerResult[list[DescribeConfigsResult]]:
        """DescribeConfigs; writes nothing."""
        static = self.static_configs()
        set_in_file = dict(self.settings.static_broker_configs)
        return ControllerResult(
            (),
            [describe_config(image, resource, static, set_in_file) for resource in resources],
        )
