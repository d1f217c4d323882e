"""``raftmeta dev --kafka`` as a user runs it: every controller gets a KAFKA listener at base
port + 100 + i, the bootstrap list is printed, and a real confluent-kafka client bootstrapped to
a standby's listener creates a topic; ``--kafka`` with ``--tls`` is refused in one line."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from raftmeta.devkit.cluster import KAFKA_PORT_OFFSET
from raftmeta.devkit.ports import free_port_run
from tests.process.helpers import DEADLINE_S
from tests.process.test_dev import DEV_COMMAND, run_dev_until_leader, stop_with_ctrl_c


def test_dev_kafka_serves_kafka_clients_on_every_controller(tmp_path: Path) -> None:
    base_port = free_port_run(KAFKA_PORT_OFFSET + 3)
    dev, output = run_dev_until_leader(
        tmp_path / "dev", base_port, "--kafka", "--brokers", "1", "--racks", "0"
    )
    try:
        kafka = [f"127.0.0.1:{base_port + KAFKA_PORT_OFFSET + i}" for i in range(3)]
        assert f"Kafka bootstrap servers: {','.join(kafka)}" in output
        leader = re.search(r"Leader: node (300[012])", output)
        assert leader, output
        standby = next(i for i in range(3) if 3000 + i != int(leader.group(1)))
        client = AdminClient({"bootstrap.servers": kafka[standby]})
        futures = client.create_topics([NewTopic("via-dev", 2, 1)], operation_timeout=10)
        futures["via-dev"].result(DEADLINE_S)
        described = client.describe_cluster().result(DEADLINE_S)
        assert {f"{node.host}:{node.port}" for node in described.nodes} == set(kafka)
        stop_with_ctrl_c(dev, output, processes=4)
    finally:
        if dev.poll() is None:
            dev.kill()


def test_dev_refuses_kafka_with_tls_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [*DEV_COMMAND, "--data-dir", str(tmp_path / "dev"), "--kafka", "--tls"],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "raftmeta dev: --kafka cannot be used with --tls: the Kafka listener is plaintext only"
    ]
    assert not (tmp_path / "dev").exists()
