"""``raftmeta configs`` against a real quorum, through either door (gRPC and the KAFKA
listener): every entity type round-trips (set, described in Kafka's lines, deleted), and bad
input gets one line and exit 2 (a command line that cannot work) or 1 (a refusal)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from raftmeta.cli.main import main
from raftmeta.rpc import admin_pb2 as apb
from tests.kafka.quorum import KafkaQuorum, kafka_quorum

TOPIC = "configured"


@pytest.fixture(scope="module")
def quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    with kafka_quorum(tmp_path_factory.mktemp("configs-cli"), brokers=1) as running:
        running.grpc(
            "CreateTopics",
            apb.CreateTopicsRequest(
                topics=[apb.NewTopic(name=TOPIC, num_partitions=1, replication_factor=1)]
            ),
        )
        running.wait_for_topic_everywhere(TOPIC)
        yield running


@pytest.fixture(params=["--bootstrap-server", "--bootstrap-controller"])
def door(request: pytest.FixtureRequest, quorum: KafkaQuorum) -> list[str]:
    if request.param == "--bootstrap-server":
        return ["--bootstrap-server", ",".join(quorum.quorum.addresses.values())]
    return ["--bootstrap-controller", quorum.kafka_address(quorum.follower())]


def configs(
    capsys: pytest.CaptureFixture[str], door: list[str], *args: str
) -> tuple[int, str, str]:
    status = main(["configs", *door, *args])
    out, err = capsys.readouterr()
    return status, out, err


ROUND_TRIPS = [
    (
        ["--entity-type", "topics", "--entity-name", TOPIC],
        "retention.ms=3600000",
        "retention.ms",
        f"Dynamic configs for topic {TOPIC} are:",
        "  retention.ms=3600000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms="
        "3600000, DEFAULT_CONFIG:log.retention.hours=168}",
        f"Completed updating config for topic {TOPIC}.",
    ),
    (
        ["--entity-type", "brokers", "--entity-name", "1"],
        "log.cleaner.threads=2",
        "log.cleaner.threads",
        "Dynamic configs for broker 1 are:",
        "  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:"
        "log.cleaner.threads=2}",
        "Completed updating config for broker 1.",
    ),
    (
        ["--entity-type", "brokers", "--entity-default"],
        "log.cleaner.threads=3",
        "log.cleaner.threads",
        "Default configs for brokers in the cluster are:",
        "  log.cleaner.threads=3 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:"
        "log.cleaner.threads=3}",
        "Completed updating default config for brokers in the cluster.",
    ),
    (
        ["--entity-type", "users", "--entity-name", "alice"],
        "producer_byte_rate=1024,consumer_byte_rate=2048",
        "producer_byte_rate,consumer_byte_rate",
        None,
        "Quota configs for user-principal 'alice' are consumer_byte_rate=2048.0, "
        "producer_byte_rate=1024.0",
        "Completed updating config for user alice.",
    ),
    (
        ["--entity-type", "users", "--entity-default"],
        "request_percentage=12.5",
        "request_percentage",
        None,
        "Quota configs for the default user-principal are request_percentage=12.5",
        "Completed updating default config for users in the cluster.",
    ),
    (
        [
            "--entity-type",
            "users",
            "--entity-name",
            "bob",
            "--entity-type",
            "clients",
            "--entity-name",
            "c1",
        ],
        "controller_mutation_rate=5",
        "controller_mutation_rate",
        None,
        "Quota configs for user-principal 'bob', client-id 'c1' are controller_mutation_rate=5.0",
        "Completed updating config for user bob.",
    ),
    (
        ["--entity-type", "clients", "--entity-name", "c2"],
        "producer_byte_rate=4096",
        "producer_byte_rate",
        None,
        "Quota configs for client-id 'c2' are producer_byte_rate=4096.0",
        "Completed updating config for client c2.",
    ),
    (
        ["--entity-type", "clients", "--entity-default"],
        "consumer_byte_rate=100",
        "consumer_byte_rate",
        None,
        "Quota configs for the default client-id are consumer_byte_rate=100.0",
        "Completed updating default config for clients in the cluster.",
    ),
    (
        ["--entity-type", "ips", "--entity-name", "10.1.2.3"],
        "connection_creation_rate=7",
        "connection_creation_rate",
        None,
        "Quota configs for ip '10.1.2.3' are connection_creation_rate=7.0",
        "Completed updating config for ip 10.1.2.3.",
    ),
    (
        ["--entity-type", "ips", "--entity-default"],
        "connection_creation_rate=9",
        "connection_creation_rate",
        None,
        "Quota configs for the default ip are connection_creation_rate=9.0",
        "Completed updating default config for ips in the cluster.",
    ),
]


@pytest.mark.parametrize(
    ("entity", "added", "deleted", "heading", "line", "completed"),
    ROUND_TRIPS,
    ids=lambda value: None,
)
def test_every_entity_type_round_trips(
    capsys: pytest.CaptureFixture[str],
    door: list[str],
    entity: list[str],
    added: str,
    deleted: str,
    heading: str | None,
    line: str,
    completed: str,
) -> None:
    status, out, err = configs(capsys, door, "--alter", *entity, "--add-config", added)
    assert (status, out, err) == (0, f"{completed}\n", "")
    status, out, err = configs(capsys, door, "--describe", *entity)
    assert (status, err) == (0, "")
    expected = [line] if heading is None else [heading, line]
    assert out.splitlines() == expected
    status, out, err = configs(capsys, door, "--alter", *entity, "--delete-config", deleted)
    assert (status, out, err) == (0, f"{completed}\n", "")
    status, out, _ = configs(capsys, door, "--describe", *entity)
    assert out.splitlines() == ([] if heading is None else [heading])


def test_all_lists_every_config_and_brackets_hold_a_list_value(
    capsys: pytest.CaptureFixture[str], door: list[str]
) -> None:
    entity = ["--entity-type", "topics", "--entity-name", TOPIC]
    status, _, err = configs(
        capsys,
        door,
        "--alter",
        *entity,
        "--add-config",
        "cleanup.policy=[compact,delete],retention.ms=1",
    )
    assert (status, err) == (0, "")
    status, out, _ = configs(capsys, door, "--describe", "--all", *entity)
    lines = out.splitlines()
    assert lines[0] == f"All configs for topic {TOPIC} are:"
    assert any(line.startswith("  cleanup.policy=compact,delete sensitive=false") for line in lines)
    assert any(line.startswith("  segment.bytes=1073741824 sensitive=false") for line in lines)
    assert len(lines) > 30
    status, _, _ = configs(
        capsys, door, "--alter", *entity, "--delete-config", "cleanup.policy,retention.ms"
    )
    assert status == 0
    status, out, _ = configs(capsys, door, "--describe", "--entity-type", "topics")
    assert f"Dynamic configs for topic {TOPIC} are:" in out.splitlines()


@pytest.mark.parametrize(
    ("args", "status", "said"),
    [
        (["--describe", "--entity-type", "groups"], 2, "unknown --entity-type 'groups'"),
        (["--describe", "--entity-type", "broker-loggers"], 2, "no broker loggers"),
        (["--describe"], 2, "--entity-type is required"),
        (["--entity-type", "topics"], 2, "give one of --describe or --alter"),
        (
            ["--alter", "--entity-type", "topics", "--entity-name", TOPIC, "--add-config", "x"],
            2,
            "'x' is not KEY=VALUE",
        ),
        (
            [
                "--alter",
                "--entity-type",
                "topics",
                "--entity-name",
                TOPIC,
                "--add-config",
                "cleanup.policy=[compact",
            ],
            2,
            "never closed",
        ),
        (
            [
                "--alter",
                "--entity-type",
                "users",
                "--entity-default",
                "--add-config",
                "SCRAM-SHA-256=[iterations=8192,password=secret]",
            ],
            2,
            "SCRAM-SHA-256 credentials are set for one named user only",
        ),
        (
            [
                "--alter",
                "--entity-type",
                "users",
                "--entity-name",
                "a",
                "--add-config",
                "SCRAM-SHA-512=[iterations=8192]",
            ],
            2,
            "SCRAM-SHA-512: password=P is required",
        ),
        (
            [
                "--alter",
                "--entity-type",
                "users",
                "--entity-name",
                "a",
                "--add-config",
                "SCRAM-SHA-256=[iterations=many,password=secret]",
            ],
            2,
            "iterations must be a whole number",
        ),
        (
            [
                "--alter",
                "--entity-type",
                "users",
                "--entity-name",
                "a",
                "--add-config",
                "SCRAM-SHA-256=[iterations=100,password=secret]",
            ],
            1,
            "Too few iterations",
        ),
        (
            [
                "--alter",
                "--entity-type",
                "users",
                "--entity-name",
                "a",
                "--add-config",
                "producer_byte_rate=fast",
            ],
            2,
            "Cannot parse quota configuration value for producer_byte_rate: fast",
        ),
        (
            ["--alter", "--entity-type", "topics", "--add-config", "retention.ms=1"],
            2,
            "--alter needs an --entity-name",
        ),
        (["--describe", "--entity-type", "topics", "--entity-default"], 2, "does not apply"),
        (["--describe", "--entity-type", "brokers", "--entity-name", "x"], 2, "integer broker id"),
        (["--describe", "--entity-type", "ips", "--entity-type", "users"], 2, "together"),
        (["--describe", "--all", "--entity-type", "users"], 2, "--all goes only"),
        (
            [
                "--alter",
                "--entity-type",
                "topics",
                "--entity-name",
                TOPIC,
                "--add-config",
                "retention.mss=1",
            ],
            1,
            "Unknown topic config name: retention.mss (INVALID_CONFIG)",
        ),
        (
            [
                "--alter",
                "--entity-type",
                "topics",
                "--entity-name",
                TOPIC,
                "--delete-config",
                "segment.ms",
            ],
            1,
            "Invalid config(s): segment.ms (INVALID_CONFIG)",
        ),
        (
            [
                "--alter",
                "--entity-type",
                "users",
                "--entity-name",
                "a",
                "--add-config",
                "connection_creation_rate=1",
            ],
            1,
            "Invalid configuration key connection_creation_rate (INVALID_REQUEST)",
        ),
        (
            ["--describe", "--entity-type", "topics", "--entity-name", "missing"],
            1,
            "UNKNOWN_TOPIC_OR_PARTITION",
        ),
    ],
)
def test_bad_input_gets_one_line_and_the_right_exit_status(
    capsys: pytest.CaptureFixture[str], door: list[str], args: list[str], status: int, said: str
) -> None:
    got, _out, err = configs(capsys, door, *args)
    assert got == status
    assert said in err
    assert err.count("\n") == 1, err


def test_scram_credentials_round_trip_beside_a_users_quotas(
    capsys: pytest.CaptureFixture[str], door: list[str]
) -> None:
    user = f"scram-{door[0].rsplit('-', 1)[1]}"
    who = ["--entity-type", "users", "--entity-name", user]
    credential = "SCRAM-SHA-256=[iterations=8192,password=alice-secret]"
    status, out, err = configs(
        capsys, door, "--alter", *who, "--add-config", f"{credential},producer_byte_rate=512"
    )
    assert (status, out, err) == (0, f"Completed updating config for user {user}.\n", "")
    assert "alice-secret" not in out + err
    status, out, err = configs(capsys, door, "--describe", *who)
    assert status == 0, err
    assert out.splitlines() == [
        f"Quota configs for user-principal '{user}' are producer_byte_rate=512.0",
        f"SCRAM credential configs for user-principal '{user}' are SCRAM-SHA-256=iterations=8192",
    ]
    status, out, err = configs(
        capsys, door, "--alter", *who, "--delete-config", "SCRAM-SHA-256,producer_byte_rate"
    )
    assert status == 0, err
    status, out, err = configs(capsys, door, "--describe", *who)
    assert (status, out) == (0, ""), err
