"""SASL/SCRAM on a SASL_SSL KAFKA listener, configured with Kafka's keys: credentials made by
``format --add-scram`` and by AlterUserScramCredentials log confluent-kafka and kafka-python in
with SCRAM-SHA-256 and -512; a SCRAM user meets the ACLs of ``User:<name>`` as a PLAIN one
does; a wrong password, an unknown user, and a replayed or tampered proof are answered
SASL_AUTHENTICATION_FAILED and the connection closed; credentials live in the replicated log,
so a new active controller checks the same ones; no password or key reaches a log line or
``log dump``."""

from __future__ import annotations

import base64
import logging
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import ElectionType, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from kafka.admin import KafkaAdminClient
from kafka.admin._users import ScramMechanism as KpMechanism
from kafka.admin._users import UserScramCredentialDeletion, UserScramCredentialUpsertion
from kafka.protocol.metadata import MetadataRequest
from kafka.protocol.sasl import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

from raftmeta.cli.main import main
from raftmeta.errors import ErrorCode
from raftmeta.security.certs import NodeFiles
from raftmeta.security.scram import ScramMechanism
from raftmeta.security.scram_exchange import ScramClient
from tests.kafka.quorum import KafkaQuorum, kafka_quorum
from tests.kafka.test_wire import read_response, request
from tests.security.support import TestPki
from tests.support.broker_quorum import CLUSTER_ID, CONTROLLER_IDS
from tests.support.waiting import wait_until

TIMEOUT_S = 15.0
ALICE_PASSWORD = "alice-Secret-1"
ALICE_512_PASSWORD = "alice-Secret-512"
BOB_PASSWORD = "bob-Secret-2"
ADMIN_SCRAM_PASSWORD = "admin-Scram-3"
TOKENS = "admin-secret=User:admin\n"
SECRETS = (ALICE_PASSWORD, ALICE_512_PASSWORD, BOB_PASSWORD, ADMIN_SCRAM_PASSWORD)


class Scrammed:
    def __init__(self, quorum: KafkaQuorum, files: NodeFiles, root: Path) -> None:
        self.quorum = quorum
        self.files = files
        self.root = root

    @property
    def address(self) -> str:
        return self.quorum.kafka_address(self.quorum.active())

    def confluent(self, mechanism: str, user: str, password: str, **extra: Any) -> AdminClient:
        return AdminClient(
            {
                "bootstrap.servers": self.address,
                "security.protocol": "SASL_SSL",
                "sasl.mechanism": mechanism,
                "sasl.username": user,
                "sasl.password": password,
                "ssl.ca.location": str(self.files.truststore),
                **extra,
            }
        )

    def kafka_python(self, mechanism: str, user: str, password: str) -> KafkaAdminClient:
        return KafkaAdminClient(
            bootstrap_servers=self.address,
            security_protocol="SASL_SSL",
            sasl_mechanism=mechanism,
            sasl_plain_username=user,
            sasl_plain_password=password,
            ssl_cafile=str(self.files.truststore),
            request_timeout_ms=10_000,
        )

    def tls_socket(self) -> ssl.SSLSocket:
        host, port = self.address.rsplit(":", 1)
        context = ssl.create_default_context(cafile=str(self.files.truststore))
        context.check_hostname = False
        raw = socket.create_connection((host, int(port)), timeout=TIMEOUT_S)
        return context.wrap_socket(raw)


def _format_controllers(root: Path) -> None:
    """``raftmeta format --add-scram`` on every controller's directory, as an operator would
    before the first start (the harness then finds them formatted)."""
    root.mkdir(parents=True, exist_ok=True)
    voters = ",".join(f"{n}@127.0.0.1:{i + 1}" for i, n in enumerate(CONTROLLER_IDS))
    for node_id in CONTROLLER_IDS:
        properties = root / f"node-{node_id}.properties"
        properties.write_text(
            f"node.id={node_id}\nprocess.roles=controller\ncontroller.quorum.voters={voters}\n"
            f"metadata.log.dir={root / f'node-{node_id}'}\n"
        )
        status = main(
            [
                *("format", "--config", str(properties), "--cluster-id", CLUSTER_ID),
                *("--add-scram", f"SCRAM-SHA-256=[name=alice,password={ALICE_PASSWORD}]"),
                "--add-scram",
                f'SCRAM-SHA-512=[name=alice,iterations=8192,password="{ALICE_512_PASSWORD}"]',
                *("--add-scram", f"SCRAM-SHA-256=[name=admin,password={ADMIN_SCRAM_PASSWORD}]"),
            ]
        )
        assert status == 0


