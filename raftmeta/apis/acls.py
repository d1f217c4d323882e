"""CreateAcls, DescribeAcls and DeleteAcls, for either wire (Kafka's ``AclApis``).

As in Kafka, Create and Delete need ALTER on the cluster and Describe needs DESCRIBE; with no
authorizer configured there is nothing to enforce ACLs, so each answers SECURITY_DISABLED
instead of storing rules nobody reads. Creations and deletions answer once their records
commit; Describe reads the committed image after this controller's own pending records commit,
so a client sees its own changes. A standby answers Describe from its own committed image
(``describe_acls_here``), as a Kafka client bootstrapped to any controller asks it there.
"""

from __future__ import annotations

from raftmeta.apis.base import ApisBase
from raftmeta.apis.retries import remembered, timeout_of
from raftmeta.auth import Operation
from raftmeta.common.acls import (
    AclBinding,
    AclBindingFilter,
    AclDeleteResult,
    CreateAclsRequest,
    DeleteAclsRequest,
)
from raftmeta.common.items import ItemError
from raftmeta.controller import QuorumController
from raftmeta.errors import ErrorCode, KafkaError

NO_AUTHORIZER = "No Authorizer is configured."


class AclApis(ApisBase):
    def _require_authorizer(self) -> None:
        if self.host.access.authorizer is None:
            raise KafkaError(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)

    async def create_acls(self, principal: str, request: CreateAclsRequest) -> list[ItemError]:
        """One outcome per binding, in request order."""

        async def body(controller: QuorumController) -> list[ItemError]:
            self.require_cluster(principal, Operation.ALTER)
            self._require_authorizer()
            if not request.bindings:
                return []
            return await remembered(
                request.request_id,
                "CreateAcls",
                lambda tag: controller.create_acls(
                    request.bindings, timeout_ms=timeout_of(request.timeout_ms), request=tag
                ),
                self.kept,
            )

        return await self.on_active(body)

    async def describe_acls(
        self, principal: str, acl_filter: AclBindingFilter, timeout_ms: int = 0
    ) -> tuple[AclBinding, ...]:
        async def body(controller: QuorumController) -> tuple[AclBinding, ...]:
            self._check_describe(principal, acl_filter)
            await controller.sync(timeout_ms=timeout_of(timeout_ms))
            return await controller.describe_acls(acl_filter)

        return await self.on_active(body)

    async def describe_acls_here(
        self, principal: str, acl_filter: AclBindingFilter
    ) -> tuple[AclBinding, ...] | None:
        """DescribeAcls from this controller's committed image, active or not (a standby
        answering a Kafka client bootstrapped to it, as Kafka's controllers answer it from
        their own authorizer); None before the controller runs. Without the active
        controller's sync, so it may trail it by the commits in flight."""
        controller = self.host.maybe_controller
        if controller is None:
            return None
        try:
            self._check_describe(principal, acl_filter)
            return await controller.describe_acls(acl_filter)
        except Exception as error:
            raise self.failure(error) from error

    def _check_describe(self, principal: str, acl_filter: AclBindingFilter) -> None:
        self.require_cluster(principal, Operation.DESCRIBE)
        self._require_authorizer()
        problem = acl_filter.problem()
        if problem is not None:
            # Refused before waiting on anything, as an unreadable filter would be.
            raise KafkaError(ErrorCode.INVALID_REQUEST, problem)

    async def delete_acls(
        self, principal: str, request: DeleteAclsRequest
    ) -> list[AclDeleteResult]:
        """One outcome per filter, in request order."""

        async def body(controller: QuorumController) -> list[AclDeleteResult]:
            self.require_cluster(principal, Operation.ALTER)
            self._require_authorizer()
            if not request.filters:
                return []
            return await remembered(
                request.request_id,
                "DeleteAcls",
                lambda tag: controller.delete_acls(
                    request.filters, timeout_ms=timeout_of(request.timeout_ms), request=tag
                ),
                self.kept,
            )

        return await self.on_active(body)
