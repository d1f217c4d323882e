"""The simulation loop: voters and observers in one process, on simulated time.

Each node is a real ``RaftCore`` with a simulated disk and a small state machine (a list of
committed client values). The loop plays the runtime's part exactly as the contract in
``raftmeta.raft.ready`` says: write, send what may go early, fsync (after a random delay,
during which a crash loses the writes), send the rest, apply, advance.
"""

from __future__ import annotations

import dataclasses
import heapq
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack

from raftmeta.errors import ErrorCode
from raftmeta.raft.config import RaftConfig
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC, membership_in
from raftmeta.raft.core import NotLeaderError, RaftCore
from raftmeta.raft.log import RaftLog
from raftmeta.raft.majority import majority_size
from raftmeta.raft.membership import Membership
from raftmeta.raft.messages import FetchRequest, FetchSnapshotResponse, Message, Request
from raftmeta.raft.ready import Outbound, Ready
from raftmeta.raft.roles import Role
from raftmeta.raft.snapshot_policy import snapshot_id_for
from raftmeta.raft.voter_change import VoterChangeResult
from raftmeta.raft.voters import ReplicaKey, Voter, VoterSet
from raftmeta.sim.disk import SimDisk
from raftmeta.sim.faults import (
    MEMBERSHIP_SHARE,
    Crash,
    Fault,
    FaultPlan,
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
    random_fault_plan,
    with_membership_changes,
)
from raftmeta.sim.hostile import HOSTILE_ID, HostileNode, HostilePlan, Target
from raftmeta.sim.invariants import (
    LIVENESS,
    NO_NODE_STOPS,
    InvariantChecker,
    InvariantViolation,
    decode_value,
    encode_value,
    same_batch,
    value_digest,
)

CoreFactory = Callable[..., RaftCore]
NEVER = 1 << 62

(
    _DELIVER,
    _TICK,
    _FSYNC,
    _FAULT,
    _RESTART,
    _RESUME,
    _PROPOSE,
    _FLAP,
    _HEAL_ALL,
    _STOP,
    _HOSTILE,
    _RECONFIGURE,
    _REPAIR,
    _PEER_DOWN,
) = range(14)
RECONFIGURE_ATTEMPTS = 150
COMMIT_DELIVERY_SLICES = (1, 2, RaftConfig().commit_delivery_max_records)
"""Committed records per Ready the schedules draw from: one or two as a node far behind
sees them (its state machine hears of many batches a slice at a time), or the default."""
"""How often the operator retries a refused voter change (every 5-30 ms) before giving up."""
REPAIR_EVERY_US = 100_000


class SimStateMachine:
    """Committed client values in order, with a rolling digest to compare nodes cheaply."""

    __slots__ = ("applied_offset", "batches_since_snapshot", "digest", "values")

    def __init__(self) -> None:
        self.applied_offset = 0
        self.digest = 0
        self.values: list[int] = []
        self.batches_since_snapshot = 0

    def apply(self, batch_base: int, batch_next: int, records: list[bytes] | None) -> None:
        if batch_base < self.applied_offset:
            return  # already covered by the snapshot this node loaded
        if records is not None:
            for record in records:
                value = decode_value(record)
                self.values.append(value)
                self.digest = value_digest(self.digest, value)
        self.applied_offset = batch_next
        self.batches_since_snapshot += 1

    def to_bytes(self) -> bytes:
        return msgpack.packb([self.applied_offset, self.digest, self.values])  # type: ignore[no-any-return]

    def load(self, data: bytes) -> None:
        self.applied_offset, self.digest, self.values = msgpack.unpackb(data)
        self.batches_since_snapshot = 0


@dataclass(slots=True)
class SimNode:
    node_id: int
    is_voter: bool
    disk: SimDisk = field(default_factory=SimDisk)
    core: RaftCore | None = None
    machine: SimStateMachine = field(default_factory=SimStateMachine)
    generation: int = 0
    in_flight: Ready | None = None
    tick_at_us: int = NEVER
    paused_until_us: int = 0
    proposals: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    wipes: int = 0

    @property
    def directory_id(self) -> str:
        """Formatting gives a directory a new id; a wiped disk is formatted again."""
        return f"dir{self.node_id}-{self.wipes}"

    @property
    def key(self) -> ReplicaKey:
        return ReplicaKey(self.node_id, self.directory_id)


