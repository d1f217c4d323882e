"""The Admin service's ACL calls: CreateAcls, DescribeAcls, DeleteAcls, over the API layer.

A mixin the Admin servicer inherits, so the three calls are served by the same ``Admin``
gRPC service as the rest. What they mean (ALTER / DESCRIBE on the cluster, SECURITY_DISABLED
without an authorizer) is :mod:`raftmeta.apis.acls`'; a failure of the whole call lands on
every creation and every filter too, as Kafka's error responses put it.
"""

from __future__ import annotations

from typing import Any

from raftmeta.common.acls import CreateAclsRequest, DeleteAclsRequest
from raftmeta.errors import KafkaError
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server import convert
from raftmeta.server.service_base import ServiceBase


class AclMethods(ServiceBase):
    """CreateAcls, DescribeAcls and DeleteAcls of the ``Admin`` service."""

    async def CreateAcls(
        self, request: apb.CreateAclsRequest, context: Any
    ) -> apb.CreateAclsResponse:
        creations = CreateAclsRequest(
            tuple(convert.binding_from_pb(creation) for creation in request.creations),
            request.timeout_ms,
            request.request_id,
        )
        try:
            results = await self.apis.create_acls(self.principal(context), creations)
        except KafkaError as error:
            header = convert.failure_header(error)
            each = apb.AclCreationResult(
                error_code=header.error_code, error_message=header.error_message
            )
            return apb.CreateAclsResponse(header=header, results=[each for _ in request.creations])
        return apb.CreateAclsResponse(
            header=convert.OK_HEADER,
            results=[convert.acl_creation_to_pb(result) for result in results],
        )

    async def DescribeAcls(
        self, request: apb.DescribeAclsRequest, context: Any
    ) -> apb.DescribeAclsResponse:
        try:
            found = await self.apis.describe_acls(
                self.principal(context), convert.filter_from_pb(request.filter), request.timeout_ms
            )
        except KafkaError as error:
            return apb.DescribeAclsResponse(header=convert.failure_header(error))
        return apb.DescribeAclsResponse(
            header=convert.OK_HEADER, acls=[convert.binding_to_pb(binding) for binding in found]
        )

    async def DeleteAcls(
        self, request: apb.DeleteAclsRequest, context: Any
    ) -> apb.DeleteAclsResponse:
        deletions = DeleteAclsRequest(
            tuple(convert.filter_from_pb(item) for item in request.filters),
            request.timeout_ms,
            request.request_id,
        )
        try:
            results = await self.apis.delete_acls(self.principal(context), deletions)
        except KafkaError as error:
            header = convert.failure_header(error)
            each = apb.DeleteAclsFilterResult(
                error_code=header.error_code, error_message=header.error_message
            )
            return apb.DeleteAclsResponse(
                header=header, filter_results=[each for _ in request.filters]
            )
        return apb.DeleteAclsResponse(
            header=convert.OK_HEADER,
            filter_results=[convert.acl_deletion_to_pb(result) for result in results],
        )
