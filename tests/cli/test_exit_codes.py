"""One exit-code rule for every command: 2 for a command line or configuration that cannot
work, 1 for a command that was understood but failed; one line on stderr either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.cli.main import COMMANDS, build_parser, main

BOOTSTRAP = ("--bootstrap-server", "127.0.0.1:1")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def subcommands() -> list[list[str]]:
    """Every command and action the parser knows, as the words that name it."""
    import argparse

    found: list[list[str]] = []

    def walk(parser: argparse.ArgumentParser, prefix: list[str]) -> None:
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not actions:
            found.append(prefix)
            return
        for name, child in actions[0].choices.items():
            walk(child, [*prefix, name])

    walk(build_parser(), [])
    return found


def test_every_command_is_walked() -> None:
    words = {command[0] for command in subcommands()}
    assert len(words) >= len(COMMANDS) and {"leader-election", "format", "log"} <= words


@pytest.mark.parametrize("command", subcommands(), ids=" ".join)
def test_an_unknown_option_exits_2_in_one_line_for_every_command(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, *command, "--no-such-option")
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, (out, err)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--election-type", "preferred", "--all-topic-partitions"), "bootstrap-server"),
        ((*BOOTSTRAP, "--election-type", "nope", "--all-topic-partitions"), "election-type"),
        ((*BOOTSTRAP, "--election-type", "preferred"), "One and only one"),
        ((*BOOTSTRAP, "--election-type", "preferred", "--topic", "t"), "partition"),
        ((*BOOTSTRAP, "--election-type", "preferred", "--partition", "0"), "only allowed if topic"),
        (
            (
                "--bootstrap-server",
                "nohost",
                "--election-type",
                "preferred",
                "--topic",
                "t",
                "--partition",
                "0",
            ),
            "not host:port",
        ),
    ],
)
def test_leader_election_usage_errors_exit_2(
    args: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "leader-election", *args)
    assert (status, out) == (2, "") and message in err and err.count("\n") == 1, err


def test_partition_without_topic_is_told_what_it_lacks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, _, err = run(
        capsys, "leader-election", *BOOTSTRAP, "--election-type", "preferred", "--partition", "3"
    )
    assert (status, err) == (2, "Option partition is only allowed if topic is used\n")


def node_config(tmp_path: Path) -> Path:
    config = tmp_path / "node.properties"
    config.write_text(
        "node.id=1\nprocess.roles=controller\n"
        "controller.quorum.voters=1@127.0.0.1:19093\n"
        f"metadata.log.dir={tmp_path / 'meta'}\nlisteners=CONTROLLER://127.0.0.1:19093\n"
    )
    return config


@pytest.mark.parametrize("cluster_id", ["bad!", "a b", "x" * 65])
def test_format_with_a_malformed_cluster_id_exits_2(
    cluster_id: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = node_config(tmp_path)
    status, out, err = run(capsys, "format", "--config", str(config), "--cluster-id", cluster_id)
    assert (status, out) == (2, "") and "cluster id" in err and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("node.id=x1", "node.id='x1' is not a whole number"),
        ("node.id=", "node.id='' is not a whole number"),
        ("version=99999999999999999999", "version='99999999999999999999' is not a whole number"),
    ],
)
def test_a_bad_meta_properties_value_is_one_line_naming_the_key(
    line: str, shown: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = node_config(tmp_path)
    assert run(capsys, "format", "--config", str(config), "--cluster-id", "abc")[0] == 0
    meta = tmp_path / "meta" / "meta.properties"
    key = line.split("=")[0]
    meta.write_text(
        "\n".join(
            line if row.startswith(key + "=") else row for row in meta.read_text().split("\n")
        )
    )
    status, _, err = run(
        capsys, "format", "--config", str(config), "--cluster-id", "abc", "--ignore-formatted"
    )
    assert status == 1 and err == f"{meta}: {shown} from 0 to 9999999999\n", err
    assert "int()" not in err


def test_a_binary_meta_properties_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = node_config(tmp_path)
    assert run(capsys, "format", "--config", str(config), "--cluster-id", "abc")[0] == 0
    meta = tmp_path / "meta" / "meta.properties"
    meta.write_bytes(b"\xff\xfe\x00node.id=1\n")
    status, _, err = run(
        capsys, "format", "--config", str(config), "--cluster-id", "abc", "--ignore-formatted"
    )
    assert status == 1 and err == f"{meta}: not a text file (not UTF-8)\n", err
