"""Per-role state of a Raft node. Only the fields a role needs live in its state object.

Voters move between Unattached, Prospective, Candidate, Leader, Follower and Resigned;
observers only ever reach Unattached or Follower. The persisted part of the state (epoch,
vote, leader) is held by the core's ``ElectionState``, never here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from raftmeta.raft.messages import FetchRequest
from raftmeta.raft.progress import ProgressTracker


class Role(enum.Enum):
    UNATTACHED = "Unattached"
    PROSPECTIVE = "Prospective"
    CANDIDATE = "Candidate"
    LEADER = "Leader"
    FOLLOWER = "Follower"
    RESIGNED = "Resigned"


@dataclass(slots=True)
class Unattached:
    election_deadline_ms: int
    """For voters: campaign then. Observers have no election and look for a leader instead."""
    role: Role = Role.UNATTACHED


@dataclass(slots=True)
class Prospective:
    """Asking for pre-votes (KIP-996): no epoch bump and nothing persisted until a majority."""

    election_deadline_ms: int
    retained_leader_id: int | None
    leader_resigned: bool = False
    """The leader we followed said it resigned: if this round fails (a peer had not heard
    yet), try again after a short backoff instead of a whole fetch timeout."""
    granted: set[int] = field(default_factory=set)
    rejected: set[int] = field(default_factory=set)
    role: Role = Role.PROSPECTIVE


@dataclass(slots=True)
class Candidate:
    election_deadline_ms: int
    granted: set[int] = field(default_factory=set)
    rejected: set[int] = field(default_factory=set)
    backing_off: bool = False
    role: Role = Role.CANDIDATE


@dataclass(slots=True)
class ParkedFetch:
    request: FetchRequest
    deadline_ms: int


@dataclass(slots=True)
class Leader:
    epoch_start_offset: int
    granting_voters: frozenset[int]
    progress: ProgressTracker
    parked: dict[int, ParkedFetch] = field(default_factory=dict)
    begin_epoch_due_ms: dict[int, int] = field(default_factory=dict)
    """Voters not yet fetching in this epoch, and when to announce the epoch to them again."""
    announced: bool = False
    """Whether the state machine was told it leads: only once its epoch start is committed."""
    role: Role = Role.LEADER


@dataclass(slots=True)
class Follower:
    leader_id: int
    fetch_deadline_ms: int
    last_heard_ms: int
    """When the leader last answered a fetch or announced itself; pre-votes are refused while
    this is within the fetch timeout (KIP-996), so a lone node cannot unseat a live leader."""
    leader_resigned: bool = False
    """Set by EndQuorumEpoch or a not-leader answer: pre-votes may now be granted."""
    leader_unreachable: bool = False
    """The transport saw the leader's connection closed or refused (its process is likely
    gone): pre-votes may now be granted, until the leader is heard from again."""
    role: Role = Role.FOLLOWER


@dataclass(slots=True)
class Resigned:
    election_deadline_ms: int
    preferred_successors: tuple[int, ...]
    end_epoch_due_ms: dict[int, int] = field(default_factory=dict)
    role: Role = Role.RESIGNED


RoleState = Unattached | Prospective | Candidate | Leader | Follower | Resigned
