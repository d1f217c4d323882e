"""The node's leadership log: one INFO line per change of the leader a node knows of, and why."""

from __future__ import annotations

import logging

from raftmeta.raft.core import RaftCore
from raftmeta.raft.roles import Follower, Prospective, Resigned, Role

log = logging.getLogger("raftmeta.quorum.node")
"""The node's own log: operators and tests follow leadership changes under the node's name."""


class LeadershipLog:
    """Logs at INFO, once each, every change of the leader this node knows of, and why.

    The core is looked at after every input it takes; a change is a new (leader, epoch) pair,
    or this node resigning. Why is read off what the node saw before: a leader it followed
    that had resigned (EndQuorumEpoch) makes the next leader a handover.
    """

    __slots__ = ("_handing_over", "_known", "_last", "_node_id", "_resumed")

    def __init__(self, node_id: int) -> None:
        self._node_id = node_id
        self._last: tuple[int | None, int, bool] | None = None
        self._handing_over = False
        self._known: tuple[int, int] | None = None
        """The last (leader, epoch) this node knew of."""
        self._resumed = False
        """The last line was the one for resuming from disk: a leader of that same epoch was
        elected before the restart, not under this node's eyes."""

    def observe(self, core: RaftCore) -> None:
        state = core.state
        resigned = isinstance(state, Resigned)
        current = (core.leader_id, core.epoch, resigned)
        last = self._last
        if isinstance(state, Follower | Prospective) and state.leader_resigned:
            self._handing_over = True
        if current == last:
            return
        self._last = current
        leader, epoch, _ = current
        if last is None:
            reason = "resumed from disk"
        elif resigned:
            if isinstance(state, Resigned) and state.preferred_successors:
                successors = ", ".join(str(v) for v in state.preferred_successors)
                reason = f"resigned, handing over to {successors}"
                self._handing_over = True
            else:
                reason = "resigned"
        elif leader is None:
            electing = core.role in (Role.PROSPECTIVE, Role.CANDIDATE)
            reason = "no leader known: election under way" if electing else "no leader known"
        elif (leader, epoch) == self._known:
            reason = "unchanged after a pre-vote round that did not win"
        elif epoch == last[1] and last[0] is None and self._resumed and not self._handing_over:
            reason = "learned of the leader of this epoch"
        elif self._handing_over:
            reason = "handover"
        else:
            reason = "elected"
        self._resumed = last is None
        if leader is not None:
            self._handing_over = False
            self._known = (leader, epoch)
        log.info(
            "node %d: leader is now %s in epoch %d (%s)",
            self._node_id,
            "nobody" if leader is None else f"node {leader}",
            epoch,
            reason,
        )
