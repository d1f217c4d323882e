"""``raftmeta topics`` on a real quorum, through ``raftmeta.cli.main`` as a user runs it, plus a
real ``python -m raftmeta topics`` process for the exit status and the no-traceback promise."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from raftmeta.channel import ControllerChannel
from raftmeta.cli.main import main
from tests.admin.brokers import register_unfenced, set_fenced
from tests.admin.fake_nodes import refusing_endpoint
from tests.admin.test_admin_quorum import QUIET
from tests.support.controller_quorum import ControllerQuorum
from tests.support.scenario import run_scenario


class Terminal:
    """Runs ``raftmeta`` commands off the event loop (they block) and keeps what they print."""

    def __init__(self, capsys: pytest.CaptureFixture[str], servers: str) -> None:
        self.capsys = capsys
        self.servers = servers

    async def topics(self, *args: str) -> tuple[int, str, str]:
        status = await asyncio.to_thread(
            main, ["topics", "--bootstrap-server", self.servers, *args]
        )
        out, err = self.capsys.readouterr()
        return status, out, err


def test_topics_are_created_described_listed_grown_and_deleted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        lifecycle = ControllerChannel(list(cluster.addresses.values()))
        epochs = await register_unfenced(lifecycle, [1, 2, 3])
        follower = await cluster.follower()
        term = Terminal(capsys, follower.address)

        assert await term.topics(
            "--create",
            "--topic",
            "orders",
            "--partitions",
            "3",
            "--replication-factor",
            "3",
            "--config",
            "min.insync.replicas=2",
            "--config",
            "retention.ms=1000",
        ) == (0, "Created topic orders.\n", "")
        status, out, _ = await term.topics(
            "--create", "--topic", "manual", "--replica-assignment", "1:2,2:3"
        )
        assert (status, out) == (0, "Created topic manual.\n")

        status, out, err = await term.topics("--describe", "--topic", "orders")
        assert (status, err) == (0, "")
        head, *partitions = out.splitlines()
        fields = head.split("\t")
        assert fields[0] == "Topic: orders" and fields[1].startswith("TopicId: ")
        assert len(fields[1]) == len("TopicId: ") + 22
        assert fields[2:] == [
            "PartitionCount: 3",
            "ReplicationFactor: 3",
            "Configs: min.insync.replicas=2,retention.ms=1000",
        ]
        assert len(partitions) == 3
        for index, line in enumerate(partitions):
            cells = line.split("\t")
            assert cells[:3] == ["", "Topic: orders", f"Partition: {index}"]
            leader, replicas, isr, elr, last_known_elr = (cell.split(": ")[1] for cell in cells[3:])
            assert (elr, last_known_elr) == ("", ""), "ELR is off on this cluster"
            assert sorted(replicas.split(",")) == ["1", "2", "3"]
            assert leader == replicas.split(",")[0] and sorted(isr.split(",")) == ["1", "2", "3"]

        status, out, _ = await term.topics("--describe")
        assert status == 0
        assert [line.split("\t")[0] for line in out.splitlines() if line.startswith("Topic")] == [
            "Topic: manual",
            "Topic: orders",
        ]
        assert (
            "\tTopic: manual\tPartition: 1\tLeader: 2\tReplicas: 2,3\tIsr: 2,3\t"
            "Elr: \tLastKnownElr: \n" in out
        )
        assert await term.topics("--list") == (0, "manual\norders\n", "")

        assert (await term.topics("--alter", "--topic", "orders", "--partitions", "5"))[0] == 0
        status, out, _ = await term.topics("--describe", "--topic", "orders")
        assert "PartitionCount: 5" in out and len(out.splitlines()) == 6

        # Kafka errors: one line, the code's name, exit 1.
        status, out, err = await term.topics(
            "--create", "--topic", "orders", "--partitions", "1", "--replication-factor", "1"
        )
        assert (status, out) == (1, "")
        assert err.startswith("Error while executing topic command : ")
        assert err.rstrip().endswith("(TOPIC_ALREADY_EXISTS)") and err.count("\n") == 1
        assert await term.topics(
            "--create", "--topic", "orders", "--partitions", "1", "--if-not-exists"
        ) == (0, "", "")
        status, _, err = await term.topics(
            "--create", "--topic", "wide", "--partitions", "1", "--replication-factor", "4"
        )
        assert status == 1 and "(INVALID_REPLICATION_FACTOR)" in err
        status, _, err = await term.topics("--alter", "--topic", "orders", "--partitions", "2")
        assert status == 1 and "(INVALID_PARTITIONS)" in err
        for action in (["--describe"], ["--delete"], ["--alter", "--partitions", "9"]):
            status, _, err = await term.topics(*action, "--topic", "ghost")
            assert status == 1, action
            assert "Topic 'ghost' does not exist as expected (UNKNOWN_TOPIC_OR_PARTITION)" in err
            assert await term.topics(*action, "--topic", "ghost", "--if-exists") == (0, "", "")

        assert await term.topics("--delete", "--topic", "manual") == (0, "", "")
        assert await term.topics("--list") == (0, "orders\n", "")

        # Broker 3 fenced: it leaves every ISR, and "solo", on it alone, loses its leader.
        created = await term.topics("--create", "--topic", "solo", "--replica-assignment", "3")
        assert created == (0, "Created topic solo.\n", "")
        assert await term.topics("--describe", "--unavailable-partitions") == (0, "", "")
        await set_fenced(lifecycle, 3, epochs[3], fenced=True)
        status, out, _ = await term.topics("--describe", "--under-replicated-partitions")
        assert status == 0
        assert [line.split("\t")[1:3] for line in out.splitlines()] == [
            ["Topic: orders", f"Partition: {i}"] for i in range(5)
        ]
        status, out, _ = await term.topics("--describe", "--unavailable-partitions")
        assert status == 0
        assert out.startswith("\tTopic: solo\tPartition: 0\tLeader: none\tReplicas: 3\t")
        assert len(out.splitlines()) == 1
        await lifecycle.close()

        # The same, as a separate process: exit status and output, nothing else.
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "raftmeta",
            "topics",
            "--bootstrap-server",
            ",".join(cluster.addresses.values()),
            "--describe",
            "--topic",
            "orders",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        stdout, stderr = await asyncio.wait_for(process.communicate(), 60)
        assert process.returncode == 0, stderr
        assert stdout.decode().startswith("Topic: orders\t") and stderr == b""

    run_scenario(scenario, ControllerQuorum(tmp_path, QUIET), 90)


def test_an_unreachable_cluster_is_one_line_and_exit_1_from_a_real_process(
    tmp_path: Path,
) -> None:
    import subprocess

    settings = tmp_path / "client.properties"
    settings.write_text("request.timeout.ms=300\nbearer.token=abc\n")
    with refusing_endpoint() as dead:
        finished = subprocess.run(
            [
                sys.executable,
                "-m",
                "raftmeta",
                "topics",
                "--bootstrap-server",
                dead,
                "--list",
                "--command-config",
                str(settings),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert finished.returncode == 1
    assert finished.stdout == ""
    assert finished.stderr.count("\n") == 1 and "Traceback" not in finished.stderr
    assert dead in finished.stderr and "(REQUEST_TIMED_OUT)" in finished.stderr


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        ([], "give one of --create"),
        (["--create"], "--create needs --topic"),
        (["--list", "--describe"], "not allowed with argument"),
        (["--list", "--topic", "t"], "--list takes no --topic"),
        (["--alter", "--topic", "t"], "--alter needs --partitions"),
        (["--describe", "--partitions", "2"], "--partitions goes only with"),
        (["--list", "--unavailable-partitions"], "go only with --describe"),
        (["--delete", "--topic", "t", "--config", "a=b"], "--config goes only with --create"),
        (["--create", "--topic", "t", "--config", "novalue"], "is not KEY=VALUE"),
        (["--create", "--topic", "t", "--partitions", "0"], "--partitions must be at least 1"),
        (
            ["--create", "--topic", "t", "--replica-assignment", "1:2", "--partitions", "1"],
            "excludes --partitions",
        ),
        (["--create", "--topic", "t", "--replica-assignment", "1:x"], "write broker ids"),
        (["--create", "--topic", "t", "--partitions", "many"], "invalid int value"),
    ],
)
def test_a_command_line_that_cannot_work_exits_2_with_one_line(
    args: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["topics", "--bootstrap-server", "127.0.0.1:1", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and complaint in err


def test_bad_connection_settings_exit_2_before_anything_is_sent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["topics", "--bootstrap-server", "nohost", "--list"]) == 2
    assert (
        "--bootstrap-server: bootstrap server 'nohost' is not host:port" in capsys.readouterr().err
    )
    settings = tmp_path / "client.properties"
    settings.write_text("request.timeout.ms=0.5\n")
    assert (
        main(["topics", "--bootstrap-server", "h:1", "--list", "--command-config", str(settings)])
        == 2
    )
    assert "Invalid value 0.5 for configuration request.timeout.ms" in capsys.readouterr().err
    assert (
        main(
            [
                "topics",
                "--bootstrap-server",
                "h:1",
                "--list",
                "--command-config",
                str(tmp_path / "missing"),
            ]
        )
        == 2
    )
    assert "no such file" in capsys.readouterr().err
