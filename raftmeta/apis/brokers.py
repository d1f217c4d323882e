"""The broker lifecycle, for the controller's own wire: RegisterBroker, BrokerHeartbeat,
AlterPartition, UnregisterBroker and RegisterController.

With an authorizer on, every call needs CLUSTER_ACTION on the cluster, as Kafka's
broker-to-controller calls do. With client certificates required, a call must also be made
with the certificate of the node it speaks for: the adapter reads the certificate (a
transport's business) and passes ``certified``; the refusal is written here, once.
"""

from __future__ import annotations

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


class BrokerApis(ApisBase):
    def _require_node(self, principal: str, certified: bool) -> None:
        """The certificate must speak for the node, and the caller hold CLUSTER_ACTION."""
        if not certified:
            raise KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_DENIED)
        self.require_cluster(principal, Operation.CLUSTER_ACTION)

    async def register_broker(
        self,
        principal: str,
        certified: bool,
        request: BrokerRegistrationRequest,
        timeout_ms: int = 0,
    ) -> int:
        """The new broker epoch."""

        async def body(controller: QuorumController) -> int:
            self._require_node(principal, certified)
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
        self, principal: str, certified: bool, request: BrokerHeartbeatRequest
    ) -> BrokerHeartbeatReply:
        async def body(controller: QuorumController) -> BrokerHeartbeatReply:
            self._require_node(principal, certified)
            return await controller.broker_heartbeat(request)

        return await self.on_active(body)

    async def alter_partition(
        self, principal: str, certified: bool, request: AlterPartitionRequest, timeout_ms: int = 0
    ) -> list[AlterPartitionResult]:
        async def body(controller: QuorumController) -> list[AlterPartitionResult]:
            self._require_node(principal, certified)
            check_uuid(request.topic_id, "topic_id")
            return list(
                await controller.alter_partition(request, timeout_ms=timeout_of(timeout_ms))
            )

        return await self.on_active(body)

    async def unregister_broker(self, principal: str, certified: bool, broker_id: int) -> None:
        async def body(controller: QuorumController) -> None:
            self._require_node(principal, certified)
            await controller.unregister_broker(broker_id)

        await self.on_active(body)

    async def register_controller(
        self, principal: str, certified: bool, request: ControllerRegistrationRequest
    ) -> None:
        async def body(controller: QuorumController) -> None:
            self._require_node(principal, certified)
            await controller.register_controller(request)

        await self.on_active(body)
