"""ElectLeaders, for either wire: ALTER on the cluster, the election type read once.

The wire's election type is read here, by :meth:`ElectionType.from_request`, and nowhere
else: an unknown one is a top-level INVALID_REQUEST. A request naming no partition (an
empty list, not a missing one) is answered at once with no results.
"""

from __future__ import annotations

from raftmeta.apis.base import ApisBase
from raftmeta.apis.retries import remembered, timeout_of
from raftmeta.auth import Operation
from raftmeta.common.elections import ElectionType, ElectLeadersRequest, TopicResults
from raftmeta.controller import QuorumController


class ElectionApis(ApisBase):
    async def elect_leaders(
        self, principal: str, request: ElectLeadersRequest
    ) -> list[TopicResults]:
        """Per partition, grouped by topic; raises (as a whole) for a refused caller, an
        unknown election type or a node that is not the active controller."""

        async def body(controller: QuorumController) -> list[TopicResults]:
            self.require_cluster(principal, Operation.ALTER)
            election_type = ElectionType.from_request(request.election_type)
            partitions = request.partitions
            if partitions is not None and not partitions:
                return []
            return await remembered(
                request.request_id,
                "ElectLeaders",
                lambda tag: controller.elect_leaders(
                    election_type,
                    partitions,
                    timeout_ms=timeout_of(request.timeout_ms),
                    request=tag,
                ),
                self.kept,
            )

        return await self.on_active(body)
