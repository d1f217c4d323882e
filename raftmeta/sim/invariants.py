"""The safety invariants the simulator checks after every event.

The checker watches from outside: it sees what each node made durable, what it sent and what
it delivered to its state machine, and keeps the one true committed log, built from the first
delivery of each committed batch. It never trusts a core's own bookkeeping.

A wiped disk comes back with a new directory id (KIP-853), so the wiped node is no longer the
voter it was: it cannot vote and its fetches do not count until it is added again. Runs with
wipes are therefore held to every invariant, with no relaxation.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field

from raftmeta.raft.batch import Batch, SnapshotId
from raftmeta.raft.control import membership_in
from raftmeta.raft.limits import election_state_problem
from raftmeta.raft.majority import majority_size
from raftmeta.raft.messages import Message, VoteResponse
from raftmeta.raft.state import ElectionState
from raftmeta.raft.voters import ReplicaKey, VoterSet, majorities_overlap

ONE_LEADER_PER_EPOCH = "at most one leader per epoch"
EPOCH_NEVER_DECREASES = "persisted epoch never decreases"
VOTE_ONCE_PER_EPOCH = "a node votes once per epoch, and only once the vote is durable"
HW_NEVER_DECREASES = "high watermark never decreases"
HW_HELD_BY_MAJORITY = "high watermark is held by a majority of voters"
LEADER_COMMITS_OWN_EPOCH = "a leader commits only through an entry of its own epoch"
COMMITTED_PREFIX_AGREES = "committed prefixes are identical on every node"
SNAPSHOT_AT_LOG_START = "a snapshot sits at the log start"
LEADER_NEVER_LOADS_SNAPSHOT = "a leader never loads a snapshot"
ACKED_EXACTLY_ONCE_IN_ORDER = "every acknowledged append is committed exactly once, in order"
LIVENESS = "after faults stop, a leader commits new appends within the bound"
NO_NODE_STOPS = "no exception escapes a core"
PERSISTED_IN_RANGE = "a node persists only epochs in range and ids of voters"
MAJORITIES_OVERLAP = "any two majorities that could commit in the same epoch overlap"
CHANGE_AFTER_OWN_COMMIT = "a leader changes the voters only once its epoch has committed"
LEADER_HOLDS_COMMITTED = "a state machine told it leads holds every record committed by then"


class InvariantViolation(AssertionError):
    def __init__(self, invariant: str, detail: str) -> None:
        super().__init__(f"{invariant}: {detail}")
        self.invariant = invariant
        self.detail = detail


def value_digest(previous: int, value: int) -> int:
    """A rolling digest of applied values; int and tuple hashes are stable across runs."""
    return hash((previous, value))


def decode_value(record: bytes) -> int:
    return int.from_bytes(record, "big")


def encode_value(value: int) -> bytes:
    return value.to_bytes(8, "big")


@dataclass(slots=True)
class _TruthLog:
    """The committed log as first delivered anywhere; every later delivery must match it."""

    batches: dict[int, Batch] = field(default_factory=dict)
    bases: list[int] = field(default_factory=list)
    end: int = 0
    digest_at: dict[int, int] = field(default_factory=lambda: {0: 0})
    digest: int = 0
    value_offsets: dict[int, int] = field(default_factory=dict)

    def batch_holding(self, offset: int) -> Batch | None:
        index = bisect.bisect_right(self.bases, offset) - 1
        if index < 0:
            return None
        batch = self.batches[self.bases[index]]
        return batch if offset <= batch.last_offset else None


def same_batch(a: Batch, b: Batch) -> bool:
    return a is b or (
        a.base_offset == b.base_offset
        and a.epoch == b.epoch
        and a.record_count == b.record_count
        and a.payload == b.payload
    )


class InvariantChecker:
    def __init__(self, voters: Iterable[int]) -> None:
        self.voters = frozenset(voters)
        """Every node id that is, was or may become a voter."""
        self.truth = _TruthLog()
        self.leaders: dict[int, int] = {}
        self.votes: dict[tuple[int, int], int] = {}
        self.durable_epochs: dict[int, int] = {}
        self.high_watermarks: dict[int, int] = {}
        self.acked: list[tuple[int, int]] = []
        """(value, offset) of every append acknowledged to a client."""
        self.committed_voters: frozenset[ReplicaKey] = frozenset()
        """The voter set of the committed log (its latest committed VotersRecord)."""

    def fail(self, invariant: str, detail: str) -> None:
        raise InvariantViolation(invariant, detail)

    # -- hooks -------------------------------------------------------------------------

    def start_membership(self, voters: VoterSet) -> None:
        """The voter set every disk was formatted with (the bootstrap)."""
        self.committed_voters = frozenset(voters.keys)

    def leader_changed_voters(
        self, node_id: int, epoch: int, change_offset: int, epoch_committed: bool
    ) -> None:
        """A leader holds a voter change of its own epoch; it may have appended it only once
        an entry of its epoch was committed. Before that, a change a previous leader left
        uncommitted on other nodes may still commit, and the two together are two changes."""
        if not epoch_committed:
            self.fail(
                CHANGE_AFTER_OWN_COMMIT,
                f"leader {node_id} of epoch {epoch} changed the voters at {change_offset} "
                "before committing an entry of its epoch",
            )

    def leader_voter_sets(
        self, node_id: int, epoch: int, sets: list[frozenset[ReplicaKey]]
    ) -> None:
        """``sets``: the voter set at a leader's high watermark, then every set appended to
        its log above it. Each may decide a commit in this epoch (a change takes effect on
        append), so every majority of one must meet every majority of each other one."""
        for index, first in enumerate(sets):
            for second in sets[index + 1 :]:
                if not majorities_overlap(first, second):
                    self.fail(
                        MAJORITIES_OVERLAP,
                        f"leader {node_id} of epoch {epoch} may commit under "
                        f"{sorted(map(str, first))} and under {sorted(map(str, second))}, "
                        "whose majorities need not meet",
                    )

    def node_restarted(self, node_id: int, wiped: bool) -> None:
        self.high_watermarks.pop(node_id, None)
        if wiped:
            self.durable_epochs.pop(node_id, None)

    def saw_leader(self, node_id: int, epoch: int) -> None:
        existing = self.leaders.setdefault(epoch, node_id)
        if existing != node_id:
            self.fail(ONE_LEADER_PER_EPOCH, f"nodes {existing} and {node_id} led epoch {epoch}")

    def saw_high_watermark(self, node_id: int, high_watermark: int) -> None:
        previous = self.high_watermarks.get(node_id, -1)
        if high_watermark < previous:
            self.fail(
                HW_NEVER_DECREASES,
                f"node {node_id} moved its high watermark from {previous} to {high_watermark}",
            )
        self.high_watermarks[node_id] = high_watermark

    def synced(
        self,
        node_id: int,
        election: ElectionState,
        truncations: list[tuple[int, Batch]],
        log_start: int,
        start_snapshot: SnapshotId | None,
        snapshots: Iterable[SnapshotId],
    ) -> None:
        problem = election_state_problem(election)
        strangers = {election.voted_id, election.leader_id} - {None} - self.voters
        if problem is not None or strangers:
            self.fail(
                PERSISTED_IN_RANGE,
                f"node {node_id} persisted {election}: {problem or f'{strangers} not voters'}",
            )
        previous = self.durable_epochs.get(node_id, -1)
        if election.epoch < previous:
            self.fail(
                EPOCH_NEVER_DECREASES,
                f"node {node_id} persisted epoch {election.epoch} after {previous}",
            )
        self.durable_epochs[node_id] = election.epoch
        for offset, removed in truncations:
            committed = self.truth.batches.get(removed.base_offset)
            if committed is not None and same_batch(committed, removed):
                self.fail(
                    COMMITTED_PREFIX_AGREES,
                    f"node {node_id} truncated committed batch at {removed.base_offset} "
                    f"(cut to {offset})",
                )
        if log_start > 0 and (
            start_snapshot is None
            or start_snapshot.end_offset != log_start
            or start_snapshot not in set(snapshots)
        ):
            self.fail(
                SNAPSHOT_AT_LOG_START,
                f"node {node_id} log starts at {log_start} with snapshot {start_snapshot}",
            )

    def sent(self, source: int, destination: int, message: Message, durable: ElectionState) -> None:
        if not isinstance(message, VoteResponse) or not message.vote_granted:
            return
        if message.pre_vote:
            return
        # A durable later epoch also binds the vote: the node can never vote in this one again.
        if durable.epoch < message.epoch or (
            durable.epoch == message.epoch and durable.voted_id != destination
        ):
            self.fail(
                VOTE_ONCE_PER_EPOCH,
                f"node {source} granted its vote in epoch {message.epoch} to {destination} "
                f"while its durable state was {durable}",
            )
        key = (source, message.epoch)
        existing = self.votes.setdefault(key, destination)
        if existing != destination:
            self.fail(
                VOTE_ONCE_PER_EPOCH,
                f"node {source} voted for {existing} and {destination} in epoch {message.epoch}",
            )

    def loaded_snapshot(
        self, node_id: int, is_leader: bool, snapshot_id: SnapshotId, digest: int
    ) -> None:
        if is_leader:
            self.fail(LEADER_NEVER_LOADS_SNAPSHOT, f"leader {node_id} loaded {snapshot_id}")
        expected = self.truth.digest_at.get(snapshot_id.end_offset)
        if expected is not None and expected != digest:
            self.fail(
                COMMITTED_PREFIX_AGREES,
                f"node {node_id} loaded snapshot {snapshot_id} that disagrees with the log",
            )

    def leader_told(self, node_id: int, epoch: int, delivered: int, high_watermark: int) -> None:
        """A node's state machine hears that it leads only once it holds every batch
        committed by then: a controller that activated on a partial state would validate
        requests against records it had not read yet."""
        if delivered < high_watermark:
            self.fail(
                LEADER_HOLDS_COMMITTED,
                f"node {node_id} was told it leads epoch {epoch} with committed records "
                f"delivered up to {delivered} of {high_watermark}",
            )

    def committed(self, node_id: int, batch: Batch) -> None:
        truth = self.truth
        existing = truth.batches.get(batch.base_offset)
        if existing is not None:
            if not same_batch(existing, batch):
                self.fail(
                    COMMITTED_PREFIX_AGREES,
                    f"node {node_id} committed a different batch at {batch.base_offset} "
                    f"(epoch {batch.epoch}, committed epoch {existing.epoch})",
                )
            return
        if batch.base_offset != truth.end:
            if batch.base_offset < truth.end:
                self.fail(
                    COMMITTED_PREFIX_AGREES,
                    f"node {node_id} committed a batch at {batch.base_offset} that splits a "
                    "committed batch",
                )
            self.fail(
                COMMITTED_PREFIX_AGREES,
                f"node {node_id} committed {batch.base_offset} past the known end {truth.end}",
            )
        truth.batches[batch.base_offset] = batch
        truth.bases.append(batch.base_offset)
        if not batch.is_control:
            for record in batch.records():
                value = decode_value(record)
                if value in truth.value_offsets:
                    self.fail(
                        ACKED_EXACTLY_ONCE_IN_ORDER,
                        f"value {value} committed twice (offsets "
                        f"{truth.value_offsets[value]} and {batch.base_offset})",
                    )
                truth.value_offsets[value] = batch.base_offset
                truth.digest = value_digest(truth.digest, value)
        else:
            _, voters = membership_in(batch)
            if voters is not None:
                self.committed_voters = frozenset(voters.keys)
        truth.end = batch.next_offset
        truth.digest_at[truth.end] = truth.digest

    def leader_committed(
        self,
        node_id: int,
        epoch: int,
        high_watermark: int,
        epoch_of_last_committed: int,
        durable_holds: dict[ReplicaKey, bool],
    ) -> None:
        """``durable_holds`` says, for each voter (id and directory) of the leader's current
        set, whether that very directory durably holds the high watermark's batch."""
        if epoch_of_last_committed != epoch:
            self.fail(
                LEADER_COMMITS_OWN_EPOCH,
                f"leader {node_id} of epoch {epoch} committed up to {high_watermark}, an entry "
                f"of epoch {epoch_of_last_committed}",
            )
        holders = sorted(v for v, holds in durable_holds.items() if holds)
        if len(holders) < majority_size(len(durable_holds)):
            self.fail(
                HW_HELD_BY_MAJORITY,
                f"leader {node_id} moved the high watermark to {high_watermark}, durable only "
                f"on {holders}",
            )

    def acknowledged(self, value: int, offset: int) -> None:
        self.acked.append((value, offset))

    def final_check(self) -> None:
        truth = self.truth
        for value, offset in self.acked:
            if truth.value_offsets.get(value) != offset:
                self.fail(
                    ACKED_EXACTLY_ONCE_IN_ORDER,
                    f"acknowledged value {value} at {offset} is not in the committed log there",
                )
        by_offset = sorted(self.acked, key=lambda item: (item[1], item[0]))
        values = [value for value, _ in by_offset]
        if values != sorted(values):
            self.fail(ACKED_EXACTLY_ONCE_IN_ORDER, "acknowledged values committed out of order")
