"""The checker can fail: for each invariant, a core with one planted bug is caught.

Each case searches a small range of seeds for a run in which the simulator reports that very
invariant; a checker that cannot see the bug would search in vain and the test would fail.
"""

from __future__ import annotations

import pytest

from raftmeta.sim import invariants as inv
from raftmeta.sim.cluster import CoreFactory, Simulation
from raftmeta.sim.faults import FaultPlan, Heal, IsolateLeader
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
]
SEED_BUDGET = 60
ISOLATED_LEADER_REJOINS = FaultPlan(
    ((1000, IsolateLeader()), (3000, Heal())), snapshot_every_batches=1_000_000
)
"""Random plans rarely leave a diverged tail that no snapshot covers; this one always does."""
TARGETED_PLANS: dict[CoreFactory, FaultPlan] = {
    broken.EpochBlindLeaderCore: ISOLATED_LEADER_REJOINS
}
UNDER_ATTACK: dict[CoreFactory, HostilePlan] = {
    broken.AssertingCore: HostilePlan(),
    broken.UncheckedCore: HostilePlan(),
}
"""Bugs in the handling of forged messages show only when someone forges them."""


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
