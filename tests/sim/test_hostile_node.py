"""A hostile process forges messages into running quorums: no invariant breaks, no node stops.

The forged traffic (non-member ids, epochs at the int32 limit, negative ids and offsets, claims
on the current epoch under members' ids) runs through the fault phase of ordinary seeded fault
schedules, so crashes, partitions and snapshots happen under attack too.
"""

from __future__ import annotations

from raftmeta.sim.cluster import Simulation
from raftmeta.sim.hostile import HostilePlan
from raftmeta.sim.invariants import InvariantViolation

SEEDS = range(12)


def test_forged_messages_neither_stop_nor_brick_a_quorum() -> None:
    for seed in SEEDS:
        simulation = Simulation(seed, hostile=HostilePlan())
        try:
            result = simulation.run()
        except InvariantViolation as violation:
            raise AssertionError(
                f"{violation}\nseed={seed}\nlast events:\n{simulation.format_trace()[-4000:]}"
            ) from violation
        assert result.rejected > 100, "the forged messages were refused"
        assert result.acknowledged > 0, "and clients kept writing through them"
        assert result.liveness_ms is not None


def test_an_attacked_run_replays_from_its_seed() -> None:
    first = Simulation(3, hostile=HostilePlan())
    second = Simulation(3, hostile=HostilePlan())
    assert first.run() == second.run()
    assert first.format_trace() == second.format_trace()
