"""DescribeConfigs and IncrementalAlterConfigs for topics and brokers."""

from __future__ import annotations

from raftmeta.common.brokers import AlterPartitionRequest, IsrMember, PartitionIsrChange
from raftmeta.common.configs import (
    AlterConfig,
    AlterConfigOp,
    ConfigEntry,
    ConfigResourceRef,
    ConfigSource,
)
from raftmeta.common.topics import NewTopic
from raftmeta.errors import ErrorCode
from raftmeta.records import (
    ConfigRecord,
    ConfigResourceType,
    LeaderRecoveryState,
)
from tests.controller.harness import Harness, run_async

TOPIC = int(ConfigResourceType.TOPIC)
BROKER = int(ConfigResourceType.BROKER)


def entry_map(entries: tuple[ConfigEntry, ...]) -> dict[str, tuple[str | None, ConfigSource]]:
    return {entry.name: (entry.value, entry.source) for entry in entries}


@run_async
async def test_topic_config_set_describe_delete() -> None:
    h = Harness(min_insync_replicas=1)
    await h.start()
    await h.add_brokers(1)
    await h.run(h.controller.create_topics([NewTopic("t", 1, 1)]))
    resource = ConfigResourceRef(TOPIC, "t")
    [described] = await h.controller.describe_configs([resource])
    assert entry_map(described.entries)["min.insync.replicas"] == ("1", ConfigSource.DEFAULT_CONFIG)

    task = await h.submit(
        h.controller.incremental_alter_configs(
            {
                resource: [
                    AlterConfig("min.insync.replicas", AlterConfigOp.SET, "2"),
                    AlterConfig("cleanup.policy", AlterConfigOp.APPEND, "compact"),
                ]
            }
        )
    )
    assert h.log.uncommitted_records() == [
        ConfigRecord(TOPIC, "t", "min.insync.replicas", "2"),
        ConfigRecord(TOPIC, "t", "cleanup.policy", "compact"),
    ]
    h.log.commit()
    [result] = await task
    assert result.error.ok
    [described] = await h.controller.describe_configs([resource])
    entries = entry_map(described.entries)
    assert entries["min.insync.replicas"] == ("2", ConfigSource.TOPIC_CONFIG)
    assert entries["cleanup.policy"] == ("compact", ConfigSource.TOPIC_CONFIG)

    await h.run(
        h.controller.incremental_alter_configs(
            {
                resource: [
                    AlterConfig("min.insync.replicas", AlterConfigOp.DELETE),
                    AlterConfig("cleanup.policy", AlterConfigOp.APPEND, "delete"),
                ]
            }
        )
    )
    assert h.log.replay_all().configs(TOPIC, "t") == {"cleanup.policy": "compact,delete"}
    await h.stop()


@run_async
async def test_alter_errors() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    await h.run(h.controller.create_topics([NewTopic("t", 1, 1)]))
    before = len(h.log.batches)
    cases = {
        ConfigResourceRef(TOPIC, "missing"): (
            [AlterConfig("retention.ms", AlterConfigOp.SET, "1")],
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ),
        ConfigResourceRef(TOPIC, "t"): (
            [AlterConfig("min.insync.replicas", AlterConfigOp.SET, "0")],
            ErrorCode.INVALID_CONFIG,
        ),
        ConfigResourceRef(BROKER, "1"): (
            [AlterConfig("no.such", AlterConfigOp.SET, "1")],
            ErrorCode.INVALID_CONFIG,
        ),
        ConfigResourceRef(BROKER, "x"): (
            [AlterConfig("min.insync.replicas", AlterConfigOp.SET, "1")],
            ErrorCode.INVALID_REQUEST,
        ),
        ConfigResourceRef(BROKER, ""): (
            [
                AlterConfig("min.insync.replicas", AlterConfigOp.SET, "1"),
                AlterConfig("min.insync.replicas", AlterConfigOp.DELETE),
            ],
            ErrorCode.INVALID_REQUEST,
        ),
        ConfigResourceRef(BROKER, "2"): (
            [AlterConfig("min.insync.replicas", AlterConfigOp.APPEND, "1")],
            ErrorCode.INVALID_CONFIG,
        ),
        ConfigResourceRef(99, "x"): (
            [AlterConfig("a", AlterConfigOp.SET, "1")],
            ErrorCode.INVALID_REQUEST,
        ),
    }
    results = await h.run(
        h.controller.incremental_alter_configs({r: ops for r, (ops, _) in cases.items()})
    )
    for result in results:
        assert result.error.code is cases[result.resource][1], result
    assert len(h.log.batches) == before
    [missing] = await h.controller.describe_configs([ConfigResourceRef(TOPIC, "missing")])
    assert missing.error.code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    await h.stop()


@run_async
async def test_broker_configs_and_validate_only() -> None:
    h = Harness(unclean_leader_election_enable=False)
    await h.start()
    await h.add_brokers(1)
    default = ConfigResourceRef(BROKER, "")
    broker = ConfigResourceRef(BROKER, "1")
    before = len(h.log.batches)
    [checked] = await h.run(
        h.controller.incremental_alter_configs(
            {default: [AlterConfig("log.retention.ms", AlterConfigOp.SET, "5")]},
            validate_only=True,
        )
    )
    assert checked.error.ok and len(h.log.batches) == before
    await h.run(
        h.controller.incremental_alter_configs(
            {
                default: [AlterConfig("log.retention.ms", AlterConfigOp.SET, "5")],
                broker: [AlterConfig("log.retention.ms", AlterConfigOp.SET, "7")],
            }
        )
    )
    [described_default, described_broker] = await h.controller.describe_configs([default, broker])
    assert entry_map(described_default.entries)["log.retention.ms"] == (
        "5",
        ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
    )
    broker_entries = entry_map(described_broker.entries)
    assert broker_entries["log.retention.ms"] == ("7", ConfigSource.DYNAMIC_BROKER_CONFIG)
    assert broker_entries["unclean.leader.election.enable"] == (
        "false",
        ConfigSource.STATIC_BROKER_CONFIG,
    )
    await h.stop()


@run_async
async def test_topic_unclean_config_drives_fencing_election() -> None:
    h = Harness()
    await h.start()
    epochs = await h.add_brokers(2)
    [created] = await h.run(h.controller.create_topics([NewTopic("t", assignments={0: (1, 2)})]))
    # Shrink the ISR to the leader alone, then allow unclean election and fence the leader.
    await h.run(
        h.controller.alter_partition(
            AlterPartitionRequest(
                1, epochs[1], created.topic_id, (PartitionIsrChange(0, 0, (IsrMember(1),), 0),)
            )
        )
    )
    await h.run(
        h.controller.incremental_alter_configs(
            {
                ConfigResourceRef(TOPIC, "t"): [
                    AlterConfig("unclean.leader.election.enable", AlterConfigOp.SET, "true")
                ]
            }
        )
    )
    await h.heartbeat(1, epochs[1], want_fence=True)
    partition = h.log.replay_all().partition(created.topic_id, 0)
    assert partition is not None
    assert partition.leader == 2 and partition.isr == (2,)
    assert partition.leader_recovery_state == LeaderRecoveryState.RECOVERING
    await h.stop()