@dataclass(frozen=True, slots=True)
class SimulationResult:
    seed: int
    simulated_ms: int
    events: int
    acknowledged: int
    epochs: int
    liveness_ms: int | None
    rejected: int = 0
    """Peer messages the cores refused (forged ones, in a run with a hostile node)."""
    unauthenticated: int = 0
    """Messages the authenticated transport dropped: their claimed sender did not send them."""
    voter_changes: int = 0
    """Voter changes the leaders accepted (operator changes and wiped-voter replacements)."""


@dataclass(frozen=True, slots=True)
class Sender:
    """Who a delivered message says it is from, and the process that really sent it (the
    identity its connection authenticated, as a certificate's principal does with mTLS)."""

    claimed: int
    real: int


@dataclass(slots=True)
class _Links:
    groups: tuple[frozenset[int], ...] = ()
    cuts: set[tuple[int, int]] = field(default_factory=set)
    isolated: set[int] = field(default_factory=set)
    flapping_down: set[frozenset[int]] = field(default_factory=set)
    loss: float = 0.0
    duplication: float = 0.0
    max_extra_delay_us: int = 0

    def blocked(self, source: int, destination: int) -> bool:
        if source in self.isolated or destination in self.isolated:
            return True
        if (source, destination) in self.cuts:
            return True
        if self.flapping_down and frozenset((source, destination)) in self.flapping_down:
            return True
        if self.groups:
            for group in self.groups:
                if source in group:
                    return destination not in group
        return False


