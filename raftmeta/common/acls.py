"""ACL bindings and filters as CreateAcls, DescribeAcls and DeleteAcls carry them.

Shaped as Kafka's ``AclBinding`` (a resource pattern and an access-control entry) and
``AclBindingFilter``. Enum fields hold Kafka's ids (the IntEnums of :mod:`raftmeta.records`),
so a value from the wire travels unchanged to the record; the controller, not this module,
refuses the ones an ACL may not hold.

A filter matches as Kafka's does: ``ANY`` (or ``None`` for a name, principal or host) matches
everything; pattern type ``MATCH`` with a name matches the LITERAL ACLs on that name and on
``*`` and the PREFIXED ACLs on any prefix of it, i.e. every ACL that applies to that resource.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from raftmeta.common.items import OK, ItemError
from raftmeta.records import (
    AclOperation,
    AclPatternType,
    AclPermissionType,
    AclResourceType,
)

WILDCARD = "*"
"""A LITERAL resource name, or a principal's name (``User:*``), that matches any."""

_ANY = 1
_KNOWN_RESOURCE_TYPES = frozenset(int(kind) for kind in AclResourceType) - {0}
_KNOWN_PATTERN_TYPES = frozenset(int(kind) for kind in AclPatternType) - {0}
_KNOWN_OPERATIONS = frozenset(int(op) for op in AclOperation) - {0}
_KNOWN_PERMISSIONS = frozenset(int(kind) for kind in AclPermissionType) - {0}


def enum_text(enum_type: type[AclResourceType | AclPatternType | AclOperation], value: int) -> str:
    """Kafka's name for ``value`` (``TOPIC``), or the number when it names nothing."""
    try:
        return enum_type(value).name
    except ValueError:
        return str(value)


def permission_text(value: int) -> str:
    try:
        return AclPermissionType(value).name
    except ValueError:
        return str(value)


class AclFields(Protocol):
    """Anything that carries one ACL's seven fields under Kafka's names: an
    ``AccessControlEntryRecord``, or a DeleteAcls answer's matching ACL."""

    @property
    def resource_type(self) -> int: ...
    @property
    def resource_name(self) -> str: ...
    @property
    def pattern_type(self) -> int: ...
    @property
    def principal(self) -> str: ...
    @property
    def host(self) -> str: ...
    @property
    def operation(self) -> int: ...
    @property
    def permission_type(self) -> int: ...


@dataclass(frozen=True, slots=True)
class AclBinding:
    """One ACL: ``permission_type`` for ``principal`` from ``host`` to ``operation`` on the
    resources ``(resource_type, pattern_type, resource_name)`` names."""

    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission_type: int

    @classmethod
    def of(cls, acl: AclFields) -> AclBinding:
        """The binding ``acl`` holds, whatever carried it."""
        return cls(
            acl.resource_type,
            acl.resource_name,
            acl.pattern_type,
            acl.principal,
            acl.host,
            acl.operation,
            acl.permission_type,
        )

    def __str__(self) -> str:
        resource_type = enum_text(AclResourceType, self.resource_type)
        return (
            f"(pattern=ResourcePattern(resourceType={resource_type}"
            f", name={self.resource_name}, patternType="
            f"{enum_text(AclPatternType, self.pattern_type)}), entry=(principal={self.principal}"
            f", host={self.host}, operation={enum_text(AclOperation, self.operation)}, "
            f"permissionType={permission_text(self.permission_type)}))"
        )


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    """Which ACLs DescribeAcls returns and DeleteAcls removes; the defaults match any."""

    resource_type: int = _ANY
    resource_name: str | None = None
    pattern_type: int = _ANY
    principal: str | None = None
    host: str | None = None
    operation: int = _ANY
    permission_type: int = _ANY

    def problem(self) -> str | None:
        """Kafka's refusal of a filter holding UNKNOWN (or a value no enum knows), or ``None``."""
        if (
            self.resource_type not in _KNOWN_RESOURCE_TYPES
            or self.pattern_type not in _KNOWN_PATTERN_TYPES
        ):
            return "Unknown patternFilter."
        if (
            self.operation not in _KNOWN_OPERATIONS
            or self.permission_type not in _KNOWN_PERMISSIONS
        ):
            return "Unknown entryFilter."
        return None

    def matches(self, acl: AclBinding) -> bool:
        return self._matches_pattern(acl) and self._matches_entry(acl)

    def _matches_pattern(self, acl: AclBinding) -> bool:
        if self.resource_type != _ANY and self.resource_type != acl.resource_type:
            return False
        pattern = self.pattern_type
        if pattern not in (_ANY, AclPatternType.MATCH) and pattern != acl.pattern_type:
            return False
        name = self.resource_name
        if name is None:
            return True
        if pattern == _ANY or pattern == acl.pattern_type:
            return name == acl.resource_name
        # MATCH: every ACL that would apply to the resource ``name``.
        if acl.pattern_type == AclPatternType.LITERAL:
            return acl.resource_name in (name, WILDCARD)
        return name.startswith(acl.resource_name)

    def _matches_entry(self, acl: AclBinding) -> bool:
        return (
            (self.principal is None or self.principal == acl.principal)
            and (self.host is None or self.host == acl.host)
            and (self.operation == _ANY or self.operation == acl.operation)
            and (self.permission_type == _ANY or self.permission_type == acl.permission_type)
        )


@dataclass(frozen=True, slots=True)
class AclDeleteResult:
    """One DeleteAcls filter's outcome: an error, or the ACLs it matched and removed."""

    error: ItemError = OK
    deleted: tuple[AclBinding, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class CreateAclsRequest:
    bindings: tuple[AclBinding, ...]
    timeout_ms: int = 0
    request_id: bytes = b""


@dataclass(frozen=True, slots=True)
class DeleteAclsRequest:
    filters: tuple[AclBindingFilter, ...]
    timeout_ms: int = 0
    request_id: bytes = b""
