"""A real embedded broker follows dynamic broker configs from the log: a cluster-wide value
over its static one, its own value over the cluster-wide one, and back when that is deleted."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from raftmeta.broker import Broker, BrokerState, ConfigChange
from raftmeta.broker.dynamic_config import DynamicBrokerConfig
from raftmeta.common.configs import AlterConfigOp
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage
from raftmeta.records import ConfigRecord, ConfigResourceType
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.storage import MetadataDir
from tests.support.broker_quorum import CLUSTER_ID, DEADLINE_S, BrokerQuorum
from tests.support.scenario import run_scenario

BROKER = int(ConfigResourceType.BROKER)
RETENTION = "log.retention.ms"


def running(broker: Broker) -> Callable[[], bool]:
    return lambda: broker.state is BrokerState.RUNNING


async def alter(quorum: BrokerQuorum, name: str, key: str, value: str | None) -> None:
    op = AlterConfigOp.SET if value is not None else AlterConfigOp.DELETE
    request = apb.IncrementalAlterConfigsRequest(
        resources=[
            apb.AlterConfigsResource(
                resource=apb.ConfigResource(resource_type=BROKER, resource_name=name),
                configs=[
                    apb.AlterableConfig(
                        name=key, op=int(op), value=value or "", value_is_null=value is None
                    )
                ],
            )
        ]
    )
    response = await quorum.channel.call("Admin/IncrementalAlterConfigs", request)
    assert isinstance(response, apb.IncrementalAlterConfigsResponse)
    [result] = response.results
    assert result.error_code == ErrorCode.NONE, result.error_message


def test_a_broker_hears_of_dynamic_configs_in_kafkas_precedence(tmp_path: Path) -> None:
    async def scenario(quorum: BrokerQuorum) -> None:
        settings = dataclasses.replace(
            quorum.broker_settings(1), static_configs=((RETENTION, "1000"),)
        )
        MetadataDir.format(settings.data_dir, 1, CLUSTER_ID, ignore_formatted=True)
        broker = Broker(settings)
        quorum.brokers[1] = broker
        await broker.start()
        other = await quorum.start_broker(2)
        for started in (broker, other):
            await started.wait_for(running(started), DEADLINE_S)
        changes: list[ConfigChange] = []
        broker.on_config_change(changes.append)
        seen_by_other: list[ConfigChange] = []
        other.on_config_change(seen_by_other.append)
        assert broker.effective_config[RETENTION] == "1000"
        assert other.effective_config.get(RETENTION) is None
        assert broker.effective_config["log.retention.hours"] == "168"

        def retention_is(value: str | None, of: Broker = broker) -> bool:
            return of.effective_config.get(RETENTION) == value

        await alter(quorum, "", RETENTION, "2000")
        await broker.wait_for(lambda: retention_is("2000"), DEADLINE_S)
        await other.wait_for(lambda: retention_is("2000", other), DEADLINE_S)
        assert changes[-1].changed == {RETENTION}
        assert (changes[-1].before[RETENTION], changes[-1].after[RETENTION]) == ("1000", "2000")
        assert seen_by_other[-1].after[RETENTION] == "2000"

        await alter(quorum, "1", RETENTION, "3000")
        await broker.wait_for(lambda: retention_is("3000"), DEADLINE_S)
        assert changes[-1].changed == {RETENTION}
        # Broker 1's own value is not broker 2's.
        await quorum.wait_for_image(other)
        assert other.effective_config[RETENTION] == "2000"
        assert broker.topic_config("missing")["retention.ms"] == "3000"

        await alter(quorum, "1", RETENTION, None)
        await broker.wait_for(lambda: retention_is("2000"), DEADLINE_S)
        await alter(quorum, "", RETENTION, None)
        await broker.wait_for(lambda: retention_is("1000"), DEADLINE_S)
        assert [change.after.get(RETENTION) for change in changes] == [
            "2000",
            "3000",
            "2000",
            "1000",
        ]

    run_scenario(scenario, BrokerQuorum(tmp_path))


def image_with(*records: ConfigRecord) -> MetadataImage:
    image = MetadataImage()
    image.apply_batch(records, 0)
    return image


def test_only_a_change_of_value_is_reported() -> None:
    config = DynamicBrokerConfig(7, {"num.io.threads": "4"})
    changes: list[ConfigChange] = []
    unsubscribe = config.on_change(changes.append)
    assert config.effective["num.io.threads"] == "4"
    # The static value set again dynamically changes nothing.
    config.update(image_with(ConfigRecord(BROKER, "", "num.io.threads", "4")))
    assert changes == []
    config.update(
        image_with(
            ConfigRecord(BROKER, "", "num.io.threads", "4"),
            ConfigRecord(BROKER, "7", "num.io.threads", "6"),
            ConfigRecord(BROKER, "8", "num.io.threads", "9"),
        )
    )
    [change] = changes
    assert change.changed == {"num.io.threads"} and change.after["num.io.threads"] == "6"
    unsubscribe()
    config.update(image_with())
    assert len(changes) == 1 and config.effective["num.io.threads"] == "4"
