"""The ACLs of an image (Kafka's AclsImage): each ACL by id, and indexed by resource pattern for
the authorizer."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TypeAlias

from raftmeta.image.errors import ReplayError
from raftmeta.records import (
    AccessControlEntryRecord,
    AclOperation,
    AclPatternType,
    AclPermissionType,
    AclResourceType,
    RemoveAccessControlEntryRecord,
    Uuid,
    uuid_to_str,
)

AclResourceKey: TypeAlias = tuple[int, int, str]
"""(:class:`AclResourceType` id, :class:`AclPatternType` id, resource name) of an ACL."""

AclBindingKey: TypeAlias = tuple[int, str, int, str, str, int, int]
"""An ACL's fields without its id: two ACLs with equal keys grant or deny the same thing."""

WILDCARD_RESOURCE = "*"
"""A LITERAL resource name matching every resource of its type, as in Kafka."""

_ACL_RESOURCE_TYPES = frozenset(int(kind) for kind in AclResourceType if kind > AclResourceType.ANY)
_ACL_PATTERN_TYPES = frozenset((int(AclPatternType.LITERAL), int(AclPatternType.PREFIXED)))
_ACL_OPERATIONS = frozenset(int(op) for op in AclOperation if op > AclOperation.ANY)
_ACL_PERMISSIONS = frozenset((int(AclPermissionType.DENY), int(AclPermissionType.ALLOW)))


def acl_binding_key(acl: AccessControlEntryRecord) -> AclBindingKey:
    return (
        acl.resource_type,
        acl.resource_name,
        acl.pattern_type,
        acl.principal,
        acl.host,
        acl.operation,
        acl.permission_type,
    )


def acl_problem(acl: AccessControlEntryRecord) -> str | None:
    """Why ``acl`` cannot be an ACL (a filter-only or unknown enum value, an empty name), or
    ``None``. Replay refuses such a record; the controller never writes one."""
    if acl.resource_type not in _ACL_RESOURCE_TYPES:
        return f"Invalid resourceType {acl.resource_type}"
    if acl.pattern_type not in _ACL_PATTERN_TYPES:
        return f"Invalid patternType {acl.pattern_type}"
    if acl.operation not in _ACL_OPERATIONS:
        return f"Invalid operation {acl.operation}"
    if acl.permission_type not in _ACL_PERMISSIONS:
        return f"Invalid permissionType {acl.permission_type}"
    if not acl.resource_name:
        return "Resource name should not be empty"
    return None


class AclIndex:
    """The ACLs of an image, by id and by resource pattern.

    The authorizer asks, for one resource, every ACL that could apply: the LITERAL ACLs on its
    name and on ``*``, and the PREFIXED ACLs on each prefix of its name. Each is a dict lookup,
    so a check costs the length of the name, never a scan of every ACL.
    """

    __slots__ = ("_by_id", "_by_key", "_by_resource")

    def __init__(self) -> None:
        self._by_id: dict[Uuid, AccessControlEntryRecord] = {}
        self._by_key: dict[AclBindingKey, Uuid] = {}
        self._by_resource: dict[AclResourceKey, dict[Uuid, AccessControlEntryRecord]] = {}

    def copy(self) -> AclIndex:
        other = AclIndex()
        other._by_id = dict(self._by_id)
        other._by_key = dict(self._by_key)
        other._by_resource = {key: dict(acls) for key, acls in self._by_resource.items()}
        return other

    def add(self, acl: AccessControlEntryRecord) -> None:
        problem = acl_problem(acl)
        if problem is not None:
            raise ReplayError(f"AccessControlEntryRecord {uuid_to_str(acl.acl_id)}: {problem}")
        if acl.acl_id in self._by_id:
            raise ReplayError(f"an ACL with id {uuid_to_str(acl.acl_id)} already exists")
        key = acl_binding_key(acl)
        if key in self._by_key:
            raise ReplayError(
                f"ACL {uuid_to_str(acl.acl_id)} repeats ACL {uuid_to_str(self._by_key[key])}"
            )
        self._by_id[acl.acl_id] = acl
        self._by_key[key] = acl.acl_id
        resource = (acl.resource_type, acl.pattern_type, acl.resource_name)
        self._by_resource.setdefault(resource, {})[acl.acl_id] = acl

    def remove(self, acl_id: Uuid) -> None:
        acl = self._by_id.pop(acl_id, None)
        if acl is None:
            raise ReplayError(f"no ACL with id {uuid_to_str(acl_id)}")
        del self._by_key[acl_binding_key(acl)]
        resource = (acl.resource_type, acl.pattern_type, acl.resource_name)
        same = self._by_resource[resource]
        del same[acl_id]
        if not same:
            del self._by_resource[resource]

    def replay_remove(self, record: RemoveAccessControlEntryRecord) -> None:
        """Replays a RemoveAccessControlEntryRecord: the record names the ACL by id alone."""
        self.remove(record.acl_id)

    @property
    def by_id(self) -> Mapping[Uuid, AccessControlEntryRecord]:
        return MappingProxyType(self._by_id)

    def find(self, acl: AccessControlEntryRecord) -> Uuid | None:
        """The id of an ACL equal to ``acl`` but for its id, if there is one."""
        return self._by_key.get(acl_binding_key(acl))

    def applicable(self, resource_type: int, name: str) -> Iterator[AccessControlEntryRecord]:
        """Every ACL whose resource pattern matches resource ``name`` of ``resource_type``."""
        by_resource = self._by_resource
        if not by_resource:
            return
        literal = int(AclPatternType.LITERAL)
        names = (name,) if name == WILDCARD_RESOURCE else (name, WILDCARD_RESOURCE)
        for literal_name in names:
            found = by_resource.get((resource_type, literal, literal_name))
            if found:
                yield from found.values()
        prefixed = int(AclPatternType.PREFIXED)
        for end in range(1, len(name) + 1):
            found = by_resource.get((resource_type, prefixed, name[:end]))
            if found:
                yield from found.values()

    def __len__(self) -> int:
        return len(self._by_id)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AclIndex):
            return NotImplemented
        return self._by_id == other._by_id

    __hash__ = None  # type: ignore[assignment]
