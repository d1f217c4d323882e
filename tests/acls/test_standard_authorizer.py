"""StandardAuthorizer: decisions from the image's ACLs, as Kafka's KRaft authorizer makes them."""

from __future__ import annotations

import hmac

import pytest

from raftmeta.auth import (
    CLUSTER_NAME,
    AccessControl,
    Operation,
    ResourceType,
    StandardAuthorizer,
    load_authorizer,
)
from raftmeta.config.errors import ConfigError
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.records import (
    AclOperation,
    AclPatternType,
    AclPermissionType,
    AclResourceType,
    Record,
)
from tests.acls.test_acl_image import acl

DENY = int(AclPermissionType.DENY)
PREFIXED = int(AclPatternType.PREFIXED)
CLUSTER = int(AclResourceType.CLUSTER)


def authorizer(*records: Record, allow_everyone: bool = False) -> StandardAuthorizer:
    image = MetadataImage()
    image.apply_batch(list(records), 0)
    built = StandardAuthorizer(lambda: image)
    built.allow_everyone_if_no_acl_found = allow_everyone
    return built


def can(
    who: StandardAuthorizer,
    principal: str,
    operation: Operation,
    name: str = "orders",
    kind: ResourceType = ResourceType.TOPIC,
    host: str | None = None,
) -> bool:
    return who.authorize(principal, operation, kind, name, host)


def test_no_acl_denies_unless_everyone_is_allowed_then() -> None:
    assert not can(authorizer(), "User:alice", Operation.READ)
    assert can(authorizer(allow_everyone=True), "User:alice", Operation.READ)
    # An ACL on the resource, even for someone else, turns the fallback off.
    assert not can(
        authorizer(acl(1, principal="User:bob"), allow_everyone=True), "User:a", Operation.READ
    )


def test_a_node_without_its_image_denies() -> None:
    assert not StandardAuthorizer().authorize("User:alice", "Read", "Topic", "orders")


def test_literal_allow_implies_describe_only() -> None:
    who = authorizer(acl(1))
    assert can(who, "User:alice", Operation.READ)
    assert can(who, "User:alice", Operation.DESCRIBE)
    assert not can(who, "User:alice", Operation.WRITE)
    assert not can(who, "User:bob", Operation.READ)
    assert not can(who, "User:alice", Operation.READ, "orders2")


def test_wildcards_prefixes_and_deny_wins() -> None:
    who = authorizer(
        acl(1, "*", principal="User:*", operation=int(AclOperation.ALL)),
        acl(2, "ord", PREFIXED, permission_type=DENY),
    )
    assert not can(who, "User:alice", Operation.READ, "orders")
    assert can(who, "User:alice", Operation.WRITE, "orders")
    assert can(who, "User:alice", Operation.DESCRIBE, "orders"), "DENY READ is not DENY DESCRIBE"
    assert can(who, "User:alice", Operation.READ, "payments")
    assert can(who, "User:bob", Operation.READ, "orders")
    deny_all = authorizer(
        acl(1, "*", principal="User:*", operation=int(AclOperation.ALL)),
        acl(2, "orders", principal="User:*", operation=int(AclOperation.ALL), permission_type=DENY),
    )
    assert not can(deny_all, "User:bob", Operation.DESCRIBE, "orders")


def test_hosts() -> None:
    who = authorizer(acl(1, host="10.0.0.1"), acl(2, operation=int(AclOperation.WRITE)))
    assert can(who, "User:alice", Operation.READ, host="10.0.0.1")
    assert not can(who, "User:alice", Operation.READ, host="10.0.0.2")
    assert not can(who, "User:alice", Operation.READ), "an unknown host matches only *"
    denied = authorizer(acl(1), acl(2, host="10.0.0.9", permission_type=DENY))
    assert can(denied, "User:alice", Operation.READ, host="10.0.0.1")
    assert not can(denied, "User:alice", Operation.READ, host="10.0.0.9")
    assert not can(denied, "User:alice", Operation.READ), "a DENY applies to an unknown host"


def test_cluster_alter_and_super_users() -> None:
    who = authorizer(acl(1, CLUSTER_NAME, resource_type=CLUSTER, operation=int(AclOperation.ALTER)))
    access = AccessControl(who, super_users=["User:root"])
    assert access.allowed("User:alice", Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    assert not access.allowed("User:bob", Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    assert access.allowed("User:root", Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)


def test_loaded_by_name_and_configured() -> None:
    loaded = load_authorizer(
        "raftmeta.auth.StandardAuthorizer", {"allow.everyone.if.no.acl.found": "true"}
    )
    assert isinstance(loaded, StandardAuthorizer) and loaded.allow_everyone_if_no_acl_found
    access = AccessControl(loaded)
    image = MetadataImage()
    access.attach_image(lambda: image)
    assert access.allowed("User:x", Operation.READ, ResourceType.TOPIC, "t")
    with pytest.raises(ConfigError, match=r"allow\.everyone\.if\.no\.acl\.found"):
        load_authorizer(
            "raftmeta.auth.StandardAuthorizer", {"allow.everyone.if.no.acl.found": "maybe"}
        )


def test_tokens_are_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return bool(real(a, b))

    monkeypatch.setattr(hmac, "compare_digest", spy)
    access = AccessControl(tokens={"t1": "User:a", "t2": "User:b", "t3": "User:c"})
    assert access.principal([("authorization", "Bearer t2")]) == "User:b"
    assert len(compared) == 3, "every token is compared, with no early exit"
    with pytest.raises(KafkaError) as raised:
        access.principal([("authorization", "Bearer nope")])
    assert raised.value.code is ErrorCode.SASL_AUTHENTICATION_FAILED
