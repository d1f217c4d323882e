"""``--bootstrap-controller`` (KIP-919) on ``topics``, ``leader-election`` and ``quorum
describe``: each command run through the KAFKA listener prints what the same command prints
through gRPC on the same state, and exits with the same status."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from raftmeta.cli.main import main
from tests.kafka.quorum import KafkaQuorum, kafka_quorum


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    root: Path = tmp_path_factory.mktemp("kafka-cli")
    with kafka_quorum(root, brokers=3) as running:
        yield running


def grpc_door(quorum: KafkaQuorum) -> list[str]:
    return ["--bootstrap-server", ",".join(quorum.quorum.addresses.values())]


def kafka_door(quorum: KafkaQuorum) -> list[str]:
    # One standby first: the command must find the active controller on its own.
    standby = quorum.kafka_address(quorum.follower())
    return ["--bootstrap-controller", f"{standby},{quorum.kafka_address(quorum.active())}"]


def run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def both(
    quorum: KafkaQuorum, capsys: pytest.CaptureFixture[str], command: list[str], tail: list[str]
) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """The command through gRPC, then through the KAFKA listener, on the same state."""
    return (
        run(capsys, [*command, *grpc_door(quorum), *tail]),
        run(capsys, [*command, *kafka_door(quorum), *tail]),
    )


def test_topics_through_either_door(
    quorum: KafkaQuorum, capsys: pytest.CaptureFixture[str]
) -> None:
    created = run(
        capsys,
        [
            "topics",
            *kafka_door(quorum),
            "--create",
            "--topic",
            "cli-orders",
            "--partitions",
            "3",
            "--replication-factor",
            "2",
            "--config",
            "min.insync.replicas=2",
        ],
    )
    assert created == (0, "Created topic cli-orders.\n", "")

    grpc, kafka = both(quorum, capsys, ["topics"], ["--describe", "--topic", "cli-orders"])
    assert grpc == kafka and grpc[0] == 0
    assert "Configs: min.insync.replicas=2" in kafka[1] and kafka[1].count("Partition:") == 3

    again = both(quorum, capsys, ["topics"], ["--create", "--topic", "cli-orders"])
    assert again[0] == again[1] and again[0][0] == 1
    assert "TOPIC_ALREADY_EXISTS" in again[1][2]

    grown = run(
        capsys,
        ["topics", *kafka_door(quorum), "--alter", "--topic", "cli-orders", "--partitions", "4"],
    )
    assert grown[0] == 0
    grpc, kafka = both(quorum, capsys, ["topics"], ["--describe"])
    assert grpc == kafka and kafka[1].count("Partition:") >= 4
    assert both(quorum, capsys, ["topics"], ["--list"])[0][1] == kafka_list(quorum, capsys)

    assert run(capsys, ["topics", *kafka_door(quorum), "--delete", "--topic", "cli-orders"])[0] == 0
    gone = both(quorum, capsys, ["topics"], ["--describe", "--topic", "cli-orders"])
    assert gone[0] == gone[1] and gone[0][0] == 1 and "does not exist" in gone[1][2]
    shrink = both(quorum, capsys, ["topics"], ["--alter", "--topic", "nope", "--partitions", "2"])
    assert shrink[0] == shrink[1] and shrink[0][0] == 1


def kafka_list(quorum: KafkaQuorum, capsys: pytest.CaptureFixture[str]) -> str:
    return run(capsys, ["topics", *kafka_door(quorum), "--list"])[1]


def test_leader_election_through_either_door(
    quorum: KafkaQuorum, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        run(
            capsys,
            [
                "topics",
                *grpc_door(quorum),
                "--create",
                "--topic",
                "cli-elected",
                "--partitions",
                "2",
                "--replication-factor",
                "2",
            ],
        )[0]
        == 0
    )
    outputs = []
    for tail in (
        ["--election-type", "PREFERRED", "--topic", "cli-elected", "--partition", "0"],
        ["--election-type", "preferred", "--all-topic-partitions"],
        ["--election-type", "UNCLEAN", "--topic", "cli-elected", "--partition", "7"],
    ):
        grpc, kafka = both(quorum, capsys, ["leader-election"], tail)
        assert grpc == kafka, tail
        outputs.append(kafka)
    assert outputs[0] == (0, "Valid replica already elected for partitions cli-elected-0\n", "")
    assert outputs[2][0] == 1 and "UNKNOWN_TOPIC_OR_PARTITION" in outputs[2][1]

    refused = run(
        capsys,
        [
            "leader-election",
            *grpc_door(quorum),
            *kafka_door(quorum),
            "--election-type",
            "PREFERRED",
            "--all-topic-partitions",
        ],
    )
    assert refused[0] == 2 and "Only one of" in refused[2]


def test_quorum_describe_through_either_door(
    quorum: KafkaQuorum, capsys: pytest.CaptureFixture[str]
) -> None:
    def rows(out: str) -> dict[str, str]:
        return {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in out.splitlines()}

    moving = {"HighWatermark", "MaxFollowerLag", "MaxFollowerLagTimeMs"}
    grpc, kafka = both(quorum, capsys, ["quorum", "describe"], ["--status"])
    assert grpc[0] == kafka[0] == 0 and grpc[2] == kafka[2] == ""
    assert {k: v for k, v in rows(grpc[1]).items() if k not in moving} == {
        k: v for k, v in rows(kafka[1]).items() if k not in moving
    }
    assert set(rows(kafka[1])) == set(rows(grpc[1]))

    def table(out: str) -> list[tuple[str, str]]:
        lines = out.splitlines()
        return [(line.split()[0], line.split()[-1]) for line in lines]

    grpc, kafka = both(quorum, capsys, ["quorum", "describe"], ["--replication"])
    assert grpc[0] == kafka[0] == 0
    assert table(grpc[1]) == table(kafka[1])

    unreachable = run(capsys, ["quorum", "describe", "--bootstrap-controller", "127.0.0.1:1"])
    assert unreachable[0] == 1 and unreachable[2].count("\n") == 1
