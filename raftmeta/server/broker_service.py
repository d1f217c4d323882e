"""The gRPC ``BrokerLifecycle`` service of proto/raftmeta/broker.proto, over the controller.

Same conventions as the Admin service, from the same base
(:mod:`raftmeta.server.service_base`): a header first, NOT_CONTROLLER with the controller's id
and endpoint from a node that is not the active controller, Kafka error codes with messages,
never a raw gRPC error. With an authorizer on, every call needs CLUSTER_ACTION on the cluster,
as Kafka's broker-to-controller calls do.
"""

from __future__ import annotations

import logging
from typing import Any

from raftmeta.auth import Operation
from raftmeta.common.brokers import BrokerHeartbeatRequest
from raftmeta.controller import QuorumController
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import broker_pb2 as bpb
from raftmeta.rpc import broker_pb2_grpc as bpb_grpc
from raftmeta.security.principal import (
    NodeRole,
    PeerAuthenticationError,
    context_principal,
    node_identity,
)
from raftmeta.server import convert
from raftmeta.server.service_base import CLUSTER_DENIED, ServiceBase, timeout_of

log = logging.getLogger(__name__)


class BrokerLifecycleService(ServiceBase, bpb_grpc.BrokerLifecycleServicer):
    async def RegisterBroker(
        self, request: bpb.RegisterBrokerRequest, context: Any
    ) -> bpb.RegisterBrokerResponse:
        def fail(header: apb.ResponseHeader) -> bpb.RegisterBrokerResponse:
            return bpb.RegisterBrokerResponse(header=header, broker_epoch=-1)

        async def body(controller: QuorumController, principal: str) -> bpb.RegisterBrokerResponse:
            self.require_broker(context, "RegisterBroker", request.broker_id)
            self.require_cluster(principal, Operation.CLUSTER_ACTION)
            # Node ids are unique across the cluster. controller.quorum.voters is checked by
            # the controller; a dynamic quorum's voters are in the log, known to the node.
            # A combined node's broker fetches nothing and runs under its voter's id.
            if (request.broker_id in self._owner.node.membership.voters.ids) != request.combined:
                raise KafkaError(
                    ErrorCode.INVALID_REGISTRATION,
                    f"Broker id {request.broker_id} is not the id of a voter of the controller "
                    "quorum; a combined node's broker runs under its voter's id."
                    if request.combined
                    else f"Broker id {request.broker_id} is the id of a voter of the controller "
                    "quorum; a broker needs an id that no controller uses.",
                )
            epoch = await controller.register_broker(
                convert.registration_from_pb(request), timeout_ms=timeout_of(request.timeout_ms)
            )
            return bpb.RegisterBrokerResponse(header=convert.OK_HEADER, broker_epoch=epoch)

        return await self.serve(context, fail, body)

    async def BrokerHeartbeat(
        self, request: bpb.BrokerHeartbeatRequest, context: Any
    ) -> bpb.BrokerHeartbeatResponse:
        def fail(header: apb.ResponseHeader) -> bpb.BrokerHeartbeatResponse:
            # A broker that cannot get an answer must assume it is fenced.
            return bpb.BrokerHeartbeatResponse(header=header, is_fenced=True)

        async def body(controller: QuorumController, principal: str) -> bpb.BrokerHeartbeatResponse:
            self.require_broker(context, "BrokerHeartbeat", request.broker_id)
            self.require_cluster(principal, Operation.CLUSTER_ACTION)
            reply = await controller.broker_heartbeat(
                BrokerHeartbeatRequest(
                    request.broker_id,
                    request.broker_epoch,
                    request.current_metadata_offset,
                    request.want_fence,
                    request.want_shut_down,
                )
            )
            return bpb.BrokerHeartbeatResponse(
                header=convert.OK_HEADER,
                is_caught_up=reply.is_caught_up,
                is_fenced=reply.is_fenced,
                should_shut_down=reply.should_shut_down,
            )

        return await self.serve(context, fail, body)

    async def AlterPartition(
        self, request: bpb.AlterPartitionRequest, context: Any
    ) -> bpb.AlterPartitionResponse:
        def fail(header: apb.ResponseHeader) -> bpb.AlterPartitionResponse:
            return bpb.AlterPartitionResponse(header=header)

        async def body(controller: QuorumController, principal: str) -> bpb.AlterPartitionResponse:
            self.require_broker(context, "AlterPartition", request.broker_id)
            self.require_cluster(principal, Operation.CLUSTER_ACTION)
            results = await controller.alter_partition(
                convert.alter_partition_from_pb(request),
                timeout_ms=timeout_of(request.timeout_ms),
            )
            return bpb.AlterPartitionResponse(
                header=convert.OK_HEADER,
                partitions=[convert.alter_partition_result_to_pb(result) for result in results],
            )

        return await self.serve(context, fail, body)

    async def UnregisterBroker(
        self, request: bpb.UnregisterBrokerRequest, context: Any
    ) -> bpb.UnregisterBrokerResponse:
        def fail(header: apb.ResponseHeader) -> bpb.UnregisterBrokerResponse:
            return bpb.UnregisterBrokerResponse(header=header)

        async def body(
            controller: QuorumController, principal: str
        ) -> bpb.UnregisterBrokerResponse:
            self.require_broker(context, "UnregisterBroker", request.broker_id)
            self.require_cluster(principal, Operation.CLUSTER_ACTION)
            await controller.unregister_broker(request.broker_id)
            return bpb.UnregisterBrokerResponse(header=convert.OK_HEADER)

        return await self.serve(context, fail, body)

    async def RegisterController(
        self, request: bpb.RegisterControllerRequest, context: Any
    ) -> bpb.RegisterControllerResponse:
        def fail(header: apb.ResponseHeader) -> bpb.RegisterControllerResponse:
            return bpb.RegisterControllerResponse(header=header)

        async def body(
            controller: QuorumController, principal: str
        ) -> bpb.RegisterControllerResponse:
            self.require_controller(context, request.controller_id)
            self.require_cluster(principal, Operation.CLUSTER_ACTION)
            await controller.register_controller(convert.controller_registration_from_pb(request))
            return bpb.RegisterControllerResponse(header=convert.OK_HEADER)

        return await self.serve(context, fail, body)

    def require_controller(self, context: Any, controller_id: int) -> None:
        """With client certificates required, only ``controller-<id>``'s own certificate may
        register controller ``<id>``."""
        identity_rule = self._owner.identity
        if not identity_rule.enforced:
            return
        try:
            principal = context_principal(context, identity_rule.mapper)
        except PeerAuthenticationError as error:
            reason = str(error)
        else:
            identity = node_identity(principal)
            if identity is None or identity.role is not NodeRole.CONTROLLER:
                reason = f"{principal} is not a controller's certificate"
            elif identity.node_id != controller_id:
                reason = f"the certificate is controller {identity.node_id}'s"
            else:
                return
        log.warning("RegisterController for controller %d refused: %s", controller_id, reason)
        raise KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_DENIED)
