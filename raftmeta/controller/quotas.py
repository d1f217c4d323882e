"""AlterClientQuotas and DescribeClientQuotas against the image: Kafka's
``ClientQuotaControlManager``.

An alteration is checked whole before anything is written for its entity: the entity's shape
(:func:`~raftmeta.common.quotas.entity_error`), a key named twice, and every value set
(:func:`~raftmeta.common.quotas.value_error`). A refused entity writes nothing and answers
INVALID_REQUEST with Kafka's message; the request's other entities go on. Only a change is
written: setting a key to the value it holds, or removing one that is not set, writes no
record and succeeds.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence

from raftmeta.common.items import OK, ItemError
from raftmeta.common.quotas import (
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilter,
    DescribedQuotas,
    checked_filter,
    entity_error,
    quota_keys,
    value_error,
)
from raftmeta.controller.result import ControllerResult
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage, quota_entity
from raftmeta.records import ClientQuotaRecord, QuotaEntityData

log = logging.getLogger(__name__)


def quota_records(
    image: MetadataImage, alteration: ClientQuotaAlteration
) -> tuple[ClientQuotaRecord, ...] | ItemError:
    """The records of one alteration, or why it is refused."""
    entity = alteration.entity
    problem = entity_error(entity)
    if problem is not None:
        return problem
    keys = [op.key for op in alteration.ops]
    twice = next((key for index, key in enumerate(keys) if key in keys[:index]), None)
    if twice is not None:
        return ItemError(
            ErrorCode.INVALID_REQUEST,
            f"Duplicate quota key {twice} not updating quota for this entity {entity}",
        )
    allowed = quota_keys(entity)
    current = image.quotas_of(quota_entity(entity.parts))
    parts = tuple(QuotaEntityData(kind, name) for kind, name in entity.parts)
    records: list[ClientQuotaRecord] = []
    for op in alteration.ops:
        if op.remove:
            if op.key in current:
                records.append(ClientQuotaRecord(parts, op.key, 0.0, remove=True))
            continue
        problem = value_error(allowed, op.key, op.value)
        if problem is not None:
            return problem
        if current.get(op.key) != op.value:
            records.append(ClientQuotaRecord(parts, op.key, float(op.value)))
    return tuple(records)


class ClientQuotaControlManager:
    """The quota policy of the controller; holds nothing, reads the image it is handed."""

    def alter_client_quotas(
        self,
        image: MetadataImage,
        alterations: Sequence[ClientQuotaAlteration],
        validate_only: bool,
    ) -> Iterator[ControllerResult[ItemError]]:
        """One result per alteration; the queue applies each one's records before the next
        is checked."""
        for alteration in alterations:
            outcome = quota_records(image, alteration)
            if isinstance(outcome, ItemError):
                log.info("AlterClientQuotas refused %s: %s", alteration.entity, outcome.message)
                yield ControllerResult((), outcome)
                continue
            yield ControllerResult(() if validate_only else outcome, OK)

    def describe_client_quotas(
        self, image: MetadataImage, quota_filter: ClientQuotaFilter
    ) -> DescribedQuotas:
        """The entities ``quota_filter`` matches with their values; the filter's KafkaError
        (INVALID_REQUEST, UNSUPPORTED_VERSION) when it is malformed."""
        match = checked_filter(quota_filter)
        return {
            ClientQuotaEntity(entity): dict(values)
            for entity, values in image.client_quotas.matching(
                match.exact, match.specified, match.strict
            )
        }
