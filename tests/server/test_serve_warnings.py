"""Which supplied keys ``raftmeta serve`` warns about: those nothing reads, not the static
broker configs the config table knows (DescribeConfigs shows them, the node's broker reads
them) nor a plug-in's own."""

from __future__ import annotations

from raftmeta.config.node import ConfigValue, parse_config
from raftmeta.server.serve import unread_keys

BASE: dict[str, ConfigValue] = {
    "node.id": 1,
    "controller.quorum.voters": "1@127.0.0.1:9093",
    "metadata.log.dir": "/var/lib/raftmeta",
}


def test_static_broker_configs_are_not_reported_as_unread() -> None:
    config = parse_config(
        BASE,
        {
            "log.retention.hours": "24",
            "num.network.threads": "4",
            "replica.placer.seed": "7",
            "num.partitoins": "3",
        },
    )
    assert "log.retention.hours" in config.unknown_keys  # not one of the node's own keys
    assert unread_keys(config) == ["num.partitoins"]
