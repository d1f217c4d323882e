"""A hostile process on the quorum's network: forged, well-formed messages of every kind.

It models what issue 12 found an unauthenticated client could do over a plaintext listener.
By default it sends:

- any message, with fields in or out of range, under ids that are not members;
- under a member's id, only messages with an out-of-range field, or a ``BeginQuorumEpoch`` /
  ``EndQuorumEpoch`` in which that member claims the target's current epoch: the claim that
  used to stop a leader with an assertion.

The invariants must hold through all of it and no node may stop. The attacker may read each
node's epoch, leader, log end and high watermark (``DescribeQuorum`` gives them away).

As an **impostor** (``HostilePlan(impostor=True)``) it also sends well-formed, in-range messages
of every kind in a member's name, aimed to be believed: votes requested or granted at the
target's epoch or the next, ``BeginQuorumEpoch`` / ``EndQuorumEpoch`` for a member, fetches at
the leader's log end from a voter, fetch answers with forged records from the leader, snapshot
chunks. No core can tell those from the member's own, so they break safety by design: only the
authenticated transport (``Simulation(authenticated=True)``, the simulator's model of the mTLS
identity rule in ``raftmeta.quorum.identity``) keeps them out, by dropping every message whose
claimed sender is not the process that sent it. The hostile process has its own identity,
``HOSTILE_ID``, so what it sends in its own name still reaches the cores, which must refuse it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import msgpack

from raftmeta.errors import ErrorCode
from raftmeta.raft.batch import Batch, OffsetAndEpoch, SnapshotId, make_batch
from raftmeta.raft.limits import EPOCH_LIMIT, INT32_MAX, INT64_MAX
from raftmeta.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    Message,
    VoteRequest,
    VoteResponse,
)
from raftmeta.sim.invariants import encode_value

STRANGER_IDS = (-(2**31), -5, -1, 66, 4242, INT32_MAX)
"""Ids no simulated quorum uses (members are numbered from 1)."""
HOSTILE_ID = 66
"""The hostile process's own identity (the name in its certificate): not a member's."""
IMPOSTOR_KINDS = (
    "vote-request",
    "vote-granted",
    "begin-epoch",
    "end-epoch",
    "fetch",
    "fetch-answer",
    "snapshot-answer",
)
"""What an impostor can forge in a member's name (``HostilePlan.impostor_kinds``)."""
EPOCH_EXHAUSTION_KINDS = ("vote-near-limit", "begin-near-limit")
"""Forgeries that try to use up the epoch space: a member's vote request or leadership claim
at the last epoch but one, after which no election could ever take place. Not in the default
``impostor_kinds``; schedules ask for them by name."""
NEAR_LIMIT_EPOCH = EPOCH_LIMIT - 2
FORGED_VALUE_BASE = 1 << 40
"""Client values in forged records start here, far above any the simulation proposes."""


@dataclass(frozen=True, slots=True)
class HostilePlan:
    """How hard the hostile process works: one forged message every ``interval_ms``, from
    ``start_ms`` to the end of the fault phase."""

    interval_ms: int = 4
    start_ms: int = 200
    impostor: bool = False
    """Also send in-range messages in members' names (see the module's docstring)."""
    impostor_kinds: tuple[str, ...] = IMPOSTOR_KINDS
    """Which of ``IMPOSTOR_KINDS`` the impostor forges, in equal shares."""

    def __post_init__(self) -> None:
        known = (*IMPOSTOR_KINDS, *EPOCH_EXHAUSTION_KINDS)
        unknown = set(self.impostor_kinds) - set(known)
        if unknown or not self.impostor_kinds:
            raise ValueError(f"impostor kinds must be some of {known}, not {unknown}")


@dataclass(frozen=True, slots=True)
class Target:
    """What the attacker knows of the node it writes to."""

    node_id: int
    epoch: int
    leader_id: int | None
    end_offset: int = 0
    last_epoch: int = 0
    high_watermark: int = 0


