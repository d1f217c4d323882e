"""Security on the KAFKA listener against a real quorum with ACLs on (StandardAuthorizer):
SASL/PLAIN logins checked against the same tokens file as gRPC bearer tokens, so the same
principals meet the same ACLs (an unauthorized ``elect_leaders`` gets
CLUSTER_AUTHORIZATION_FAILED from confluent-kafka and kafka-python alike); SSL and SASL_SSL
with the certificates the gRPC listener would use, made by a throwaway CA.

The in-process brokers and the controllers' own registrations call the plaintext controller
listener without a token, as ``User:ANONYMOUS``, so that principal is a super user here; the
SASL users are not."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import ElectionType, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from kafka.admin import KafkaAdminClient
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.protocol.sasl import SaslHandshakeRequest, SaslHandshakeResponse

from raftmeta.errors import ErrorCode
from raftmeta.records import SecurityProtocol
from raftmeta.security.certs import NodeFiles
from raftmeta.server.kafka.sasl import UNSUPPORTED_SASL_MECHANISM
from tests.kafka.quorum import KafkaQuorum, kafka_quorum
from tests.kafka.test_wire import connect, read_response, request
from tests.security.support import TestPki

TIMEOUT_S = 15.0
TOKENS = "admin-secret=User:admin\nalice-secret=User:alice\n"


class Secured:
    """A running quorum whose KAFKA listener speaks ``protocol``, and how to reach it."""

    def __init__(self, quorum: KafkaQuorum, protocol: str, files: NodeFiles) -> None:
        self.quorum = quorum
        self.protocol = protocol
        self.files = files

    @property
    def address(self) -> str:
        return self.quorum.kafka_address(self.quorum.active())

    def confluent(self, user: str | None, password: str | None, **extra: Any) -> AdminClient:
        settings: dict[str, Any] = {
            "bootstrap.servers": self.address,
            "security.protocol": self.protocol,
        }
        if "SASL" in self.protocol:
            settings.update(
                {"sasl.mechanism": "PLAIN", "sasl.username": user, "sasl.password": password}
            )
        if "SSL" in self.protocol:
            settings["ssl.ca.location"] = str(self.files.truststore)
        return AdminClient({**settings, **extra})

    def kafka_python(self, user: str, password: str) -> KafkaAdminClient:
        return KafkaAdminClient(
            bootstrap_servers=self.address,
            security_protocol=self.protocol,
            sasl_mechanism="PLAIN",
            sasl_plain_username=user,
            sasl_plain_password=password,
            ssl_cafile=str(self.files.truststore),
            request_timeout_ms=10_000,
        )


def secured(root: Path, protocol: str) -> Iterator[Secured]:
    pki = TestPki.create(root / "pki")
    files = pki.node("controller")
    tokens = root / "tokens"
    tokens.write_text(TOKENS)
    extra = {
        "listener.security.protocol.map": f"CONTROLLER:PLAINTEXT,KAFKA:{protocol}",
        "raftmeta.auth.tokens.file": str(tokens),
        "authorizer.class.name": "raftmeta.auth.StandardAuthorizer",
        "super.users": "User:admin;User:ANONYMOUS",
        **files.properties(client_auth="none"),
    }
    with kafka_quorum(root / "quorum", brokers=1, extra_config=extra) as quorum:
        yield Secured(quorum, protocol, files)


@pytest.fixture(scope="module", params=["SASL_PLAINTEXT", "SASL_SSL"])
def sasl(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Secured]:
    yield from secured(tmp_path_factory.mktemp(request.param.lower()), request.param)


def elect_code(admin: AdminClient) -> int:
    try:
        admin.elect_leaders(ElectionType.PREFERRED, None).result(TIMEOUT_S)
    except KafkaException as error:
        return int(error.args[0].code())
    return 0


def test_sasl_users_meet_the_acls_of_their_grpc_principal(sasl: Secured) -> None:
    alice = sasl.confluent("alice", "alice-secret")
    assert elect_code(alice) == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    admin = sasl.confluent("admin", "admin-secret")
    assert elect_code(admin) == 0
    (created,) = admin.create_topics([NewTopic(f"by-admin-{sasl.protocol}", 1, 1)]).values()
    created.result(TIMEOUT_S)
    (refused,) = alice.create_topics([NewTopic(f"by-alice-{sasl.protocol}", 1, 1)]).values()
    with pytest.raises(KafkaException) as raised:
        refused.result(TIMEOUT_S)
    assert raised.value.args[0].code() in (
        ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    )

    kp_alice = sasl.kafka_python("alice", "alice-secret")
    try:
        response = kp_alice.elect_leaders(0, None, raise_errors=False)
    finally:
        kp_alice.close()
    assert response.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def test_a_wrong_password_fails_authentication(sasl: Secured) -> None:
    errors: list[KafkaError] = []
    client = sasl.confluent("alice", "not-her-secret", error_cb=errors.append)
    with pytest.raises(KafkaException):
        client.list_topics(timeout=3)
    client.poll(1)
    assert any(error.code() == KafkaError._AUTHENTICATION for error in errors), errors
    # The token of another user is no password for alice either.
    errors.clear()
    client = sasl.confluent("alice", "admin-secret", error_cb=errors.append)
    with pytest.raises(KafkaException):
        client.list_topics(timeout=3)
    client.poll(1)
    assert any(error.code() == KafkaError._AUTHENTICATION for error in errors), errors


def test_requests_before_login_close_the_connection_and_handshake_v0_logs_in(
    tmp_path: Path,
) -> None:
    for running in secured(tmp_path, "SASL_PLAINTEXT"):
        with connect(running.address) as sock:
            sock.sendall(request(MetadataRequest(version=12, topics=None), 1))
            sock.settimeout(TIMEOUT_S)
            received = b""
            with contextlib.suppress(ConnectionResetError):
                while chunk := sock.recv(4096):
                    received += chunk
            assert received == b"", "no answer before the login"
        with connect(running.address) as sock:  # a mechanism not offered: answered, closed
            sock.sendall(request(SaslHandshakeRequest(version=0, mechanism="SCRAM-SHA-256"), 2))
            refused = read_response(sock)
            assert refused is not None
            answer = SaslHandshakeResponse.decode(refused, version=0, header=True)
            assert (answer.error_code, answer.mechanisms) == (UNSUPPORTED_SASL_MECHANISM, ["PLAIN"])
            assert read_response(sock) is None, "Kafka closes the connection"
        with connect(running.address) as sock:  # an old client: handshake v0, a bare token
            sock.sendall(request(SaslHandshakeRequest(version=0, mechanism="PLAIN"), 3))
            assert read_response(sock) is not None
            token = b"\x00admin\x00admin-secret"
            sock.sendall(len(token).to_bytes(4, "big") + token)
            assert read_response(sock) == b"", "an empty frame: logged in"
            sock.sendall(request(MetadataRequest(version=12, topics=None), 4))
            payload = read_response(sock)
            assert payload is not None
            metadata = MetadataResponse.decode(payload, version=12, header=True)
            assert metadata.controller_id == running.quorum.active().node_id
        registered = running.quorum.active().controller.committed_image.controllers
        assert {
            endpoint.security_protocol
            for registration in registered.values()
            for endpoint in registration.endpoints
            if endpoint.name == "KAFKA"
        } == {int(SecurityProtocol.SASL_PLAINTEXT)}


def test_ssl_with_the_listener_certificates(tmp_path: Path) -> None:
    for running in secured(tmp_path, "SSL"):
        admin = running.confluent(None, None)
        assert admin.describe_cluster().result(TIMEOUT_S).cluster_id
        (created,) = admin.create_topics([NewTopic("over-tls", 1, 1)]).values()
        created.result(TIMEOUT_S)

        other_ca = TestPki.create(tmp_path / "other-ca").node("nobody")
        untrusting = running.confluent(None, None, **{"ssl.ca.location": str(other_ca.truststore)})
        with pytest.raises(KafkaException):
            untrusting.list_topics(timeout=3)

        # A plaintext client gets no Kafka answer from the TLS listener (at most a TLS alert).
        with connect(running.address) as plain:
            plain.sendall(request(MetadataRequest(version=12, topics=None), 1))
            received = b""
            while chunk := plain.recv(4096):
                received += chunk
        assert received[4:8] != (1).to_bytes(4, "big"), received
