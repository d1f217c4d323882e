"""The ``peer_down`` hint in simulated runs: it shortens failover and unseats no live leader.

The simulator tells a node's core that a peer is down when it sends a request to a stopped
node (the OS refuses the connection) and, spuriously, each time a flapping link goes down
(the connection resets while both ends run). The random schedules of ``test_simulator`` see
both; these runs isolate each side of the rule.
"""

from __future__ import annotations

from raftmeta.raft.config import RaftConfig
from raftmeta.raft.core import RaftCore
from raftmeta.sim.cluster import Simulation
from raftmeta.sim.faults import FaultPlan, FlapLeaderLink
from tests.sim.broken_cores import PreVoteSkippingCore

SEEDS = range(4)
CONFIG = RaftConfig()
RESETTING_LINK = FaultPlan(((1000, FlapLeaderLink(80, 4000)),), fault_phase_ms=5000)
"""For four seconds the link between the leader and one follower resets every 80 ms."""
LEADER_KILLED = FaultPlan((), fault_phase_ms=1000, min_run_ms=2000, leader_stays_dead=True)
"""The leader is killed for good after a second; liveness is timed from that moment."""


class HintIgnoringCore(RaftCore):
    """The core before the hint: a follower waits out the fetch timeout."""

    def _leader_unreachable(self, destination: int, now_ms: int) -> None:
        pass


def test_a_link_resetting_between_a_live_leader_and_a_follower_keeps_the_leader() -> None:
    epochs = [Simulation(seed, plan=RESETTING_LINK).run().epochs for seed in SEEDS]
    assert epochs == [1] * len(SEEDS), "a leader lost its epoch to a resetting link"


def test_the_planted_pre_vote_skipping_core_is_caught_unseating_the_leader() -> None:
    epochs = [
        Simulation(seed, plan=RESETTING_LINK, core_factory=PreVoteSkippingCore).run().epochs
        for seed in SEEDS
    ]
    assert all(count > 1 for count in epochs), epochs


def test_followers_of_a_killed_leader_commit_again_well_within_the_fetch_timeout() -> None:
    with_hint = [Simulation(seed, plan=LEADER_KILLED).run().liveness_ms for seed in SEEDS]
    without = [
        Simulation(seed, plan=LEADER_KILLED, core_factory=HintIgnoringCore).run().liveness_ms
        for seed in SEEDS
    ]
    assert all(ms is not None and ms < CONFIG.fetch_timeout_ms for ms in with_hint), with_hint
    assert all(ms is not None and ms >= CONFIG.fetch_timeout_ms for ms in without), without
