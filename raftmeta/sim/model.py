"""What the simulator is made of: its nodes (a core, a simulated disk and a small state machine
each), the links between them, and what a run reports."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import msgpack

from raftmeta.raft.core import RaftCore
from raftmeta.raft.ready import Ready
from raftmeta.raft.voters import ReplicaKey
from raftmeta.sim.disk import SimDisk
from raftmeta.sim.invariants import decode_value, value_digest

CoreFactory = Callable[..., RaftCore]
"""Makes a node's core: ``RaftCore`` itself, or a deliberately broken one in the checker's
own tests."""

NEVER = 1 << 62
"""A simulated time no event reaches: a node with no tick scheduled."""


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
class Links:
    """The network's faults in force: partitions, cuts, isolation, flapping links, and the
    quality of every link."""

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
