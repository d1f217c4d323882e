"""What the core hands its runtime after each round of input, in the manner of etcd's Ready.

The runtime must, in this order: apply ``log_ops`` and persist ``election_state`` durably;
send ``messages_after_persist``; deliver ``loaded_snapshot``, ``committed`` and
``leader_change`` to the state machine; then call ``core.advance(ready)``; and when
``commit_backlog`` is set, let its other inputs in before asking for the next Ready. Messages in
``messages`` depend on nothing this Ready persists and may be sent at once, before the fsync.
``rejected`` lists the peer messages the core refused, for the runtime to log.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from raftmeta.errors import ErrorCode
from raftmeta.raft.batch import Batch, SnapshotId
from raftmeta.raft.membership import Membership
from raftmeta.raft.messages import Message
from raftmeta.raft.state import ElectionState


@dataclass(frozen=True, slots=True)
class Outbound:
    destination: int
    message: Message


@dataclass(frozen=True, slots=True)
class AppendBatches:
    batches: tuple[Batch, ...]


@dataclass(frozen=True, slots=True)
class TruncateLog:
    end_offset: int
    """Every batch at or after this offset goes; it is always a batch boundary."""


@dataclass(frozen=True, slots=True)
class WriteSnapshotChunk:
    snapshot_id: SnapshotId
    position: int
    data: bytes
    size: int


@dataclass(frozen=True, slots=True)
class InstallSnapshot:
    """A downloaded snapshot is complete: it replaces the whole log, which restarts after it.

    ``membership`` is the voter set and kraft.version it holds; the runtime keeps it with the
    snapshot and hands it back to the core at the next start (None: a static quorum's)."""

    snapshot_id: SnapshotId
    membership: Membership | None = None


@dataclass(frozen=True, slots=True)
class AdvanceLogStart:
    """The log before this snapshot may be deleted; the snapshot now stands in for it."""

    snapshot_id: SnapshotId


LogOp = AppendBatches | TruncateLog | WriteSnapshotChunk | InstallSnapshot | AdvanceLogStart


@dataclass(frozen=True, slots=True)
class RejectedInput:
    """A peer message the core refused and left without effect; the runtime logs it.

    A refused request was also answered with ``error``; a refused response was dropped.
    """

    sender: int
    message: Message
    error: ErrorCode
    reason: str


@dataclass(frozen=True, slots=True)
class LeaderAndEpoch:
    leader_id: int | None
    epoch: int


@dataclass(slots=True)
class Ready:
    election_state: ElectionState | None = None
    log_ops: list[LogOp] = field(default_factory=list)
    messages: list[Outbound] = field(default_factory=list)
    messages_after_persist: list[Outbound] = field(default_factory=list)
    loaded_snapshot: SnapshotId | None = None
    committed: list[Batch] = field(default_factory=list)
    high_watermark: int | None = None
    """Set when the high watermark moved; every batch below it is committed (delivered with
    this Ready, or with the next ones when ``commit_backlog`` is set)."""
    leader_change: LeaderAndEpoch | None = None
    log_end_offset: int = 0
    """The log end this Ready makes durable; the core counts it once ``advance`` is called."""
    next_deadline_ms: int = 0
    """When the core next wants ``tick``, as of this Ready; ask again after ``advance``."""
    rejected: list[RejectedInput] = field(default_factory=list)
    """Peer messages refused since the last Ready (out of range, from a non-voter, or
    contradicting what this node knows), for the runtime to log; nothing else to do."""
    commit_backlog: bool = False
    """More committed batches wait beyond ``committed`` (``RaftConfig.commit_delivery_max_records``
    sliced them): the runtime should take its other inputs before asking for the next Ready.
    A leader change waits for the last slice, so a state machine that hears of it has every
    batch committed by then."""

    def needs_persist(self) -> bool:
        return self.election_state is not None or bool(self.log_ops)
