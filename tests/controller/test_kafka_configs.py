"""Every Kafka topic config at a valid value accepted and at an invalid one refused, through
the controller's CreateTopics, IncrementalAlterConfigs and legacy AlterConfigs; dynamic broker
configs per broker and cluster-wide; DescribeConfigs' sources, synonyms and precedence."""

from __future__ import annotations

import pytest

from raftmeta.common.config_defs import BROKER_CONFIG_DEFS, TOPIC_CONFIG_DEFS, UpdateMode
from raftmeta.common.configs import (
    AlterConfig,
    AlterConfigOp,
    ConfigEntry,
    ConfigResourceRef,
    ConfigSource,
    ConfigSynonym,
    ConfigType,
)
from raftmeta.common.topics import NewTopic
from raftmeta.config.node import parse_config
from raftmeta.controller import ControllerSettings
from raftmeta.errors import ErrorCode
from raftmeta.records import ConfigRecord, ConfigResourceType
from tests.controller.harness import Harness, run_async
from tests.support.scenario import run_with_deadline

TOPIC = int(ConfigResourceType.TOPIC)
BROKER = int(ConfigResourceType.BROKER)
LONG_MAX = str(2**63 - 1)

TOPIC_VALUES: dict[str, tuple[str, str]] = {
    # name: (a valid value, an invalid one)
    "cleanup.policy": ("compact,delete", "archive"),
    "compression.type": ("zstd", "brotli"),
    "compression.gzip.level": ("-1", "10"),
    "compression.lz4.level": ("17", "0"),
    "compression.zstd.level": ("-131072", "23"),
    "delete.retention.ms": ("0", "-1"),
    "file.delete.delay.ms": ("1000", "soon"),
    "flush.messages": ("1", "0"),
    "flush.ms": (LONG_MAX, "-1"),
    "follower.replication.throttled.replicas": ("0:1,1:2", "0-1"),
    "index.interval.bytes": ("0", "-4"),
    "leader.replication.throttled.replicas": ("*", "all"),
    "local.retention.bytes": ("-2", "-3"),
    "local.retention.ms": ("86400000", "-3"),
    "max.compaction.lag.ms": ("1", "0"),
    "max.message.bytes": ("2097152", "2147483648"),
    "message.timestamp.after.max.ms": ("0", "-1"),
    "message.timestamp.before.max.ms": ("3600000", "1.5"),
    "message.timestamp.type": ("LogAppendTime", "logappendtime"),
    "min.cleanable.dirty.ratio": ("0.75", "1.5"),
    "min.compaction.lag.ms": ("60000", "-1"),
    "min.insync.replicas": ("1", "0"),
    "preallocate": ("TRUE", "yes"),
    "remote.log.copy.disable": ("true", "1"),
    "remote.log.delete.on.disable": ("false", "no"),
    "remote.storage.enable": ("false", "off"),
    "retention.bytes": ("-1", "9223372036854775808"),
    "retention.ms": ("-1", "-2"),
    "segment.bytes": ("1048576", "1048575"),
    "segment.index.bytes": ("4", "3"),
    "segment.jitter.ms": ("0", "-1"),
    "segment.ms": ("1", "0"),
    "unclean.leader.election.enable": ("false", "maybe"),
}


def test_the_cases_cover_every_topic_config_of_the_table() -> None:
    assert set(TOPIC_VALUES) == set(TOPIC_CONFIG_DEFS)
    # The configs real clients and tools send that raftmeta once refused.
    for name in (
        "message.timestamp.type",
        "segment.index.bytes",
        "max.compaction.lag.ms",
        "local.retention.ms",
        "min.cleanable.dirty.ratio",
    ):
        assert name in TOPIC_CONFIG_DEFS


def entries_of(entries: tuple[ConfigEntry, ...]) -> dict[str, ConfigEntry]:
    return {entry.name: entry for entry in entries}


@run_async
async def test_create_topics_takes_every_topic_config_at_a_valid_value() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    valid = {name: good for name, (good, _) in TOPIC_VALUES.items()}
    [created] = await h.run(h.controller.create_topics([NewTopic("all", 1, 1, configs=valid)]))
    assert created.error.ok, created.error
    assert h.log.replay_all().configs(TOPIC, "all") == valid
    [described] = await h.controller.describe_configs([ConfigResourceRef(TOPIC, "all")])
    entries = entries_of(described.entries)
    for name, value in valid.items():
        assert (entries[name].value, entries[name].source) == (value, ConfigSource.TOPIC_CONFIG)
        assert entries[name].synonyms[0] == ConfigSynonym(name, value, ConfigSource.TOPIC_CONFIG)
    await h.stop()


