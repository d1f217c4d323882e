"""The simulation's engine: the event queue on simulated time, and each node driven through the
Ready contract of ``raftmeta.raft.ready`` as the runtime drives it: write, send what may go
early, fsync (after a random delay, during which a crash loses the writes), send the rest,
apply, advance. The operator, the faults and the clients are layered on top of it (see
``cluster``)."""

from __future__ import annotations

import abc
import dataclasses
import heapq
import random
from collections import deque
from typing import Any

from raftmeta.errors import ErrorCode
from raftmeta.raft.config import RaftConfig
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC, membership_in
from raftmeta.raft.core import RaftCore
from raftmeta.raft.log import RaftLog
from raftmeta.raft.majority import majority_size
from raftmeta.raft.membership import Membership
from raftmeta.raft.messages import FetchSnapshotResponse, Message, Request
from raftmeta.raft.ready import Outbound, Ready
from raftmeta.raft.roles import Role
from raftmeta.raft.snapshot_policy import snapshot_id_for
from raftmeta.raft.voters import ReplicaKey, VoterSet
from raftmeta.sim.faults import (
    MEMBERSHIP_SHARE,
    FaultPlan,
    Reconfigure,
    random_fault_plan,
    with_membership_changes,
)
from raftmeta.sim.hostile import HostileNode, HostilePlan
from raftmeta.sim.invariants import InvariantChecker, same_batch
from raftmeta.sim.model import NEVER, CoreFactory, Links, Sender, SimNode, SimStateMachine

(
    DELIVER,
    TICK,
    FSYNC,
    FAULT,
    RESTART,
    RESUME,
    PROPOSE,
    FLAP,
    HEAL_ALL,
    STOP,
    HOSTILE,
    RECONFIGURE,
    REPAIR,
    PEER_DOWN,
) = range(14)
"""The kinds of event on the queue; each layer of the simulation handles its own."""

COMMIT_DELIVERY_SLICES = (1, 2, RaftConfig().commit_delivery_max_records)
"""Committed records per Ready the schedules draw from: one or two as a node far behind
sees them (its state machine hears of many batches a slice at a time), or the default."""


