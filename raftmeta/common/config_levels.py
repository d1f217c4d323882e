"""Which level a config's value comes from, in Kafka's precedence.

A broker config is set, most specific first, for one broker (DYNAMIC_BROKER_CONFIG, resource
name its id), for every broker (DYNAMIC_DEFAULT_BROKER_CONFIG, resource name ""), in the node's
own file (STATIC_BROKER_CONFIG), or not at all (DEFAULT_CONFIG, the table's default). A topic
config is the topic's own value (TOPIC_CONFIG) or else its broker synonyms' (see
:mod:`raftmeta.common.config_defs`). The synonyms are listed as Kafka lists them: level by
level in that order, and within a level in the synonyms' priority (``log.retention.ms``, then
``.minutes``, then ``.hours``); the value in effect, and its source, is the first one's.

The controller describes configs with these rules and the embedded broker computes its
effective config with them, so the two agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from raftmeta.common.config_defs import (
    BROKER_CONFIG_DEFS,
    TOPIC_CONFIG_DEFS,
    BrokerSynonym,
    ConfigDef,
    UpdateMode,
    broker_config_def,
    to_topic_unit,
)
from raftmeta.common.configs import ConfigEntry, ConfigSource, ConfigSynonym, ConfigType


@dataclass(frozen=True, slots=True)
class BrokerConfigLevels:
    """The values set at each broker-config level, most specific first."""

    per_broker: Mapping[str, str] = field(default_factory=dict)
    """This broker's dynamic configs (resource name its id)."""
    cluster_default: Mapping[str, str] = field(default_factory=dict)
    """The cluster-wide dynamic defaults (resource name "")."""
    static: Mapping[str, str] = field(default_factory=dict)
    """The node's own file."""

    def set_levels(self) -> tuple[tuple[ConfigSource, Mapping[str, str]], ...]:
        return (
            (ConfigSource.DYNAMIC_BROKER_CONFIG, self.per_broker),
            (ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, self.cluster_default),
            (ConfigSource.STATIC_BROKER_CONFIG, self.static),
        )


def _broker_group(name: str) -> tuple[BrokerSynonym, ...]:
    """The broker configs that stand for the same setting as ``name``, in priority order
    (``log.retention.hours`` belongs with ``.ms`` and ``.minutes``); ``name`` alone if none."""
    for topic_def in TOPIC_CONFIG_DEFS.values():
        if any(synonym.name == name for synonym in topic_def.synonyms):
            return topic_def.synonyms
    return (BrokerSynonym(name),)


def _synonyms(
    group: Sequence[BrokerSynonym], levels: BrokerConfigLevels
) -> list[tuple[BrokerSynonym, ConfigSynonym]]:
    """Every level that sets a member of ``group``, level by level, each level's members in
    priority order, with the table's defaults last."""
    found: list[tuple[BrokerSynonym, ConfigSynonym]] = []
    for source, values in levels.set_levels():
        for synonym in group:
            if synonym.name in values:
                found.append((synonym, ConfigSynonym(synonym.name, values[synonym.name], source)))
    for synonym in group:
        definition = broker_config_def(synonym.name)
        if definition is not None and definition.default is not None:
            found.append(
                (
                    synonym,
                    ConfigSynonym(synonym.name, definition.default, ConfigSource.DEFAULT_CONFIG),
                )
            )
    return found


def _hidden(synonyms: Sequence[ConfigSynonym], sensitive: bool) -> tuple[ConfigSynonym, ...]:
    if not sensitive:
        return tuple(synonyms)
    return tuple(ConfigSynonym(synonym.name, None, synonym.source) for synonym in synonyms)


def topic_entry(
    definition: ConfigDef, topic_value: str | None, levels: BrokerConfigLevels
) -> ConfigEntry:
    """A topic config as DescribeConfigs shows it: the topic's value, else its broker
    synonyms' (converted to the topic's unit), else its default."""
    synonyms = [synonym for _, synonym in _synonyms(definition.synonyms, levels)]
    value: str | None
    if topic_value is not None:
        synonyms.insert(0, ConfigSynonym(definition.name, topic_value, ConfigSource.TOPIC_CONFIG))
        value, source = topic_value, ConfigSource.TOPIC_CONFIG
    else:
        value, source = _broker_value(definition, levels)
    return ConfigEntry(
        definition.name,
        None if definition.sensitive else value,
        source,
        is_sensitive=definition.sensitive,
        read_only=False,
        synonyms=_hidden(synonyms, definition.sensitive),
        documentation=definition.doc,
        config_type=definition.type,
    )


def _broker_value(
    definition: ConfigDef, levels: BrokerConfigLevels
) -> tuple[str | None, ConfigSource]:
    """A topic config's value when the topic does not set it, and where that comes from."""
    found = _synonyms(definition.synonyms, levels)
    if not found:
        return definition.default, ConfigSource.DEFAULT_CONFIG
    synonym, first = found[0]
    if first.value is None:
        return None, first.source
    return to_topic_unit(synonym, first.value), first.source


def broker_entry(name: str, levels: BrokerConfigLevels) -> ConfigEntry:
    """A broker config as DescribeConfigs shows it: the most specific level that sets the
    name itself, its synonyms listed as for a topic."""
    definition = broker_config_def(name)
    if definition is None:
        # Stored before the table knew it: shown as stored.
        value, source = _own_value(name, None, levels)
        return ConfigEntry(name, value, source, synonyms=(ConfigSynonym(name, value, source),))
    value, source = _own_value(name, definition.default, levels)
    synonyms = [synonym for _, synonym in _synonyms(_broker_group(name), levels)]
    return ConfigEntry(
        name,
        None if definition.sensitive else value,
        source,
        is_sensitive=definition.sensitive,
        read_only=definition.mode is UpdateMode.READ_ONLY,
        synonyms=_hidden(synonyms, definition.sensitive),
        documentation=definition.doc,
        config_type=definition.type,
    )


def _own_value(
    name: str, default: str | None, levels: BrokerConfigLevels
) -> tuple[str | None, ConfigSource]:
    for source, values in levels.set_levels():
        if name in values:
            return values[name], source
    return default, ConfigSource.DEFAULT_CONFIG


def effective_broker_config(levels: BrokerConfigLevels) -> dict[str, str]:
    """Every broker config that has a value, each from the most specific level setting it,
    plus any other name set at some level (listener overrides among them)."""
    effective = {
        name: definition.default
        for name, definition in BROKER_CONFIG_DEFS.items()
        if definition.default is not None
    }
    for _, values in reversed(levels.set_levels()):
        effective.update(values)
    return effective


def effective_topic_defaults(levels: BrokerConfigLevels) -> dict[str, str]:
    """The value every topic config takes on a topic that does not set it."""
    defaults: dict[str, str] = {}
    for name, definition in TOPIC_CONFIG_DEFS.items():
        value, _ = _broker_value(definition, levels)
        if value is not None:
            defaults[name] = value
    return defaults


def unknown_entry(name: str, value: str, source: ConfigSource) -> ConfigEntry:
    """A stored config the table does not know, shown as stored."""
    return ConfigEntry(
        name, value, source, synonyms=(ConfigSynonym(name, value, source),),
        config_type=ConfigType.UNKNOWN,
    )  # fmt: skip
