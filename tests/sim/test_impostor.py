"""An impostor speaks in members' names; the authenticated transport keeps it out.

The impostor forges well-formed, in-range messages of every kind under members' ids (votes,
BeginQuorumEpoch/EndQuorumEpoch, fetches, fetch answers with records, snapshot chunks). No core
can tell them from the member's own, so only the transport can stop them: with
``authenticated=True`` the simulated network drops every message whose claimed sender is not
the process that sent it, as the mTLS identity rule does. With it, ordinary fault schedules run
under attack with every invariant holding; without it (the planted bug), the invariants catch
the forgeries on fixed seeds.
"""

from __future__ import annotations

import pytest

from raftmeta.sim import invariants as inv
from raftmeta.sim.cluster import Simulation, SimulationResult
from raftmeta.sim.hostile import IMPOSTOR_KINDS, HostilePlan
from raftmeta.sim.invariants import InvariantViolation

SEEDS = range(12)
IMPOSTOR = HostilePlan(impostor=True)

CAUGHT: list[tuple[tuple[str, ...], int, str]] = [
    # The whole mix: forged fetch answers put records of the attacker's into a follower's
    # committed log.
    (IMPOSTOR_KINDS, 0, inv.COMMITTED_PREFIX_AGREES),
    (IMPOSTOR_KINDS, 3, inv.COMMITTED_PREFIX_AGREES),
    # Fetches in a voter's name count toward the high watermark: the leader commits alone.
    (("fetch",), 1, inv.HW_HELD_BY_MAJORITY),
    # A fetch answer in the leader's name: a forged record committed on one follower.
    (("fetch-answer",), 0, inv.COMMITTED_PREFIX_AGREES),
    # Votes granted in members' names elect a leader without a majority's log; it orders a
    # follower to truncate below its high watermark, which the follower refuses (it never
    # cuts committed records), so nothing commits again.
    (("vote-granted",), 4, inv.LIVENESS),
]
"""(what the impostor forges, seed, the invariant that catches it without authentication)."""


def _run(simulation: Simulation) -> SimulationResult:
    try:
        return simulation.run()
    except InvariantViolation as violation:
        raise AssertionError(
            f"{violation}\nseed={simulation.seed}\n"
            f"last events:\n{simulation.format_trace()[-4000:]}"
        ) from violation


def test_authenticated_transport_drops_every_impostor_message() -> None:
    for seed in SEEDS:
        result = _run(Simulation(seed, hostile=IMPOSTOR, authenticated=True))
        assert result.unauthenticated > 1000, "the impostor's messages were dropped"
        assert result.rejected > 10, "what it sent in its own name reached the cores"
        assert result.acknowledged > 0
        assert result.liveness_ms is not None


@pytest.mark.parametrize(("kinds", "seed", "invariant"), CAUGHT)
def test_without_authentication_the_invariants_catch_the_impostor(
    kinds: tuple[str, ...], seed: int, invariant: str
) -> None:
    plan = HostilePlan(impostor=True, impostor_kinds=kinds)
    with pytest.raises(InvariantViolation) as caught:
        Simulation(seed, hostile=plan, authenticated=False).run()
    assert caught.value.invariant == invariant, caught.value
    # The same schedule and the same forgeries, over the authenticated transport, hold.
    _run(Simulation(seed, hostile=plan, authenticated=True))


def test_an_impostor_run_replays_from_its_seed() -> None:
    def violation(simulation: Simulation) -> InvariantViolation:
        with pytest.raises(InvariantViolation) as caught:
            simulation.run()
        return caught.value

    first = Simulation(5, hostile=IMPOSTOR)
    second = Simulation(5, hostile=IMPOSTOR)
    assert str(violation(first)) == str(violation(second))
    assert first.format_trace() == second.format_trace()
    guarded = Simulation(5, hostile=IMPOSTOR, authenticated=True)
    again = Simulation(5, hostile=IMPOSTOR, authenticated=True)
    assert guarded.run() == again.run()
    assert guarded.format_trace() == again.format_trace()


def test_unknown_impostor_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="impostor kinds"):
        HostilePlan(impostor=True, impostor_kinds=("vote-granted", "telepathy"))
