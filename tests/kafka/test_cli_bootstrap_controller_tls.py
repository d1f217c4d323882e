"""``--bootstrap-controller`` against a KAFKA listener that speaks SSL: the commands reach it
with the client settings file's ``security.protocol=SSL`` and ``ssl.*`` keys (the keys the
same file gives ``--bootstrap-server`` for gRPC), and a server certificate the truststore
does not vouch for fails the command with one line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from raftmeta.cli.main import main
from tests.kafka.quorum import KafkaQuorum, kafka_quorum
from tests.security.support import TestPki


@pytest.fixture(scope="module")
def tls_quorum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KafkaQuorum, Path]]:
    """A quorum whose KAFKA listener is SSL, and the CA file that vouches for it."""
    root = tmp_path_factory.mktemp("kafka-cli-tls")
    files = TestPki.create(root / "pki").node("controller")
    extra = {
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,KAFKA:SSL",
        **files.properties(client_auth="none"),
    }
    with kafka_quorum(root / "quorum", brokers=1, extra_config=extra) as running:
        yield running, files.truststore


def client_settings(directory: Path, truststore: Path) -> Path:
    path = directory / "client.properties"
    path.write_text(
        f"security.protocol=SSL\nssl.truststore.location={truststore}\nssl.truststore.type=PEM\n"
    )
    return path


def run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_topics_election_and_quorum_over_tls(
    tls_quorum: tuple[KafkaQuorum, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quorum, truststore = tls_quorum
    settings = str(client_settings(tmp_path, truststore))
    # A standby first: finding the active controller goes over TLS too.
    controllers = (
        f"{quorum.kafka_address(quorum.follower())},{quorum.kafka_address(quorum.active())}"
    )
    door = ["--bootstrap-controller", controllers]

    created = run(
        capsys,
        [
            *("topics", *door, "--command-config", settings, "--create", "--topic", "tls-orders"),
            *("--partitions", "2", "--replication-factor", "1"),
        ],
    )
    assert created == (0, "Created topic tls-orders.\n", "")
    described = run(
        capsys,
        ["topics", *door, "--command-config", settings, "--describe", "--topic", "tls-orders"],
    )
    assert described[0] == 0 and described[1].count("Partition:") == 2, described

    elected = run(
        capsys,
        [
            *("leader-election", *door, "--admin.config", settings),
            *("--election-type", "PREFERRED", "--topic", "tls-orders", "--partition", "0"),
        ],
    )
    assert elected == (0, "Valid replica already elected for partitions tls-orders-0\n", "")

    status, out, err = run(
        capsys, ["quorum", "describe", *door, "--command-config", settings, "--status"]
    )
    assert (status, err) == (0, "")
    rows = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in out.splitlines()}
    assert rows["LeaderId"] == str(quorum.active().node_id)


def test_a_listener_the_truststore_does_not_vouch_for_fails_in_one_line(
    tls_quorum: tuple[KafkaQuorum, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quorum, _ = tls_quorum
    other_ca = TestPki.create(tmp_path / "other-ca").node("nobody").truststore
    settings = str(client_settings(tmp_path, other_ca))
    address = quorum.kafka_address(quorum.active())
    status, out, err = run(
        capsys,
        ["topics", "--bootstrap-controller", address, "--command-config", settings, "--list"],
    )
    assert (status, out) == (1, "")
    assert err.count("\n") == 1 and "certificate verify failed" in err, err
