"""What a voter change must satisfy before the node is asked, whichever door it came through
(the Raft service's gRPC methods, the Kafka listener's AddRaftVoter and RemoveRaftVoter): the
cluster it names, the new voter's endpoints and id, and how long it may wait to commit."""

from __future__ import annotations

from collections.abc import Collection

from raftmeta.raft.voters import Voter

DEFAULT_VOTER_CHANGE_TIMEOUT_MS = 30_000
MAX_VOTER_CHANGE_TIMEOUT_MS = 300_000


def voter_change_timeout_ms(asked: int) -> int:
    """How long a voter change may wait to commit: what the caller asked, within bounds."""
    if asked <= 0:
        return DEFAULT_VOTER_CHANGE_TIMEOUT_MS
    return min(asked, MAX_VOTER_CHANGE_TIMEOUT_MS)


def new_voter_problem(voter: Voter, broker_ids: Collection[int]) -> str | None:
    """Why ``voter`` cannot join the quorum (answered INVALID_REQUEST), or None."""
    if not voter.endpoints:
        return "a new voter must name the endpoint it serves on"
    if voter.node_id in broker_ids:
        # Node ids are unique across the cluster: a broker fetches under its id, so a voter of
        # the same id would be two replicas the quorum cannot tell apart.
        return (
            f"node {voter.node_id} is a registered broker's id; "
            "a controller needs an id no broker uses"
        )
    return None
