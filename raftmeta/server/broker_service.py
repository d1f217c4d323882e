"""The gRPC ``BrokerLifecycle`` service of proto/raftmeta/broker.proto, over the API layer.

Same conventions as the Admin service, from the same base
(:mod:`raftmeta.server.service_base`): a header first, NOT_CONTROLLER with the controller's id
and endpoint from a node that is not the active controller, Kafka error codes with messages,
never a raw gRPC error. This adapter reads what only the transport knows, the caller's client
certificate, and tells the API layer whether it speaks for the node the call names
(:class:`~raftmeta.apis.brokers.NodeProof`; :mod:`raftmeta.apis.brokers` refuses it, and
without certificates needs CLUSTER_ACTION on the cluster).
"""

from __future__ import annotations

import logging
from typing import Any

from raftmeta.apis.brokers import NodeProof
from raftmeta.common.brokers import BrokerHeartbeatRequest
from raftmeta.errors import KafkaError
from raftmeta.rpc import broker_pb2 as bpb
from raftmeta.rpc import broker_pb2_grpc as bpb_grpc
from raftmeta.security.principal import (
    NodeRole,
    PeerAuthenticationError,
    context_principal,
    node_identity,
)
from raftmeta.server import convert
from raftmeta.server.service_base import ServiceBase

log = logging.getLogger(__name__)


class BrokerLifecycleService(ServiceBase, bpb_grpc.BrokerLifecycleServicer):
    def broker_certified(self, context: Any, call: str, broker_id: int) -> NodeProof:
        """Whether the call is made with ``broker_id``'s own certificate (or none is needed)."""
        identity_rule = self._owner.identity
        if not identity_rule.enforced:
            return NodeProof.UNCHECKED
        if identity_rule.broker_refusal(context, call, broker_id) is None:
            return NodeProof.PROVEN
        return NodeProof.REFUSED

    async def RegisterBroker(
        self, request: bpb.RegisterBrokerRequest, context: Any
    ) -> bpb.RegisterBrokerResponse:
        try:
            epoch = await self.apis.register_broker(
                self.principal(context),
                self.broker_certified(context, "RegisterBroker", request.broker_id),
                convert.registration_from_pb(request),
                request.timeout_ms,
            )
        except KafkaError as error:
            return bpb.RegisterBrokerResponse(header=convert.failure_header(error), broker_epoch=-1)
        return bpb.RegisterBrokerResponse(header=convert.OK_HEADER, broker_epoch=epoch)

    async def BrokerHeartbeat(
        self, request: bpb.BrokerHeartbeatRequest, context: Any
    ) -> bpb.BrokerHeartbeatResponse:
        try:
            reply = await self.apis.broker_heartbeat(
                self.principal(context),
                self.broker_certified(context, "BrokerHeartbeat", request.broker_id),
                BrokerHeartbeatRequest(
                    request.broker_id,
                    request.broker_epoch,
                    request.current_metadata_offset,
                    request.want_fence,
                    request.want_shut_down,
                ),
            )
        except KafkaError as error:
            # A broker that cannot get an answer must assume it is fenced.
            return bpb.BrokerHeartbeatResponse(header=convert.failure_header(error), is_fenced=True)
        return bpb.BrokerHeartbeatResponse(
            header=convert.OK_HEADER,
            is_caught_up=reply.is_caught_up,
            is_fenced=reply.is_fenced,
            should_shut_down=reply.should_shut_down,
        )

    async def AlterPartition(
        self, request: bpb.AlterPartitionRequest, context: Any
    ) -> bpb.AlterPartitionResponse:
        try:
            results = await self.apis.alter_partition(
                self.principal(context),
                self.broker_certified(context, "AlterPartition", request.broker_id),
                convert.alter_partition_from_pb(request),
                request.timeout_ms,
            )
        except KafkaError as error:
            return bpb.AlterPartitionResponse(header=convert.failure_header(error))
        return bpb.AlterPartitionResponse(
            header=convert.OK_HEADER,
            partitions=[convert.alter_partition_result_to_pb(result) for result in results],
        )

    async def UnregisterBroker(
        self, request: bpb.UnregisterBrokerRequest, context: Any
    ) -> bpb.UnregisterBrokerResponse:
        try:
            await self.apis.unregister_broker(
                self.principal(context),
                self.broker_certified(context, "UnregisterBroker", request.broker_id),
                request.broker_id,
            )
        except KafkaError as error:
            return bpb.UnregisterBrokerResponse(header=convert.failure_header(error))
        return bpb.UnregisterBrokerResponse(header=convert.OK_HEADER)

    async def RegisterController(
        self, request: bpb.RegisterControllerRequest, context: Any
    ) -> bpb.RegisterControllerResponse:
        try:
            await self.apis.register_controller(
                self.principal(context),
                self.controller_certified(context, request.controller_id),
                convert.controller_registration_from_pb(request),
            )
        except KafkaError as error:
            return bpb.RegisterControllerResponse(header=convert.failure_header(error))
        return bpb.RegisterControllerResponse(header=convert.OK_HEADER)

    def controller_certified(self, context: Any, controller_id: int) -> NodeProof:
        """With client certificates required, only ``controller-<id>``'s own certificate may
        register controller ``<id>``."""
        identity_rule = self._owner.identity
        if not identity_rule.enforced:
            return NodeProof.UNCHECKED
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
                return NodeProof.PROVEN
        log.warning("RegisterController for controller %d refused: %s", controller_id, reason)
        return NodeProof.REFUSED
