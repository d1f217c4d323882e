"""The ranges every epoch, node id and offset must fall in, as Kafka's wire types allow.

Kafka sends epochs and node ids as int32 and offsets as int64. An epoch must also leave room
for one more election: a node that accepted 2^31 - 1 could never build its next vote request,
and since the epoch is persisted, no restart would bring the quorum back. So the last epoch any
node accepts, persists or campaigns in is ``EPOCH_LIMIT - 1``.
"""

from __future__ import annotations

from raftmeta.raft.state import ElectionState

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
EPOCH_LIMIT = INT32_MAX
"""No epoch reaches this: it is refused in messages, in the quorum-state file and in
elections."""
MAX_NODE_ID = INT32_MAX
MAX_OFFSET = INT64_MAX


def epoch_in_range(epoch: int) -> bool:
    return 0 <= epoch < EPOCH_LIMIT


def node_id_in_range(node_id: int) -> bool:
    return 0 <= node_id <= MAX_NODE_ID


def offset_in_range(offset: int) -> bool:
    return 0 <= offset <= MAX_OFFSET


def election_state_problem(state: ElectionState) -> str | None:
    """Why ``state`` may not be persisted, or None when it may."""
    if not epoch_in_range(state.epoch):
        return f"epoch {state.epoch} is outside 0..{EPOCH_LIMIT - 1}"
    for name, node in (("voted id", state.voted_id), ("leader id", state.leader_id)):
        if node is not None and not node_id_in_range(node):
            return f"{name} {node} is outside 0..{MAX_NODE_ID}"
    return None
