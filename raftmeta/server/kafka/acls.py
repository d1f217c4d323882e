"""DescribeAcls (key 29), CreateAcls (key 30) and DeleteAcls (key 31), versions 1-3 (flexible
from v2), over the API layer's one ACL path, the one the gRPC Admin service uses.

The API layer authorizes (DESCRIBE, or ALTER, on the cluster), answers SECURITY_DISABLED
without an authorizer, refuses a binding or filter holding UNKNOWN, ANY where an ACL needs a
value, or a value no enum names (INVALID_REQUEST) and stores every resource type Kafka has,
enforced or not. What is done here is Kafka's shape: DescribeAcls groups the ACLs by resource
pattern, and a failure of a whole Create or Delete lands on every item, as Kafka's error
responses put it.

DescribeAcls is answered by any controller, as Kafka's are: the active one after its pending
records commit, a standby from its own committed image (a client bootstrapped to it sends it
there).
"""

from __future__ import annotations

from typing import Any

from raftmeta.common.acls import (
    AclBinding,
    AclBindingFilter,
    AclDeleteResult,
    CreateAclsRequest,
    DeleteAclsRequest,
)
from raftmeta.common.items import ItemError
from raftmeta.errors import KafkaError
from raftmeta.server.kafka.context import Fields, KafkaContext, active_or_here, error_fields


def _filter(item: Any) -> AclBindingFilter:
    """A DescribeAcls request, or one DeleteAcls filter, as the API layer's filter."""
    return AclBindingFilter(
        resource_type=int(item.resource_type_filter),
        resource_name=item.resource_name_filter,
        pattern_type=int(item.pattern_type_filter),
        principal=item.principal_filter,
        host=item.host_filter,
        operation=int(item.operation),
        permission_type=int(item.permission_type),
    )


def _item_fields(error: ItemError) -> Fields:
    return {
        "error_code": int(error.code),
        "error_message": None if error.ok else (error.message or error.code.name),
    }


def _entry(acl: AclBinding) -> Fields:
    return {
        "principal": acl.principal,
        "host": acl.host,
        "operation": acl.operation,
        "permission_type": acl.permission_type,
    }


async def _described(context: KafkaContext, acl_filter: AclBindingFilter) -> tuple[AclBinding, ...]:
    """The active controller's answer; a standby's own (or the refusal) otherwise."""
    return await active_or_here(
        lambda: context.apis.describe_acls(context.principal, acl_filter),
        lambda: context.apis.describe_acls_here(context.principal, acl_filter),
    )


async def describe_acls(context: KafkaContext, request: Any, version: int) -> Fields:
    try:
        acls = await _described(context, _filter(request))
    except KafkaError as error:
        code, message = error_fields(error)
        return {
            "throttle_time_ms": 0,
            "error_code": code,
            "error_message": message,
            "resources": [],
        }
    by_pattern: dict[tuple[int, str, int], list[Fields]] = {}
    for acl in acls:
        key = (acl.resource_type, acl.resource_name, acl.pattern_type)
        by_pattern.setdefault(key, []).append(_entry(acl))
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "resources": [
            {
                "resource_type": resource_type,
                "resource_name": name,
                "pattern_type": pattern_type,
                "acls": entries,
            }
            for (resource_type, name, pattern_type), entries in by_pattern.items()
        ],
    }


async def create_acls(context: KafkaContext, request: Any, version: int) -> Fields:
    creations = list(request.creations or ())
    bindings = tuple(
        AclBinding(
            resource_type=int(item.resource_type),
            resource_name=item.resource_name,
            pattern_type=int(item.resource_pattern_type),
            principal=item.principal,
            host=item.host,
            operation=int(item.operation),
            permission_type=int(item.permission_type),
        )
        for item in creations
    )
    try:
        results = await context.apis.create_acls(context.principal, CreateAclsRequest(bindings))
    except KafkaError as error:
        results = [ItemError(error.code, error.message)] * len(creations)
    return {"throttle_time_ms": 0, "results": [_item_fields(result) for result in results]}


def _deleted(acl: AclBinding) -> Fields:
    return {
        "error_code": 0,
        "error_message": None,
        "resource_type": acl.resource_type,
        "resource_name": acl.resource_name,
        "pattern_type": acl.pattern_type,
        **_entry(acl),
    }


async def delete_acls(context: KafkaContext, request: Any, version: int) -> Fields:
    filters = tuple(_filter(item) for item in request.filters or ())
    try:
        results = await context.apis.delete_acls(context.principal, DeleteAclsRequest(filters))
    except KafkaError as error:
        results = [AclDeleteResult(ItemError(error.code, error.message))] * len(filters)
    return {
        "throttle_time_ms": 0,
        "filter_results": [
            {
                **_item_fields(result.error),
                "matching_acls": [_deleted(acl) for acl in result.deleted],
            }
            for result in results
        ],
    }


def create_acls_failed(request: Any, version: int, code: int, message: str | None) -> Fields:
    """Kafka's error response: ``code`` on every requested creation."""
    failed: Fields = {"error_code": code, "error_message": message}
    return {"throttle_time_ms": 0, "results": [failed for _ in request.creations or ()]}


def delete_acls_failed(request: Any, version: int, code: int, message: str | None) -> Fields:
    """Kafka's error response: ``code`` on every filter, none matched."""
    failed: Fields = {"error_code": code, "error_message": message, "matching_acls": []}
    return {"throttle_time_ms": 0, "filter_results": [failed for _ in request.filters or ()]}
