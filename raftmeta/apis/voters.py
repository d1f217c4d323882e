"""AddRaftVoter and RemoveRaftVoter for the Kafka listener (Kafka's keys 80 and 81), over the
same node calls, checks and authorization as the Raft service's gRPC methods.

A voter change needs ALTER on the CLUSTER, decided by the node's access exactly as the gRPC
methods decide it (:meth:`raftmeta.auth.AccessControl.may_change_voters`), before anything
about the cluster is told: CLUSTER_AUTHORIZATION_FAILED otherwise. A request naming another
cluster gets INCONSISTENT_CLUSTER_ID (a null cluster id is not checked, as in Kafka); a new
voter without an endpoint, or with a registered broker's id, INVALID_REQUEST. The node then
answers with Kafka's codes (NOT_LEADER_OR_FOLLOWER on a node that does not lead,
DUPLICATE_VOTER, VOTER_NOT_FOUND, REQUEST_TIMED_OUT while another change is pending, ...),
once the change has committed.
"""

from __future__ import annotations

from raftmeta.apis.base import CLUSTER_DENIED, ApisBase
from raftmeta.auth import Operation
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.quorum.voter_changes import new_voter_problem, voter_change_timeout_ms
from raftmeta.raft.voter_change import VoterChangeResult
from raftmeta.raft.voters import ReplicaKey, Voter


class VoterApis(ApisBase):
    def _check(self, principal: str, cluster_id: str | None) -> None:
        if not self.host.access.may_change_voters(principal, Operation.ALTER.value):
            raise KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_DENIED)
        own = self.host.node.cluster_id
        if cluster_id is not None and cluster_id != own:
            raise KafkaError(
                ErrorCode.INCONSISTENT_CLUSTER_ID, f"this node belongs to cluster {own}"
            )

    async def add_raft_voter(
        self, principal: str, cluster_id: str | None, voter: Voter, timeout_ms: int
    ) -> VoterChangeResult:
        self._check(principal, cluster_id)
        controller = self.host.maybe_controller
        brokers = () if controller is None else controller.committed_image.brokers.keys()
        problem = new_voter_problem(voter, brokers)
        if problem is not None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, problem)
        return await self.host.node.add_voter(voter, voter_change_timeout_ms(timeout_ms))

    async def remove_raft_voter(
        self, principal: str, cluster_id: str | None, key: ReplicaKey
    ) -> VoterChangeResult:
        self._check(principal, cluster_id)
        return await self.host.node.remove_voter(key, voter_change_timeout_ms(0))
