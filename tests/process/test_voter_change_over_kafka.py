"""``quorum remove-controller`` / ``add-controller --bootstrap-controller`` on a dynamic quorum
of real ``raftmeta serve`` processes with KAFKA listeners: the changes go through Kafka's
RemoveRaftVoter and AddRaftVoter on the active controller's listener, the voters follow, and a
retried change that was already made succeeds and says so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from raftmeta.admin.quorum import DescribeError, QuorumInfo, describe_quorum
from raftmeta.devkit.cluster import KAFKA_PORT_OFFSET, DevCluster
from raftmeta.devkit.ports import free_port_run
from raftmeta.storage.meta_properties import read_meta_properties
from tests.support.waiting import wait_until

DEADLINE_S = 30.0


def raftmeta(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "raftmeta", *args], capture_output=True, text=True, timeout=90
    )


def test_voters_change_through_the_kafka_listener(tmp_path: Path) -> None:
    cluster = DevCluster(
        tmp_path / "dev", free_port_run(KAFKA_PORT_OFFSET + 3), kafka=True, dynamic=True
    )
    cluster.prepare()
    bootstrap = cluster.bootstrap_servers
    kafka = cluster.kafka_bootstrap

    def voters_are(expected: set[int]) -> QuorumInfo:
        def found() -> QuorumInfo | None:
            for node in cluster.nodes.values():
                assert node.exit_status is None, node.log_tail()
            try:
                info = describe_quorum(bootstrap, cluster.cluster_id, timeout_s=1.0)
            except DescribeError:
                return None
            leader = info.leader
            caught_up = leader is not None and all(
                v.log_end_offset == leader.log_end_offset for v in info.voters
            )
            return info if caught_up and {v.node_id for v in info.voters} == expected else None

        return wait_until(found, f"voters {sorted(expected)}", DEADLINE_S)

    cluster.start()
    try:
        voters_are({3000, 3001, 3002})
        directory = read_meta_properties(cluster.data_dir(3002) / "meta.properties").directory_id
        assert directory is not None

        def remove() -> subprocess.CompletedProcess[str]:
            return raftmeta(
                "quorum",
                "remove-controller",
                "--bootstrap-controller",
                kafka,
                "--controller-id",
                "3002",
                "--controller-directory-id",
                directory,
                "--timeout",
                "20",
            )

        def add() -> subprocess.CompletedProcess[str]:
            return raftmeta(
                "quorum",
                "add-controller",
                "--config",
                str(cluster.nodes[3002].config),
                "--bootstrap-controller",
                kafka,
                "--timeout",
                "20",
            )

        removed = remove()
        assert removed.returncode == 0, removed.stderr + "\n".join(
            n.log_tail() for n in cluster.nodes.values()
        )
        assert "Removed controller 3002" in removed.stdout
        voters_are({3000, 3001})
        again = remove()
        assert again.returncode == 0, again.stderr
        assert "Nothing to change: controller 3002" in again.stdout, again.stdout
        added = add()
        assert added.returncode == 0, added.stderr
        assert "Added controller 3002" in added.stdout
        voters_are({3000, 3001, 3002})
        again = add()
        assert again.returncode == 0, again.stderr
        assert "Nothing to change: controller 3002" in again.stdout, again.stdout
    finally:
        cluster.stop()
