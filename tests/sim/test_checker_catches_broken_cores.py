"""The checker can fail: for each invariant, a core with one planted bug is caught.

Each case searches a small range of seeds for a run in which the simulator reports that very
invariant; a checker that cannot see the bug would search in vain and the test would fail.
"""

from __future__ import annotations

import pytest

from raftmeta.sim import invariants as inv
from raftmeta.sim.cluster import CoreFactory, Simulation
from raftmeta.sim.faults import FaultPlan, Heal, IsolateLeader, LoseTail, Pause, Reconfigure
from raftmeta.sim.hostile import HostilePlan
from raftmeta.sim.invariants import InvariantViolation
from tests.sim import broken_cores as broken

CASES: list[tuple[str, CoreFactory]] = [
    (inv.ONE_LEADER_PER_EPOCH, broken.SelfElectingCore),
    (inv.EPOCH_NEVER_DECREASES, broken.EpochRegressingCore),
    (inv.VOTE_ONCE_PER_EPOCH, broken.EagerVoterCore),
    (inv.HW_NEVER_DECREASES, broken.ForgetfulFollowerCore),
    (inv.HW_HELD_BY_MAJORITY, broken.AckBeforeFsyncCore),
    (inv.LEADER_COMMITS_OWN_EPOCH, broken.OldEpochCommitCore),
    (inv.COMMITTED_PREFIX_AGREES, broken.EpochBlindLeaderCore),
    (inv.SNAPSHOT_AT_LOG_START, broken.OverCompactingCore),
    (inv.LEADER_NEVER_LOADS_SNAPSHOT, broken.SnapshotReloadingLeaderCore),
    (inv.ACKED_EXACTLY_ONCE_IN_ORDER, broken.DoubleAppendCore),
    (inv.LIVENESS, broken.NeverCampaignsCore),
    (inv.NO_NODE_STOPS, broken.AssertingCore),
    (inv.PERSISTED_IN_RANGE, broken.UncheckedCore),
    (inv.MAJORITIES_OVERLAP, broken.TwoChangesAtOnceCore),
    (inv.CHANGE_AFTER_OWN_COMMIT, broken.EarlyChangeCore),
    (inv.COMMITTED_PREFIX_AGREES, broken.UnabstainingCore),
    (inv.LEADER_HOLDS_COMMITTED, broken.EagerAnnouncingCore),
]
SEED_BUDGET = 60
ISOLATED_LEADER_REJOINS = FaultPlan(
    ((1000, IsolateLeader()), (3000, Heal())), snapshot_every_batches=1_000_000
)
"""Random plans rarely leave a diverged tail that no snapshot covers; this one always does."""
TWO_ADDS_AT_ONCE = FaultPlan(
    ((1000, Reconfigure("add", 0)), (1000, Reconfigure("add", 1))), spare_controllers=2
)
"""An operator asks for two voters at the same moment: one must wait for the other."""
CHANGE_THEN_LEADER_LOST = FaultPlan(
    ((1000, IsolateLeader()), (1000, Reconfigure("add", 0)), (1000, Reconfigure("remove", 0))),
    spare_controllers=2,
)
"""The leader is cut off and then adds a voter, which only it holds; a removal then waits for
whoever leads next. The next leader must commit its own epoch before it takes the removal:
until then the cut-off leader's addition could still commit (the single-server-change bug)."""
LOST_TAIL = FaultPlan(
    ((500, Pause(3, 1000)), (1200, LoseTail(1000, 20)), (1200, IsolateLeader()), (3500, Heal())),
    snapshot_every_batches=1_000_000,
)
"""Node 3 falls behind; the other follower, holding commits node 3 lacks, loses its log to a
repair, and the leader is cut off: a voter that votes at once after its repair elects node 3,
which lacks those commits, and the old leader must then truncate them."""
TARGETED_PLANS: dict[CoreFactory, FaultPlan] = {
    broken.UnabstainingCore: LOST_TAIL,
    broken.EpochBlindLeaderCore: ISOLATED_LEADER_REJOINS,
    broken.TwoChangesAtOnceCore: TWO_ADDS_AT_ONCE,
    broken.EarlyChangeCore: CHANGE_THEN_LEADER_LOST,
}
UNDER_ATTACK: dict[CoreFactory, HostilePlan] = {
    broken.AssertingCore: HostilePlan(),
    broken.UncheckedCore: HostilePlan(),
}
"""Bugs in the handling of forged messages show only when someone forges them."""


@pytest.mark.parametrize("plan", [TWO_ADDS_AT_ONCE, CHANGE_THEN_LEADER_LOST])
def test_the_real_core_holds_under_the_membership_plans(plan: FaultPlan) -> None:
    changes = 0
    for seed in range(12):
        changes += Simulation(seed, plan=plan).run().voter_changes
    assert changes >= 12, "the operator's changes went through"


def test_the_real_core_keeps_commits_when_a_voter_loses_its_tail() -> None:
    for seed in range(20):
        Simulation(seed, plan=LOST_TAIL).run()


@pytest.mark.parametrize(("invariant", "core_factory"), CASES, ids=[c.__name__ for _, c in CASES])
def test_simulator_catches_planted_bug(invariant: str, core_factory: CoreFactory) -> None:
    seen: dict[str, int] = {}
    for seed in range(SEED_BUDGET):
        try:
            plan = TARGETED_PLANS.get(core_factory)
            hostile = UNDER_ATTACK.get(core_factory)
            Simulation(seed, core_factory=core_factory, plan=plan, hostile=hostile).run()
        except InvariantViolation as violation:
            seen[violation.invariant] = seen.get(violation.invariant, 0) + 1
            if violation.invariant == invariant:
                return
    pytest.fail(f"{core_factory.__name__} never broke {invariant!r}; saw {seen}")


def test_every_invariant_has_a_planted_bug() -> None:
    declared = {
        value for name, value in vars(inv).items() if name.isupper() and isinstance(value, str)
    }
    assert declared == {invariant for invariant, _ in CASES}
