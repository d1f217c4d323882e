"""The operator of the simulated quorum: voter changes from the fault plan, retried while the
leader refuses them for now, and the replacement of voters whose disks were wiped."""

from __future__ import annotations

from raftmeta.errors import ErrorCode
from raftmeta.raft.core import RaftCore
from raftmeta.raft.roles import Role
from raftmeta.raft.voter_change import VoterChangeResult
from raftmeta.raft.voters import Voter
from raftmeta.sim.engine import RECONFIGURE, REPAIR, SimulationEngine
from raftmeta.sim.faults import Reconfigure
from raftmeta.sim.model import SimNode

REPAIR_EVERY_US = 100_000
"""How often the operator looks for voters to replace, in a plan that wipes disks."""


class SimulationOperator(SimulationEngine):
    """What an operator does to the quorum, as requests to whichever node leads."""

    def _serving_leader(self) -> SimNode | None:
        """The leader of the highest epoch an operator's request would reach."""
        leaders = [
            n
            for n in self.nodes.values()
            if n.core is not None and n.core.role is Role.LEADER and not self._paused(n)
        ]
        return max(leaders, key=lambda n: n.core.epoch if n.core else -1, default=None)

    def _reconfigure(self, change: Reconfigure, attempts: int) -> None:
        """One try at a voter change; retried while the leader answers REQUEST_TIMED_OUT (not
        caught up, a change pending, its epoch not committed) or there is no leader."""
        leader = self._serving_leader()
        result: VoterChangeResult | None = None
        if leader is not None:
            core = leader.core
            assert core is not None
            if change.kind == "add":
                spares = [
                    self.nodes[i]
                    for i in self.controller_ids
                    if i not in core.voters and self.nodes[i].core is not None
                ]
                if not spares:
                    return
                spare = spares[change.pick % len(spares)]
                result = core.add_voter(Voter(spare.key), self.now_ms)
            else:
                if len(core.voters) <= 2:
                    return  # two voters left: one more fault stops it until healed
                if not self._all_voters_healthy(core):
                    result = None  # as an operator would: mend the quorum before shrinking it
                else:
                    ids = sorted(core.voters)
                    key = core.voter_set.key_of(ids[change.pick % len(ids)])
                    assert key is not None
                    result = core.remove_voter(key, self.now_ms)
            self.trace.append((self.now_us, "reconfigure", (change, result)))
            if result is not None and result.error is ErrorCode.NONE:
                self.voter_changes += 1
                self._drive(leader)
                return
        retry = result is None or result.error in (
            ErrorCode.REQUEST_TIMED_OUT,
            ErrorCode.NOT_LEADER_OR_FOLLOWER,
        )
        if retry and attempts > 0:
            self._next_ticket += 1
            self._waiting_changes[self._next_ticket] = (change, attempts - 1)
            delay = self.rng.randint(5_000, 30_000)
            self._push(self.now_us + delay, RECONFIGURE, self._next_ticket)

    def _all_voters_healthy(self, core: RaftCore) -> bool:
        """Every voter runs on the directory it is a voter with (none is down or wiped)."""
        return all(
            self.nodes[v.node_id].core is not None and self.nodes[v.node_id].key == v.key
            for v in core.voter_set
        )

    def _retry_changes_now(self) -> None:
        waiting = sorted(self._waiting_changes.items())
        self._waiting_changes.clear()
        for _, (change, attempts) in waiting:
            self._reconfigure(change, attempts)

    def _repair(self) -> None:
        """The operator replaces voters whose disks were wiped: remove the old (id,
        directory), then add the node back with its new directory once it has caught up."""
        self._push(self.now_us + REPAIR_EVERY_US, REPAIR)
        leader = self._serving_leader()
        if leader is None:
            return
        core = leader.core
        assert core is not None
        for voter in core.voter_set:
            node = self.nodes[voter.node_id]
            if node.key != voter.key and node.core is not None:
                result = core.remove_voter(voter.key, self.now_ms)
                self.trace.append((self.now_us, "replace", (voter.key, result)))
                if result.error is ErrorCode.NONE:
                    self.voter_changes += 1
                    self._readd.add(voter.node_id)
                    self._drive(leader)
                return
        for node_id in sorted(self._readd):
            node = self.nodes[node_id]
            if node_id in core.voters or node.core is None:
                continue
            result = core.add_voter(Voter(node.key), self.now_ms)
            self.trace.append((self.now_us, "re-add", (node.key, result)))
            if result.error is ErrorCode.NONE:
                self.voter_changes += 1
                self._readd.discard(node_id)
                self._drive(leader)
            return
