"""CreateAcls, DeleteAcls and DescribeAcls against the image: Kafka's ``AclControlManager``.

:class:`AclControlManager`'s methods are pure functions of the image returning
:class:`ControllerResult` values. A new ACL is refused per item with INVALID_REQUEST when it
holds a filter-only or unknown enum value (ANY, MATCH, UNKNOWN), an empty resource name, a
CLUSTER resource not named ``kafka-cluster``, or a principal that is not ``Type:name``; an ACL
equal to one already held (or to an earlier one of the same request) succeeds without a
record, as in Kafka. DeleteAcls writes one RemoveAccessControlEntryRecord per matching ACL,
however many filters match it, and reports every match under each filter that matched.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator, Sequence

from raftmeta.common.acls import (
    AclBinding,
    AclBindingFilter,
    AclDeleteResult,
    enum_text,
    permission_text,
)
from raftmeta.common.items import OK, ItemError
from raftmeta.controller.result import ControllerResult
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage, acl_problem
from raftmeta.records import (
    AccessControlEntryRecord,
    AclOperation,
    AclPatternType,
    AclResourceType,
    RemoveAccessControlEntryRecord,
    Uuid,
    uuid_to_str,
)

log = logging.getLogger(__name__)

CLUSTER_NAME = "kafka-cluster"


def new_acl_problem(binding: AclBinding) -> str | None:
    """Why ``binding`` may not be created (Kafka's message), or ``None``."""
    probe = AccessControlEntryRecord(
        bytes(16),
        binding.resource_type,
        binding.resource_name,
        binding.pattern_type,
        binding.principal,
        binding.host,
        binding.operation,
        binding.permission_type,
    )
    problem = acl_problem(probe)
    if problem is not None:
        return _named(problem)
    if binding.resource_type == AclResourceType.CLUSTER and binding.resource_name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    kind, colon, name = binding.principal.partition(":")
    if not colon or not kind or not name:
        return (
            f"Could not parse principal from `{binding.principal}` "
            "(expected a string in format principalType:principalName)."
        )
    if not binding.host:
        return "Invalid empty host; use * for any host."
    return None


def _named(problem: str) -> str:
    """``Invalid operation 1`` → ``Invalid operation ANY`` where the number has a name."""
    words = problem.rsplit(" ", 1)
    if len(words) != 2 or not words[1].lstrip("-").isdigit():
        return problem
    value = int(words[1])
    namer: dict[str, Callable[[int], str]] = {
        "Invalid resourceType": lambda v: enum_text(AclResourceType, v),
        "Invalid patternType": lambda v: enum_text(AclPatternType, v),
        "Invalid operation": lambda v: enum_text(AclOperation, v),
        "Invalid permissionType": permission_text,
    }
    name = namer.get(words[0])
    return problem if name is None else f"{words[0]} {name(value)}"


def new_acl_id(image: MetadataImage, make: Callable[[], bytes] | None = None) -> Uuid:
    """A random id no ACL of ``image`` holds (Kafka draws again on a collision)."""
    draw = make or (lambda: uuid.uuid4().bytes)
    while True:
        candidate = draw()
        if candidate not in image.acls.by_id and candidate != bytes(16):
            return candidate


class AclControlManager:
    """The ACL policy of the controller: which bindings may be written, and which a filter
    removes or shows. Holds nothing but how new ACL ids are drawn."""

    def __init__(self, make_id: Callable[[], bytes] | None = None) -> None:
        self._make_id = make_id

    def create_acls(
        self, image: MetadataImage, bindings: Sequence[AclBinding]
    ) -> Iterator[ControllerResult[ItemError]]:
        """One result per binding; the queue applies each item's record before the next item is
        checked, so a binding repeated in one request is written once."""
        for binding in bindings:
            problem = new_acl_problem(binding)
            if problem is not None:
                log.info("CreateAcls refused %s: %s", binding, problem)
                yield ControllerResult((), ItemError(ErrorCode.INVALID_REQUEST, problem))
                continue
            record = AccessControlEntryRecord(
                new_acl_id(image, self._make_id),
                binding.resource_type,
                binding.resource_name,
                binding.pattern_type,
                binding.principal,
                binding.host,
                binding.operation,
                binding.permission_type,
            )
            if image.acls.find(record) is not None:
                yield ControllerResult((), OK)
                continue
            log.info("creating ACL %s: %s", uuid_to_str(record.acl_id), binding)
            yield ControllerResult((record,), OK)

    def delete_acls(
        self, image: MetadataImage, filters: Sequence[AclBindingFilter]
    ) -> ControllerResult[list[AclDeleteResult]]:
        """Removes every ACL some filter matches, in one atomic batch."""
        results: list[AclDeleteResult] = []
        removed: dict[Uuid, RemoveAccessControlEntryRecord] = {}
        for acl_filter in filters:
            problem = acl_filter.problem()
            if problem is not None:
                log.info("DeleteAcls refused filter %s: %s", acl_filter, problem)
                results.append(AclDeleteResult(ItemError(ErrorCode.INVALID_REQUEST, problem)))
                continue
            matched: list[AclBinding] = []
            for acl_id, acl in sorted(image.acls.by_id.items()):
                binding = AclBinding.of(acl)
                if acl_filter.matches(binding):
                    matched.append(binding)
                    removed.setdefault(acl_id, RemoveAccessControlEntryRecord(acl_id))
            results.append(AclDeleteResult(OK, tuple(matched)))
        if removed:
            log.info("deleting %d ACLs", len(removed))
        return ControllerResult(tuple(removed.values()), results)

    def describe_acls(
        self, image: MetadataImage, acl_filter: AclBindingFilter
    ) -> tuple[AclBinding, ...]:
        """The ACLs ``acl_filter`` matches, by id; INVALID_REQUEST for an unknown filter."""
        problem = acl_filter.problem()
        if problem is not None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, problem)
        return tuple(
            binding
            for _, acl in sorted(image.acls.by_id.items())
            if acl_filter.matches(binding := AclBinding.of(acl))
        )
