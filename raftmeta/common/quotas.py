"""Client quotas as values: entities, alterations, describe filters, and Kafka's checks of them.

An entity names up to two parts, each an entity type (``user``, ``client-id`` or ``ip``) with
a name, or ``None`` for that type's default entity; the allowed shapes are a user, a client
id, a user with a client id, or an ip alone. Each type takes its own quota keys with a value
type (whole numbers for the byte and connection rates). The checks below answer with Kafka's
error codes and messages, so the controller, the API layer and the tools agree on them.
"""

from __future__ import annotations

import enum
import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from raftmeta.common.configs import ConfigType
from raftmeta.common.items import ItemError
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.records import QuotaEntityType

USER = QuotaEntityType.USER.value
CLIENT_ID = QuotaEntityType.CLIENT_ID.value
IP = QuotaEntityType.IP.value
ENTITY_TYPES = (USER, CLIENT_ID, IP)

PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"

CLIENT_QUOTA_KEYS: Mapping[str, ConfigType] = {
    PRODUCER_BYTE_RATE: ConfigType.LONG,
    CONSUMER_BYTE_RATE: ConfigType.LONG,
    REQUEST_PERCENTAGE: ConfigType.DOUBLE,
    CONTROLLER_MUTATION_RATE: ConfigType.DOUBLE,
}
"""The keys of a user, client-id or user and client-id entity, with their value types."""

IP_QUOTA_KEYS: Mapping[str, ConfigType] = {CONNECTION_CREATION_RATE: ConfigType.INT}
"""The keys of an ip entity."""

_INTEGRAL_LIMITS = {ConfigType.INT: ("an INT", 2**31 - 1), ConfigType.LONG: ("a LONG", 2**63 - 1)}
_FRACTION_TOLERANCE = 1e-6


class QuotaMatchType(enum.IntEnum):
    """How a DescribeClientQuotas filter component matches an entity's part (Kafka's ids)."""

    EXACT = 0
    """The part has exactly the given name."""
    DEFAULT = 1
    """The part is the type's default entity."""
    SPECIFIED = 2
    """The entity has a part of this type, whatever its name (the default included)."""


@dataclass(frozen=True, slots=True)
class ClientQuotaEntity:
    """A quota entity: (entity type, name) pairs in type order; a ``None`` name is the default
    entity of its type. Hashable, so results are keyed by it. Build it with :meth:`of`."""

    parts: tuple[tuple[str, str | None], ...]

    @classmethod
    def of(
        cls, parts: Mapping[str, str | None] | Iterable[tuple[str, str | None]]
    ) -> ClientQuotaEntity:
        items = parts.items() if isinstance(parts, Mapping) else parts
        return cls(tuple(sorted(items, key=lambda part: part[0])))

    def as_dict(self) -> dict[str, str | None]:
        return dict(self.parts)

    def __str__(self) -> str:
        shown = ", ".join(
            f"{kind}={'<default>' if name is None else name}" for kind, name in self.parts
        )
        return f"ClientQuotaEntity({shown})"


@dataclass(frozen=True, slots=True)
class QuotaOp:
    """Set ``key`` to ``value``, or with ``remove`` delete it (the value is then ignored)."""

    key: str
    value: float = 0.0
    remove: bool = False


@dataclass(frozen=True, slots=True)
class ClientQuotaAlteration:
    entity: ClientQuotaEntity
    ops: tuple[QuotaOp, ...]


@dataclass(frozen=True, slots=True)
class AlterClientQuotasRequest:
    entries: tuple[ClientQuotaAlteration, ...]
    validate_only: bool = False
    timeout_ms: int = 0
    request_id: bytes = b""


@dataclass(frozen=True, slots=True)
class AlterClientQuotaResult:
    entity: ClientQuotaEntity
    error: ItemError


@dataclass(frozen=True, slots=True)
class QuotaFilterComponent:
    """One component of a DescribeClientQuotas filter; ``match_type`` stays an int until
    checked (an unknown one is the request's UNSUPPORTED_VERSION)."""

    entity_type: str
    match_type: int
    match: str | None = None


@dataclass(frozen=True, slots=True)
class ClientQuotaFilter:
    components: tuple[QuotaFilterComponent, ...] = ()
    strict: bool = False


@dataclass(frozen=True, slots=True)
class QuotaFilterMatch:
    """A checked filter: the types matched by name (``None``: the default entity), those
    matched whatever their name, and whether no other type may appear."""

    exact: Mapping[str, str | None]
    specified: frozenset[str]
    strict: bool


DescribedQuotas = dict[ClientQuotaEntity, dict[str, float]]
"""DescribeClientQuotas' answer: each matching entity's quota values."""


