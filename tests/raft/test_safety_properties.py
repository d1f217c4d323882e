"""The five safety properties of the Raft paper (Figure 3), one test each, named after them.

Each runs the real core under simulated faults and checks the property directly from what the
nodes did, independently of the simulator's own invariant checker.
"""

from __future__ import annotations

from collections.abc import Callable

from raftmeta.raft.batch import Batch
from raftmeta.raft.core import RaftCore
from raftmeta.raft.ready import Ready, TruncateLog
from raftmeta.raft.roles import Role
from raftmeta.sim.cluster import Simulation
from raftmeta.sim.invariants import same_batch

SEEDS = range(40)


def run_all(make_factory: Callable[[Simulation], type[RaftCore]] | None = None) -> list[Simulation]:
    simulations = []
    for seed in SEEDS:
        simulation = Simulation(seed)
        if make_factory is not None:
            simulation.core_factory = make_factory(simulation)
        simulation.run()
        simulations.append(simulation)
    return simulations


def test_election_safety() -> None:
    """At most one leader can be elected in a given term."""
    leaders: dict[tuple[int, int], set[int]] = {}

    def factory(simulation: Simulation) -> type[RaftCore]:
        class Recording(RaftCore):
            def _become_leader(self, now_ms: int) -> None:
                super()._become_leader(now_ms)
                leaders.setdefault((simulation.seed, self.epoch), set()).add(self.node_id)

        return Recording

    run_all(factory)
    assert leaders, "some leaders were elected"
    assert all(len(nodes) == 1 for nodes in leaders.values())


def test_leader_append_only() -> None:
    """A leader never overwrites or deletes entries in its log; it only appends."""
    truncating_leaders: list[tuple[int, int]] = []

    class Watching(RaftCore):
        def ready(self) -> Ready | None:
            ready = super().ready()
            if (
                ready is not None
                and self.role is Role.LEADER
                and any(isinstance(op, TruncateLog) for op in ready.log_ops)
            ):
                truncating_leaders.append((self.node_id, self.epoch))
            return ready

    run_all(lambda _: Watching)
    assert truncating_leaders == []


def test_log_matching() -> None:
    """If two logs hold an entry with the same index and term, they are identical up to it."""
    for simulation in run_all():
        logs = [n.core.log for n in simulation.nodes.values() if n.core is not None]
        for a in logs:
            by_offset = {b.base_offset: b for b in a.batches()}
            for b in logs:
                shared = [x for x in b.batches() if x.base_offset in by_offset]
                last_match = max(
                    (x.base_offset for x in shared if x.epoch == by_offset[x.base_offset].epoch),
                    default=None,
                )
                if last_match is None:
                    continue
                for x in shared:
                    if x.base_offset <= last_match:
                        assert same_batch(x, by_offset[x.base_offset]), simulation.seed


def test_leader_completeness() -> None:
    """A newly elected leader's log holds every entry committed before its election."""
    missing: list[str] = []

    def factory(simulation: Simulation) -> type[RaftCore]:
        class Checking(RaftCore):
            def _become_leader(self, now_ms: int) -> None:
                truth = simulation.checker.truth
                if truth.end > self.log.start_offset:
                    for base in truth.bases:
                        if base < self.log.start_offset:
                            continue
                        mine: list[Batch] = self.log.batches_between(base, base + 1)
                        if not mine or not same_batch(mine[0], truth.batches[base]):
                            missing.append(f"seed {simulation.seed}: node {self.node_id} at {base}")
                            break
                super()._become_leader(now_ms)

        return Checking

    run_all(factory)
    assert missing == []


def test_state_machine_safety() -> None:
    """No two nodes apply different entries at the same index."""
    for simulation in run_all():
        histories = [n.machine.values for n in simulation.nodes.values()]
        longest = max(histories, key=len)
        for history in histories:
            assert history == longest[: len(history)], simulation.seed