@pytest.fixture(scope="module")
def scrammed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scrammed]:
    root = tmp_path_factory.mktemp("scram")
    files = TestPki.create(root / "pki").node("controller")
    tokens = root / "tokens"
    tokens.write_text(TOKENS)
    _format_controllers(root / "quorum")
    extra = {
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,KAFKA:SASL_SSL",
        "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512,PLAIN",
        "raftmeta.auth.tokens.file": str(tokens),
        "authorizer.class.name": "raftmeta.auth.StandardAuthorizer",
        "super.users": "User:admin;User:ANONYMOUS;User:root",
        **files.properties(client_auth="none"),
    }
    with kafka_quorum(root / "quorum", brokers=1, extra_config=extra) as quorum:
        wait_until(
            lambda: credential_everywhere(quorum, "alice", 2),
            "the bootstrap credentials committed on every controller",
            TIMEOUT_S,
        )
        yield Scrammed(quorum, files, root)


def credential_everywhere(quorum: KafkaQuorum, user: str, mechanism: int) -> bool:
    return all(
        node.maybe_controller is not None
        and node.maybe_controller.committed_image.scram.credential(user, mechanism) is not None
        for node in quorum.quorum.controllers.values()
    )


def assert_no_secret_logged(caplog: pytest.LogCaptureFixture, *expected: str) -> None:
    """raftmeta's own log lines (the clients' debug logs are theirs) hold no password, and
    hold each of ``expected``."""
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("raftmeta")]
    for words in expected:
        assert any(words in line for line in ours), (words, ours)
    assert not [line for line in ours for secret in SECRETS if secret in line]


def elect_code(admin: AdminClient) -> int:
    try:
        admin.elect_leaders(ElectionType.PREFERRED, None).result(TIMEOUT_S)
    except KafkaException as error:
        return int(error.args[0].code())
    return 0


def login_error(client: AdminClient, errors: list[KafkaError]) -> bool:
    with pytest.raises(KafkaException):
        client.list_topics(timeout=3)
    client.poll(1)
    return any(error.code() == KafkaError._AUTHENTICATION for error in errors)


def alter(scrammed: Scrammed, alterations: list[Any]) -> dict[str, str | None]:
    """kafka-python's call, with a new client while one reached a standby (NOT_CONTROLLER):
    the client sends it to whichever controller it picked, as it would to any broker."""
    answers: list[dict[str, str | None]] = []

    def answered() -> bool:
        admin = scrammed.kafka_python("PLAIN", "admin", "admin-secret")
        try:
            answer = admin.alter_user_scram_credentials(alterations)
        finally:
            admin.close()
        answers.append(answer)
        return not any(message and "controller" in message.lower() for message in answer.values())

    wait_until(answered, "an answer from the active controller", TIMEOUT_S)
    return answers[-1]


