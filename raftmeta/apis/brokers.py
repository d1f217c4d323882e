"""The broker lifecycle, for the controller's own wire: RegisterBroker, BrokerHeartbeat,
AlterPartition, UnregisterBroker and RegisterController; and UnregisterBroker as an operator
sends it (ALTER on the cluster), for the Kafka listener.

With client certificates required, a call must be made with the certificate of the node it
speaks for (``broker-<id>``, or ``controller-<id>`` for RegisterController and a combined
node's broker): the adapter reads the certificate (a transport's business) and passes its
:class:`NodeProof`; the refusal is written here, once. A node proven by its own certificate
needs nothing more, so a broker holds exactly its own lifecycle calls and no ACL need grant
them. Without client certificates nothing proves the caller a node, and with an authorizer
on every call needs CLUSTER_ACTION on the cluster, as Kafka's broker-to-controller calls do.
"""

from __future__ import annotations

import enum

from raftmeta.apis.base import CLUSTER_DENIED, ApisBase
from raftmeta.apis.retries import timeout_of
from raftmeta.auth import Operation
from raftmeta.common.brokers import (
    AlterPartitionRequest,
    AlterPartitionResult,
    BrokerHeartbeatReply,
    BrokerHeartbeatRequest,
    BrokerRegistrationRequest,
)
from raftmeta.controller import QuorumController
from raftmeta.controller.registration import ControllerRegistrationRequest
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.records import Uuid

UUID_BYTES = 16


def check_uuid(value: Uuid, what: str) -> None:
    if len(value) != UUID_BYTES:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST, f"{what} must be {UUID_BYTES} bytes, got {len(value)}."
        )


class NodeProof(enum.Enum):
    """What the caller's certificate says about the node a lifecycle call speaks for."""

    PROVEN = "proven"
    """Client certificates are required and this one is the node's own."""
    REFUSED = "refused"
    """Client certificates are required and this one is not the node's."""
    UNCHECKED = "unchecked"
    """No client certificates are required: the authorizer decides."""


class BrokerApis(ApisBase):
    def _require_node(self, principal: str, proof: NodeProof) -> None:
        """The node's own certificate, or, without certificates, CLUSTER_ACTION."""
        if proof is NodeProof.REFUSED:
            raise KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_DENIED)
        if proof is NodeProof.UNCHECKED:
            self.require_cluster(principal, Operation.CLUSTER_ACTION)

    async def register_broker(
        self,
        principal: str,
        proof: NodeProof,
        request: BrokerRegistrationRequest,
        timeout_ms: int = 0,
    ) -> int:
        """The new broker epoch."""

        async def body(controller: QuorumController) -> int:
            self._require_node(principal, proof)
            # Node ids are unique across the cluster. controller.quorum.voters is checked by
            # the controller; a dynamic quorum's voters are in the log, known to the node.
            # A combined node's broker fetches nothing and runs under its voter's id.
            if (request.broker_id in self.host.node.membership.voters.ids) != request.combined:
                raise KafkaError(
                    ErrorCode.INVALID_REGISTRATION,
                    f"Broker id {request.broker_id} is not the id of a voter of the controller "
                    "quorum; a combined node's broker runs under its voter's id."
                    if request.combined
                    else f"Broker id {request.broker_id} is the id of a voter of the controller "
                    "quorum; a broker needs an id that no controller uses.",
                )
            check_uuid(request.incarnation_id, "incarnation_id")
            return await controller.register_broker(request, timeout_ms=timeout_of(timeout_ms))

        return await self.on_active(body)

    async def broker_heartbeat(
        self, principal: str, proof: NodeProof, request: BrokerHeartbeatRequest
    ) -> BrokerHeartbeatReply:
        async def body(controller: QuorumController) -> BrokerHeartbeatReply:
            self._require_node(principal, proof)
            return await controller.broker_heartbeat(request)

        return await self.on_active(body)

    async def alter_partition(
        self, principal: str, proof: NodeProof, request: AlterPartitionRequest, timeout_ms: int = 0
    ) -> list[AlterPartitionResult]:
        async def body(controller: QuorumController) -> list[AlterPartitionResult]:
            self._require_node(principal, proof)
            check_uuid(request.topic_id, "topic_id")
            return list(
                await controller.alter_partition(request, timeout_ms=timeout_of(timeout_ms))
            )

        return await self.on_active(body)

    async def unregister_broker(self, principal: str, proof: NodeProof, broker_id: int) -> None:
        async def body(controller: QuorumController) -> None:
            self._require_node(principal, proof)
            await controller.unregister_broker(broker_id)

        await self.on_active(body)

    async def unregister_broker_by_admin(self, principal: str, broker_id: int) -> None:
        """UnregisterBroker from an operator (Kafka's ``Admin.unregisterBroker``, the way a
        dead broker's registration is removed): ALTER on the cluster, whatever the
        certificate. BROKER_ID_NOT_REGISTERED for a broker that is not registered."""

        async def body(controller: QuorumController) -> None:
            self.require_cluster(principal, Operation.ALTER)
            await controller.unregister_broker(broker_id)

        await self.on_active(body)

    async def register_controller(
        self, principal: str, proof: NodeProof, request: ControllerRegistrationRequest
    ) -> None:
        async def body(controller: QuorumController) -> None:
            self._require_node(principal, proof)
            await controller.register_controller(request)

        await self.on_active(body)