def _invalid(message: str) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_REQUEST, message)


def entity_error(entity: ClientQuotaEntity) -> ItemError | None:
    """Why ``entity`` cannot hold quotas (INVALID_REQUEST, Kafka's message), or ``None``."""
    if not entity.parts:
        return ItemError(ErrorCode.INVALID_REQUEST, "Invalid empty client quota entity")
    seen: set[str] = set()
    for kind, name in entity.parts:
        if kind in seen:
            return ItemError(
                ErrorCode.INVALID_REQUEST,
                f"Invalid empty client quota entity, duplicate entity entry {kind}",
            )
        seen.add(kind)
        if kind not in ENTITY_TYPES:
            return ItemError(
                ErrorCode.INVALID_REQUEST, f"Unhandled client quota entity type: {kind}"
            )
        if name is not None and not name:
            return ItemError(ErrorCode.INVALID_REQUEST, f"Empty {kind} not supported")
    if IP in seen:
        if len(seen) > 1:
            return ItemError(
                ErrorCode.INVALID_REQUEST,
                "Invalid quota entity combination, IP entity should not be combined with "
                "User or ClientId",
            )
        ip = entity.as_dict()[IP]
        if ip is not None and not is_ip_literal(ip):
            return ItemError(
                ErrorCode.INVALID_REQUEST, f"{ip} is not a valid IP or resolvable host."
            )
    return None


def is_ip_literal(text: str) -> bool:
    """Whether ``text`` is an IPv4 or IPv6 address. Host names are not resolved: a quota
    written to the log must mean the same on every node, whatever its resolver says."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def quota_keys(entity: ClientQuotaEntity) -> Mapping[str, ConfigType]:
    """The keys ``entity`` (already checked) may hold, with their value types."""
    return IP_QUOTA_KEYS if any(kind == IP for kind, _ in entity.parts) else CLIENT_QUOTA_KEYS


def value_error(keys: Mapping[str, ConfigType], key: str, value: float) -> ItemError | None:
    """Why ``value`` cannot be set for ``key``, as Kafka words it, or ``None``."""
    config_type = keys.get(key)
    if config_type is None:
        return ItemError(ErrorCode.INVALID_REQUEST, f"Invalid configuration key {key}")
    if not value > 0.0:
        return ItemError(ErrorCode.INVALID_REQUEST, f"Quota {key} must be greater than 0")
    limit = _INTEGRAL_LIMITS.get(config_type)
    if limit is not None:
        article, largest = limit
        if value > largest:
            return ItemError(
                ErrorCode.INVALID_REQUEST, f"Proposed value for {key} is too large for {article}."
            )
        if abs(value % 1.0) > _FRACTION_TOLERANCE:
            return ItemError(ErrorCode.INVALID_REQUEST, f"{key} cannot be a fractional value.")
    return None


def checked_filter(quota_filter: ClientQuotaFilter) -> QuotaFilterMatch:
    """``quota_filter`` checked as Kafka checks it: INVALID_REQUEST for an empty or repeated
    type, a match string where the match type takes none (or none where it needs one), or ip
    beside user or client-id; UNSUPPORTED_VERSION for an unknown type or match type."""
    exact: dict[str, str | None] = {}
    specified: set[str] = set()
    for component in quota_filter.components:
        kind = component.entity_type
        if not kind:
            raise _invalid("Invalid empty entity type.")
        if kind in exact or kind in specified:
            raise _invalid(f"Entity type {kind} cannot appear more than once in the filter.")
        if kind not in ENTITY_TYPES:
            raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, f"Unsupported entity type {kind}")
        if component.match_type == QuotaMatchType.EXACT:
            if component.match is None:
                raise _invalid("Request specified MATCH_TYPE_EXACT, but set match string to null.")
            exact[kind] = component.match
        elif component.match_type == QuotaMatchType.DEFAULT:
            if component.match is not None:
                raise _invalid(
                    "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."
                )
            exact[kind] = None
        elif component.match_type == QuotaMatchType.SPECIFIED:
            if component.match is not None:
                raise _invalid(
                    "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."
                )
            specified.add(kind)
        else:
            raise KafkaError(
                ErrorCode.UNSUPPORTED_VERSION, f"Unknown match type {component.match_type}"
            )
    named = exact.keys() | specified
    if IP in named and (USER in named or CLIENT_ID in named):
        raise _invalid(
            "Invalid entity filter component combination. IP filter component should not be "
            "used with user or clientId filter component."
        )
    return QuotaFilterMatch(exact, frozenset(specified), quota_filter.strict)
