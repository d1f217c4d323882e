"""Kafka topic configs that real clients send, through the gRPC AdminClient to a real quorum:
accepted at a valid value, refused at an invalid one with INVALID_CONFIG and a reason, and
described back with their level."""

from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.admin import (
    AlterConfigOpType,
    AsyncAdminClient,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ErrorCode,
    KafkaException,
    NewTopic,
)
from raftmeta.channel import ControllerChannel
from tests.admin.brokers import register_unfenced
from tests.support.controller_quorum import ControllerQuorum
from tests.support.scenario import run_scenario

CREATED_WITH = {
    "message.timestamp.type": "LogAppendTime",
    "segment.index.bytes": "4096",
    "max.compaction.lag.ms": "86400000",
    "local.retention.ms": "3600000",
    "min.cleanable.dirty.ratio": "0.3",
}
REFUSED = {
    "message.timestamp.type": "NoTime",
    "segment.index.bytes": "2",
    "min.cleanable.dirty.ratio": "2",
    "compression.zstd.level": "99",
}


def test_kafka_topic_configs_through_the_admin_client(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        async with ControllerChannel(cluster.addresses.values()) as lifecycle:
            await register_unfenced(lifecycle, [1])
        async with AsyncAdminClient(
            {"bootstrap.servers": ",".join(cluster.addresses.values())}
        ) as admin:
            await admin.create_topics([NewTopic("events", 1, 1, config=CREATED_WITH)])["events"]
            for name, value in REFUSED.items():
                future = admin.create_topics([NewTopic(f"bad-{name}", 1, 1, config={name: value})])
                with pytest.raises(KafkaException) as refused:
                    await future[f"bad-{name}"]
                assert refused.value.code is ErrorCode.INVALID_CONFIG
                assert f"Invalid value {value} for configuration {name}" in refused.value.message

            topic = ConfigResource("topic", "events")
            change = [
                ConfigEntry("segment.jitter.ms", "100", incremental_operation=AlterConfigOpType.SET)
            ]
            await admin.incremental_alter_configs([ConfigResource("topic", "events", change)])[
                topic
            ]
            bad = [
                ConfigEntry("segment.jitter.ms", "-5", incremental_operation=AlterConfigOpType.SET)
            ]
            with pytest.raises(KafkaException) as refused:
                await admin.incremental_alter_configs([ConfigResource("topic", "events", bad)])[
                    topic
                ]
            assert refused.value.code is ErrorCode.INVALID_CONFIG

            entries = await admin.describe_configs([topic])[topic]
            for name, value in {**CREATED_WITH, "segment.jitter.ms": "100"}.items():
                assert (entries[name].value, entries[name].source) == (
                    value,
                    ConfigSource.TOPIC_CONFIG,
                )
            assert (entries["retention.ms"].value, entries["retention.ms"].source) == (
                "604800000",
                ConfigSource.DEFAULT_CONFIG,
            )

    run_scenario(scenario, ControllerQuorum(tmp_path, {}), 60)
