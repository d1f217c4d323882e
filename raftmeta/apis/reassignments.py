"""AlterPartitionReassignments and ListPartitionReassignments (KIP-455), for either wire.

Moving replicas needs ALTER on the cluster and listing the moves DESCRIBE on it, as Kafka's
``ControllerApis`` asks; a refused caller fails the whole request
(CLUSTER_AUTHORIZATION_FAILED). A move is a write kept for retries by request id; a listing
reads the committed image.
"""

from __future__ import annotations

from raftmeta.apis.base import ApisBase
from raftmeta.apis.retries import remembered, timeout_of
from raftmeta.auth import Operation
from raftmeta.common.elections import TopicPartition
from raftmeta.common.reassignments import (
    AlterPartitionReassignmentsRequest,
    ListPartitionReassignmentsRequest,
    PartitionReassignment,
    ReassignmentResult,
)
from raftmeta.controller import QuorumController


class ReassignmentApis(ApisBase):
    async def alter_partition_reassignments(
        self, principal: str, request: AlterPartitionReassignmentsRequest
    ) -> list[ReassignmentResult]:
        """One result per partition, in request order, once the changes commit."""

        async def body(controller: QuorumController) -> list[ReassignmentResult]:
            self.require_cluster(principal, Operation.ALTER)
            if not request.targets:
                return []
            return await remembered(
                request.request_id,
                "AlterPartitionReassignments",
                lambda tag: controller.alter_partition_reassignments(
                    request.targets,
                    allow_replication_factor_change=request.allow_replication_factor_change,
                    timeout_ms=timeout_of(request.timeout_ms),
                    request=tag,
                ),
                self.kept,
            )

        return await self.on_active(body)

    async def list_partition_reassignments(
        self, principal: str, request: ListPartitionReassignmentsRequest
    ) -> dict[TopicPartition, PartitionReassignment]:
        """The moves under way among the named partitions (all of them for None)."""

        async def body(controller: QuorumController) -> dict[TopicPartition, PartitionReassignment]:
            self.require_cluster(principal, Operation.DESCRIBE)
            return await controller.list_partition_reassignments(
                request.partitions, timeout_ms=timeout_of(request.timeout_ms)
            )

        return await self.on_active(body)
