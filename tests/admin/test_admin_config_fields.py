"""What the AdminClient's ``describe_configs`` shows besides values, as confluent-kafka's
ConfigEntry does: read-only and sensitive flags (a sensitive value never shown) and the
synonyms by name, the one in effect first, each a ConfigEntry marked as a synonym."""

from __future__ import annotations

from pathlib import Path

from raftmeta.admin import AsyncAdminClient, ConfigResource, ConfigSource, NewTopic
from raftmeta.channel import ControllerChannel
from tests.admin.brokers import register_unfenced
from tests.support.controller_quorum import ControllerQuorum
from tests.support.scenario import run_scenario


def test_described_configs_carry_synonyms_and_sensitivity(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        async with ControllerChannel(cluster.addresses.values()) as lifecycle:
            await register_unfenced(lifecycle, [1])
        async with AsyncAdminClient(
            {"bootstrap.servers": ",".join(cluster.addresses.values())}
        ) as admin:
            await admin.create_topics([NewTopic("kept", 1, 1, config={"retention.ms": "60000"})])[
                "kept"
            ]
            topic = ConfigResource("topic", "kept")
            broker = ConfigResource("broker", "1")
            described = admin.describe_configs([topic, broker])
            topic_entries, broker_entries = await described[topic], await described[broker]

            retention = topic_entries["retention.ms"]
            assert (retention.value, retention.source) == ("60000", ConfigSource.TOPIC_CONFIG)
            assert not (retention.is_read_only or retention.is_sensitive or retention.is_synonym)
            assert next(iter(retention.synonyms)) == "retention.ms"
            own = retention.synonyms["retention.ms"]
            assert (own.value, own.source, own.is_synonym) == (
                "60000",
                ConfigSource.TOPIC_CONFIG,
                True,
            )
            hours = retention.synonyms["log.retention.hours"]
            assert (hours.value, hours.source) == ("168", ConfigSource.DEFAULT_CONFIG)

            secret = broker_entries["ssl.keystore.password"]
            assert secret.is_sensitive and secret.value is None
            assert broker_entries["log.retention.hours"].is_read_only
            assert not broker_entries["log.retention.ms"].is_read_only

    run_scenario(scenario, ControllerQuorum(tmp_path, {}), 60)