def test_format_credentials_log_in_with_both_mechanisms_and_meet_the_acls(
    scrammed: Scrammed, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    for mechanism, password in (
        ("SCRAM-SHA-256", ALICE_PASSWORD),
        ("SCRAM-SHA-512", ALICE_512_PASSWORD),
    ):
        alice = scrammed.confluent(mechanism, "alice", password)
        assert alice.list_topics(timeout=TIMEOUT_S).cluster_id
        # User:alice, as a PLAIN login of alice would be: no ALTER on the cluster.
        assert elect_code(alice) == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        kp_alice = scrammed.kafka_python(mechanism, "alice", password)
        try:
            response = kp_alice.elect_leaders(0, None, raise_errors=False)
        finally:
            kp_alice.close()
        assert response.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert_no_secret_logged(caplog)


def test_alter_and_describe_with_kafka_python_then_log_in_as_the_new_user(
    scrammed: Scrammed, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    answer = alter(
        scrammed,
        [
            UserScramCredentialUpsertion("root", KpMechanism.SCRAM_SHA_512, BOB_PASSWORD),
            UserScramCredentialUpsertion(
                "bob", KpMechanism.SCRAM_SHA_256, BOB_PASSWORD, iterations=4096
            ),
        ],
    )
    assert answer == {"root": None, "bob": None}
    refused = alter(
        scrammed,
        [
            UserScramCredentialUpsertion("carol", KpMechanism.SCRAM_SHA_256, "x", iterations=100),
            UserScramCredentialDeletion("nobody", KpMechanism.SCRAM_SHA_256),
        ],
    )
    assert refused == {
        "nobody": "Attempt to delete a user credential that does not exist",
        "carol": "Too few iterations",
    }

    admin = scrammed.kafka_python("PLAIN", "admin", "admin-secret")
    try:
        described = admin.describe_user_scram_credentials(["bob", "alice", "ghost"])
    finally:
        admin.close()
    assert described["bob"] == {
        "error": None,
        "credential_infos": [{"mechanism": KpMechanism.SCRAM_SHA_256, "iterations": 4096}],
    }
    assert [info["iterations"] for info in described["alice"]["credential_infos"]] == [4096, 8192]
    assert described["ghost"]["error"] == (
        "Attempt to describe a user credential that does not exist: ghost"
    )

    bob = scrammed.kafka_python("SCRAM-SHA-256", "bob", BOB_PASSWORD)
    try:
        assert bob.describe_cluster()["cluster_id"]
    finally:
        bob.close()
    # A super user by name, logged in with a credential AlterUserScramCredentials made.
    root = scrammed.confluent("SCRAM-SHA-512", "root", BOB_PASSWORD)
    assert elect_code(root) == 0
    assert_no_secret_logged(caplog, "SCRAM credentials of user 'bob'")


def test_bad_logins_fail_authentication(
    scrammed: Scrammed, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    for mechanism, user, password in (
        ("SCRAM-SHA-256", "alice", "not-her-password"),
        ("SCRAM-SHA-512", "alice", ALICE_PASSWORD),  # the SHA-256 password is not the 512 one
        ("SCRAM-SHA-256", "nobody-at-all", "whatever"),
    ):
        errors: list[KafkaError] = []
        client = scrammed.confluent(mechanism, user, password, error_cb=errors.append)
        assert login_error(client, errors), (mechanism, user, errors)
    assert_no_secret_logged(caplog, "SCRAM-SHA-256 login refused: invalid credentials")


def _handshake(sock: ssl.SSLSocket, mechanism: str, correlation_id: int = 1) -> int:
    sock.sendall(request(SaslHandshakeRequest(version=1, mechanism=mechanism), correlation_id))
    payload = read_response(sock)
    assert payload is not None
    return int(SaslHandshakeResponse.decode(payload, version=1, header=True).error_code)


def _authenticate(sock: ssl.SSLSocket, token: bytes, correlation_id: int) -> Any:
    """The SaslAuthenticate answer, or None when the listener closed the connection."""
    sock.sendall(request(SaslAuthenticateRequest(version=2, auth_bytes=token), correlation_id))
    payload = read_response(sock)
    return (
        None
        if payload is None
        else SaslAuthenticateResponse.decode(payload, version=2, header=True)
    )


def _closed(sock: ssl.SSLSocket) -> bool:
    try:
        sock.sendall(request(MetadataRequest(version=12, topics=None), 99))
        return read_response(sock) is None
    except (ConnectionError, ssl.SSLError):
        return True


def test_replayed_and_tampered_proofs_are_refused_and_the_connection_closed(
    scrammed: Scrammed,
) -> None:
    mechanism = ScramMechanism.SCRAM_SHA_256
    client = ScramClient(mechanism, "alice", ALICE_PASSWORD)
    with scrammed.tls_socket() as sock:
        assert _handshake(sock, "SCRAM-SHA-256") == 0
        first = client.first()
        server_first = _authenticate(sock, first, 2)
        final = client.final(server_first.auth_bytes)
        server_final = _authenticate(sock, final, 3)
        assert server_final.error_code == 0
        client.verify(server_final.auth_bytes)  # the listener holds the credential

    with scrammed.tls_socket() as sock:  # the same messages again: a fresh server nonce
        assert _handshake(sock, "SCRAM-SHA-256") == 0
        assert _authenticate(sock, first, 2).error_code == 0
        refused = _authenticate(sock, final, 3)
        assert refused.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert refused.error_message == (
            "Authentication failed during authentication due to invalid credentials with SASL "
            "mechanism SCRAM-SHA-256"
        )
        assert _closed(sock)

    tampering = ScramClient(mechanism, "alice", ALICE_PASSWORD)
    with scrammed.tls_socket() as sock:
        assert _handshake(sock, "SCRAM-SHA-256") == 0
        server_first = _authenticate(sock, tampering.first(), 2)
        final = tampering.final(server_first.auth_bytes)
        head, proof = final.rsplit(b",p=", 1)
        flipped = bytearray(base64.b64decode(proof))
        flipped[0] ^= 1
        tampered = head + b",p=" + base64.b64encode(bytes(flipped))
        refused = _authenticate(sock, tampered, 3)
        assert refused.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert _closed(sock)


def test_sasl_messages_out_of_order_and_unknown_mechanisms_close_the_connection(
    scrammed: Scrammed,
) -> None:
    with scrammed.tls_socket() as sock:  # SaslAuthenticate before any handshake
        answer = _authenticate(sock, b"n,,n=alice,r=abc", 1)
        assert answer.error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert _closed(sock)
    with scrammed.tls_socket() as sock:  # a client-final where the client-first belongs
        assert _handshake(sock, "SCRAM-SHA-512") == 0
        answer = _authenticate(sock, b"c=biws,r=abc,p=AAAA", 2)
        assert answer.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert _closed(sock)
    with scrammed.tls_socket() as sock:  # a second handshake
        assert _handshake(sock, "SCRAM-SHA-256") == 0
        assert _handshake(sock, "SCRAM-SHA-256", 2) == ErrorCode.ILLEGAL_SASL_STATE
        assert _closed(sock)
    for mechanism in ("GSSAPI", "OAUTHBEARER", "SCRAM-SHA-1", "x" * 5000):
        with scrammed.tls_socket() as sock:
            assert _handshake(sock, mechanism) == ErrorCode.UNSUPPORTED_SASL_MECHANISM
            assert _closed(sock)
    with scrammed.tls_socket() as sock:  # a login larger than sasl.server.max.receive.size
        assert _handshake(sock, "SCRAM-SHA-256") == 0
        try:
            answer = _authenticate(sock, b"n,,n=alice,r=" + b"a" * 600_000, 2)
        except (ConnectionError, ssl.SSLError):
            answer = None
        assert answer is None


def test_credentials_are_replicated_and_survive_a_failover(scrammed: Scrammed) -> None:
    quorum = scrammed.quorum
    assert credential_everywhere(quorum, "alice", 2)
    old = quorum.active()
    quorum.call(old.stop(graceful=False))
    try:
        survivors = [node for node in quorum.quorum.controllers.values() if node is not old]

        def new_active() -> bool:
            return any(
                node.maybe_controller is not None and node.maybe_controller.is_active
                for node in survivors
            )

        wait_until(new_active, "a new active controller", TIMEOUT_S)
        for node in survivors:
            address = quorum.kafka_address(node)
            client = AdminClient(
                {
                    "bootstrap.servers": address,
                    "security.protocol": "SASL_SSL",
                    "sasl.mechanism": "SCRAM-SHA-512",
                    "sasl.username": "alice",
                    "sasl.password": ALICE_512_PASSWORD,
                    "ssl.ca.location": str(scrammed.files.truststore),
                }
            )
            assert client.list_topics(timeout=TIMEOUT_S).cluster_id
    finally:
        del quorum.quorum.controllers[old.node_id]


def test_log_dump_shows_no_key(scrammed: Scrammed, capsys: pytest.CaptureFixture[str]) -> None:
    node = next(iter(scrammed.quorum.quorum.controllers.values()))
    controller = node.maybe_controller
    assert controller is not None
    record = controller.committed_image.scram.credential("alice", 1)
    assert record is not None
    assert main(["log", "dump", str(scrammed.root / "quorum" / f"node-{node.node_id}")]) == 0
    dumped = capsys.readouterr().out
    assert "UserScramCredentialRecord" in dumped and "(redacted)" in dumped
    for secret in (record.salt, record.stored_key, record.server_key):
        assert secret.hex() not in dumped
        assert base64.b64encode(secret).decode() not in dumped
    assert all(password not in dumped for password in SECRETS)


def client_properties(scrammed: Scrammed, directory: Path, password: str) -> str:
    path = directory / "client.properties"
    path.write_text(
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-256\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="admin" password="{password}";\n'
        f"ssl.truststore.location={scrammed.files.truststore}\nssl.truststore.type=PEM\n"
    )
    return str(path)


def run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_the_tools_log_in_with_scram_over_sasl_ssl(
    scrammed: Scrammed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quorum = scrammed.quorum
    settings = client_properties(scrammed, tmp_path, ADMIN_SCRAM_PASSWORD)
    # A standby first: finding the active controller logs in there too.
    controllers = f"{quorum.kafka_address(quorum.follower())},{scrammed.address}"
    door = ["--bootstrap-controller", controllers]
    created = run(
        capsys,
        [
            *("topics", *door, "--command-config", settings, "--create", "--topic", "scram-t"),
            *("--partitions", "2", "--replication-factor", "1"),
        ],
    )
    assert created == (0, "Created topic scram-t.\n", "")
    described = run(
        capsys, ["topics", *door, "--command-config", settings, "--describe", "--topic", "scram-t"]
    )
    assert described[0] == 0 and described[1].count("Partition:") == 2, described
    elected = run(
        capsys,
        [
            *("leader-election", *door, "--admin.config", settings),
            *("--election-type", "PREFERRED", "--topic", "scram-t", "--partition", "0"),
        ],
    )
    assert elected == (0, "Valid replica already elected for partitions scram-t-0\n", "")
    status, out, err = run(
        capsys, ["quorum", "describe", *door, "--command-config", settings, "--status"]
    )
    assert (status, err) == (0, ""), err
    rows = {line.split(":", 1)[0]: line.split(":", 1)[1].strip() for line in out.splitlines()}
    assert rows["LeaderId"] == str(quorum.active().node_id)


def test_a_wrong_password_fails_each_tool_in_one_line(
    scrammed: Scrammed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = client_properties(scrammed, tmp_path, "not-the-password")
    door = ["--bootstrap-controller", scrammed.address]
    for argv in (
        ["topics", *door, "--command-config", settings, "--list"],
        [
            "leader-election",
            *door,
            "--admin.config",
            settings,
            "--election-type",
            "PREFERRED",
            "--all-topic-partitions",
        ],
        ["quorum", "describe", *door, "--command-config", settings, "--status"],
    ):
        status, out, err = run(capsys, argv)
        printed = out + err  # leader-election reports on stdout, as Kafka's tool does
        assert status == 1, (argv, printed)
        assert printed.count("\n") == 1, printed
        assert "invalid credentials with SASL mechanism SCRAM-SHA-256" in printed, printed
        assert "not-the-password" not in printed


def test_sasl_settings_for_the_grpc_door_are_refused_in_one_line(
    scrammed: Scrammed, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = client_properties(scrammed, tmp_path, ADMIN_SCRAM_PASSWORD)
    door = ["--bootstrap-server", scrammed.quorum.quorum.bootstrap_servers]
    for argv in (
        ["topics", *door, "--command-config", settings, "--list"],
        ["quorum", "describe", *door, "--command-config", settings, "--status"],
    ):
        status, out, err = run(capsys, argv)
        assert (status, out) == (2, ""), (argv, out, err)
        assert err.count("\n") == 1 and "security.protocol" in err, err


def test_the_admin_client_alters_and_describes_over_both_doors(scrammed: Scrammed) -> None:
    from raftmeta.admin import (
        AdminClient as RaftmetaAdmin,
    )
    from raftmeta.admin import (
        KafkaException as AdminError,
    )
    from raftmeta.admin import (
        ScramCredentialInfo,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    over_kafka = RaftmetaAdmin(
        {
            "bootstrap.controllers": scrammed.address,
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-256",
            "sasl.username": "admin",
            "sasl.password": ADMIN_SCRAM_PASSWORD,
            "ssl.truststore.location": str(scrammed.files.truststore),
        }
    )
    over_grpc = RaftmetaAdmin({"bootstrap.servers": scrammed.quorum.quorum.bootstrap_servers})
    try:
        for door, user in ((over_kafka, "dora"), (over_grpc, "greg")):
            info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)
            altered = door.alter_user_scram_credentials(
                [UserScramCredentialUpsertion(user, info, b"pw-" + user.encode())]
            )
            assert altered[user].result(TIMEOUT_S) is None
            described = door.describe_user_scram_credentials([user, "ghost"])
            assert described[user].result(TIMEOUT_S).scram_credential_infos == (info,)
            with pytest.raises(AdminError) as missing:
                described["ghost"].result(TIMEOUT_S)
            assert missing.value.code == ErrorCode.RESOURCE_NOT_FOUND
            every = door.describe_user_scram_credentials().result(TIMEOUT_S)
            assert user in every and "alice" in every
            deleted = door.alter_user_scram_credentials(
                [UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_512)]
            )
            assert deleted[user].result(TIMEOUT_S) is None
            again = door.alter_user_scram_credentials(
                [UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_512)]
            )
            with pytest.raises(AdminError) as gone:
                again[user].result(TIMEOUT_S)
            assert gone.value.code == ErrorCode.RESOURCE_NOT_FOUND
    finally:
        over_kafka.close()
        over_grpc.close()


def test_an_old_client_logs_in_with_handshake_v0_and_bare_scram_frames(
    scrammed: Scrammed,
) -> None:
    client = ScramClient(ScramMechanism.SCRAM_SHA_512, "alice", ALICE_512_PASSWORD)
    with scrammed.tls_socket() as sock:
        sock.sendall(request(SaslHandshakeRequest(version=0, mechanism="SCRAM-SHA-512"), 1))
        payload = read_response(sock)
        assert payload is not None
        assert SaslHandshakeResponse.decode(payload, version=0, header=True).error_code == 0

        def bare(token: bytes) -> bytes | None:
            sock.sendall(len(token).to_bytes(4, "big") + token)
            return read_response(sock)

        server_first = bare(client.first())
        assert server_first is not None
        server_final = bare(client.final(server_first))
        assert server_final is not None
        client.verify(server_final)
        sock.sendall(request(MetadataRequest(version=12, topics=None), 4))
        assert read_response(sock) is not None
    with scrammed.tls_socket() as sock:  # a wrong password: no answer, the connection closed
        sock.sendall(request(SaslHandshakeRequest(version=0, mechanism="SCRAM-SHA-512"), 1))
        assert read_response(sock) is not None
        wrong = ScramClient(ScramMechanism.SCRAM_SHA_512, "alice", "wrong")
        first = wrong.first()
        sock.sendall(len(first).to_bytes(4, "big") + first)
        server_first = read_response(sock)
        assert server_first is not None
        final = wrong.final(server_first)
        sock.sendall(len(final).to_bytes(4, "big") + final)
        assert read_response(sock) is None
