"""The Admin service's ACL calls: CreateAcls, DescribeAcls, DeleteAcls (Kafka's ``AclApis``).

A mixin the Admin servicer inherits, so the three calls are served by the same ``Admin``
gRPC service as the rest, with the same NOT_CONTROLLER, authentication and error handling
(:class:`~raftmeta.server.service_base.ServiceBase`). As in Kafka, Create and Delete need ALTER
on the cluster and Describe needs DESCRIBE; with no authorizer configured there is nothing to
enforce ACLs, so each answers SECURITY_DISABLED instead of storing rules nobody reads.
Creations and deletions answer once their records commit; Describe reads the committed image
after this controller's own pending records commit, so a client sees its own changes.
"""

from __future__ import annotations

import logging
from typing import Any

from raftmeta.auth import Operation
from raftmeta.common.acls import AclBinding, AclBindingFilter, AclDeleteResult
from raftmeta.controller import QuorumController
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server import convert
from raftmeta.server.service_base import ServiceBase, remembered, timeout_of

log = logging.getLogger(__name__)

NO_AUTHORIZER = "No Authorizer is configured."


def binding_from_pb(message: apb.AclBinding) -> AclBinding:
    return AclBinding(
        message.resource_type,
        message.resource_name,
        message.pattern_type,
        message.principal,
        message.host,
        message.operation,
        message.permission_type,
    )


def binding_to_pb(binding: AclBinding) -> apb.AclBinding:
    return apb.AclBinding(
        resource_type=binding.resource_type,
        resource_name=binding.resource_name,
        pattern_type=binding.pattern_type,
        principal=binding.principal,
        host=binding.host,
        operation=binding.operation,
        permission_type=binding.permission_type,
    )


def filter_from_pb(message: apb.AclBindingFilter) -> AclBindingFilter:
    return AclBindingFilter(
        message.resource_type,
        message.resource_name if message.HasField("resource_name") else None,
        message.pattern_type,
        message.principal if message.HasField("principal") else None,
        message.host if message.HasField("host") else None,
        message.operation,
        message.permission_type,
    )


def _delete_result_to_pb(result: AclDeleteResult) -> apb.DeleteAclsFilterResult:
    return apb.DeleteAclsFilterResult(
        error_code=int(result.error.code),
        error_message=result.error.message or "",
        matching_acls=[
            apb.DeleteAclsMatchingAcl(acl=binding_to_pb(binding)) for binding in result.deleted
        ],
    )


class AclMethods(ServiceBase):
    """CreateAcls, DescribeAcls and DeleteAcls of the ``Admin`` service."""

    def _require_authorizer(self) -> None:
        if self._owner.access.authorizer is None:
            raise KafkaError(ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)

    async def CreateAcls(
        self, request: apb.CreateAclsRequest, context: Any
    ) -> apb.CreateAclsResponse:
        def fail(header: apb.ResponseHeader) -> apb.CreateAclsResponse:
            each = apb.AclCreationResult(
                error_code=header.error_code, error_message=header.error_message
            )
            return apb.CreateAclsResponse(header=header, results=[each for _ in request.creations])

        async def body(controller: QuorumController, principal: str) -> apb.CreateAclsResponse:
            self.require_cluster(principal, Operation.ALTER)
            self._require_authorizer()
            bindings = [binding_from_pb(creation) for creation in request.creations]
            if not bindings:
                return apb.CreateAclsResponse(header=convert.OK_HEADER)
            reply: apb.CreateAclsResponse = await remembered(
                request.request_id,
                "CreateAcls",
                lambda tag: controller.create_acls(
                    bindings, timeout_ms=timeout_of(request.timeout_ms), request=tag
                ),
                lambda results: apb.CreateAclsResponse(
                    results=[
                        apb.AclCreationResult(
                            error_code=int(result.code), error_message=result.message or ""
                        )
                        for result in results
                    ]
                ),
                apb.CreateAclsResponse.FromString,
            )
            reply.header.CopyFrom(convert.OK_HEADER)
            return reply

        return await self.serve(context, fail, body)

    async def DescribeAcls(
        self, request: apb.DescribeAclsRequest, context: Any
    ) -> apb.DescribeAclsResponse:
        def fail(header: apb.ResponseHeader) -> apb.DescribeAclsResponse:
            return apb.DescribeAclsResponse(header=header)

        async def body(controller: QuorumController, principal: str) -> apb.DescribeAclsResponse:
            self.require_cluster(principal, Operation.DESCRIBE)
            self._require_authorizer()
            acl_filter = filter_from_pb(request.filter)
            if acl_filter.problem() is not None:
                # Refused before waiting on anything, as an unreadable filter would be.
                raise KafkaError(ErrorCode.INVALID_REQUEST, acl_filter.problem() or "")
            await controller.sync(timeout_ms=timeout_of(request.timeout_ms))
            found = await controller.describe_acls(acl_filter)
            return apb.DescribeAclsResponse(
                header=convert.OK_HEADER,
                acls=[binding_to_pb(binding) for binding in found],
            )

        return await self.serve(context, fail, body)

    async def DeleteAcls(
        self, request: apb.DeleteAclsRequest, context: Any
    ) -> apb.DeleteAclsResponse:
        def fail(header: apb.ResponseHeader) -> apb.DeleteAclsResponse:
            each = apb.DeleteAclsFilterResult(
                error_code=header.error_code, error_message=header.error_message
            )
            return apb.DeleteAclsResponse(
                header=header, filter_results=[each for _ in request.filters]
            )

        async def body(controller: QuorumController, principal: str) -> apb.DeleteAclsResponse:
            self.require_cluster(principal, Operation.ALTER)
            self._require_authorizer()
            filters = [filter_from_pb(item) for item in request.filters]
            if not filters:
                return apb.DeleteAclsResponse(header=convert.OK_HEADER)
            reply: apb.DeleteAclsResponse = await remembered(
                request.request_id,
                "DeleteAcls",
                lambda tag: controller.delete_acls(
                    filters, timeout_ms=timeout_of(request.timeout_ms), request=tag
                ),
                lambda results: apb.DeleteAclsResponse(
                    filter_results=[_delete_result_to_pb(result) for result in results]
                ),
                apb.DeleteAclsResponse.FromString,
            )
            reply.header.CopyFrom(convert.OK_HEADER)
            return reply

        return await self.serve(context, fail, body)
