"""``raftmeta leader-election`` without a server: option checks, the JSON file, the output.

The checks and their messages are Kafka's (reference §2.8); each test runs the real command
line through ``raftmeta.cli.main`` and reads what a user would see.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from raftmeta.cli import client_config, election_report, election_request
from raftmeta.cli.main import main
from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.errors import ErrorCode, KafkaError

BOOTSTRAP = ("--bootstrap-server", "127.0.0.1:1")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["leader-election", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# --- option checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--all-topic-partitions",),
            "Missing required option(s): bootstrap-server, election-type",
        ),
        ((*BOOTSTRAP, "--all-topic-partitions"), "Missing required option(s): election-type"),
        (
            ("--election-type", "preferred", "--all-topic-partitions"),
            "Missing required option(s): bootstrap-server",
        ),
        (
            (*BOOTSTRAP, "--election-type", "preferred"),
            "One and only one of the following options is required: "
            "topic, all-topic-partitions, path-to-json-file",
        ),
        (
            (
                *BOOTSTRAP,
                "--election-type",
                "preferred",
                "--topic",
                "t",
                "--partition",
                "0",
                "--all-topic-partitions",
            ),
            "One and only one of the following options is required: "
            "topic, all-topic-partitions, path-to-json-file",
        ),
        (
            (
                *BOOTSTRAP,
                "--election-type",
                "preferred",
                "--all-topic-partitions",
                "--path-to-json-file",
                "x.json",
            ),
            "One and only one of the following options is required: "
            "topic, all-topic-partitions, path-to-json-file",
        ),
        (
            (*BOOTSTRAP, "--election-type", "preferred", "--topic", "t"),
            "Missing required option(s): partition",
        ),
        (
            (
                *BOOTSTRAP,
                "--election-type",
                "preferred",
                "--all-topic-partitions",
                "--partition",
                "0",
            ),
            "Option partition is only allowed if topic is used",
        ),
        (
            (*BOOTSTRAP, "--election-type", "cleanest", "--all-topic-partitions"),
            "Cannot parse argument 'cleanest' of option election-type: "
            "expected PREFERRED or UNCLEAN",
        ),
        (
            (*BOOTSTRAP, "--election-type", "online", "--all-topic-partitions"),
            "Cannot parse argument 'online' of option election-type: expected PREFERRED or UNCLEAN",
        ),
        (
            (*BOOTSTRAP, "--election-type", "preferred", "--topic", "t", "--partition", "x"),
            "Cannot parse argument 'x' of option partition: not an integer",
        ),
    ],
)
def test_bad_options_print_kafkas_message_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    status, out, err = run(capsys, *args)
    assert (status, out, err) == (2, "", message + "\n")


def test_an_unknown_option_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, *BOOTSTRAP, "--election-type", "preferred", "--everything")
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "unrecognized arguments: --everything" in err


def test_help_explains_the_preferred_replica_and_auto_rebalance(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["leader-election", "--help"])
    assert exited.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "preferred replica is the first broker in its replica list" in text
    assert "auto.leader.rebalance.enable=true" in text and "KIP-183" in text
    for option in (
        "--bootstrap-server",
        "--election-type",
        "--topic",
        "--partition",
        "--all-topic-partitions",
        "--path-to-json-file",
        "--admin.config",
    ):
        assert option in text


def test_election_type_is_read_in_any_case() -> None:
    assert election_request.parse_election_type("preferred") is ElectionType.PREFERRED
    assert election_request.parse_election_type("Unclean") is ElectionType.UNCLEAN
    assert election_request.parse_election_type("PREFERRED") is ElectionType.PREFERRED


def test_validate_builds_the_request(tmp_path: Path) -> None:
    config = tmp_path / "admin.properties"
    config.write_text("bearer.token=s3cret\nrequest.timeout.ms=500\n")
    request = election_request.validate(
        bootstrap_server=" 127.0.0.1:9093,127.0.0.1:9094 ",
        election_type="unclean",
        topic="orders",
        partition="3",
        all_topic_partitions=False,
        path_to_json_file=None,
        admin_config=str(config),
    )
    assert request == election_request.ElectionRequest(
        "127.0.0.1:9093,127.0.0.1:9094",
        ElectionType.UNCLEAN,
        (TopicPartition("orders", 3),),
        client_config.ClientSettings("s3cret", 500, client_config.DEFAULT_API_TIMEOUT_MS),
    )
    everything = election_request.validate(
        bootstrap_server="h:1",
        election_type="PREFERRED",
        topic=None,
        partition=None,
        all_topic_partitions=True,
        path_to_json_file=None,
        admin_config=None,
    )
    assert everything.partitions is None and everything.admin == client_config.ClientSettings()


# --- the JSON file ---------------------------------------------------------------------------


def test_json_file_partitions_keep_their_order(tmp_path: Path) -> None:
    path = tmp_path / "election.json"
    path.write_text(
        json.dumps(
            {
                "partitions": [
                    {"topic": "b", "partition": 2},
                    {"topic": "a", "partition": 0},
                    {"topic": "b", "partition": 0},
                ]
            }
        )
    )
    assert election_request.read_partitions_file(path) == (
        TopicPartition("b", 2),
        TopicPartition("a", 0),
        TopicPartition("b", 0),
    )


def test_json_file_with_duplicates_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "election.json"
    entries = [("t", 0), ("t", 1), ("t", 0), ("u", 5), ("u", 5), ("t", 0)]
    path.write_text(json.dumps({"partitions": [{"topic": t, "partition": p} for t, p in entries]}))
    status, out, err = run(
        capsys, *BOOTSTRAP, "--election-type", "preferred", "--path-to-json-file", str(path)
    )
    assert status == 2 and out == ""
    assert err == "Replica election data contains duplicate partitions: t-0,u-5\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "Replica election data is not valid JSON: "),
        ("[]", 'Replica election data is missing the "partitions" field'),
        ('{"partition": []}', 'Replica election data is missing the "partitions" field'),
        ('{"partitions": {}}', 'Replica election data: "partitions" must be a list'),
        ('{"partitions": [3]}', 'entry 0 of "partitions" must be an object'),
        ('{"partitions": [{"partition": 0}]}', 'entry 0 of "partitions" needs "topic"'),
        (
            '{"partitions": [{"topic": "t", "partition": 0}, {"topic": "t", "partition": "1"}]}',
            'entry 1 of "partitions" needs "partition" as a non-negative integer',
        ),
        ('{"partitions": [{"topic": "t", "partition": -1}]}', "non-negative integer"),
        ('{"partitions": [{"topic": "t", "partition": true}]}', "non-negative integer"),
    ],
)
def test_malformed_json_gets_one_clear_line(text: str, message: str) -> None:
    with pytest.raises(election_request.ElectionCommandError) as raised:
        election_request.parse_partitions_json(text)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_an_empty_partition_list_is_valid() -> None:
    assert election_request.parse_partitions_json('{"partitions": []}') == ()


def test_missing_files_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.json"
    status, _, err = run(
        capsys, *BOOTSTRAP, "--election-type", "preferred", "--path-to-json-file", str(missing)
    )
    assert (status, err) == (2, f"{missing}: no such file\n")
    status, _, err = run(
        capsys,
        *BOOTSTRAP,
        "--election-type",
        "preferred",
        "--all-topic-partitions",
        "--admin.config",
        str(missing),
    )
    assert (status, err) == (2, f"{missing}: no such file\n")


# --- output ----------------------------------------------------------------------------------


def tp(name: str) -> TopicPartition:
    topic, partition = name.rsplit("-", 1)
    return TopicPartition(topic, int(partition))


def test_report_sorts_results_into_kafkas_three_buckets() -> None:
    results: dict[TopicPartition, BaseException | None] = {
        tp("t-1"): None,
        tp("t-0"): None,
        tp("a-10"): None,
        tp("t-2"): KafkaError(
            ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition t-2"
        ),
        tp("t-3"): KafkaError(
            ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
            "Failed to elect leader for partition t-3 under strategy PREFERRED",
        ),
        tp("u-0"): KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as u"),
    }
    report = election_report.report(ElectionType.PREFERRED, results)
    assert report.lines == (
        "Successfully completed leader election (PREFERRED) for partitions a-10, t-0, t-1",
        "Valid replica already elected for partitions t-2",
        "Error completing leader election (PREFERRED) for partition: t-3: "
        "PREFERRED_LEADER_NOT_AVAILABLE: "
        "Failed to elect leader for partition t-3 under strategy PREFERRED",
        "Error completing leader election (PREFERRED) for partition: u-0: "
        "UNKNOWN_TOPIC_OR_PARTITION: No such topic as u",
    )
    assert report.failed == 2 and report.exit_status == 1
    assert election_report.failure_summary(report.failed) == "2 replica(s) could not be elected"


def test_nothing_to_elect_prints_nothing_and_succeeds() -> None:
    report = election_report.report(ElectionType.PREFERRED, {})
    assert report.lines == () and report.exit_status == 0


def test_only_no_ops_succeed() -> None:
    report = election_report.report(
        ElectionType.UNCLEAN,
        {tp("t-0"): KafkaError(ErrorCode.ELECTION_NOT_NEEDED, "not needed")},
    )
    assert report.lines == ("Valid replica already elected for partitions t-0",)
    assert report.exit_status == 0


def test_unclean_elections_name_their_type() -> None:
    report = election_report.report(
        ElectionType.UNCLEAN,
        {
            tp("t-0"): None,
            tp("t-1"): KafkaError(ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, "none alive"),
        },
    )
    assert report.lines == (
        "Successfully completed leader election (UNCLEAN) for partitions t-0",
        "Error completing leader election (UNCLEAN) for partition: t-1: "
        "ELIGIBLE_LEADERS_NOT_AVAILABLE: none alive",
    )


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (TimeoutError(), "Timeout waiting for election results"),
        (KafkaError(ErrorCode.REQUEST_TIMED_OUT, "late"), "Timeout waiting for election results"),
        (
            KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "no"),
            "Not authorized to perform leader election",
        ),
        (
            KafkaError(ErrorCode.INVALID_REQUEST, "Unknown election type 7"),
            "Error completing leader election: INVALID_REQUEST: Unknown election type 7",
        ),
        (ConnectionError("refused"), "Error completing leader election: ConnectionError: refused"),
    ],
)
def test_request_failures_get_kafkas_fixed_lines(error: BaseException, line: str) -> None:
    assert election_report.request_failure_line(error) == line


def test_a_malformed_bootstrap_server_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(
        capsys,
        "--bootstrap-server",
        "nohost",
        "--election-type",
        "preferred",
        "--all-topic-partitions",
    )
    assert (status, out) == (2, "")
    assert err == "bootstrap server 'nohost' is not host:port\n"


def test_an_empty_json_list_elects_nothing_without_asking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "none.json"
    path.write_text('{"partitions": []}')
    # Kafka's controller answers an empty list at once; no server is needed to know that.
    status, out, err = run(
        capsys, *BOOTSTRAP, "--election-type", "preferred", "--path-to-json-file", str(path)
    )
    assert (status, out, err) == (0, "", "")
