"""Real ``raftmeta serve`` processes on loopback for the process-level tests.

Every wait polls a condition (DescribeQuorum, a file, a process status) against a deadline;
nothing here sleeps to let something happen.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from raftmeta.admin.quorum import DescribeError, QuorumInfo, describe_quorum
from raftmeta.devkit.cluster import DevCluster, NodeProcess, stop_all
from raftmeta.devkit.ports import free_port_run
from raftmeta.server.serve import LOAD_RESOURCE
from tests.support.waiting import wait_until

DEADLINE_S = 20.0
"""How long one wait in a process test may take."""
SCENARIO_TIMEOUT_S = 300.0
"""How long a whole async process scenario may take: well above the sum of its waits, so it
catches a hang rather than times anything."""


def raftmeta(*args: str, timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "raftmeta", *args], capture_output=True, text=True, timeout=timeout
    )


def free_base_port(count: int = 3) -> int:
    """The first of ``count`` free ports in a row: a cluster's controllers take them in turn."""
    return free_port_run(count)


class ProcessQuorum:
    """A process quorum: a ``DevCluster`` driven node by node, as the tests need."""

    def __init__(
        self, root: Path, overrides: Mapping[str, str] | None = None, *, tls: bool = False
    ) -> None:
        """``tls``: every node on ``CONTROLLER:SSL`` with client certificates required (the dev
        cluster's throwaway CA), and the test's own DescribeQuorum calls made as ``admin``."""
        self.cluster = DevCluster(root, free_base_port(), overrides, tls=tls)
        self.cluster.prepare()
        self.client_tls = self.cluster.client_tls()

    @property
    def nodes(self) -> dict[int, NodeProcess]:
        return self.cluster.nodes

    @property
    def cluster_id(self) -> str:
        return self.cluster.cluster_id

    def acked_log(self, node_id: int) -> Path:
        return self.cluster.root / f"acked-{node_id}.log"

    def start(self, node_id: int, *, load_rate: float | None = None) -> None:
        extra: list[str] = []
        if load_rate is not None:
            extra = [
                "--load-generator",
                str(load_rate),
                "--acked-log",
                str(self.acked_log(node_id)),
            ]
        self.nodes[node_id].start(extra)

    def start_all(self, *, load_rate: float | None = None) -> None:
        for node_id in self.nodes:
            self.start(node_id, load_rate=load_rate)

    def describe(self) -> QuorumInfo | None:
        """The leader's view, or None while no leader answers."""
        self.check_alive()
        try:
            return describe_quorum(
                self.cluster.bootstrap_servers, self.cluster_id, timeout_s=1.0, tls=self.client_tls
            )
        except DescribeError:
            return None

    def check_alive(self) -> None:
        for node in self.nodes.values():
            status = node.exit_status
            # 0 after a SIGTERM the test sent, -9 after its kill -9; anything else is a crash.
            if status is not None and status not in (0, -signal.SIGKILL):
                raise AssertionError(f"node {node.node_id} exited with {status}: {node.log_tail()}")

    def wait_for_leader(
        self, *, newer_than: int = -1, deadline_s: float = DEADLINE_S
    ) -> QuorumInfo:
        def found() -> QuorumInfo | None:
            info = self.describe()
            return info if info is not None and info.leader_epoch > newer_than else None

        return wait_until(found, f"a leader in an epoch above {newer_than}", deadline_s)

    def acked(self) -> list[str]:
        values: list[str] = []
        for node_id in self.nodes:
            path = self.acked_log(node_id)
            if path.exists():
                values += path.read_text().splitlines()
        return values

    def acked_by(self, node_id: int) -> int:
        path = self.acked_log(node_id)
        return len(path.read_text().splitlines()) if path.exists() else 0

    def stop_all(self) -> None:
        stop_all(list(self.nodes.values()))

    def logged_values(self, node_id: int) -> list[str]:
        """The load generator's values in a stopped node's log, in log order."""
        result = raftmeta("log", "dump", "--json", str(self.cluster.data_dir(node_id)))
        assert result.returncode == 0, result.stderr
        values: list[str] = []
        for line in result.stdout.splitlines():
            entry = json.loads(line)
            assert "stopped" not in entry, f"node {node_id}: {entry}"
            for record in entry.get("records", ()):
                if record.get("resource_name") == LOAD_RESOURCE:
                    values.append(record["value"])
        return values


@contextmanager
def running(quorum: ProcessQuorum) -> Iterator[ProcessQuorum]:
    """Whatever happens in the test, no node outlives it."""
    try:
        yield quorum
    finally:
        quorum.stop_all()


def assert_nothing_acknowledged_lost(acked: list[str], logs: dict[int, list[str]]) -> None:
    """Every node's committed log is the same, and holds each acknowledged value exactly once."""
    assert len(set(acked)) == len(acked), "a value was acknowledged twice"
    first_id, first_log = next(iter(logs.items()))
    for node_id, values in logs.items():
        assert values == first_log, f"node {node_id}'s committed log differs from {first_id}'s"
        counts = Counter(values)
        missing = [v for v in acked if counts[v] == 0]
        assert not missing, f"node {node_id} lost acknowledged writes: {missing[:5]}"
        doubled = [v for v, n in counts.items() if n > 1]
        assert not doubled, f"node {node_id} holds writes twice: {doubled[:5]}"
