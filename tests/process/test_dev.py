"""``raftmeta dev`` as a user runs it: it starts the quorum and its brokers, says who leads,
and Ctrl-C leaves nothing (brokers shut down under control first)."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from tests.process.helpers import DEADLINE_S, free_base_port
from tests.support.waiting import wait_until

DEV_COMMAND = (sys.executable, "-m", "raftmeta", "dev")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def run_dev_until_leader(
    data_dir: Path, base_port: int, *extra: str
) -> tuple[subprocess.Popen[str], str]:
    """Start ``raftmeta dev`` and return it with its output up to the "Press Ctrl-C" line."""
    dev = subprocess.Popen(
        [*DEV_COMMAND, "--data-dir", str(data_dir), "--base-port", str(base_port), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    assert dev.stdout is not None
    lines: queue.Queue[str] = queue.Queue()

    def pump(stream: IO[str]) -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=pump, args=(dev.stdout,), daemon=True).start()
    output = ""
    give_up = time.monotonic() + DEADLINE_S
    while "Press Ctrl-C" not in output:
        remaining = give_up - time.monotonic()
        try:
            output += lines.get(timeout=max(0.0, remaining))
        except queue.Empty:
            dev.kill()
            raise AssertionError(f"dev printed no leader in time:\n{output}") from None
    return dev, output


def epoch_of(output: str) -> int:
    found = re.search(r"Leader: node 300[012] \(epoch (\d+)\)", output)
    assert found, output
    return int(found.group(1))


def stop_with_ctrl_c(dev: subprocess.Popen[str], output: str, processes: int = 3) -> None:
    pids = [int(pid) for pid in re.findall(r"pid (\d+)", output)]
    assert len(pids) == processes
    dev.send_signal(signal.SIGINT)
    assert dev.wait(DEADLINE_S) == 0
    wait_until(lambda: not any(pid_alive(pid) for pid in pids), "every node process to end", 5.0)


def test_dev_starts_a_quorum_reports_its_leader_and_ctrl_c_leaves_no_process(
    tmp_path: Path,
) -> None:
    base_port = free_base_port()
    data_dir = tmp_path / "dev"
    dev, output = run_dev_until_leader(data_dir, base_port, "--brokers", "2", "--racks", "2")
    try:
        servers = ",".join(f"127.0.0.1:{base_port + i}" for i in range(3))
        assert f"Bootstrap servers: {servers}" in output
        assert "(new cluster)" in output
        for node_id in (3000, 3001, 3002):
            assert f"node {node_id}: pid" in output
        assert re.search(r"broker 1: pid \d+, rack-1,", output), output
        assert re.search(r"broker 2: pid \d+, rack-2,", output), output
        assert "Brokers: 2 registered and unfenced" in output
        cluster_id = (data_dir / "cluster.id").read_text().strip()
        first_epoch = epoch_of(output)
        stop_with_ctrl_c(dev, output, processes=5)
        for broker_id in (1, 2):
            broker_log = (data_dir / f"broker-{broker_id}.log").read_text()
            assert "the controller agreed to the shutdown" in broker_log, broker_log
            assert f"broker {broker_id} stopped" in broker_log
    finally:
        if dev.poll() is None:
            dev.kill()

    dev, output = run_dev_until_leader(data_dir, base_port, "--brokers", "0")
    try:
        assert f"Cluster id: {cluster_id} (resumed cluster)" in output
        # The election state survived on disk, so the new epoch is above the old one.
        assert epoch_of(output) > first_epoch
        stop_with_ctrl_c(dev, output)
    finally:
        if dev.poll() is None:
            dev.kill()
