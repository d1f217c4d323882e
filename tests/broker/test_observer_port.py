"""``raftmeta.broker.observer.port`` places the one socket of a broker the OS chose before: its
observer's gRPC server (on 127.0.0.1, registered as the broker's endpoint when ``listeners``
names none). Read from a broker's file, served where it says."""

from __future__ import annotations

import dataclasses
import socket
from pathlib import Path

from raftmeta.broker import Broker, BrokerSettings
from raftmeta.config.node import parse_config
from raftmeta.devkit.ports import free_ports
from raftmeta.storage import MetadataDir
from tests.support.broker_quorum import CLUSTER_ID, DEADLINE_S, BrokerQuorum
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async


def test_a_brokers_file_sets_the_observer_port(tmp_path: Path) -> None:
    base: dict[str, str | int] = {
        "node.id": 1,
        "process.roles": "broker",
        "controller.quorum.voters": "3000@127.0.0.1:9093",
        "metadata.log.dir": str(tmp_path),
    }
    assert BrokerSettings.from_config(parse_config(base)).observer_port == 0
    chosen = parse_config({**base, "raftmeta.broker.observer.port": 19_321})
    assert BrokerSettings.from_config(chosen).observer_port == 19_321


def test_the_observer_serves_and_registers_the_configured_port(tmp_path: Path) -> None:
    (port,) = free_ports(1)

    async def scenario(quorum: BrokerQuorum) -> None:
        settings = dataclasses.replace(quorum.broker_settings(1), observer_port=port)
        MetadataDir.format(settings.data_dir, 1, CLUSTER_ID)
        broker = Broker(settings)
        await broker.start()
        quorum.brokers[1] = broker

        async def registered_port() -> bool:
            registration = quorum.controllers_image().broker(1)
            return registration is not None and [e.port for e in registration.endpoints] == [port]

        await wait_until_async(registered_port, "broker 1 to register its port", DEADLINE_S)
        with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE_S):
            pass  # the observer's server accepts there

    run_scenario(scenario, BrokerQuorum(tmp_path))