@pytest.mark.parametrize("name", sorted(TOPIC_VALUES))
def test_an_invalid_topic_config_is_refused_on_create_and_alter(name: str) -> None:
    run_with_deadline(refused_then_accepted(name), 5)


async def refused_then_accepted(name: str) -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    bad = TOPIC_VALUES[name][1]
    [refused] = await h.run(h.controller.create_topics([NewTopic("t", 1, 1, configs={name: bad})]))
    assert refused.error.code is ErrorCode.INVALID_CONFIG
    assert refused.error.message is not None
    assert f"Invalid value {bad} for configuration {name}: " in refused.error.message
    [created] = await h.run(h.controller.create_topics([NewTopic("t", 1, 1)]))
    assert created.error.ok
    before = len(h.log.batches)
    resource = ConfigResourceRef(TOPIC, "t")
    [altered] = await h.run(
        h.controller.incremental_alter_configs(
            {resource: [AlterConfig(name, AlterConfigOp.SET, bad)]}
        )
    )
    assert altered.error.code is ErrorCode.INVALID_CONFIG
    assert altered.error.message is not None and name in altered.error.message
    [replaced] = await h.run(h.controller.alter_configs({resource: {name: bad}}))
    assert replaced.error.code is ErrorCode.INVALID_CONFIG
    assert len(h.log.batches) == before
    good = TOPIC_VALUES[name][0]
    [accepted] = await h.run(
        h.controller.incremental_alter_configs(
            {resource: [AlterConfig(name, AlterConfigOp.SET, good)]}
        )
    )
    assert accepted.error.ok, accepted.error
    assert h.log.replay_all().configs(TOPIC, "t") == {name: good}
    await h.stop()


@run_async
async def test_unknown_names_and_list_operations() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    [refused] = await h.run(
        h.controller.create_topics([NewTopic("t", 1, 1, configs={"retention.hours": "1"})])
    )
    assert refused.error.code is ErrorCode.INVALID_CONFIG
    assert refused.error.message == "Unknown topic config name: retention.hours"
    await h.run(h.controller.create_topics([NewTopic("t", 1, 1)]))
    resource = ConfigResourceRef(TOPIC, "t")
    results = await h.run(
        h.controller.incremental_alter_configs(
            {
                resource: [
                    AlterConfig(
                        "leader.replication.throttled.replicas", AlterConfigOp.APPEND, "0:1"
                    ),
                    AlterConfig(
                        "follower.replication.throttled.replicas", AlterConfigOp.APPEND, "0:2,1:2"
                    ),
                ]
            }
        )
    )
    assert all(result.error.ok for result in results)
    assert h.log.replay_all().configs(TOPIC, "t") == {
        "leader.replication.throttled.replicas": "0:1",
        "follower.replication.throttled.replicas": "0:2,1:2",
    }
    [append_to_number] = await h.run(
        h.controller.incremental_alter_configs(
            {resource: [AlterConfig("segment.ms", AlterConfigOp.APPEND, "1")]}
        )
    )
    assert append_to_number.error.code is ErrorCode.INVALID_CONFIG
    await h.stop()


@run_async
async def test_legacy_alter_configs_replaces_the_whole_set() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    configs = {"retention.ms": "1000", "segment.index.bytes": "4096"}
    await h.run(h.controller.create_topics([NewTopic("t", 1, 1, configs=configs)]))
    resource = ConfigResourceRef(TOPIC, "t")
    [checked] = await h.run(
        h.controller.alter_configs({resource: {"max.compaction.lag.ms": "5"}}, validate_only=True)
    )
    assert checked.error.ok and h.log.replay_all().configs(TOPIC, "t") == configs
    task = await h.submit(h.controller.alter_configs({resource: {"max.compaction.lag.ms": "5"}}))
    assert h.log.uncommitted_records() == [
        ConfigRecord(TOPIC, "t", "max.compaction.lag.ms", "5"),
        ConfigRecord(TOPIC, "t", "retention.ms", None),
        ConfigRecord(TOPIC, "t", "segment.index.bytes", None),
    ]
    h.log.commit()
    [result] = await task
    assert result.error.ok
    [missing] = await h.run(h.controller.alter_configs({ConfigResourceRef(TOPIC, "x"): {}}))
    assert missing.error.code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    await h.stop()


