"""DescribeClientQuotas (key 48, versions 0-1) and AlterClientQuotas (key 49, versions 0-1),
over the API layer.

The API layer authorizes, validates and writes; here each wire entity (a list of type and
nullable name) becomes a :class:`~raftmeta.common.quotas.ClientQuotaEntity` and back.
DescribeClientQuotas is answered by any controller, as Kafka's brokers answer it from their
own image: the active one after its pending records commit, a standby from its committed
image. A malformed filter is the response's error code (entries null); a failure of the whole
AlterClientQuotas lands on every entry.
"""

from __future__ import annotations

from typing import Any

from raftmeta.common.quotas import (
    AlterClientQuotasRequest,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilter,
    DescribedQuotas,
    QuotaFilterComponent,
    QuotaOp,
)
from raftmeta.errors import KafkaError
from raftmeta.server.kafka.context import Fields, KafkaContext, active_or_here, error_fields


def _entity_fields(entity: ClientQuotaEntity) -> list[Fields]:
    return [{"entity_type": kind, "entity_name": name} for kind, name in entity.parts]


def _entity_of(parts: Any) -> ClientQuotaEntity:
    return ClientQuotaEntity.of((part.entity_type, part.entity_name) for part in parts or ())


async def _described(context: KafkaContext, quota_filter: ClientQuotaFilter) -> DescribedQuotas:
    return await active_or_here(
        lambda: context.apis.describe_client_quotas(context.principal, quota_filter),
        lambda: context.apis.describe_client_quotas_here(context.principal, quota_filter),
    )


async def describe_client_quotas(context: KafkaContext, request: Any, version: int) -> Fields:
    quota_filter = ClientQuotaFilter(
        tuple(
            QuotaFilterComponent(part.entity_type, part.match_type, part.match)
            for part in request.components or ()
        ),
        bool(request.strict),
    )
    try:
        described = await _described(context, quota_filter)
    except KafkaError as error:
        code, message = error_fields(error)
        return {
            "throttle_time_ms": 0,
            "error_code": code,
            "error_message": message,
            "entries": None,
        }
    return {
        "throttle_time_ms": 0,
        "error_code": 0,
        "error_message": None,
        "entries": [
            {
                "entity": _entity_fields(entity),
                "values": [{"key": key, "value": value} for key, value in sorted(values.items())],
            }
            for entity, values in described.items()
        ],
    }


async def alter_client_quotas(context: KafkaContext, request: Any, version: int) -> Fields:
    entries = list(request.entries or ())
    wanted = AlterClientQuotasRequest(
        tuple(
            ClientQuotaAlteration(
                _entity_of(entry.entity),
                tuple(QuotaOp(op.key, op.value, bool(op.remove)) for op in entry.ops or ()),
            )
            for entry in entries
        ),
        bool(request.validate_only),
    )
    try:
        results = await context.apis.alter_client_quotas(context.principal, wanted)
    except KafkaError as error:
        code, message = error_fields(error)
        return alter_client_quotas_failed(request, version, code, message)
    return {
        "throttle_time_ms": 0,
        "entries": [
            {
                "error_code": int(result.error.code),
                "error_message": None
                if result.error.ok
                else (result.error.message or result.error.code.name),
                "entity": [
                    {"entity_type": part.entity_type, "entity_name": part.entity_name}
                    for part in entry.entity or ()
                ],
            }
            for result, entry in zip(results, entries, strict=True)
        ],
    }


def alter_client_quotas_failed(
    request: Any, version: int, code: int, message: str | None
) -> Fields:
    """Kafka's error response: ``code`` on every entry, each naming its entity as asked."""
    return {
        "throttle_time_ms": 0,
        "entries": [
            {
                "error_code": code,
                "error_message": message,
                "entity": [
                    {"entity_type": part.entity_type, "entity_name": part.entity_name}
                    for part in entry.entity or ()
                ],
            }
            for entry in request.entries or ()
        ],
    }
