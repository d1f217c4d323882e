"""The faults of a run's plan applied to the simulated quorum and network, the healing at the
end of the fault phase, and the hostile process's forged messages."""

from __future__ import annotations

import heapq

from raftmeta.raft.messages import FetchRequest, Request
from raftmeta.raft.roles import Role
from raftmeta.sim.engine import (
    DELIVER,
    FAULT,
    FLAP,
    HOSTILE,
    PEER_DOWN,
    RESTART,
    RESUME,
    STOP,
)
from raftmeta.sim.faults import (
    Crash,
    Fault,
    Flap,
    FlapLeaderLink,
    FullRestart,
    GracefulStop,
    Heal,
    IsolateLeader,
    LoseTail,
    NetworkQuality,
    OneWayCut,
    Partition,
    Pause,
    Reconfigure,
)
from raftmeta.sim.hostile import HOSTILE_ID, Target
from raftmeta.sim.model import NEVER, Sender
from raftmeta.sim.operator import SimulationOperator

RECONFIGURE_ATTEMPTS = 150
"""How often the operator retries a refused voter change (every 5-30 ms) before giving up."""


class FaultInjection(SimulationOperator):
    """The plan's faults, each applied when its time comes, and the heal that ends them."""

    def _hostile_send(self) -> None:
        """Forge one message for a random running node, then schedule the next, until the
        faults stop (liveness after them is measured without the attacker)."""
        plan = self.hostile_plan
        if plan is None or self.now_us >= self.plan.fault_phase_ms * 1000:
            return
        self._push(self.now_us + plan.interval_ms * 1000, HOSTILE)
        hostile = self.hostile
        running = [n for n in self.nodes.values() if n.core is not None]
        if not running:
            return
        node = hostile.rng.choice(running)
        core = node.core
        assert core is not None
        target = Target(
            node.node_id,
            core.epoch,
            core.leader_id,
            core.log.end_offset,
            core.log.last_epoch,
            core.high_watermark,
        )
        claimed, message = hostile.forge(target)
        delay = hostile.rng.randint(100, 600)
        sender = Sender(claimed, HOSTILE_ID)
        self._push(self.now_us + delay, DELIVER, node.node_id, sender, message)

    # ------------------------------------------------------------------ faults

    def _apply_fault(self, fault: Fault) -> None:
        links = self.links
        if isinstance(fault, Partition):
            links.groups = fault.groups
        elif isinstance(fault, OneWayCut):
            links.cuts.add((fault.source, fault.destination))
        elif isinstance(fault, IsolateLeader):
            for node in self.nodes.values():
                if node.core is not None and node.core.role is Role.LEADER:
                    links.isolated.add(node.node_id)
        elif isinstance(fault, Flap):
            self._flap(
                frozenset((fault.a, fault.b)),
                fault.period_ms,
                self.now_us + fault.duration_ms * 1000,
            )
        elif isinstance(fault, FlapLeaderLink):
            leaders = [
                n for n in self.nodes.values() if n.core is not None and n.core.role is Role.LEADER
            ]
            if leaders:
                leader = leaders[0].node_id
                follower = min(v for v in self.voter_ids if v != leader)
                self._flap(
                    frozenset((leader, follower)),
                    fault.period_ms,
                    self.now_us + fault.duration_ms * 1000,
                )
        elif isinstance(fault, NetworkQuality):
            links.loss = fault.loss
            links.duplication = fault.duplication
            links.max_extra_delay_us = int(fault.max_extra_delay_ms * 1000)
        elif isinstance(fault, Heal):
            self._heal_links()
        elif isinstance(fault, Crash):
            node = self.nodes[fault.node]
            if node.core is not None:
                self._crash(node)
                self._pending_restarts[fault.node] = fault.wipe
                self._push(self.now_us + fault.down_ms * 1000, RESTART, fault.node, fault.wipe)
        elif isinstance(fault, Pause):
            node = self.nodes[fault.node]
            if node.core is not None and not self._paused(node):
                node.paused_until_us = self.now_us + fault.duration_ms * 1000
                self._push(node.paused_until_us, RESUME, fault.node)
        elif isinstance(fault, GracefulStop):
            for node in self.nodes.values():
                core = node.core
                if core is not None and core.role is Role.LEADER and not self._paused(node):
                    self.trace.append((self.now_us, "resign", node.node_id))
                    core.resign(self.now_ms)
                    self._drive(node)
                    at_us = self.now_us + fault.linger_ms * 1000
                    self._push(at_us, STOP, node.node_id, node.generation, fault.down_ms)
        elif isinstance(fault, Reconfigure):
            self._reconfigure(fault, RECONFIGURE_ATTEMPTS)
        elif isinstance(fault, LoseTail):
            self._lose_tail(fault)
        elif isinstance(fault, FullRestart):
            for node in self.nodes.values():
                if node.core is not None:
                    self._crash(node)
                    self._pending_restarts[node.node_id] = False
                    self._push(self.now_us + fault.down_ms * 1000, RESTART, node.node_id, False)

    def _lose_tail(self, fault: LoseTail) -> None:
        leaders = [n for n in self.nodes.values() if n.core and n.core.role is Role.LEADER]
        followers = [
            n for n in self.nodes.values() if n.core is not None and n.is_voter and n not in leaders
        ]
        if not leaders or not followers:
            return
        node = max(followers, key=lambda n: n.disk.durable.log_end)
        self._crash(node)
        durable = node.disk.durable
        # Never below the log start or a snapshot: recovery keeps what a snapshot covers.
        floor = max([durable.log_start, *(s.end_offset for s in durable.snapshots)])
        keep = len(durable.batches)
        while keep > 0 and len(durable.batches) - keep < fault.batches:
            if durable.batches[keep - 1].base_offset < floor:
                break
            keep -= 1
        self._lost_tail_end[node.node_id] = max(
            durable.log_end, self._lost_tail_end.get(node.node_id, -1)
        )
        del durable.batches[keep:]
        del durable.bases[keep:]
        self.trace.append((self.now_us, "lost tail", (node.node_id, durable.log_end)))
        self._repaired.add(node.node_id)
        self._pending_restarts[node.node_id] = False
        self._push(self.now_us + fault.down_ms * 1000, RESTART, node.node_id, False)

    def _graceful_stop(self, node_id: int, generation: int, down_ms: int) -> None:
        """Flush what was written, then stop: a planned shutdown loses nothing."""
        node = self.nodes[node_id]
        if node.core is None or node.generation != generation:
            return
        node.disk.sync()
        self._crash(node)
        self._pending_restarts[node_id] = False
        self._push(self.now_us + down_ms * 1000, RESTART, node_id, False)

    def _flap(self, link: frozenset[int], period_ms: int, until_us: int) -> None:
        down = self.links.flapping_down
        if link in down or self.now_us >= until_us:
            down.discard(link)
        else:
            down.add(link)
            # The connection between the two resets: each end is told the other is down,
            # though both run (the hint a transport gives is only a hint).
            for end in sorted(link):
                node = self.nodes[end]
                for other in link - {end}:
                    self._push(
                        self.now_us + self.rng.randint(100, 600),
                        PEER_DOWN,
                        (end, node.generation),
                        other,
                        None,
                    )
        if self.now_us < until_us:
            self._push(self.now_us + period_ms * 1000, FLAP, link, period_ms, until_us)

    def _peer_down(
        self, sender: tuple[int, int], destination: int, request: Request | None
    ) -> None:
        """Tell a node's core that its connection to ``destination`` was refused or reset;
        with no particular request, the fetch it has in flight is the one that failed."""
        node_id, generation = sender
        node = self.nodes[node_id]
        core = node.core
        if core is None or node.generation != generation or self._paused(node):
            return
        if request is None:
            request = FetchRequest(core.epoch, core.log.end_offset, core.log.last_epoch)
        self.trace.append((self.now_us, f"down {node_id}->{destination}", type(request).__name__))
        core.unreachable(destination, request, self.now_ms, peer_down=True)
        self._after_input(node)

    def _heal_links(self) -> None:
        links = self.links
        links.groups = ()
        links.cuts.clear()
        links.isolated.clear()
        links.flapping_down.clear()

    def _resume(self, node_id: int) -> None:
        node = self.nodes[node_id]
        if node.core is None or self._paused(node):
            return
        node.paused_until_us = 0
        node.tick_at_us = NEVER
        self._schedule_tick(node)

    def _heal_all(self) -> None:
        self.trace.append((self.now_us, "heal all", None))
        self._heal_links()
        links = self.links
        links.loss = 0.0
        links.duplication = 0.0
        links.max_extra_delay_us = 0
        for node in self.nodes.values():
            if node.core is None:
                self._start(node, wiped=self._pending_restarts.pop(node.node_id, False))
            elif self._paused(node):
                node.paused_until_us = 0
                self._resume(node.node_id)
        # Flaps scheduled past this point find their link healed and stop.
        # A graceful stop under way still completes (its node then restarts).
        self._queue = [e for e in self._queue if e[2] not in (FLAP, RESTART, FAULT)]
        heapq.heapify(self._queue)
        self._healed_at_us = self.now_us
        # A voter lost to a wipe already counts as dead: killing another could leave no majority.
        if (
            self.plan.leader_stays_dead
            and len(self.voter_ids) >= 3
            and self._liveness_expected(spare=1)
        ):
            leaders = [
                n for n in self.nodes.values() if n.core is not None and n.core.role is Role.LEADER
            ]
            # With no leader at this instant, the highest-epoch voter stands in for it.
            victim = (
                leaders[0]
                if leaders
                else max(
                    (self.nodes[v] for v in self.voter_ids),
                    key=lambda n: n.core.epoch if n.core is not None else -1,
                )
            )
            self.trace.append((self.now_us, "kill for good", victim.node_id))
            self._crash(victim)
            self._pending_restarts.pop(victim.node_id, None)
