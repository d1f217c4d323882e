"""CreateAcls / DeleteAcls / DescribeAcls on the controller: Kafka's AclControlManager rules."""

from __future__ import annotations

import pytest

from raftmeta.common.acls import AclBinding, AclBindingFilter
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.records import (
    AccessControlEntryRecord,
    AclOperation,
    AclPatternType,
    AclPermissionType,
    AclResourceType,
    RemoveAccessControlEntryRecord,
)
from tests.controller.harness import Harness, run_async

LITERAL = int(AclPatternType.LITERAL)
PREFIXED = int(AclPatternType.PREFIXED)
ALLOW = int(AclPermissionType.ALLOW)
DENY = int(AclPermissionType.DENY)
TOPIC = int(AclResourceType.TOPIC)
CLUSTER = int(AclResourceType.CLUSTER)
READ = int(AclOperation.READ)
ALTER = int(AclOperation.ALTER)


def binding(
    name: str = "orders",
    *,
    resource_type: int = TOPIC,
    pattern: int = LITERAL,
    principal: str = "User:alice",
    host: str = "*",
    operation: int = READ,
    permission: int = ALLOW,
) -> AclBinding:
    return AclBinding(resource_type, name, pattern, principal, host, operation, permission)


@run_async
async def test_created_acls_are_committed_before_the_answer_and_deduplicated() -> None:
    h = Harness()
    await h.start()
    task = await h.submit(
        h.controller.create_acls([binding(), binding(), binding("ord", pattern=PREFIXED)])
    )
    assert not task.done(), "answered before the records committed"
    written = h.log.uncommitted_records()
    assert [type(r) for r in written] == [AccessControlEntryRecord] * 2
    h.log.commit()
    assert [error.code for error in await task] == [ErrorCode.NONE] * 3
    assert len(h.controller.committed_image.acls) == 2
    again = await h.run(h.controller.create_acls([binding()]))
    assert again[0].ok and len(h.controller.committed_image.acls) == 2


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (binding(resource_type=int(AclResourceType.ANY)), "Invalid resourceType ANY"),
        (binding(resource_type=99), "Invalid resourceType 99"),
        (binding(pattern=int(AclPatternType.MATCH)), "Invalid patternType MATCH"),
        (binding(pattern=int(AclPatternType.ANY)), "Invalid patternType ANY"),
        (binding(operation=int(AclOperation.ANY)), "Invalid operation ANY"),
        (binding(operation=0), "Invalid operation UNKNOWN"),
        (binding(permission=int(AclPermissionType.ANY)), "Invalid permissionType ANY"),
        (binding(""), "Resource name should not be empty"),
        (binding(principal=""), "Could not parse principal"),
        (binding(principal="alice"), "Could not parse principal"),
        (binding(principal="User:"), "Could not parse principal"),
        (binding(host=""), "Invalid empty host"),
        (binding("other", resource_type=CLUSTER), "only valid name for the CLUSTER"),
    ],
)
def test_invalid_acls_are_refused_per_item(bad: AclBinding, message: str) -> None:
    @run_async
    async def scenario() -> None:
        h = Harness()
        await h.start()
        results = await h.run(h.controller.create_acls([bad, binding()]))
        assert results[0].code is ErrorCode.INVALID_REQUEST
        assert message in (results[0].message or "")
        assert results[1].ok
        assert len(h.controller.committed_image.acls) == 1

    scenario()


@run_async
async def test_delete_matches_as_kafka_and_removes_each_acl_once() -> None:
    h = Harness()
    await h.start()
    literal = binding("orders")
    wildcard = binding("*")
    prefixed = binding("ord", pattern=PREFIXED)
    other = binding("payments", principal="User:bob", operation=ALTER, permission=DENY)
    await h.run(h.controller.create_acls([literal, wildcard, prefixed, other]))

    match_orders = AclBindingFilter(TOPIC, "orders", int(AclPatternType.MATCH))
    described = await h.controller.describe_acls(match_orders)
    assert set(described) == {literal, wildcard, prefixed}
    assert await h.controller.describe_acls(AclBindingFilter(principal="User:bob")) == (other,)
    exact = AclBindingFilter(TOPIC, "orders", int(AclPatternType.ANY))
    assert await h.controller.describe_acls(exact) == (literal,)

    task = await h.submit(
        h.controller.delete_acls(
            [match_orders, AclBindingFilter(resource_name="orders"), AclBindingFilter(0)]
        )
    )
    removals = h.log.uncommitted_records()
    assert all(isinstance(r, RemoveAccessControlEntryRecord) for r in removals)
    assert len(removals) == 3, "an ACL two filters match is removed once"
    h.log.commit()
    first, second, unknown = await task
    assert first.error.ok and set(first.deleted) == {literal, wildcard, prefixed}
    assert second.error.ok and second.deleted == (literal,)
    assert unknown.error.code is ErrorCode.INVALID_REQUEST
    assert unknown.error.message == "Unknown patternFilter."
    assert await h.controller.describe_acls(AclBindingFilter()) == (other,)


@run_async
async def test_describe_with_an_unknown_filter_is_invalid_request() -> None:
    h = Harness()
    await h.start()
    with pytest.raises(KafkaError) as raised:
        await h.controller.describe_acls(AclBindingFilter(operation=0))
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    assert raised.value.message == "Unknown entryFilter."
