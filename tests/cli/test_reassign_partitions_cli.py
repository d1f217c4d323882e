"""``raftmeta reassign-partitions`` refuses what cannot work with one line and exit 2, before it
asks any server; the files are read in Kafka's formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raftmeta.cli.main import main
from raftmeta.cli.reassignment_files import (
    ReassignmentFileError,
    assignment_json,
    parse_broker_list,
    read_reassignment,
    read_topics_to_move,
)
from raftmeta.common.elections import TopicPartition

UNREACHABLE = ("--bootstrap-server", "127.0.0.1:1")
"""Nothing listens on port 1: a test that reaches the network would fail, not pass."""


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["reassign-partitions", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def write(tmp_path: Path, document: object, name: str = "plan.json") -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def one_line_usage_error(result: tuple[int, str, str]) -> str:
    status, out, err = result
    assert status == 2, (out, err)
    assert out == ""
    assert err.count("\n") == 1, err
    return err.strip()


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--generate", "--execute"],
        ["--verify", "--list"],
    ],
    ids=["no action", "two actions", "verify and list"],
)
def test_exactly_one_action_is_required(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    line = one_line_usage_error(run(capsys, *UNREACHABLE, *args))
    assert line.startswith("Command must include exactly one action")


@pytest.mark.parametrize("action", ["--execute", "--verify", "--cancel"])
def test_the_file_actions_need_the_reassignment_file(
    capsys: pytest.CaptureFixture[str], action: str
) -> None:
    line = one_line_usage_error(run(capsys, *UNREACHABLE, action))
    assert "reassignment-json-file" in line


def test_generate_needs_topics_and_brokers_unless_draining(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    topics = write(tmp_path, {"version": 1, "topics": [{"topic": "t"}]}, "topics.json")
    line = one_line_usage_error(
        run(capsys, *UNREACHABLE, "--generate", "--topics-to-move-json-file", str(topics))
    )
    assert "--broker-list" in line
    line = one_line_usage_error(run(capsys, *UNREACHABLE, "--generate", "--broker-list", "1,2"))
    assert "--topics-to-move-json-file" in line


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--broker-list", "1,x", "--broker-list: 'x' is not a broker id"),
        ("--broker-list", "1,1", "--broker-list: duplicate broker id 1"),
        ("--drain-broker", "-3", "--drain-broker: '-3' is not a broker id"),
        ("--drain-broker", "", "--drain-broker: '' is not a broker id"),
    ],
)
def test_a_bad_broker_list_is_one_line(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, message: str
) -> None:
    line = one_line_usage_error(run(capsys, *UNREACHABLE, "--generate", flag, value))
    assert line == message


def test_both_bootstrap_flags_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, *UNREACHABLE, "--bootstrap-controller", "127.0.0.1:1", "--list")
    assert status == 2 and "not allowed with argument" in err


def test_a_missing_placer_class_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    topics = write(tmp_path, {"version": 1, "topics": [{"topic": "t"}]}, "topics.json")
    placer = tmp_path / "placer.properties"
    placer.write_text("replica.placer.class.name=no.such.Placer\n")
    args = ["--generate", "--broker-list", "1", "--topics-to-move-json-file", str(topics)]
    line = one_line_usage_error(run(capsys, *UNREACHABLE, *args, "--placer-config", str(placer)))
    assert line.startswith("--placer-config: replica.placer.class.name='no.such.Placer'")


REASSIGNMENT_ERRORS = [
    ("{", "not JSON"),
    ([], 'expected a JSON object with "partitions"'),
    ({"version": 2, "partitions": []}, "Not supported version field value 2"),
    ({"version": 1, "partitions": []}, "Partition reassignment list cannot be empty"),
    ({"partitions": [{"topic": "", "partition": 0, "replicas": [1]}]}, '"topic" must be'),
    ({"partitions": [{"topic": "t", "partition": -1, "replicas": [1]}]}, '"partition" must be'),
    ({"partitions": [{"topic": "t", "partition": True, "replicas": [1]}]}, '"partition" must be'),
    ({"partitions": [{"topic": "t", "partition": 0, "replicas": "1"}]}, '"replicas" must be'),
    ({"partitions": [{"topic": "t", "partition": 0, "replicas": []}]}, "cannot be empty: t-0"),
    (
        {"partitions": [{"topic": "t", "partition": 0, "replicas": [1, 1]}]},
        "may not contain duplicate entries: t-0",
    ),
    (
        {"partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["any"]}]},
        "different from size of log dirs",
    ),
    (
        {"partitions": [{"topic": "t", "partition": 0, "replicas": [1], "log_dirs": ["/d"]}]},
        "keep none",
    ),
    (
        {
            "partitions": [
                {"topic": "t", "partition": 0, "replicas": [1]},
                {"topic": "t", "partition": 0, "replicas": [2]},
            ]
        },
        "Duplicate reassignment for partition t-0",
    ),
]


@pytest.mark.parametrize(("document", "message"), REASSIGNMENT_ERRORS)
def test_a_bad_reassignment_file_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, document: object, message: str
) -> None:
    path = write(tmp_path, document)
    line = one_line_usage_error(
        run(capsys, *UNREACHABLE, "--execute", "--reassignment-json-file", str(path))
    )
    assert line.startswith(str(path)) and message in line


def test_a_missing_reassignment_file_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "absent.json"
    line = one_line_usage_error(
        run(capsys, *UNREACHABLE, "--verify", "--reassignment-json-file", str(path))
    )
    assert line == f"{path}: no such file"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"version": 1, "topics": []}, "the topic list is empty"),
        ({"version": 1, "topics": [{"name": "t"}]}, 'expected {"topic": "name"}'),
        ({"version": 1, "topics": [{"topic": "t"}, {"topic": "t"}]}, "Duplicate topic t"),
    ],
)
def test_a_bad_topics_file_is_one_line(tmp_path: Path, document: object, message: str) -> None:
    with pytest.raises(ReassignmentFileError, match=message):
        read_topics_to_move(write(tmp_path, document))


def test_the_reassignment_file_round_trips_in_kafkas_format(tmp_path: Path) -> None:
    assignment = {TopicPartition("b", 0): (3, 1), TopicPartition("a", 2): (2,)}
    text = assignment_json(assignment)
    assert text == (
        '{"version":1,"partitions":[{"topic":"a","partition":2,"replicas":[2],"log_dirs":["any"]},'
        '{"topic":"b","partition":0,"replicas":[3,1],"log_dirs":["any","any"]}]}'
    )
    assert read_reassignment(write(tmp_path, text)) == {
        TopicPartition("a", 2): (2,),
        TopicPartition("b", 0): (3, 1),
    }
    # log_dirs may be left out; topics-to-move keeps its order.
    assert read_reassignment(
        write(tmp_path, {"partitions": [{"topic": "t", "partition": 1, "replicas": [4]}]})
    ) == {TopicPartition("t", 1): (4,)}
    assert read_topics_to_move(
        write(tmp_path, {"version": 1, "topics": [{"topic": "z"}, {"topic": "a"}]})
    ) == ["z", "a"]
    assert parse_broker_list(" 3, 1 ,2", "--broker-list") == [3, 1, 2]
