"""ACLs over Kafka's protocol: DescribeAcls, CreateAcls and DeleteAcls on the KAFKA listener,
against a quorum with the StandardAuthorizer, through the API layer's one ACL path.

confluent-kafka creates, describes and deletes ACLs of each resource type it knows; the types
it does not (DELEGATION_TOKEN, USER) go over the wire directly. An ACL added over Kafka's
protocol is enforced on gRPC calls, and one added over gRPC on Kafka requests. Kafka's codes:
SECURITY_DISABLED without an authorizer, INVALID_REQUEST for a filter holding UNKNOWN,
CLUSTER_AUTHORIZATION_FAILED for a caller without ALTER (or DESCRIBE) on the cluster. Hostile
bodies for the three APIs, with the authorizer on (so they reach the ACL path), are answered
or refused without a traceback."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from raftmeta.channel import ControllerChannel
from raftmeta.cli.main import main
from raftmeta.errors import ErrorCode
from raftmeta.kafka_protocol import codec
from raftmeta.rpc import admin_pb2 as apb
from tests.kafka.quorum import KafkaQuorum, kafka_quorum
from tests.kafka.test_hostile_input import fuzz_one_api, tracebacks
from tests.kafka.test_wire import connect, read_response

TIMEOUT_S = 15.0
TOKENS = (
    "admin-secret=User:admin\nalice-secret=User:alice\nbob-secret=User:bob\n"
    "carol-secret=User:carol\n"
)
ACL_KEYS = (29, 30, 31)
ZERO_ID = uuid.UUID(int=0)
DELEGATION_TOKEN = 6
USER = 7
ALTER = 7
ALLOW = 3
ANY_NAME: Any = None
"""A filter's "any" name, principal or host (confluent-kafka's stubs type them as str)."""


class AclQuorum:
    """A quorum with the StandardAuthorizer whose KAFKA listener is SASL_PLAINTEXT (PLAIN
    logins from the same tokens file as gRPC bearer tokens)."""

    def __init__(self, quorum: KafkaQuorum) -> None:
        self.quorum = quorum

    @property
    def address(self) -> str:
        return self.quorum.kafka_address(self.quorum.active())

    def confluent(self, user: str) -> AdminClient:
        return AdminClient(
            {
                "bootstrap.servers": self.address,
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.username": user,
                "sasl.password": f"{user}-secret",
            }
        )

    def grpc_as(self, user: str, method: str, request: Any) -> Any:
        async def call() -> Any:
            async with ControllerChannel(
                self.quorum.quorum.bootstrap_servers,
                bearer_token=f"{user}-secret",
                request_timeout_ms=10_000,
            ) as channel:
                return await channel.call(f"Admin/{method}", request)

        return self.quorum.call(call())


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AclQuorum]:
    root = tmp_path_factory.mktemp("kafka-acls")
    tokens = root / "tokens"
    tokens.write_text(TOKENS)
    extra = {
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,KAFKA:SASL_PLAINTEXT",
        "raftmeta.auth.tokens.file": str(tokens),
        "authorizer.class.name": "raftmeta.auth.StandardAuthorizer",
        "super.users": "User:admin;User:ANONYMOUS",
    }
    with kafka_quorum(root / "quorum", brokers=1, extra_config=extra) as quorum:
        yield AclQuorum(quorum)


def everything() -> AclBindingFilter:
    return AclBindingFilter(
        ResourceType.ANY,
        ANY_NAME,
        ResourcePatternType.ANY,
        ANY_NAME,
        ANY_NAME,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )


def failure_code(future: Any) -> int:
    with pytest.raises(KafkaException) as raised:
        future.result(TIMEOUT_S)
    return int(raised.value.args[0].code())


def test_confluent_kafka_creates_describes_and_deletes_acls(secured: AclQuorum) -> None:
    admin = secured.confluent("admin")
    wanted = [
        AclBinding(
            ResourceType.TOPIC,
            "orders",
            ResourcePatternType.LITERAL,
            "User:carol",
            "*",
            AclOperation.READ,
            AclPermissionType.ALLOW,
        ),
        AclBinding(
            ResourceType.GROUP,
            "billing-",
            ResourcePatternType.PREFIXED,
            "User:carol",
            "10.0.0.1",
            AclOperation.READ,
            AclPermissionType.ALLOW,
        ),
        AclBinding(
            ResourceType.BROKER,  # Kafka's CLUSTER (4)
            "kafka-cluster",
            ResourcePatternType.LITERAL,
            "User:carol",
            "*",
            AclOperation.DESCRIBE,
            AclPermissionType.DENY,
        ),
        AclBinding(
            ResourceType.TRANSACTIONAL_ID,
            "tx-1",
            ResourcePatternType.LITERAL,
            "User:carol",
            "*",
            AclOperation.WRITE,
            AclPermissionType.ALLOW,
        ),
    ]
    for future in admin.create_acls(wanted, request_timeout=TIMEOUT_S).values():
        assert future.result(TIMEOUT_S) is None
    described = admin.describe_acls(everything(), request_timeout=TIMEOUT_S).result(TIMEOUT_S)
    assert sorted(map(str, described)) == sorted(map(str, wanted))

    only_topics = AclBindingFilter(
        ResourceType.TOPIC,
        "orders",
        ResourcePatternType.MATCH,
        ANY_NAME,
        ANY_NAME,
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    (deleted,) = admin.delete_acls([only_topics], request_timeout=TIMEOUT_S).values()
    assert [str(acl) for acl in deleted.result(TIMEOUT_S)] == [str(wanted[0])]
    left = admin.describe_acls(everything(), request_timeout=TIMEOUT_S).result(TIMEOUT_S)
    assert sorted(map(str, left)) == sorted(map(str, wanted[1:]))
    # Every controller holds them: a standby answers DescribeAcls from its own image.
    for future in admin.delete_acls([everything()], request_timeout=TIMEOUT_S).values():
        future.result(TIMEOUT_S)
    assert admin.describe_acls(everything(), request_timeout=TIMEOUT_S).result(TIMEOUT_S) == []


ANY_FILTER = {
    "resource_type_filter": 1,
    "resource_name_filter": None,
    "pattern_type_filter": 1,
    "principal_filter": None,
    "host_filter": None,
    "operation": 1,
    "permission_type": 1,
}


def raw_plain(address: str, api_key: int, version: int, values: dict[str, Any]) -> Any:
    """One request on a plaintext listener, and its decoded answer."""
    with connect(address) as sock:
        sock.sendall(codec.encode_request(api_key, version, 7, "acls-test", values))
        payload = read_response(sock)
    assert payload is not None, f"api {api_key} v{version} closed the connection"
    return codec.decode_response(payload, api_key, version)


def raw(address: str, api_key: int, version: int, values: dict[str, Any], user: str) -> Any:
    """One request over a SASL/PLAIN-authenticated connection, and its decoded answer."""
    with connect(address) as sock:
        for key, key_version, body in (
            (17, 1, {"mechanism": "PLAIN"}),
            (36, 1, {"auth_bytes": f"\0{user}\0{user}-secret".encode()}),
            (api_key, version, values),
        ):
            sock.sendall(codec.encode_request(key, key_version, 7, "acls-test", body))
            payload = read_response(sock)
            assert payload is not None, f"api {key} v{key_version} closed the connection"
            answer = codec.decode_response(payload, key, key_version)
        return answer


@pytest.mark.parametrize("version", [1, 2, 3])
def test_delegation_token_and_user_acls_are_stored_at_every_version(
    secured: AclQuorum, version: int
) -> None:
    """Kafka's resource types raftmeta does not enforce are accepted and stored all the same
    (USER only from v3, where Kafka added it)."""
    kinds = [DELEGATION_TOKEN, USER] if version >= 3 else [DELEGATION_TOKEN]
    creations = [
        {
            "resource_type": kind,
            "resource_name": f"owner-{version}",
            "resource_pattern_type": 3,
            "principal": "User:dave",
            "host": "*",
            "operation": 8,
            "permission_type": ALLOW,
        }
        for kind in kinds
    ]
    created = raw(secured.address, 30, version, {"creations": creations}, "admin")
    assert [(r.error_code, r.error_message) for r in created.results] == [(0, None)] * len(kinds)
    query = {
        "resource_type_filter": 1,
        "resource_name_filter": f"owner-{version}",
        "pattern_type_filter": 1,
        "principal_filter": "User:dave",
        "host_filter": None,
        "operation": 1,
        "permission_type": 1,
    }
    described = raw(secured.address, 29, version, query, "admin")
    assert described.error_code == 0
    assert sorted(r.resource_type for r in described.resources) == kinds
    deleted = raw(secured.address, 31, version, {"filters": [query]}, "admin")
    (result,) = deleted.filter_results
    assert sorted(acl.resource_type for acl in result.matching_acls) == kinds


def test_codes_as_kafka_answers_them(secured: AclQuorum) -> None:
    unknown_filter = {
        "resource_type_filter": 0,  # UNKNOWN
        "resource_name_filter": None,
        "pattern_type_filter": 1,
        "principal_filter": None,
        "host_filter": None,
        "operation": 1,
        "permission_type": 1,
    }
    described = raw(secured.address, 29, 3, unknown_filter, "admin")
    assert described.error_code == ErrorCode.INVALID_REQUEST
    deleted = raw(secured.address, 31, 3, {"filters": [unknown_filter]}, "admin")
    assert [r.error_code for r in deleted.filter_results] == [ErrorCode.INVALID_REQUEST]

    alice = secured.confluent("alice")
    binding = AclBinding(
        ResourceType.TOPIC,
        "t",
        ResourcePatternType.LITERAL,
        "User:alice",
        "*",
        AclOperation.ALL,
        AclPermissionType.ALLOW,
    )
    (refused,) = alice.create_acls([binding], request_timeout=TIMEOUT_S).values()
    assert failure_code(refused) == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    # (confluent-kafka 2.16 hands back an empty list for a refused DescribeAcls: asked here
    # over the wire.)
    listing = raw(secured.address, 29, 3, {**unknown_filter, "resource_type_filter": 1}, "alice")
    assert listing.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert listing.resources == []


def allow_alter_on_cluster(principal: str) -> AclBinding:
    return AclBinding(
        ResourceType.BROKER,
        "kafka-cluster",
        ResourcePatternType.LITERAL,
        principal,
        "*",
        AclOperation.ALTER,
        AclPermissionType.ALLOW,
    )


def grpc_create_acls_code(secured: AclQuorum, user: str) -> int:
    """The code a gRPC CreateAcls (an ALTER on the cluster) by ``user`` gets."""
    request = apb.CreateAclsRequest(
        creations=[
            apb.AclBinding(
                resource_type=2,
                resource_name=f"by-{user}",
                pattern_type=3,
                principal=f"User:{user}",
                host="*",
                operation=3,
                permission_type=ALLOW,
            )
        ]
    )
    response = secured.grpc_as(user, "CreateAcls", request)
    if response.header.error_code:
        return int(response.header.error_code)
    (result,) = response.results
    return int(result.error_code)


def test_an_acl_created_over_kafka_is_enforced_on_grpc(secured: AclQuorum) -> None:
    assert grpc_create_acls_code(secured, "alice") == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    admin = secured.confluent("admin")
    for future in admin.create_acls([allow_alter_on_cluster("User:alice")]).values():
        future.result(TIMEOUT_S)
    assert grpc_create_acls_code(secured, "alice") == ErrorCode.NONE


def test_an_acl_created_over_grpc_is_enforced_on_kafka(secured: AclQuorum) -> None:
    bob = secured.confluent("bob")
    binding = allow_alter_on_cluster("User:bob")
    (refused,) = bob.create_acls([binding], request_timeout=TIMEOUT_S).values()
    assert failure_code(refused) == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    created = secured.grpc_as(
        "admin",
        "CreateAcls",
        apb.CreateAclsRequest(
            creations=[
                apb.AclBinding(
                    resource_type=4,
                    resource_name="kafka-cluster",
                    pattern_type=3,
                    principal="User:bob",
                    host="*",
                    operation=ALTER,
                    permission_type=ALLOW,
                )
            ]
        ),
    )
    assert [r.error_code for r in created.results] == [0]
    (allowed,) = bob.create_acls([binding], request_timeout=TIMEOUT_S).values()
    assert allowed.result(TIMEOUT_S) is None


def test_without_an_authorizer_the_acl_apis_answer_security_disabled(tmp_path: Path) -> None:
    with kafka_quorum(tmp_path, brokers=1) as quorum:
        admin = AdminClient({"bootstrap.servers": quorum.kafka_address(quorum.active())})
        (created,) = admin.create_acls([allow_alter_on_cluster("User:x")]).values()
        assert failure_code(created) == ErrorCode.SECURITY_DISABLED
        described = raw_plain(quorum.kafka_address(quorum.active()), 29, 3, ANY_FILTER)
        assert described.error_code == ErrorCode.SECURITY_DISABLED
        (deleted,) = admin.delete_acls([everything()]).values()
        assert failure_code(deleted) == ErrorCode.SECURITY_DISABLED


@pytest.fixture(scope="module")
def open_authorized(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaQuorum]:
    """An authorizer on a plaintext KAFKA listener, the anonymous caller a super user: hostile
    bodies reach the ACL path itself."""
    extra = {
        "authorizer.class.name": "raftmeta.auth.StandardAuthorizer",
        "super.users": "User:ANONYMOUS",
    }
    with kafka_quorum(tmp_path_factory.mktemp("acl-hostile"), 1, extra) as quorum:
        yield quorum


def acls_cli(
    quorum: KafkaQuorum, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    address = quorum.kafka_address(quorum.active())
    status = main(["acls", "--bootstrap-controller", address, *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_acls_command_manages_acls_through_the_kafka_listener(
    open_authorized: KafkaQuorum, capsys: pytest.CaptureFixture[str]
) -> None:
    """kafka-acls.sh's --producer and --consumer expansions, over Kafka's ACL APIs."""
    producer = ("--producer", "--topic", "orders", "--transactional-id", "tx", "--idempotent")
    status, out, err = acls_cli(
        open_authorized, capsys, "--add", *producer, "--allow-principal", "User:p"
    )
    assert (status, err) == (0, "")
    consumer = ("--consumer", "--topic", "orders", "--group", "billing")
    status, _, err = acls_cli(
        open_authorized, capsys, "--add", *consumer, "--allow-principal", "User:c"
    )
    assert (status, err) == (0, "")
    status, out, _ = acls_cli(open_authorized, capsys, "--list", "--topic", "orders")
    assert status == 0
    granted = {
        line.strip().split(", permissionType")[0]
        for line in out.splitlines()
        if line.startswith(" \t(")
    }
    assert granted == {
        "(principal=User:p, host=*, operation=WRITE",
        "(principal=User:p, host=*, operation=DESCRIBE",
        "(principal=User:p, host=*, operation=CREATE",
        "(principal=User:c, host=*, operation=READ",
        "(principal=User:c, host=*, operation=DESCRIBE",
    }
    status, out, _ = acls_cli(open_authorized, capsys, "--list", "--allow-principal", "User:p")
    assert "resourceType=TRANSACTIONAL_ID, name=tx, patternType=LITERAL" in out
    assert "resourceType=CLUSTER, name=kafka-cluster" in out
    assert "operation=IDEMPOTENT_WRITE" in out
    status, out, _ = acls_cli(
        open_authorized, capsys, "--remove", *consumer, "--allow-principal", "User:c"
    )
    assert (status, out.splitlines()[0]) == (0, "Removed 3 ACL(s):")
    status, out, _ = acls_cli(open_authorized, capsys, "--list", "--group", "billing")
    assert (status, out) == (0, "")
    status, out, _ = acls_cli(
        open_authorized,
        capsys,
        "--add",
        "--user-principal",
        "User:u",
        "--operation",
        "CreateTokens",
        "--allow-principal",
        "User:p",
    )
    assert status == 0 and "resourceType=USER, name=User:u" in out


@pytest.mark.parametrize("api_key", ACL_KEYS)
def test_hostile_acl_requests_are_answered_or_refused_without_a_traceback(
    open_authorized: KafkaQuorum, api_key: int, caplog: pytest.LogCaptureFixture
) -> None:
    fuzz_one_api(open_authorized.kafka_address(open_authorized.active()), api_key, 4343, caplog)
    assert tracebacks(caplog.records) == []


def test_unregister_broker_and_voter_changes_need_alter_on_the_cluster(
    secured: AclQuorum,
) -> None:
    """Refused before anything about the cluster is looked at, as Kafka refuses them."""
    voter: dict[str, Any] = {"cluster_id": "any", "voter_id": 9, "voter_directory_id": ZERO_ID}
    asked: list[tuple[int, dict[str, Any]]] = [
        (64, {"broker_id": 1}),
        (80, {**voter, "timeout_ms": 1000, "listeners": []}),
        (81, voter),
    ]
    for api_key, values in asked:
        answer = raw(secured.address, api_key, 0, values, "carol")
        assert answer.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, api_key
    assert 1 in secured.quorum.quorum.controllers_image().brokers
