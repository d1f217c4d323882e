"""Forged requests at the last epoch but one must not end the quorum's ability to elect.

Epochs are int32 and persisted: a node that took in 2^31 - 2 from a forged Vote or
BeginQuorumEpoch could hold only one more election, and once that was spent no node could
ever campaign again, restarts included. The core refuses a request that would move it more
than ``RaftConfig.max_epoch_leap`` epochs ahead, and learns larger jumps only from answers to
its own requests. These schedules run the forgeries over an unauthenticated transport through
ordinary crashes and partitions; the same schedules with the leap unbounded show the checker
catches a core without the defence.
"""

from __future__ import annotations

import dataclasses

from raftmeta.raft.config import RaftConfig
from raftmeta.raft.limits import EPOCH_LIMIT
from raftmeta.sim.cluster import Simulation
from raftmeta.sim.hostile import EPOCH_EXHAUSTION_KINDS, NEAR_LIMIT_EPOCH, HostilePlan
from raftmeta.sim.invariants import InvariantViolation

PLAN = HostilePlan(impostor=True, impostor_kinds=EPOCH_EXHAUSTION_KINDS)
SEEDS = range(6)


def test_near_limit_forgeries_neither_stop_nor_exhaust_a_quorum() -> None:
    for seed in SEEDS:
        simulation = Simulation(seed, hostile=PLAN)
        try:
            result = simulation.run()
        except InvariantViolation as violation:
            raise AssertionError(
                f"{violation}\nseed={seed}\nlast events:\n{simulation.format_trace()[-4000:]}"
            ) from violation
        assert result.rejected > 50, "the forged epochs were refused"
        assert result.liveness_ms is not None, f"seed {seed}: no commit after the faults"
        assert result.acknowledged > 0
        epochs = [node.core.epoch for node in simulation.nodes.values() if node.core is not None]
        assert epochs and max(epochs) < NEAR_LIMIT_EPOCH, epochs


def test_without_the_leap_bound_the_checker_sees_the_quorum_exhausted() -> None:
    """The planted core: the same schedules with any leap allowed end without a leader."""
    caught = 0
    for seed in SEEDS:
        base = Simulation(seed, hostile=PLAN).config
        unbounded = dataclasses.replace(base, max_epoch_leap=EPOCH_LIMIT)
        simulation = Simulation(seed, hostile=PLAN, config=unbounded)
        try:
            result = simulation.run()
        except InvariantViolation:
            caught += 1
            continue
        if result.liveness_ms is None:
            caught += 1
    assert caught > 0, "no schedule showed a quorum exhausted by a forged epoch"


def test_the_leap_bound_must_allow_the_next_epoch() -> None:
    try:
        RaftConfig(max_epoch_leap=0)
    except ValueError as error:
        assert "epoch leap" in str(error)
    else:
        raise AssertionError("a leap of 0 was accepted")
