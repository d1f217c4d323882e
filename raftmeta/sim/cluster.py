"""The simulation loop: voters and observers in one process, on simulated time.

Each node is a real ``RaftCore`` with a simulated disk and a small state machine (a list of
committed client values). The loop plays the runtime's part exactly as the contract in
``raftmeta.raft.ready`` says: write, send what may go early, fsync (after a random delay,
during which a crash loses the writes), send the rest, apply, advance.

:class:`Simulation` is built in layers, each in its own module: ``model`` (nodes, links,
result), ``engine`` (event queue, node driving, network), ``operator`` (voter changes and
repairs), ``fault_injection`` (the plan's faults, the heal, the hostile process); this module
runs them and adds the clients.
"""

from __future__ import annotations

import heapq

from raftmeta.raft.core import NotLeaderError
from raftmeta.raft.roles import Role
from raftmeta.sim.engine import (
    COMMIT_DELIVERY_SLICES,
    DELIVER,
    FAULT,
    FLAP,
    FSYNC,
    HEAL_ALL,
    HOSTILE,
    PEER_DOWN,
    PROPOSE,
    RECONFIGURE,
    REPAIR,
    RESTART,
    RESUME,
    STOP,
    TICK,
)
from raftmeta.sim.fault_injection import RECONFIGURE_ATTEMPTS, FaultInjection
from raftmeta.sim.invariants import LIVENESS, NO_NODE_STOPS, InvariantViolation, encode_value
from raftmeta.sim.model import (
    NEVER,
    CoreFactory,
    Sender,
    SimNode,
    SimStateMachine,
    SimulationResult,
)
from raftmeta.sim.operator import REPAIR_EVERY_US

__all__ = [
    "COMMIT_DELIVERY_SLICES",
    "NEVER",
    "RECONFIGURE_ATTEMPTS",
    "REPAIR_EVERY_US",
    "CoreFactory",
    "Sender",
    "SimNode",
    "SimStateMachine",
    "Simulation",
    "SimulationResult",
]


class Simulation(FaultInjection):
    """A seeded run of the whole quorum: :meth:`run` plays the plan's faults, the operator's
    changes and the clients' proposals on simulated time, checking the invariants as it goes."""

    # ------------------------------------------------------------------ running

    def run(self) -> SimulationResult:
        for node in self.nodes.values():
            self._start(node, wiped=False)
        for at_ms, fault in self.plan.actions:
            self._push(at_ms * 1000, FAULT, fault)
        self._push(self.plan.fault_phase_ms * 1000, HEAL_ALL)
        self._push(self._proposal_gap(), PROPOSE)
        if self.hostile_plan is not None:
            self._push(self.hostile_plan.start_ms * 1000, HOSTILE)
        if self.plan.has_wipe:
            self._push(REPAIR_EVERY_US, REPAIR)
        end_us = self.plan.min_run_ms * 1000
        deadline_us = (self.plan.fault_phase_ms + self.plan.liveness_bound_ms) * 1000
        try:
            while self._queue:
                if self.now_us >= end_us and (
                    self._liveness_us is not None or not self._liveness_expected()
                ):
                    break
                if self.now_us > deadline_us and self._liveness_expected():
                    self.checker.fail(
                        LIVENESS,
                        f"no new commit {self.plan.liveness_bound_ms} ms after the faults ended",
                    )
                    break
                self._step_event()
            self.checker.final_check()
        except InvariantViolation:
            raise
        except Exception as error:  # a crash inside a core is a finding too
            raise InvariantViolation(NO_NODE_STOPS, repr(error)) from error
        liveness_ms = None
        if self._liveness_us is not None and self._healed_at_us is not None:
            liveness_ms = (self._liveness_us - self._healed_at_us) // 1000
        return SimulationResult(
            self.seed,
            self.now_us // 1000,
            self.events,
            len(self.checker.acked),
            len(self._epochs_seen),
            liveness_ms,
            self.rejected,
            self.unauthenticated,
            self.voter_changes,
        )

    def format_trace(self) -> str:
        lines = [
            f"{t / 1000:10.3f} ms  {what:<10} {detail!r}"[:300] for t, what, detail in self.trace
        ]
        return "\n".join(lines)

    def _step_event(self) -> None:
        at_us, _, kind, a, b, c = heapq.heappop(self._queue)
        self.now_us = max(self.now_us, at_us)
        self.events += 1
        if kind == DELIVER:
            self._deliver(a, b, c)
        elif kind == TICK:
            self._tick(a, b)
        elif kind == FSYNC:
            self._fsync_done(a, b, c)
        elif kind == FAULT:
            self.trace.append((self.now_us, "fault", a))
            self._apply_fault(a)
        elif kind == RESTART:
            node = self.nodes[a]
            if node.core is None and self._pending_restarts.pop(a, None) is not None:
                self._start(node, wiped=bool(b))
        elif kind == RESUME:
            self._resume(a)
        elif kind == PROPOSE:
            self._propose()
        elif kind == FLAP:
            self._flap(a, b, c)
        elif kind == HEAL_ALL:
            self._heal_all()
        elif kind == STOP:
            self._graceful_stop(a, b, c)
        elif kind == HOSTILE:
            self._hostile_send()
        elif kind == RECONFIGURE:
            waiting = self._waiting_changes.pop(a, None)
            if waiting is not None:
                self._reconfigure(*waiting)
        elif kind == REPAIR:
            self._repair()
        elif kind == PEER_DOWN:
            self._peer_down(a, b, c)

    # ------------------------------------------------------------------ clients

    def _proposal_gap(self) -> int:
        return self.now_us + self.rng.randint(5_000, 60_000)

    def _propose(self) -> None:
        self._push(self._proposal_gap(), PROPOSE)
        leaders = [
            n
            for n in self.nodes.values()
            if n.core is not None and n.core.role is Role.LEADER and not self._paused(n)
        ]
        if not leaders:
            return
        node = self.rng.choice(leaders)
        assert node.core is not None
        count = self.rng.randint(1, 4)
        values = list(range(self._next_value, self._next_value + count))
        self._next_value += count
        if self._healed_at_us is not None and self._first_value_after_heal is None:
            self._first_value_after_heal = values[0]
        try:
            result = node.core.propose([encode_value(v) for v in values], self.now_ms)
        except NotLeaderError:
            return
        node.proposals[(result.base_offset, result.epoch)] = values
        self._drive(node)
