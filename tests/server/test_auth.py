"""Principals, ACL rules and authorizer loading, without a network."""

from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.auth import (
    ANONYMOUS,
    AccessControl,
    Acl,
    AclAuthorizer,
    load_authorizer,
    read_tokens,
)
from raftmeta.config.errors import ConfigError
from raftmeta.errors import ErrorCode, KafkaError


class DenyAll:
    def authorize(self, principal: str, operation: str, kind: str, name: str) -> bool:
        return False


class Broken:
    def authorize(self, principal: str, operation: str, kind: str, name: str) -> bool:
        raise RuntimeError("backend down")


def test_acl_matching_with_wildcards_and_implied_operations() -> None:
    authorizer = AclAuthorizer(
        [
            Acl.parse("User:alice:alter:cluster:kafka-cluster"),
            Acl.parse("User:*:Describe:Topic:public"),
            Acl.parse("User:bob:Write:Topic:*"),
            Acl.parse("User:ops:AlterConfigs:Topic:t"),
            Acl.parse("User:root:All:Cluster:*"),
        ]
    )
    assert authorizer.authorize("User:alice", "Alter", "Cluster", "kafka-cluster")
    assert not authorizer.authorize("User:alice", "Create", "Cluster", "kafka-cluster")
    assert not authorizer.authorize("User:alice", "Alter", "Topic", "kafka-cluster")
    assert authorizer.authorize("User:anyone", "Describe", "Topic", "public")
    assert not authorizer.authorize("Group:anyone", "Describe", "Topic", "public")
    assert not authorizer.authorize("User:anyone", "Describe", "Topic", "private")
    # Kafka: WRITE implies DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS.
    assert authorizer.authorize("User:bob", "Describe", "Topic", "anything")
    assert not authorizer.authorize("User:bob", "Delete", "Topic", "anything")
    assert authorizer.authorize("User:ops", "DescribeConfigs", "Topic", "t")
    assert authorizer.authorize("User:root", "ClusterAction", "Cluster", "kafka-cluster")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("User:alice:Alter:Cluster", "expected PrincipalType"),
        ("User:alice:Fly:Cluster:kafka-cluster", "unknown operation 'Fly'"),
        ("User:alice:Alter:Group:g", "unknown resource type 'Group'"),
    ],
)
def test_a_bad_acl_is_a_config_error_naming_the_key(text: str, reason: str) -> None:
    with pytest.raises(ConfigError, match=reason) as raised:
        AclAuthorizer().configure({"raftmeta.acls": text})
    assert "raftmeta.acls" in str(raised.value)


def test_tokens_map_to_principals(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("# comment\n\nabc = User:alice\nxyz=User:bob\n")
    access = AccessControl(DenyAll(), ["User:bob"], read_tokens(str(path)))
    assert access.principal([("authorization", "Bearer abc")]) == "User:alice"
    assert access.principal([("Authorization", b"bearer xyz")]) == "User:bob"
    assert access.principal([("other", "x")]) == ANONYMOUS
    for header in ("Bearer nope", "Basic abc", "Bearer "):
        with pytest.raises(KafkaError) as raised:
            access.principal([("authorization", header)])
        assert raised.value.code is ErrorCode.SASL_AUTHENTICATION_FAILED
    # Super users pass whatever the authorizer says; others get its answer.
    assert access.allowed("User:bob", "Alter", "Cluster", "kafka-cluster")
    assert not access.allowed("User:alice", "Alter", "Cluster", "kafka-cluster")


def test_no_authorizer_allows_everything_and_no_tokens_file_ignores_tokens() -> None:
    access = AccessControl()
    assert access.principal([("authorization", "Bearer whatever")]) == ANONYMOUS
    assert access.allowed(ANONYMOUS, "Alter", "Cluster", "kafka-cluster")


class CallContext:
    """What a gRPC servicer context offers the principal lookup: the call's metadata."""

    def __init__(self, *metadata: tuple[str, str]) -> None:
        self.metadata = metadata

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata


def test_a_call_principal_is_its_tokens_and_anonymous_without_a_tokens_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tokens"
    path.write_text("abc=User:alice\n")
    checked = AccessControl(tokens=read_tokens(str(path)))
    assert checked.call_principal(CallContext(("authorization", "Bearer abc"))) == "User:alice"
    assert checked.call_principal(CallContext()) == ANONYMOUS
    with pytest.raises(KafkaError) as raised:
        checked.call_principal(CallContext(("authorization", "Bearer nope")))
    assert raised.value.code is ErrorCode.SASL_AUTHENTICATION_FAILED
    # Without a tokens file no token is checked, a malformed header included.
    unchecked = AccessControl()
    for header in ("Bearer abc", "Basic x", "Bearer "):
        assert unchecked.call_principal(CallContext(("authorization", header))) == ANONYMOUS


def test_a_failing_authorizer_denies() -> None:
    assert not AccessControl(Broken()).allowed("User:a", "Alter", "Cluster", "kafka-cluster")


def test_a_malformed_tokens_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "tokens"
    path.write_text("abc=alice\n")
    with pytest.raises(ConfigError, match="line 1"):
        read_tokens(str(path))


def test_authorizers_load_from_a_dotted_path_or_fail_in_one_line() -> None:
    loaded = load_authorizer("tests.server.test_auth:DenyAll", {})
    assert isinstance(loaded, DenyAll)
    configured = load_authorizer(
        "raftmeta.auth.AclAuthorizer", {"raftmeta.acls": "User:a:Alter:Cluster:kafka-cluster"}
    )
    assert isinstance(configured, AclAuthorizer) and len(configured.acls) == 1
    for path, reason in (
        ("no_such_module.Authorizer", "cannot import no_such_module"),
        ("raftmeta.auth.Missing", "has no Missing"),
        ("raftmeta.auth.ANONYMOUS", "is not a class"),
        ("pathlib.Path", "is not an authorizer"),
        ("Plain", "expected package.module.ClassName"),
    ):
        with pytest.raises(ConfigError, match=reason) as raised:
            load_authorizer(path, {})
        assert "\n" not in str(raised.value)
