"""The Admin service's client quota calls: DescribeClientQuotas and AlterClientQuotas, over
the API layer.

A mixin the Admin servicer inherits, as the ACL calls are. What the calls mean (ALTER_CONFIGS
/ DESCRIBE_CONFIGS on the cluster, Kafka's validation) is :mod:`raftmeta.apis.quotas`'; a
failure of the whole AlterClientQuotas lands on every entry too, as Kafka's error response
puts it.
"""

from __future__ import annotations

from typing import Any

from raftmeta.common.quotas import (
    AlterClientQuotasRequest,
    ClientQuotaAlteration,
    ClientQuotaFilter,
    QuotaFilterComponent,
    QuotaOp,
)
from raftmeta.errors import KafkaError
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server import convert
from raftmeta.server.service_base import ServiceBase


class QuotaMethods(ServiceBase):
    """DescribeClientQuotas and AlterClientQuotas of the ``Admin`` service."""

    async def DescribeClientQuotas(
        self, request: apb.DescribeClientQuotasRequest, context: Any
    ) -> apb.DescribeClientQuotasResponse:
        quota_filter = ClientQuotaFilter(
            tuple(
                QuotaFilterComponent(
                    component.entity_type,
                    component.match_type,
                    component.match if component.HasField("match") else None,
                )
                for component in request.components
            ),
            request.strict,
        )
        try:
            described = await self.apis.describe_client_quotas(
                self.principal(context), quota_filter, request.timeout_ms
            )
        except KafkaError as error:
            return apb.DescribeClientQuotasResponse(header=convert.failure_header(error))
        return apb.DescribeClientQuotasResponse(
            header=convert.OK_HEADER,
            entries=[
                apb.DescribedClientQuota(
                    entity=convert.quota_entity_to_pb(entity),
                    values=[
                        apb.QuotaValue(key=key, value=value)
                        for key, value in sorted(values.items())
                    ],
                )
                for entity, values in described.items()
            ],
        )

    async def AlterClientQuotas(
        self, request: apb.AlterClientQuotasRequest, context: Any
    ) -> apb.AlterClientQuotasResponse:
        alterations = AlterClientQuotasRequest(
            tuple(
                ClientQuotaAlteration(
                    convert.quota_entity_from_pb(entry.entity),
                    tuple(QuotaOp(op.key, op.value, op.remove) for op in entry.ops),
                )
                for entry in request.entries
            ),
            request.validate_only,
            request.timeout_ms,
            request.request_id,
        )
        try:
            results = await self.apis.alter_client_quotas(self.principal(context), alterations)
        except KafkaError as error:
            header = convert.failure_header(error)
            return apb.AlterClientQuotasResponse(
                header=header,
                results=[
                    apb.AlterClientQuotaResult(
                        entity=entry.entity,
                        error_code=header.error_code,
                        error_message=header.error_message,
                    )
                    for entry in request.entries
                ],
            )
        return apb.AlterClientQuotasResponse(
            header=convert.OK_HEADER,
            results=[
                apb.AlterClientQuotaResult(
                    entity=convert.quota_entity_to_pb(result.entity),
                    error_code=int(result.error.code),
                    error_message=convert.item_message(result.error),
                )
                for result in results
            ],
        )