class SimulationEngine(abc.ABC):
    """The nodes, the network and simulated time; :class:`~raftmeta.sim.cluster.Simulation`
    adds the operator, the faults and the clients, and runs it."""

    def __init__(
        self,
        seed: int,
        *,
        voters: int = 3,
        observers: int = 1,
        plan: FaultPlan | None = None,
        core_factory: CoreFactory = RaftCore,
        config: RaftConfig | None = None,
        trace_size: int = 300,
        hostile: HostilePlan | None = None,
        authenticated: bool = False,
    ) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.voter_ids = list(range(1, voters + 1))
        self.observer_ids = list(range(voters + 1, voters + observers + 1))
        node_ids = self.voter_ids + self.observer_ids
        if plan is None:
            plan = random_fault_plan(random.Random(seed ^ 0x5EED), node_ids, self.voter_ids)
            membership_rng = random.Random(seed ^ 0x853)
            if membership_rng.random() < MEMBERSHIP_SHARE:
                plan = with_membership_changes(plan, membership_rng)
        self.plan = plan
        first_spare = voters + observers + 1
        self.spare_ids = list(range(first_spare, first_spare + plan.spare_controllers))
        node_ids += self.spare_ids
        self.controller_ids = self.voter_ids + self.spare_ids
        if plan.spare_controllers:
            self.controller_ids += self.observer_ids
        """Nodes that are or may become voters: in a plan that changes the voters, the
        observers are controllers not yet voting, as are the spares; otherwise brokers."""
        self.core_factory = core_factory
        # A third of the schedules hand committed records over a few at a time, as a node
        # catching up on a long log does, so a leader change told mid-backlog would show.
        slice_rng = random.Random(seed ^ 0x511CE)
        self.config = config or RaftConfig(
            commit_delivery_max_records=slice_rng.choice(COMMIT_DELIVERY_SLICES)
        )
        self.checker = InvariantChecker(self.controller_ids)
        self.nodes = {i: SimNode(i, i in self.voter_ids) for i in node_ids}
        self.initial_voters = VoterSet.of(self.nodes[i].key for i in self.voter_ids)
        self.bootstrap = Membership(KRAFT_VERSION_DYNAMIC, self.initial_voters)
        """The membership every disk starts with, as ``format --initial-controllers`` writes
        it (Kafka's bootstrap checkpoint)."""
        self.links = Links()
        self.now_us = 0
        self._queue: list[tuple[int, int, int, Any, Any, Any]] = []
        self._sequence = 0
        self.events = 0
        self.trace: deque[tuple[int, str, object]] = deque(maxlen=trace_size)
        self._next_value = 1
        self._healed_at_us: int | None = None
        self._first_value_after_heal: int | None = None
        self._liveness_us: int | None = None
        self._epochs_seen: set[int] = set()
        self._pending_restarts: dict[int, bool] = {}
        """Crashed nodes waiting to restart, and whether they come back with a wiped disk."""
        self._repaired: set[int] = set()
        """Nodes whose next start follows a repair that cut their log (``LoseTail``)."""
        self._lost_tail_end: dict[int, int] = {}
        """Each node that lost its tail: where its log ended before. What it acknowledged up
        to there was true when it said so, so the leader's count of it stays honest."""
        self.hostile_plan = hostile
        self.hostile = HostileNode(
            random.Random(seed ^ 0xBAD),
            node_ids,
            self.voter_ids,
            impostor=hostile is not None and hostile.impostor,
            impostor_kinds=hostile.impostor_kinds if hostile is not None else (),
            directory_of=lambda node_id: self.nodes[node_id].directory_id,
        )
        self.rejected = 0
        self.authenticated = authenticated
        """Model the mTLS identity rule: drop what a process sends under another's id."""
        self.unauthenticated = 0
        self._honest = {i: Sender(i, i) for i in node_ids}
        self.voter_changes = 0
        self._waiting_changes: dict[int, tuple[Reconfigure, int]] = {}
        """Refused changes the operator will try again, by ticket: at their retry time, or
        at once when a new leader appears (its client is told who leads, as Kafka's are)."""
        self._next_ticket = 0
        self._readd: set[int] = set()
        """Wiped voters removed by the operator, to be added back with their new directory."""
        self.checker.start_membership(self.initial_voters)

    # ------------------------------------------------------------------ events

    def _push(self, at_us: int, kind: int, a: Any = None, b: Any = None, c: Any = None) -> None:
        self._sequence += 1
        heapq.heappush(self._queue, (at_us, self._sequence, kind, a, b, c))

    @property
    def now_ms(self) -> int:
        return self.now_us // 1000

    # ------------------------------------------------------------------ nodes

    def _liveness_expected(self, spare: int = 0) -> bool:
        """A quorum can only make progress while a majority of its voters run on the
        directories they were voters with (a wiped voter is a stranger until replaced), in
        the committed voter set and in every newer one a running node holds: a change such
        as 3 voters to 2 takes effect on append, committed or not. ``spare``: how many more
        usable voters each set must have (before killing one for good)."""
        keys = {n.key for n in self.nodes.values() if n.core is not None}
        sets = [self.checker.committed_voters]
        sets += [frozenset(n.core.voter_set.keys) for n in self.nodes.values() if n.core]
        return all(len(s & keys) >= majority_size(len(s)) + spare for s in sets)

    def _sets_that_could_commit(self, core: RaftCore) -> list[frozenset[ReplicaKey]]:
        """The voter sets in play while a node leads, read from its log: the one committed
        (as of its high watermark, or of the committed log's end if that is further: a new
        leader learns the high watermark only by committing), and every set appended above
        that, since each took effect on append."""
        log = core.log
        start = max(core.high_watermark, min(self.checker.truth.end, log.end_offset))
        committed = core.membership_at(start)
        sets = [frozenset(committed.voters.keys)]
        if core.membership_at(log.end_offset) is committed:
            return sets  # no change appended above it
        for batch in log.batches_between(start, log.end_offset):
            if batch.is_control:
                _, voters = membership_in(batch)
                if voters is not None:
                    sets.append(frozenset(voters.keys))
                    if batch.epoch == core.epoch:
                        epoch_start = log.end_offset_for_epoch(core.epoch - 1).offset
                        self.checker.leader_changed_voters(
                            core.node_id,
                            core.epoch,
                            batch.base_offset,
                            core.high_watermark > epoch_start,
                        )
        return sets

    def _start(self, node: SimNode, *, wiped: bool) -> None:
        if wiped:
            node.disk.wipe()
            node.wipes += 1
        durable = node.disk.durable
        log = RaftLog(
            list(durable.batches), start_offset=durable.log_start, snapshot=durable.start_snapshot
        )
        machine = SimStateMachine()
        membership = self.bootstrap
        if durable.start_snapshot is not None:
            membership = durable.snapshot_membership.get(durable.start_snapshot, membership)
        latest = max(durable.snapshots, default=None, key=lambda s: s.end_offset)
        if latest is not None:
            machine.load(durable.snapshots[latest])
        node.machine = machine
        node.generation += 1
        node.in_flight = None
        node.tick_at_us = NEVER
        node.proposals = {}
        node.core = self.core_factory(
            node.node_id,
            membership.voters,
            self.config,
            directory_id=node.directory_id,
            kraft_version=membership.kraft_version,
            election_state=durable.election,
            log=log,
            now_ms=self.now_ms,
            rng=random.Random(self.rng.getrandbits(64)),
            latest_snapshot=latest,
            latest_snapshot_size=len(durable.snapshots[latest]) if latest else 0,
            log_repaired=node.node_id in self._repaired,
        )
        self._repaired.discard(node.node_id)
        self.checker.node_restarted(node.node_id, wiped)
        self.trace.append((self.now_us, "start", (node.node_id, durable.election, wiped)))
        self._drive(node)

    def _crash(self, node: SimNode) -> None:
        if node.core is None:
            return
        self.trace.append((self.now_us, "crash", node.node_id))
        # The OS closes a dead process's connections: every peer sees its end close.
        for peer in self.nodes.values():
            if peer.core is not None and peer is not node:
                self._push(
                    self.now_us + self.rng.randint(100, 600),
                    PEER_DOWN,
                    (peer.node_id, peer.generation),
                    node.node_id,
                    None,
                )
        node.core = None
        node.disk.crash(self.rng)
        node.generation += 1
        node.in_flight = None
        node.tick_at_us = NEVER
        node.paused_until_us = 0

    def _paused(self, node: SimNode) -> bool:
        return node.paused_until_us > self.now_us

    def _deliver(self, destination: int, sender: Sender, message: Message) -> None:
        node = self.nodes[destination]
        if node.core is None:
            return
        if self._paused(node):
            self._push(node.paused_until_us + 1, DELIVER, destination, sender, message)
            return
        source = sender.claimed
        if sender.real != source:
            route = f"{sender.real}as{source}->{destination}"
            if self.authenticated:
                self.unauthenticated += 1
                self.trace.append((self.now_us, "drop " + route, message))
                return
        else:
            route = f"{source}->{destination}"
        self.trace.append((self.now_us, route, message))
        node.core.step(source, message, self.now_ms)
        self._after_input(node)

    def _tick(self, node_id: int, generation: int) -> None:
        node = self.nodes[node_id]
        if node.core is None or node.generation != generation or self._paused(node):
            return
        node.tick_at_us = NEVER
        node.core.tick(self.now_ms)
        self._after_input(node)

    def _after_input(self, node: SimNode) -> None:
        core = node.core
        assert core is not None
        if core.role is Role.LEADER:
            self.checker.saw_leader(node.node_id, core.epoch)
            if core.epoch not in self._epochs_seen:
                self._epochs_seen.add(core.epoch)
                self._retry_changes_now()
            sets = self._sets_that_could_commit(core)
            if len(sets) > 1:
                self.checker.leader_voter_sets(node.node_id, core.epoch, sets)
        self.checker.saw_high_watermark(node.node_id, core.high_watermark)
        self._drive(node)

    def _drive(self, node: SimNode) -> None:
        core = node.core
        assert core is not None
        while node.in_flight is None:
            ready = core.ready()
            if ready is None:
                break
            node.in_flight = ready
            self.rejected += len(ready.rejected)
            if ready.election_state is not None:
                node.disk.write(ready.election_state)
            for op in ready.log_ops:
                node.disk.write(op)
            for outbound in ready.messages:
                self._send(node, outbound)
            self._check_commits(node, ready)
            if ready.needs_persist():
                delay = self.rng.randint(50, 2000)
                self._push(self.now_us + delay, FSYNC, node.node_id, node.generation, ready)
            else:
                self._complete(node, ready)
        self._schedule_tick(node)

    def _fsync_done(self, node_id: int, generation: int, ready: Ready) -> None:
        node = self.nodes[node_id]
        if node.core is None or node.generation != generation:
            return
        if self._paused(node):
            self._push(node.paused_until_us + 1, FSYNC, node_id, generation, ready)
            return
        self._complete(node, ready)
        self._drive(node)

    def _complete(self, node: SimNode, ready: Ready) -> None:
        core = node.core
        assert core is not None
        disk = node.disk
        disk.sync()
        durable = disk.durable
        self.checker.synced(
            node.node_id,
            durable.election,
            disk.truncations,
            durable.log_start,
            durable.start_snapshot,
            durable.snapshots,
        )
        for outbound in ready.messages_after_persist:
            self._send(node, outbound)
        machine = node.machine
        if ready.loaded_snapshot is not None:
            data = disk.read_snapshot(ready.loaded_snapshot)
            assert data is not None
            machine.load(data)
            self.checker.loaded_snapshot(
                node.node_id, core.role is Role.LEADER, ready.loaded_snapshot, machine.digest
            )
        for batch in ready.committed:
            records = None if batch.is_control else batch.records()
            machine.apply(batch.base_offset, batch.next_offset, records)
            values = node.proposals.pop((batch.base_offset, batch.epoch), None)
            if values is not None:
                for value in values:
                    self.checker.acknowledged(value, batch.base_offset)
                    if (
                        self._first_value_after_heal is not None
                        and value >= self._first_value_after_heal
                        and self._liveness_us is None
                    ):
                        self._liveness_us = self.now_us
        node.in_flight = None
        core.advance(ready, self.now_ms)
        self._maybe_snapshot(node)

    def _check_commits(self, node: SimNode, ready: Ready) -> None:
        core = node.core
        assert core is not None
        for batch in ready.committed:
            self.checker.committed(node.node_id, batch)
        told = ready.leader_change
        if told is not None and told.leader_id == node.node_id:
            through = node.machine.applied_offset
            if ready.loaded_snapshot is not None:
                through = max(through, ready.loaded_snapshot.end_offset)
            if ready.committed:
                through = max(through, ready.committed[-1].next_offset)
            self.checker.leader_told(node.node_id, told.epoch, through, core.high_watermark)
        if ready.high_watermark is not None and core.role is Role.LEADER:
            high_watermark = ready.high_watermark
            holds = {
                key: self._durably_holds(key, high_watermark, core) for key in core.voter_set.keys
            }
            last_epoch = core.log.epoch_at(high_watermark - 1)
            self.checker.leader_committed(
                node.node_id, core.epoch, high_watermark, last_epoch, holds
            )

    def _durably_holds(
        self, voter: ReplicaKey, high_watermark: int, leader: RaftCore | None = None
    ) -> bool:
        node = self.nodes.get(voter.node_id)
        if node is None or node.key != voter:
            return False  # wiped since: that directory is gone
        durable = node.disk.durable
        if high_watermark <= 0 or high_watermark <= self._lost_tail_end.get(node.node_id, -1):
            return True
        if any(s.end_offset >= high_watermark for s in durable.snapshots):
            return True
        committed = self.checker.truth.batch_holding(high_watermark - 1)
        if committed is None and leader is not None:
            # Committed but not yet delivered (a node far behind receives its commits in
            # slices): the leader's log holds what it committed.
            committed = leader.log.batch_holding(high_watermark - 1)
        held = durable.batch_holding(high_watermark - 1)
        return committed is not None and held is not None and same_batch(committed, held)

    def _maybe_snapshot(self, node: SimNode) -> None:
        core = node.core
        machine = node.machine
        assert core is not None
        if machine.batches_since_snapshot < self.plan.snapshot_every_batches:
            return
        snapshot_id = snapshot_id_for(core.log, core.high_watermark, machine.applied_offset)
        if snapshot_id is None:
            return
        data = machine.to_bytes()
        disk = node.disk
        disk.write_local_snapshot(snapshot_id, data, core.membership_at(snapshot_id.end_offset))
        keep = {snapshot_id, disk.durable.start_snapshot}
        for old in [s for s in disk.durable.snapshots if s not in keep]:
            if old.end_offset < snapshot_id.end_offset:
                del disk.durable.snapshots[old]
        machine.batches_since_snapshot = 0
        core.snapshot_taken(snapshot_id, len(data), advance_log_start=self.rng.random() < 0.7)
        self._drive(node)

    def _schedule_tick(self, node: SimNode) -> None:
        core = node.core
        if core is None:
            return
        deadline_us = core.next_deadline_ms() * 1000
        if deadline_us < node.tick_at_us or node.tick_at_us <= self.now_us:
            deadline_us = max(deadline_us, self.now_us + 1)
            node.tick_at_us = deadline_us
            self._push(deadline_us, TICK, node.node_id, node.generation)

    # ------------------------------------------------------------------ network

    def _send(self, node: SimNode, outbound: Outbound) -> None:
        message = outbound.message
        destination = outbound.destination
        if isinstance(message, FetchSnapshotResponse) and message.chunk_length and not message.data:
            data = node.disk.read_snapshot(message.snapshot_id)
            if data is None:
                message = FetchSnapshotResponse(
                    ErrorCode.SNAPSHOT_NOT_FOUND,
                    message.epoch,
                    message.leader_id,
                    message.snapshot_id,
                    message.position,
                )
            else:
                chunk = data[message.position : message.position + message.chunk_length]
                message = dataclasses.replace(
                    message, size=len(data), chunk_length=len(chunk), data=chunk
                )
        self.checker.sent(node.node_id, destination, message, node.disk.durable.election)
        if destination not in self.nodes:
            return  # an answer to a forged message, addressed to a node that does not exist
        if isinstance(message, Request) and self.nodes[destination].core is None:
            # Nothing listens on a stopped node's port: its OS refuses the connection at once.
            self._push(
                self.now_us + self.rng.randint(100, 600),
                PEER_DOWN,
                (node.node_id, node.generation),
                destination,
                message,
            )
            return
        links = self.links
        if links.blocked(node.node_id, destination):
            return
        if links.loss and self.rng.random() < links.loss:
            return
        copies = 2 if links.duplication and self.rng.random() < links.duplication else 1
        for _ in range(copies):
            delay = self.rng.randint(100, 600)
            if links.max_extra_delay_us:
                delay += self.rng.randint(0, links.max_extra_delay_us)
            self._push(
                self.now_us + delay, DELIVER, destination, self._honest[node.node_id], message
            )

    @abc.abstractmethod
    def _retry_changes_now(self) -> None:
        """A leader of a new epoch appeared: the operator tries its refused changes again at
        once (its client is told who leads, as Kafka's are)."""
