"""A combined node's broker (``process.roles=broker,controller``): its settings from the node's
file, and the rule that only such a broker may, and must, use a voter's id."""

from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.broker import Broker, BrokerSettings
from raftmeta.config.errors import ConfigError
from raftmeta.config.node import parse_config

VOTERS = {3000: "127.0.0.1:9093", 3001: "127.0.0.1:9094", 3002: "127.0.0.1:9095"}


def combined_config(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "node.id": "3001",
        "process.roles": "broker,controller",
        "controller.quorum.voters": ",".join(f"{n}@{a}" for n, a in VOTERS.items()),
        "metadata.log.dir": str(tmp_path / "node"),
        **extra,
    }


def test_a_separate_broker_may_not_use_a_voters_id(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="must not use a controller's id"):
        BrokerSettings(broker_id=3000, voters=VOTERS, data_dir=tmp_path)


def test_a_combined_nodes_broker_uses_its_voters_id_and_only_that(tmp_path: Path) -> None:
    settings = BrokerSettings(broker_id=3000, voters=VOTERS, data_dir=tmp_path, combined=True)
    assert settings.broker_id == 3000
    with pytest.raises(ConfigError, match="must be a voter"):
        BrokerSettings(broker_id=7, voters=VOTERS, data_dir=tmp_path, combined=True)


def test_combined_settings_read_the_broker_keys_of_the_nodes_file(tmp_path: Path) -> None:
    config = parse_config(
        combined_config(
            tmp_path,
            **{
                "broker.rack": "rack-2",
                "broker.heartbeat.interval.ms": "400",
                "broker.session.timeout.ms": "2500",
            },
        )
    )
    settings = BrokerSettings.from_config(config, combined=True)
    assert settings.combined and settings.broker_id == 3001
    assert settings.rack == "rack-2"
    assert (settings.heartbeat_interval_ms, settings.session_timeout_ms) == (400, 2500)
    # metadata.log.dir is the controller's: the broker keeps its files in a folder inside it.
    assert settings.data_dir == tmp_path / "node" / "broker"


def test_log_dirs_names_a_combined_nodes_broker_directory(tmp_path: Path) -> None:
    given = f"{tmp_path / 'kafka-logs'},{tmp_path / 'second'}"
    config = parse_config(combined_config(tmp_path, **{"log.dirs": given}))
    assert config.log_dirs == (str(tmp_path / "kafka-logs"), str(tmp_path / "second"))
    settings = BrokerSettings.from_config(config, combined=True)
    assert settings.data_dir == tmp_path / "kafka-logs"


def test_a_broker_shares_a_node_exactly_when_combined(tmp_path: Path) -> None:
    combined = BrokerSettings(
        broker_id=3000, voters=VOTERS, data_dir=tmp_path, combined=True, listener_port=9093
    )
    with pytest.raises(ValueError, match="shares its node"):
        Broker(combined)
    separate = BrokerSettings(broker_id=1, voters=VOTERS, data_dir=tmp_path)
    with pytest.raises(ValueError, match="shares its node"):
        Broker(separate, shared_node=object())  # type: ignore[arg-type]