@run_async
async def test_a_topic_describes_every_config_with_its_level_and_synonyms_in_kafka_order() -> None:
    h = Harness(min_insync_replicas=2)
    await h.start()
    await h.add_brokers(1)
    await h.run(h.controller.create_topics([NewTopic("t", 1, 1, configs={"segment.ms": "60000"})]))
    await h.run(
        h.controller.incremental_alter_configs(
            {
                ConfigResourceRef(BROKER, ""): [
                    AlterConfig("log.retention.ms", AlterConfigOp.SET, "7200000"),
                    AlterConfig("log.cleaner.min.cleanable.ratio", AlterConfigOp.SET, "0.25"),
                ],
                # One broker's own value does not reach a topic described by the controller.
                ConfigResourceRef(BROKER, "1"): [
                    AlterConfig("log.retention.ms", AlterConfigOp.SET, "1")
                ],
            }
        )
    )
    [described] = await h.controller.describe_configs([ConfigResourceRef(TOPIC, "t")])
    entries = entries_of(described.entries)
    assert set(entries) == set(TOPIC_CONFIG_DEFS)

    retention = entries["retention.ms"]
    assert (retention.value, retention.source) == (
        "7200000",
        ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
    )
    assert retention.synonyms == (
        ConfigSynonym("log.retention.ms", "7200000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ConfigSynonym("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),
    )
    assert retention.config_type is ConfigType.LONG and retention.documentation
    assert not retention.read_only and not retention.is_sensitive

    ratio = entries["min.cleanable.dirty.ratio"]
    assert (ratio.value, ratio.source) == ("0.25", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert ratio.config_type is ConfigType.DOUBLE

    segment = entries["segment.ms"]
    assert (segment.value, segment.source) == ("60000", ConfigSource.TOPIC_CONFIG)
    assert segment.synonyms == (
        ConfigSynonym("segment.ms", "60000", ConfigSource.TOPIC_CONFIG),
        ConfigSynonym("log.roll.hours", "168", ConfigSource.DEFAULT_CONFIG),
    )
    # The node's own min.insync.replicas=2 differs from Kafka's default: a static value.
    min_isr = entries["min.insync.replicas"]
    assert (min_isr.value, min_isr.source) == ("2", ConfigSource.STATIC_BROKER_CONFIG)
    assert min_isr.synonyms == (
        ConfigSynonym("min.insync.replicas", "2", ConfigSource.STATIC_BROKER_CONFIG),
        ConfigSynonym("min.insync.replicas", "1", ConfigSource.DEFAULT_CONFIG),
    )
    timestamp = entries["message.timestamp.type"]
    assert (timestamp.value, timestamp.source) == ("CreateTime", ConfigSource.DEFAULT_CONFIG)
    throttled = entries["leader.replication.throttled.replicas"]
    assert (throttled.value, throttled.synonyms) == ("", ())
    await h.stop()


@run_async
async def test_hours_convert_to_the_topics_milliseconds() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    await h.run(h.controller.create_topics([NewTopic("t", 1, 1)]))
    await h.run(
        h.controller.incremental_alter_configs(
            {ConfigResourceRef(BROKER, ""): [AlterConfig("log.roll.ms", AlterConfigOp.SET, "5000")]}
        )
    )
    [described] = await h.controller.describe_configs([ConfigResourceRef(TOPIC, "t")])
    segment = entries_of(described.entries)["segment.ms"]
    assert (segment.value, segment.source) == ("5000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    retention = entries_of(described.entries)["retention.ms"]
    assert retention.value == str(168 * 3_600_000)
    await h.stop()


@run_async
async def test_dynamic_broker_configs_follow_kafkas_update_modes_and_precedence() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(2)
    default, one, two = (ConfigResourceRef(BROKER, name) for name in ("", "1", "2"))
    refused = {
        (default, "listeners", "PLAINTEXT://:9093"): "cannot be set as the cluster-wide default",
        (default, "ssl.keystore.password", "secret"): "cannot be set as the cluster-wide default",
        (one, "log.retention.hours", "1"): "read-only",
        (one, "node.id", "5"): "read-only",
        (one, "num.io.threads", "0"): "must be at least 1",
        (one, "listener.name.external.no.such", "1"): "Unknown broker config name",
    }
    for (resource, name, value), reason in refused.items():
        [result] = await h.run(
            h.controller.incremental_alter_configs(
                {resource: [AlterConfig(name, AlterConfigOp.SET, value)]}
            )
        )
        assert result.error.code is ErrorCode.INVALID_CONFIG, (name, result)
        assert result.error.message is not None and reason in result.error.message
    results = await h.run(
        h.controller.incremental_alter_configs(
            {
                default: [
                    AlterConfig("log.retention.ms", AlterConfigOp.SET, "5000"),
                    AlterConfig("num.io.threads", AlterConfigOp.SET, "16"),
                    AlterConfig("message.max.bytes", AlterConfigOp.SET, "2000000"),
                ],
                one: [
                    AlterConfig("log.retention.ms", AlterConfigOp.SET, "7000"),
                    AlterConfig("ssl.keystore.password", AlterConfigOp.SET, "secret"),
                    AlterConfig(
                        "listener.name.external.ssl.keystore.location", AlterConfigOp.SET, "/k"
                    ),
                ],
            }
        )
    )
    assert all(result.error.ok for result in results), results
    described = await h.controller.describe_configs([one, two, default])
    first, second, cluster = (entries_of(result.entries) for result in described)

    retention = first["log.retention.ms"]
    assert (retention.value, retention.source) == ("7000", ConfigSource.DYNAMIC_BROKER_CONFIG)
    assert retention.synonyms == (
        ConfigSynonym("log.retention.ms", "7000", ConfigSource.DYNAMIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.ms", "5000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ConfigSynonym("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),
    )
    assert (second["log.retention.ms"].value, second["log.retention.ms"].source) == (
        "5000",
        ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
    )
    assert cluster["log.retention.ms"].value == "5000"
    assert first["num.io.threads"].value == "16"
    assert (first["num.network.threads"].value, first["num.network.threads"].source) == (
        "3",
        ConfigSource.DEFAULT_CONFIG,
    )
    password = first["ssl.keystore.password"]
    assert password.value is None and password.is_sensitive
    assert password.synonyms == (
        ConfigSynonym("ssl.keystore.password", None, ConfigSource.DYNAMIC_BROKER_CONFIG),
    )
    assert password.config_type is ConfigType.PASSWORD
    assert "ssl.keystore.password" not in second or second["ssl.keystore.password"].value is None
    assert first["listener.name.external.ssl.keystore.location"].value == "/k"
    assert first["log.retention.hours"].read_only
    assert not first["log.retention.ms"].read_only

    await h.run(
        h.controller.incremental_alter_configs(
            {one: [AlterConfig("log.retention.ms", AlterConfigOp.DELETE)]}
        )
    )
    [after] = await h.controller.describe_configs([one])
    fallen_back = entries_of(after.entries)["log.retention.ms"]
    assert (fallen_back.value, fallen_back.source) == (
        "5000",
        ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
    )
    await h.stop()


def test_the_broker_table_marks_kafkas_update_modes() -> None:
    modes = {name: definition.mode for name, definition in BROKER_CONFIG_DEFS.items()}
    assert modes["log.retention.ms"] is UpdateMode.CLUSTER_WIDE
    assert modes["log.retention.hours"] is UpdateMode.READ_ONLY
    assert modes["listeners"] is UpdateMode.PER_BROKER
    assert modes["ssl.keystore.location"] is UpdateMode.PER_BROKER
    assert modes["num.io.threads"] is UpdateMode.CLUSTER_WIDE
    assert modes["process.roles"] is UpdateMode.READ_ONLY
    for topic_def in TOPIC_CONFIG_DEFS.values():
        for synonym in topic_def.synonyms:
            assert synonym.name in BROKER_CONFIG_DEFS


@run_async
async def test_broker_configs_set_in_the_node_file_are_static() -> None:
    config = parse_config(
        {
            "node.id": 1,
            "controller.quorum.voters": "1@127.0.0.1:9093",
            "metadata.log.dir": "/tmp/unused",
            "log.retention.hours": "24",
            "num.io.threads": "4",
            "no.such.key": "1",
        }
    )
    settings = ControllerSettings.from_config(config, "abc")
    assert settings.static_broker_configs == (
        ("log.retention.hours", "24"),
        ("num.io.threads", "4"),
    )
    h = Harness(static_broker_configs=settings.static_broker_configs)
    await h.start()
    await h.add_brokers(1)
    await h.run(h.controller.create_topics([NewTopic("t", 1, 1)]))
    described = await h.controller.describe_configs(
        [ConfigResourceRef(TOPIC, "t"), ConfigResourceRef(BROKER, "1")]
    )
    topic, broker = (entries_of(result.entries) for result in described)
    retention = topic["retention.ms"]
    assert (retention.value, retention.source) == (
        str(24 * 3_600_000),
        ConfigSource.STATIC_BROKER_CONFIG,
    )
    assert retention.synonyms == (
        ConfigSynonym("log.retention.hours", "24", ConfigSource.STATIC_BROKER_CONFIG),
        ConfigSynonym("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG),
    )
    threads = broker["num.io.threads"]
    assert (threads.value, threads.source) == ("4", ConfigSource.STATIC_BROKER_CONFIG)
    await h.stop()
