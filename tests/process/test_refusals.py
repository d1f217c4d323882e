"""What ``serve`` and ``quorum describe`` refuse, and how: one line, the right exit status."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

from raftmeta.admin.quorum import QuorumInfo
from raftmeta.storage import MetadataDir
from tests.process.helpers import DEADLINE_S, ProcessQuorum, free_base_port, raftmeta, running
from tests.support.waiting import wait_until


def write_config(tmp_path: Path, port: int, **extra: str) -> Path:
    config = tmp_path / "node.properties"
    lines = [
        "node.id=1",
        f"controller.quorum.voters=1@127.0.0.1:{port}",
        f"metadata.log.dir={tmp_path / 'data'}",
        *(f"{key}={value}" for key, value in extra.items()),
    ]
    config.write_text("\n".join(lines) + "\n")
    return config


def assert_one_line(result: subprocess.CompletedProcess[str], status: int, *fragments: str) -> None:
    assert result.returncode == status, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_serve_refuses_bad_config_unformatted_foreign_directory_and_taken_port(
    tmp_path: Path,
) -> None:
    port = free_base_port(1)
    bad = tmp_path / "bad.properties"
    bad.write_text("node.id=1\ncontroller.quorum.voters=1@127.0.0.1:x\nmetadata.log.dir=d\n")
    assert_one_line(raftmeta("serve", "--config", str(bad)), 2, "controller.quorum.voters")

    config = write_config(tmp_path, port)
    assert_one_line(raftmeta("serve", "--config", str(config)), 1, "not formatted")
    no_load = raftmeta("serve", "--config", str(config), "--load-generator", "0")
    assert_one_line(no_load, 2, "--load-generator")

    MetadataDir.format(tmp_path / "data", 7, "other-cluster")
    assert_one_line(raftmeta("serve", "--config", str(config)), 1, "belongs to node 7")

    pinned = write_config(tmp_path, port, **{"node.id": "7", "cluster.id": "mine"})
    pinned.write_text(pinned.read_text().replace("1@", "7@"))
    assert_one_line(raftmeta("serve", "--config", str(pinned)), 1, "belongs to cluster")

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        pinned.write_text(pinned.read_text().replace("cluster.id=mine", "cluster.id=other-cluster"))
        assert_one_line(raftmeta("serve", "--config", str(pinned)), 1, "in use")


def test_describe_an_unreachable_server_is_one_line_and_exit_1() -> None:
    port = free_base_port(1)
    result = raftmeta("quorum", "describe", "--bootstrap-server", f"127.0.0.1:{port}")
    assert_one_line(result, 1, f"127.0.0.1:{port}")


def test_a_node_of_another_cluster_never_joins_and_describe_prints_kafkas_shape(
    tmp_path: Path,
) -> None:
    quorum = ProcessQuorum(tmp_path)
    intruder = 3002
    data_dir = quorum.cluster.data_dir(intruder)
    for path in sorted(data_dir.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    MetadataDir.format(data_dir, intruder, "another-cluster")
    properties = quorum.nodes[intruder].config
    properties.write_text(properties.read_text().replace(quorum.cluster_id, "another-cluster"))
    node_log = quorum.nodes[intruder].log_path
    with running(quorum):
        quorum.start_all()
        info = quorum.wait_for_leader()
        assert info.leader_id != intruder
        wait_until(
            lambda: node_log.exists() and "belongs to another cluster" in node_log.read_text(),
            "the intruder to be refused",
            DEADLINE_S,
        )

        def committed() -> QuorumInfo | None:
            described = quorum.describe()
            return described if described is not None and described.high_watermark > 0 else None

        info = wait_until(committed, "a commit without the intruder", DEADLINE_S)
        refused = next(v for v in info.voters if v.node_id == intruder)
        assert refused.log_end_offset == -1 and refused.last_fetch_timestamp == -1
        assert quorum.nodes[intruder].running

        servers = quorum.cluster.bootstrap_servers
        status = raftmeta(
            "quorum", "describe", "--bootstrap-server", servers, "--cluster-id", quorum.cluster_id
        )
        assert status.returncode == 0, status.stderr
        fields = dict(line.split(":", 1) for line in status.stdout.splitlines())
        assert list(fields) == [
            "ClusterId",
            "LeaderId",
            "LeaderEpoch",
            "HighWatermark",
            "MaxFollowerLag",
            "MaxFollowerLagTimeMs",
            "CurrentVoters",
            "CurrentObservers",
        ]
        assert fields["ClusterId"].strip() == quorum.cluster_id
        assert fields["CurrentVoters"].strip() == "[3000,3001,3002]"

        table = raftmeta(
            "quorum",
            "describe",
            "--bootstrap-server",
            servers,
            "--cluster-id",
            quorum.cluster_id,
            "--replication",
        )
        assert table.returncode == 0, table.stderr
        rows = [line.split() for line in table.stdout.splitlines()]
        assert rows[0] == [
            "NodeId",
            "LogEndOffset",
            "Lag",
            "LastFetchTimestamp",
            "LastCaughtUpTimestamp",
            "Status",
        ]
        statuses = {int(row[0]): row[5] for row in rows[1:]}
        assert list(statuses.values()).count("Leader") == 1
        assert statuses[intruder] == "Follower"
        assert [row[1] for row in rows[1:] if int(row[0]) == intruder] == ["-1"]

        # Asked with the intruder's own address and the real cluster id, it refuses.
        intruder_address = f"127.0.0.1:{quorum.cluster.ports[intruder]}"
        foreign = raftmeta(
            "quorum",
            "describe",
            "--bootstrap-server",
            intruder_address,
            "--cluster-id",
            quorum.cluster_id,
        )
        assert_one_line(foreign, 1, "belongs to a cluster other than")