class Simulation:
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
        self.links = _Links()
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
        self._repaired: set[int] = set()
        self._lost_tail_end: dict[int, int] = {}
        """Each node that lost its tail: where its log ended before. What it acknowledged up
        to there was true when it said so, so the leader's count of it stays honest."""
        """Nodes whose next start follows a repair that cut their log (``LoseTail``)."""
        """Crashed nodes waiting to restart, and whether they come back with a wiped disk."""
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

    # ------------------------------------------------------------------ running

    def run(self) -> SimulationResult:
        for node in self.nodes.values():
            self._start(node, wiped=False)
        for at_ms, fault in self.plan.actions:
            self._push(at_ms * 1000, _FAULT, fault)
        self._push(self.plan.fault_phase_ms * 1000, _HEAL_ALL)
        self._push(self._proposal_gap(), _PROPOSE)
        if self.hostile_plan is not None:
            self._push(self.hostile_plan.start_ms * 1000, _HOSTILE)
        if self.plan.has_wipe:
            self._push(REPAIR_EVERY_US, _REPAIR)
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

    def _push(self, at_us: int, kind: int, a: Any = None, b: Any = None, c: Any = None) -> None:
        self._sequence += 1
        heapq.heappush(self._queue, (at_us, self._sequence, kind, a, b, c))

    def _step_event(self) -> None:
        at_us, _, kind, a, b, c = heapq.heappop(self._queue)
        self.now_us = max(self.now_us, at_us)
        self.events += 1
        if kind == _DELIVER:
            self._deliver(a, b, c)
        elif kind == _TICK:
            self._tick(a, b)
        elif kind == _FSYNC:
            self._fsync_done(a, b, c)
        elif kind == _FAULT:
            self.trace.append((self.now_us, "fault", a))
            self._apply_fault(a)
        elif kind == _RESTART:
            node = self.nodes[a]
            if node.core is None and self._pending_restarts.pop(a, None) is not None:
                self._start(node, wiped=bool(b))
        elif kind == _RESUME:
            self._resume(a)
        elif kind == _PROPOSE:
            self._propose()
        elif kind == _FLAP:
            self._flap(a, b, c)
        elif kind == _HEAL_ALL:
            self._heal_all()
        elif kind == _STOP:
            self._graceful_stop(a, b, c)
        elif kind == _HOSTILE:
            self._hostile_send()
        elif kind == _RECONFIGURE:
            waiting = self._waiting_changes.pop(a, None)
            if waiting is not None:
                self._reconfigure(*waiting)
        elif kind == _REPAIR:
            self._repair()
        elif kind == _PEER_DOWN:
            self._peer_down(a, b, c)

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
                    _PEER_DOWN,
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
            self._push(node.paused_until_us + 1, _DELIVER, destination, sender, message)
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
                self._push(self.now_us + delay, _FSYNC, node.node_id, node.generation, ready)
            else:
                self._complete(node, ready)
        self._schedule_tick(node)

    def _fsync_done(self, node_id: int, generation: int, ready: Ready) -> None:
        node = self.nodes[node_id]
        if node.core is None or node.generation != generation:
            return
        if self._paused(node):
            self._push(node.paused_until_us + 1, _FSYNC, node_id, generation, ready)
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
            self._push(deadline_us, _TICK, node.node_id, node.generation)

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
                _PEER_DOWN,
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
                self.now_us + delay, _DELIVER, destination, self._honest[node.node_id], message
            )

    # ------------------------------------------------------------------ hostile node

    def _hostile_send(self) -> None:
        """Forge one message for a random running node, then schedule the next, until the
        faults stop (liveness after them is measured without the attacker)."""
        plan = self.hostile_plan
        if plan is None or self.now_us >= self.plan.fault_phase_ms * 1000:
            return
        self._push(self.now_us + plan.interval_ms * 1000, _HOSTILE)
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
        self._push(self.now_us + delay, _DELIVER, node.node_id, sender, message)

    # ------------------------------------------------------------------ clients

    def _proposal_gap(self) -> int:
        return self.now_us + self.rng.randint(5_000, 60_000)

    def _propose(self) -> None:
        self._push(self._proposal_gap(), _PROPOSE)
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
                self._push(self.now_us + fault.down_ms * 1000, _RESTART, fault.node, fault.wipe)
        elif isinstance(fault, Pause):
            node = self.nodes[fault.node]
            if node.core is not None and not self._paused(node):
                node.paused_until_us = self.now_us + fault.duration_ms * 1000
                self._push(node.paused_until_us, _RESUME, fault.node)
        elif isinstance(fault, GracefulStop):
            for node in self.nodes.values():
                core = node.core
                if core is not None and core.role is Role.LEADER and not self._paused(node):
                    self.trace.append((self.now_us, "resign", node.node_id))
                    core.resign(self.now_ms)
                    self._drive(node)
                    at_us = self.now_us + fault.linger_ms * 1000
                    self._push(at_us, _STOP, node.node_id, node.generation, fault.down_ms)
        elif isinstance(fault, Reconfigure):
            self._reconfigure(fault, RECONFIGURE_ATTEMPTS)
        elif isinstance(fault, LoseTail):
            self._lose_tail(fault)
        elif isinstance(fault, FullRestart):
            for node in self.nodes.values():
                if node.core is not None:
                    self._crash(node)
                    self._pending_restarts[node.node_id] = False
                    self._push(self.now_us + fault.down_ms * 1000, _RESTART, node.node_id, False)

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
        self._push(self.now_us + fault.down_ms * 1000, _RESTART, node.node_id, False)

    # ------------------------------------------------------------------ operator

    def _serving_leader(self) -> SimNode | None:
        """The leader of the highest epoch an operator's request would reach."""
        leaders = [
            n
            for n in self.nodes.values()
            if n.core is not None and n.core.role is Role.LEADER and not self._paused(n)
        ]
        return max(leaders, key=lambda n: n.core.epoch if n.core else -1, default=None)

    def _reconfigure(self, change: Reconfigure, attempts: int) -> None:
        """One try at a voter change; retried while the leader answers REQUEST_TIMED_OUT (not
        caught up, a change pending, its epoch not committed) or there is no leader."""
        leader = self._serving_leader()
        result: VoterChangeResult | None = None
        if leader is not None:
            core = leader.core
            assert core is not None
            if change.kind == "add":
                spares = [
                    self.nodes[i]
                    for i in self.controller_ids
                    if i not in core.voters and self.nodes[i].core is not None
                ]
                if not spares:
                    return
                spare = spares[change.pick % len(spares)]
                result = core.add_voter(Voter(spare.key), self.now_ms)
            else:
                if len(core.voters) <= 2:
                    return  # two voters left: one more fault stops it until healed
                if not self._all_voters_healthy(core):
                    result = None  # as an operator would: mend the quorum before shrinking it
                else:
                    ids = sorted(core.voters)
                    key = core.voter_set.key_of(ids[change.pick % len(ids)])
                    assert key is not None
                    result = core.remove_voter(key, self.now_ms)
            self.trace.append((self.now_us, "reconfigure", (change, result)))
            if result is not None and result.error is ErrorCode.NONE:
                self.voter_changes += 1
                self._drive(leader)
                return
        retry = result is None or result.error in (
            ErrorCode.REQUEST_TIMED_OUT,
            ErrorCode.NOT_LEADER_OR_FOLLOWER,
        )
        if retry and attempts > 0:
            self._next_ticket += 1
            self._waiting_changes[self._next_ticket] = (change, attempts - 1)
            delay = self.rng.randint(5_000, 30_000)
            self._push(self.now_us + delay, _RECONFIGURE, self._next_ticket)

    def _all_voters_healthy(self, core: RaftCore) -> bool:
        """Every voter runs on the directory it is a voter with (none is down or wiped)."""
        return all(
            self.nodes[v.node_id].core is not None and self.nodes[v.node_id].key == v.key
            for v in core.voter_set
        )

    def _retry_changes_now(self) -> None:
        waiting = sorted(self._waiting_changes.items())
        self._waiting_changes.clear()
        for _, (change, attempts) in waiting:
            self._reconfigure(change, attempts)

    def _repair(self) -> None:
        """The operator replaces voters whose disks were wiped: remove the old (id,
        directory), then add the node back with its new directory once it has caught up."""
        self._push(self.now_us + REPAIR_EVERY_US, _REPAIR)
        leader = self._serving_leader()
        if leader is None:
            return
        core = leader.core
        assert core is not None
        for voter in core.voter_set:
            node = self.nodes[voter.node_id]
            if node.key != voter.key and node.core is not None:
                result = core.remove_voter(voter.key, self.now_ms)
                self.trace.append((self.now_us, "replace", (voter.key, result)))
                if result.error is ErrorCode.NONE:
                    self.voter_changes += 1
                    self._readd.add(voter.node_id)
                    self._drive(leader)
                return
        for node_id in sorted(self._readd):
            node = self.nodes[node_id]
            if node_id in core.voters or node.core is None:
                continue
            result = core.add_voter(Voter(node.key), self.now_ms)
            self.trace.append((self.now_us, "re-add", (node.key, result)))
            if result.error is ErrorCode.NONE:
                self.voter_changes += 1
                self._readd.discard(node_id)
                self._drive(leader)
            return

    def _graceful_stop(self, node_id: int, generation: int, down_ms: int) -> None:
        """Flush what was written, then stop: a planned shutdown loses nothing."""
        node = self.nodes[node_id]
        if node.core is None or node.generation != generation:
            return
        node.disk.sync()
        self._crash(node)
        self._pending_restarts[node_id] = False
        self._push(self.now_us + down_ms * 1000, _RESTART, node_id, False)

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
                        _PEER_DOWN,
                        (end, node.generation),
                        other,
                        None,
                    )
        if self.now_us < until_us:
            self._push(self.now_us + period_ms * 1000, _FLAP, link, period_ms, until_us)

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
        self._queue = [e for e in self._queue if e[2] not in (_FLAP, _RESTART, _FAULT)]
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
