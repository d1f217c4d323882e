"""Client quotas (Kafka's ClientQuotasImage): each quota entity's keys and values, and the
effective quotas of a client in Kafka's order of precedence."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Set
from types import MappingProxyType
from typing import TypeAlias

from raftmeta.image.errors import ReplayError
from raftmeta.records import ClientQuotaRecord, QuotaEntityData, QuotaEntityType

QuotaEntity: TypeAlias = tuple[tuple[str, str | None], ...]
"""A quota entity: (entity type, name) pairs sorted by type; a ``None`` name is the type's
default entity. ``(("client-id", None), ("user", "alice"))`` is alice with any client id that
has no quota of its own."""

USER = QuotaEntityType.USER.value
CLIENT_ID = QuotaEntityType.CLIENT_ID.value
IP = QuotaEntityType.IP.value


def quota_entity(parts: Iterable[tuple[str, str | None]]) -> QuotaEntity:
    """``parts`` as a :data:`QuotaEntity` (sorted by type, whatever order they came in)."""
    return tuple(sorted(parts, key=lambda part: part[0]))


def entity_of(record: ClientQuotaRecord) -> QuotaEntity:
    return quota_entity((part.entity_type, part.entity_name) for part in record.entity)


def entity_order(entity: QuotaEntity) -> tuple[tuple[str, bool, str], ...]:
    """A sort key for entities (a default name, ``None``, sorts before every named one)."""
    return tuple((kind, name is not None, name or "") for kind, name in entity)


def client_precedence(user: str, client_id: str) -> tuple[QuotaEntity, ...]:
    """The entities whose quotas apply to ``user`` connecting as ``client_id``, most specific
    first: Kafka's eight levels, each quota key taken from the first that sets it."""
    return (
        ((CLIENT_ID, client_id), (USER, user)),
        ((CLIENT_ID, None), (USER, user)),
        ((USER, user),),
        ((CLIENT_ID, client_id), (USER, None)),
        ((CLIENT_ID, None), (USER, None)),
        ((USER, None),),
        ((CLIENT_ID, client_id),),
        ((CLIENT_ID, None),),
    )


def ip_precedence(ip: str) -> tuple[QuotaEntity, ...]:
    """The entities whose quotas apply to connections from ``ip``: its own, then the default."""
    return (((IP, ip),), ((IP, None),))


class ClientQuotasImage:
    """Quota values by entity; an entity with no key left is dropped, so two parts with equal
    quotas are equal."""

    __slots__ = ("_quotas",)

    def __init__(self) -> None:
        self._quotas: dict[QuotaEntity, dict[str, float]] = {}

    def copy(self) -> ClientQuotasImage:
        other = ClientQuotasImage()
        other._quotas = {entity: dict(values) for entity, values in self._quotas.items()}
        return other

    def replay_client_quota(self, record: ClientQuotaRecord) -> None:
        if not record.entity:
            raise ReplayError("client quota record with an empty entity")
        entity = entity_of(record)
        if len({kind for kind, _ in entity}) != len(entity):
            raise ReplayError(f"client quota entity {entity} names a type twice")
        values = self._quotas.get(entity)
        if record.remove:
            if values is not None:
                values.pop(record.key, None)
                if not values:
                    del self._quotas[entity]
        elif values is None:
            self._quotas[entity] = {record.key: float(record.value)}
        else:
            values[record.key] = float(record.value)

    def quotas(self, entity: QuotaEntity) -> Mapping[str, float]:
        values = self._quotas.get(entity)
        return MappingProxyType({} if values is None else values)

    @property
    def entities(self) -> Set[QuotaEntity]:
        return self._quotas.keys()

    def matching(
        self, exact: Mapping[str, str | None], specified: Set[str], strict: bool
    ) -> Iterator[tuple[QuotaEntity, Mapping[str, float]]]:
        """The entities a DescribeClientQuotas filter matches, in entity order: each type in
        ``exact`` with that name (``None``: the default entity), each type in ``specified``
        with any name (the default included); with ``strict``, no other type."""
        for entity in sorted(self._quotas, key=entity_order):
            names = dict(entity)
            if strict and len(names) != len(exact) + len(specified):
                continue
            if any(kind not in names or names[kind] != name for kind, name in exact.items()):
                continue
            if any(kind not in names for kind in specified):
                continue
            yield entity, MappingProxyType(self._quotas[entity])

    def effective(self, precedence: Iterable[QuotaEntity]) -> dict[str, float]:
        """Each quota key from the first entity of ``precedence`` that sets it; a key no
        entity sets is absent (no limit)."""
        effective: dict[str, float] = {}
        for entity in precedence:
            for key, value in self._quotas.get(entity, {}).items():
                effective.setdefault(key, value)
        return effective

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClientQuotasImage):
            return NotImplemented
        return self._quotas == other._quotas

    __hash__ = None  # type: ignore[assignment]


def client_quota_records(
    entity: QuotaEntity, quotas: Mapping[str, float]
) -> Iterator[ClientQuotaRecord]:
    """``quotas`` of one entity as records, by key (the snapshot's canonical order)."""
    parts = tuple(QuotaEntityData(kind, name) for kind, name in entity)
    for key in sorted(quotas):
        yield ClientQuotaRecord(parts, key, quotas[key])