class HostileNode:
    def __init__(
        self,
        rng: random.Random,
        members: Sequence[int],
        voters: Sequence[int],
        *,
        impostor: bool = False,
        impostor_kinds: tuple[str, ...] = IMPOSTOR_KINDS,
        directory_of: Callable[[int], str | None] = lambda _node: None,
    ) -> None:
        self.rng = rng
        self.directory_of = directory_of
        """A member's directory id: no secret (DescribeQuorum shows it), so an impostor
        names it to be taken for the member."""
        self.members = tuple(members)
        self.voters = tuple(voters)
        self.impostor = impostor
        self.impostor_kinds = impostor_kinds
        self._forged_values = 0

    # ------------------------------------------------------------------ values

    def _epoch(self, target: Target) -> int:
        return self.rng.choice((0, 1, target.epoch, target.epoch + 1, target.epoch + 50))

    def _bad_epoch(self) -> int:
        return self.rng.choice((EPOCH_LIMIT, EPOCH_LIMIT + 1, 2**40, -1, -(2**31)))

    def _offset(self) -> int:
        return self.rng.choice((0, 1, 7, 1000))

    def _bad_offset(self) -> int:
        return self.rng.choice((-1, -(2**63), INT64_MAX + 1))

    def _node(self) -> int | None:
        return self.rng.choice((None, *self.voters, *STRANGER_IDS[2:4]))

    def _bad_node(self) -> int:
        return self.rng.choice((-5, -(2**31), INT32_MAX + 1))

    # ------------------------------------------------------------------ messages

    def forge(self, target: Target) -> tuple[int, Message]:
        """One message for ``target``, with the id it claims to come from."""
        if self.impostor and self.rng.random() < 0.7:
            return self._impersonate(target)
        roll = self.rng.random()
        if roll < (0.3 if target.leader_id == target.node_id else 0.1):
            return self._claim(target)  # most often at a leader: the claim that stopped one
        if roll < 0.6:
            sender = self.rng.choice((*self.members, *STRANGER_IDS))
            return sender, self._out_of_range(target)
        return self.rng.choice(STRANGER_IDS), self._any(target)

    def _claim(self, target: Target) -> tuple[int, Message]:
        """A member claims to lead (or to stop leading) the target's current epoch."""
        claimant = self.rng.choice([v for v in self.voters if v != target.node_id] or [0])
        if self.rng.random() < 0.5:
            return claimant, BeginQuorumEpochRequest(claimant, target.epoch)
        successors = tuple(self.rng.sample(self.voters, len(self.voters)))
        return claimant, EndQuorumEpochRequest(claimant, target.epoch, successors)

    def _any(self, target: Target) -> Message:
        """A message whose fields may or may not be in range."""
        if self.rng.random() < 0.5:
            return self._out_of_range(target)
        return self._in_range(target)

    def _in_range(self, target: Target) -> Message:
        rng = self.rng
        epoch = self._epoch(target)
        leader = rng.choice(self.voters)
        kind = rng.randrange(10)
        if kind == 0:
            return VoteRequest(epoch + 1, leader, epoch, self._offset(), rng.random() < 0.5)
        if kind == 1:
            granted = rng.random() < 0.5
            return VoteResponse(ErrorCode.NONE, epoch, self._node(), granted, epoch + 1)
        if kind == 2:
            return BeginQuorumEpochRequest(leader, epoch)
        if kind == 3:
            return BeginQuorumEpochResponse(ErrorCode.NONE, epoch, self._node())
        if kind == 4:
            return EndQuorumEpochRequest(leader, epoch, tuple(self.voters))
        if kind == 5:
            return EndQuorumEpochResponse(ErrorCode.NONE, epoch, self._node())
        if kind == 6:
            return FetchRequest(epoch, self._offset(), epoch, rng.choice((0, 50)), 1024)
        if kind == 7:
            return FetchResponse(
                ErrorCode.NONE,
                epoch,
                self._node(),
                self._offset(),
                self._offset(),
                0,
                self._batches(epoch),
            )
        if kind == 8:
            return FetchSnapshotRequest(epoch, SnapshotId(self._offset(), epoch), 0, 1024)
        return FetchSnapshotResponse(
            ErrorCode.NONE, epoch, self._node(), SnapshotId(self._offset(), epoch), 0, 3, 3, b"abc"
        )

    def _batches(self, epoch: int) -> tuple[Batch, ...]:
        if self.rng.random() < 0.5:
            return ()
        return (make_batch(self._offset(), epoch, [b"forged"]),)

    def _out_of_range(self, target: Target) -> Message:
        """A message with at least one field no node may accept."""
        rng = self.rng
        good = self._epoch(target)
        bad = self._bad_epoch()
        leader = rng.choice(self.voters)
        kind = rng.randrange(12)
        if kind == 0:
            return VoteRequest(bad, leader, 0, self._offset(), rng.random() < 0.5)
        if kind == 1:
            return VoteRequest(good + 1, leader, good, self._bad_offset())
        if kind == 2:
            return VoteResponse(ErrorCode.NONE, bad, None, True, bad)
        if kind == 3:
            return BeginQuorumEpochRequest(self._bad_node(), good)
        if kind == 4:
            return BeginQuorumEpochRequest(leader, bad)
        if kind == 5:
            return BeginQuorumEpochResponse(ErrorCode.NONE, bad, self._bad_node())
        if kind == 6:
            return EndQuorumEpochRequest(leader, bad, (self._bad_node(),))
        if kind == 7:
            return FetchRequest(good, self._bad_offset(), good)
        if kind == 8:
            return FetchRequest(good, 0, 0, 0, rng.choice((0, -1, -(2**31))))
        if kind == 9:
            return FetchResponse(
                ErrorCode.NONE, good, leader, 0, 5, 0, diverging=OffsetAndEpoch(0, bad)
            )
        if kind == 10:
            return FetchSnapshotRequest(good, SnapshotId(0, good), self._bad_offset(), -1)
        return FetchSnapshotResponse(
            ErrorCode.NONE, bad, leader, SnapshotId(self._bad_offset(), good), -1
        )

    # ------------------------------------------------------------------ impostor

    def _impersonate(self, target: Target) -> tuple[int, Message]:
        """An in-range message in a member's name, shaped so that the target believes it."""
        rng = self.rng
        others = [v for v in self.voters if v != target.node_id] or list(self.voters)
        member = rng.choice(others)
        leader = target.leader_id if target.leader_id is not None else member
        epoch = target.epoch
        kind = rng.choice(self.impostor_kinds)
        if (
            kind == "vote-request"
        ):  # a vote requested at the next epoch, by a candidate with a longer log
            pre_vote = rng.random() < 0.3
            last = target.end_offset + rng.choice((0, 1, 100))
            return member, VoteRequest(
                epoch + 1,
                member,
                max(target.last_epoch, epoch),
                last,
                pre_vote,
                self.directory_of(member),
                self.directory_of(target.node_id),
            )
        if kind == "vote-near-limit":  # a real vote at the last epoch that leaves room for one
            return member, VoteRequest(
                NEAR_LIMIT_EPOCH,
                member,
                target.last_epoch,
                target.end_offset + 100,
                False,
                self.directory_of(member),
                self.directory_of(target.node_id),
            )
        if kind == "begin-near-limit":  # a member says it leads the last epoch but one
            return member, BeginQuorumEpochRequest(
                member, NEAR_LIMIT_EPOCH, self.directory_of(target.node_id)
            )
        if kind == "vote-granted":  # a vote granted, for the round the target runs or the next one
            candidate_epoch = epoch + rng.choice((0, 0, 1))
            pre_vote = rng.random() < 0.3
            answer_epoch = epoch if pre_vote else candidate_epoch
            return member, VoteResponse(
                ErrorCode.NONE, answer_epoch, None, True, candidate_epoch, pre_vote
            )
        if kind == "begin-epoch":  # a member says it leads this epoch (when unknown) or the next
            claimed = epoch if target.leader_id is None else epoch + 1
            return member, BeginQuorumEpochRequest(
                member, claimed, self.directory_of(target.node_id)
            )
        if kind == "end-epoch":  # the leader (or a member) resigns in favour of someone
            successors = tuple(rng.sample(self.voters, len(self.voters)))
            return leader, EndQuorumEpochRequest(leader, epoch, successors)
        if kind == "fetch":  # a voter fetches at the leader's log end: counts toward the HW
            return member, FetchRequest(
                epoch,
                target.end_offset,
                target.last_epoch,
                0,
                1024,
                replica_directory_id=self.directory_of(member),
            )
        if kind == "fetch-answer":  # the leader answers a fetch with a forged record and a new HW
            return leader, self._forged_fetch_answer(target, epoch, leader)
        # "snapshot-answer": a chunk of a forged snapshot, for a follower downloading one
        snapshot_id = SnapshotId(max(target.high_watermark, 1), epoch)
        data = msgpack.packb([snapshot_id.end_offset, 0, [self._forged_value()]])
        return leader, FetchSnapshotResponse(
            ErrorCode.NONE, epoch, leader, snapshot_id, 0, len(data), len(data), data
        )

    def _forged_fetch_answer(self, target: Target, epoch: int, leader: int) -> FetchResponse:
        base = target.end_offset
        batch = make_batch(base, epoch, [encode_value(self._forged_value())])
        return FetchResponse(ErrorCode.NONE, epoch, leader, base, base + 1, 0, (batch,))

    def _forged_value(self) -> int:
        self._forged_values += 1
        return FORGED_VALUE_BASE + self._forged_values
