"""AlterClientQuotas and DescribeClientQuotas, for either wire (Kafka's ``ControllerApis``).

As in Kafka, altering needs ALTER_CONFIGS on the cluster and describing DESCRIBE_CONFIGS; a
caller without it is refused as a whole. An entity named twice in one request is refused in
every copy (INVALID_REQUEST), as a config resource named twice is. Alterations answer once
their records commit; Describe reads the committed image after this controller's own pending
records commit, so a client sees its own changes.
"""

from __future__ import annotations

from raftmeta.apis.base import ApisBase
from raftmeta.apis.retries import remembered, timeout_of
from raftmeta.auth import Operation
from raftmeta.common.items import ItemError, duplicated
from raftmeta.common.quotas import (
    AlterClientQuotaResult,
    AlterClientQuotasRequest,
    ClientQuotaFilter,
    DescribedQuotas,
    checked_filter,
)
from raftmeta.controller import QuorumController
from raftmeta.errors import ErrorCode

DUPLICATE_ENTITY = ItemError(ErrorCode.INVALID_REQUEST, "Duplicate entity in the request.")


class QuotaApis(ApisBase):
    async def alter_client_quotas(
        self, principal: str, request: AlterClientQuotasRequest
    ) -> list[AlterClientQuotaResult]:
        """One outcome per entry, in request order."""

        async def body(controller: QuorumController) -> list[AlterClientQuotaResult]:
            self.require_cluster(principal, Operation.ALTER_CONFIGS)
            entities = [entry.entity for entry in request.entries]
            twice = duplicated(entities)
            going_on = [entry for entry in request.entries if entry.entity not in twice]
            outcomes: list[ItemError] = []
            if going_on:
                request_id = b"" if request.validate_only else request.request_id
                outcomes = await remembered(
                    request_id,
                    "AlterClientQuotas",
                    lambda tag: controller.alter_client_quotas(
                        going_on,
                        validate_only=request.validate_only,
                        timeout_ms=timeout_of(request.timeout_ms),
                        request=tag,
                    ),
                    self.kept,
                )
            answered = iter(outcomes)
            return [
                AlterClientQuotaResult(
                    entity, DUPLICATE_ENTITY if entity in twice else next(answered)
                )
                for entity in entities
            ]

        return await self.on_active(body)

    async def describe_client_quotas(
        self, principal: str, quota_filter: ClientQuotaFilter, timeout_ms: int = 0
    ) -> DescribedQuotas:
        """On the active controller, after its pending records commit."""

        async def body(controller: QuorumController) -> DescribedQuotas:
            self.require_cluster(principal, Operation.DESCRIBE_CONFIGS)
            # A malformed filter is refused before waiting on anything.
            checked_filter(quota_filter)
            await controller.sync(timeout_ms=timeout_of(timeout_ms))
            return await controller.describe_client_quotas(quota_filter)

        return await self.on_active(body)

    async def describe_client_quotas_here(
        self, principal: str, quota_filter: ClientQuotaFilter
    ) -> DescribedQuotas | None:
        """DescribeClientQuotas from this controller's committed image, active or not (Kafka
        serves it from any broker's image, so a client sends it to any node); None before the
        controller runs. It may trail the active controller by the commits in flight."""
        controller = self.host.maybe_controller
        if controller is None:
            return None
        try:
            self.require_cluster(principal, Operation.DESCRIBE_CONFIGS)
            return controller.quotas.describe_client_quotas(
                controller.committed_image, quota_filter
            )
        except Exception as error:
            raise self.failure(error) from error
