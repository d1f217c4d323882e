"""The table of Kafka's configs: every default passes its own check, synonyms resolve in
Kafka's precedence with units converted, and the documentation table lists every config."""

from __future__ import annotations

import pytest

from raftmeta.common.config_defs import (
    BROKER_CONFIG_DEFS,
    TOPIC_CONFIG_DEFS,
    UpdateMode,
    broker_config_def,
    check_value,
    docs_table,
)
from raftmeta.common.config_levels import (
    BrokerConfigLevels,
    broker_entry,
    effective_broker_config,
    effective_topic_defaults,
    topic_entry,
)
from raftmeta.common.configs import ConfigSource, ConfigSynonym, ConfigType

ALL = {**TOPIC_CONFIG_DEFS, **BROKER_CONFIG_DEFS}


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_default_passes_its_own_check(name: str) -> None:
    definition = ALL[name]
    if definition.default is not None:
        assert check_value(definition, definition.default) is None
    assert definition.doc.endswith(".") and "\n" not in definition.doc


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("retention.ms", "1x", "must be an integer"),
        ("segment.bytes", "2147483648", "must be between -2147483648 and 2147483647"),
        ("min.cleanable.dirty.ratio", "nan", "must be a number"),
        ("cleanup.policy", "", "must be a non-empty list of compact, delete"),
        ("compression.gzip.level", "0", "must be at least 1 (or -1)"),
        ("preallocate", "1", "must be true or false"),
        ("retention.ms", "1" * 1025, "longer than 1024 characters"),
    ],
)
def test_reasons_name_the_problem(name: str, value: str, reason: str) -> None:
    assert check_value(TOPIC_CONFIG_DEFS[name], value) == reason


def test_listener_overrides_are_per_broker_security_configs() -> None:
    location = broker_config_def("listener.name.external.ssl.keystore.location")
    assert location is not None and location.mode is UpdateMode.PER_BROKER
    jaas = broker_config_def("listener.name.external.plain.sasl.jaas.config")
    assert jaas is not None and jaas.type is ConfigType.PASSWORD
    assert broker_config_def("listener.name.external.num.io.threads") is None
    assert broker_config_def("listener.name..ssl.keystore.location") is None


def test_precedence_and_units() -> None:
    levels = BrokerConfigLevels(
        per_broker={"log.roll.hours": "2"},
        cluster_default={"log.roll.ms": "1000", "log.retention.minutes": "3"},
        static={"log.retention.ms": "5", "num.io.threads": "4"},
    )
    defaults = effective_topic_defaults(levels)
    # The per-broker level wins over the cluster default, whatever the synonym's priority.
    assert defaults["segment.ms"] == str(2 * 3_600_000)
    assert defaults["retention.ms"] == str(3 * 60_000)
    assert defaults["max.message.bytes"] == "1048588"
    entry = topic_entry(TOPIC_CONFIG_DEFS["retention.ms"], None, levels)
    assert entry.source is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    assert entry.synonyms == (
        ConfigSynonym("log.retention.minutes", "3", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ConfigSynonym("log.retention.ms", "5", ConfigSource.STATIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),
    )
    effective = effective_broker_config(levels)
    assert effective["num.io.threads"] == "4"
    assert effective["log.roll.hours"] == "2" and effective["log.roll.ms"] == "1000"
    assert "log.retention.minutes" in effective and "advertised.listeners" not in effective
    hours = broker_entry("log.retention.hours", levels)
    assert (hours.value, hours.source, hours.read_only) == (
        "168",
        ConfigSource.DEFAULT_CONFIG,
        True,
    )


def test_the_docs_table_lists_every_config() -> None:
    topics = docs_table(TOPIC_CONFIG_DEFS, topic=True)
    brokers = docs_table(BROKER_CONFIG_DEFS, topic=False)
    for name in TOPIC_CONFIG_DEFS:
        assert f"| `{name}` |" in topics
    for name, definition in BROKER_CONFIG_DEFS.items():
        assert f"| `{name}` |" in brokers
        assert definition.mode.value in brokers
    assert "log.retention.ms, log.retention.minutes, log.retention.hours" in topics
