"""The consensus core: a Raft node as a plain object driven by messages and time.

Everything the core learns arrives through ``step`` (a message from a peer), ``tick`` (the
monotonic clock moved), ``propose`` (the application wants records appended), ``resign``,
``unreachable`` (a request got no answer, or the peer's connection was closed or refused),
``snapshot_taken`` and ``advance`` (the runtime made a Ready durable). Everything it wants
done leaves through ``ready()``. It does no I/O, reads no clock and draws randomness only
from the ``random.Random`` it is handed, so a simulator can replay any run from its seed.

Every message is checked once, at the top of ``step``, before it can change anything: its
fields must be in range, it must come from a voter (only fetches may come from anyone), and it
must not contradict what this node knows (another leader for an epoch this node led).
A refused message is answered with a Kafka error if it is a request, reported in the next
Ready's ``rejected`` and otherwise ignored; assertions are kept for the core's own invariants.

Epoch comparison happens once, also at the top of ``step``; role handlers then only deal with
messages of their own epoch.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from raftmeta.errors import ErrorCode
from raftmeta.raft.batch import Batch, SnapshotId, make_batch
from raftmeta.raft.config import RaftConfig
from raftmeta.raft.control import (
    KRAFT_VERSION_DYNAMIC,
    KRAFT_VERSION_STATIC,
    leader_change_batch,
    membership_batch,
)
from raftmeta.raft.fetch_position import check_fetch_position
from raftmeta.raft.limits import epoch_in_range, node_id_in_range
from raftmeta.raft.log import LogInvariantError, RaftLog
from raftmeta.raft.majority import majority_size
from raftmeta.raft.membership import Membership, MembershipHistory
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
    Request,
    VoteRequest,
    VoteResponse,
)
from raftmeta.raft.progress import ProgressTracker
from raftmeta.raft.ready import (
    AdvanceLogStart,
    AppendBatches,
    InstallSnapshot,
    LeaderAndEpoch,
    LogOp,
    Outbound,
    Ready,
    RejectedInput,
    TruncateLog,
    WriteSnapshotChunk,
)
from raftmeta.raft.roles import (
    Candidate,
    Follower,
    Leader,
    ParkedFetch,
    Prospective,
    Resigned,
    Role,
    RoleState,
    Unattached,
)
from raftmeta.raft.state import ElectionState
from raftmeta.raft.validation import Refusal, message_problem, refusal_response
from raftmeta.raft.voter_change import (
    LeaderView,
    VoterChangeResult,
    add_problem,
    remove_problem,
    update_problem,
)
from raftmeta.raft.voters import Endpoint, ReplicaKey, Voter, VoterSet

NO_DEADLINE = 1 << 62


class NotLeaderError(Exception):
    """Raised by ``propose`` on a node that is not the leader; names the leader if known."""

    def __init__(self, leader_id: int | None, epoch: int) -> None:
        super().__init__(f"not the leader (leader {leader_id}, epoch {epoch})")
        self.leader_id = leader_id
        self.epoch = epoch


@dataclass(frozen=True, slots=True)
class AppendResult:
    base_offset: int
    last_offset: int
    epoch: int


@dataclass(frozen=True, slots=True)
class ReplicaState:
    replica_id: int
    log_end_offset: int | None
    last_fetch_ms: int | None
    last_caught_up_ms: int | None
    directory_id: str | None = None


@dataclass(frozen=True, slots=True)
class QuorumDescription:
    leader_id: int | None
    leader_epoch: int
    high_watermark: int
    voters: tuple[ReplicaState, ...]
    observers: tuple[ReplicaState, ...]


@dataclass(slots=True)
class _Download:
    snapshot_id: SnapshotId
    position: int = 0
    size: int | None = None
    membership: Membership | None = None


class RaftCore:
    def __init__(
        self,
        node_id: int,
        voters: frozenset[int] | VoterSet,
        config: RaftConfig,
        *,
        election_state: ElectionState,
        log: RaftLog,
        now_ms: int,
        rng: random.Random,
        latest_snapshot: SnapshotId | None = None,
        latest_snapshot_size: int = 0,
        directory_id: str | None = None,
        kraft_version: int = KRAFT_VERSION_STATIC,
        log_repaired: bool = False,
    ) -> None:
        """``voters`` and ``kraft_version`` are the membership at the log start: the latest
        snapshot's, or the bootstrap's (node ids alone for static voters from
        ``controller.quorum.voters``, or a ``VoterSet`` with directory ids); VotersRecords in
        the log after it override it. ``directory_id`` is this node's own (from
        ``meta.properties``). ``log_repaired``: start-up recovery cut the log (a torn tail, a
        flipped bit), so records this node acknowledged may be gone; it then abstains from
        votes until it has caught up with a leader (see :meth:`abstaining`)."""
        if not voters:
            raise ValueError("a quorum needs at least one voter")
        self.node_id = node_id
        self.directory_id = directory_id
        self.local_key = ReplicaKey(node_id, directory_id)
        self._membership = MembershipHistory(
            Membership(
                kraft_version, voters if isinstance(voters, VoterSet) else VoterSet.of(voters)
            )
        )
        for batch in log.batches():
            self._membership.appended(batch)
        self._now_ms = now_ms
        """The latest time any input carried, for work that follows from a log change."""
        self.config = config
        self.log = log
        self.rng = rng
        self._election = election_state
        self._election_dirty = False
        self.high_watermark = log.start_offset
        self._delivered_offset = log.start_offset
        self._durable_end = log.end_offset
        self._truncated_since_ready: int | None = None
        self._latest_snapshot: SnapshotId | None = latest_snapshot or log.snapshot
        self._latest_snapshot_size = latest_snapshot_size
        self._election_retries = 0
        self._abstain_until_ms: int | None = (
            now_ms + config.repaired_voter_abstain_ms if log_repaired else None
        )
        """While set and not passed, this voter grants no votes, its own included: its log may
        lack records it acknowledged, which its vote would let a candidate without them win
        (Raft assumes a voter never forgets an acknowledged record). Cleared once it holds a
        leader's log up to the leader's high watermark; the time bound is the way out when
        every voter lost its tail at once (a power cut), where waiting would never end."""
        self._pre_vote_refused_ms = -NO_DEADLINE
        """When a majority last refused this node's pre-vote while it followed a leader."""

        self._log_ops: list[LogOp] = []
        self._messages: list[Outbound] = []
        self._messages_after_persist: list[Outbound] = []
        self._loaded_snapshot: SnapshotId | None = None
        self._hw_changed = False
        self._leader_change: LeaderAndEpoch | None = None
        self._rejected: list[RejectedInput] = []
        self._ready_in_flight: Ready | None = None

        self._fetch_in_flight: tuple[int, int] | None = None
        """(destination, fetch offset or snapshot position) of the outstanding fetch."""
        self._fetch_retry_ms = NO_DEADLINE
        self._download: _Download | None = None

        self.state: RoleState
        if self.is_voter and election_state.leader_id == node_id:
            # We led this epoch before a restart: we may not lead it again, and our vote in it
            # is spent. Wait out an election timeout so the rest of the quorum can move on.
            self.state = Resigned(now_ms + self._election_timeout(), ())
        elif election_state.leader_id is not None and election_state.leader_id != node_id:
            self.state = Follower(
                election_state.leader_id, self._fetch_deadline(now_ms), last_heard_ms=now_ms
            )
            self._send_fetch(now_ms)
        else:
            self.state = Unattached(now_ms + self._election_timeout())
            if not self.is_voter:
                self._send_fetch(now_ms)
        self._note_leader_change()

    # ----------------------------------------------------------------- read-only views

    @property
    def role(self) -> Role:
        return self.state.role

    @property
    def voter_set(self) -> VoterSet:
        """The latest voter set in the log, committed or not (KIP-853: effective on append)."""
        return self._membership.current.voters

    @property
    def kraft_version(self) -> int:
        return self._membership.current.kraft_version

    def membership_at(self, end_offset: int) -> Membership:
        """The membership a snapshot ending at ``end_offset`` must hold (for the runtime to
        store with the snapshot it writes); ``end_offset`` must be in the log."""
        return self._membership.at(end_offset)

    @property
    def may_vote(self) -> bool:
        """Whether this node votes and campaigns: a voter, or one that only an uncommitted
        VotersRecord removed. The nodes that lack that record still count on its vote, and
        it may hold the longest log (a leader that appended its own removal and crashed):
        were it to stand aside, a quorum could be left without a leader for good. As a
        candidate it counts votes under its latest set, which excludes itself."""
        return self.is_voter or (
            self._membership.at(self.high_watermark).voters.is_voter(self.local_key)
        )

    def _may_vote_on(self, request: VoteRequest) -> bool:
        """Votes are answered by voters, and (Raft answers requests without consulting its
        own configuration) by a node a dynamic quorum's candidate names by its directory id:
        the VotersRecord that added it may not have reached it before its leader died, and
        the candidates that have it need its vote."""
        return self.may_vote or self._names_this_voter(request)

    @property
    def voters(self) -> frozenset[int]:
        """The node ids of the current voters."""
        return self.voter_set.ids

    @property
    def is_voter(self) -> bool:
        """Whether this node, on this directory, is one of the current voters."""
        return self.voter_set.is_voter(self.local_key)

    @property
    def epoch(self) -> int:
        return self._election.epoch

    @property
    def election_state(self) -> ElectionState:
        return self._election

    @property
    def leader_id(self) -> int | None:
        """The leader this node believes is serving now; a resigned leader names nobody."""
        state = self.state
        if isinstance(state, Leader):
            return self.node_id
        if isinstance(state, Follower):
            return state.leader_id
        return None

    @property
    def majority(self) -> int:
        return majority_size(len(self.voters))

    @property
    def latest_snapshot(self) -> SnapshotId | None:
        return self._latest_snapshot

    def next_deadline_ms(self) -> int:
        state = self.state
        deadline = self._fetch_retry_ms
        if isinstance(state, Unattached):
            if self.may_vote:
                deadline = min(deadline, state.election_deadline_ms)
        elif isinstance(state, Prospective | Candidate | Resigned):
            deadline = min(deadline, state.election_deadline_ms)
            if isinstance(state, Resigned) and state.end_epoch_due_ms:
                deadline = min(deadline, *state.end_epoch_due_ms.values())
        elif isinstance(state, Follower):
            deadline = min(deadline, state.fetch_deadline_ms)
        elif isinstance(state, Leader):
            deadline = min(deadline, self._check_quorum_deadline(state))
            if state.parked:
                deadline = min(deadline, *(p.deadline_ms for p in state.parked.values()))
            if state.begin_epoch_due_ms:
                deadline = min(deadline, *state.begin_epoch_due_ms.values())
        return deadline

    def describe(self) -> QuorumDescription:
        state = self.state
        voters: list[ReplicaState] = []
        observers: list[ReplicaState] = []
        if isinstance(state, Leader):
            for replica_id in state.progress:
                progress = state.progress[replica_id]
                end = progress.end_offset
                if replica_id == self.node_id:
                    end = min(self._durable_end, self.log.end_offset)
                key = self.voter_set.key_of(replica_id)
                voters.append(
                    ReplicaState(
                        replica_id,
                        end,
                        progress.last_fetch_ms,
                        progress.last_caught_up_ms,
                        None if key is None else key.directory_id,
                    )
                )
            for key, progress in state.progress.observers():
                end = progress.end_offset
                if key == self.local_key:
                    end = min(self._durable_end, self.log.end_offset)
                observers.append(
                    ReplicaState(
                        key.node_id,
                        end,
                        progress.last_fetch_ms,
                        progress.last_caught_up_ms,
                        key.directory_id,
                    )
                )
        return QuorumDescription(
            self.leader_id, self.epoch, self.high_watermark, tuple(voters), tuple(observers)
        )

    # ----------------------------------------------------------------- inputs

    def tick(self, now_ms: int) -> None:
        self._now_ms = now_ms
        state = self.state
        if now_ms >= self._fetch_retry_ms:
            self._fetch_retry_ms = NO_DEADLINE
            self._fetch_in_flight = None
            self._send_fetch(now_ms)
        if isinstance(state, Unattached):
            if self.may_vote and now_ms >= state.election_deadline_ms:
                self._become_prospective(now_ms)
        elif isinstance(state, Prospective | Candidate):
            if now_ms >= state.election_deadline_ms:
                self._become_prospective(now_ms)
        elif isinstance(state, Resigned):
            for voter, due in sorted(state.end_epoch_due_ms.items()):
                if now_ms >= due:
                    self._send_end_quorum_epoch(voter, state, now_ms)
            if now_ms >= state.election_deadline_ms:
                if self.may_vote:
                    self._become_prospective(now_ms)
                else:  # a leader that removed itself: it follows whoever leads next
                    self._become_observer(now_ms)
        elif isinstance(state, Follower):
            if now_ms >= state.fetch_deadline_ms:
                if self.may_vote:
                    self._become_prospective(now_ms)
                else:
                    self._become_unattached(self.epoch, now_ms)
        elif isinstance(state, Leader):
            self._leader_tick(state, now_ms)

    def step(self, sender: int, message: Message, now_ms: int) -> None:
        self._now_ms = now_ms
        refusal = self._input_problem(sender, message)
        if refusal is not None:
            self._refuse(sender, message, refusal)
            return
        if not self._observe_epoch(sender, message, now_ms):
            return
        if isinstance(message, FetchRequest):
            self._on_fetch_request(sender, message, now_ms)
        elif isinstance(message, FetchResponse):
            self._on_fetch_response(sender, message, now_ms)
        elif isinstance(message, VoteRequest):
            self._on_vote_request(sender, message, now_ms)
        elif isinstance(message, VoteResponse):
            self._on_vote_response(sender, message, now_ms)
        elif isinstance(message, BeginQuorumEpochRequest):
            self._reply(
                sender, BeginQuorumEpochResponse(ErrorCode.NONE, self.epoch, self.leader_id)
            )
        elif isinstance(message, EndQuorumEpochRequest):
            self._on_end_quorum_epoch(sender, message, now_ms)
        elif isinstance(message, FetchSnapshotRequest):
            self._on_fetch_snapshot_request(sender, message, now_ms)
        elif isinstance(message, FetchSnapshotResponse):
            self._on_fetch_snapshot_response(sender, message, now_ms)
        elif isinstance(message, BeginQuorumEpochResponse):
            # A newer epoch was taken in by _observe_epoch; an answer in this epoch tells the
            # leader that its link to the voter works, which ranks successors on a handover.
            state = self.state
            if (
                isinstance(state, Leader)
                and message.error is ErrorCode.NONE
                and message.epoch == self.epoch
            ):
                state.progress.answered(sender)
        elif isinstance(message, EndQuorumEpochResponse):
            pass  # Its only news, a newer epoch, was taken in by _observe_epoch.
        else:  # pragma: no cover - the message union is closed
            raise TypeError(f"unknown message {message!r}")

    def propose(self, records: Sequence[bytes], now_ms: int, timestamp_ms: int = 0) -> AppendResult:
        self._now_ms = now_ms
        state = self.state
        if not isinstance(state, Leader):
            raise NotLeaderError(self.leader_id, self.epoch)
        batch = make_batch(self.log.end_offset, self.epoch, records, timestamp_ms=timestamp_ms)
        if len(batch.payload) > self.config.max_batch_bytes:
            raise ValueError(
                f"batch of {len(batch.payload)} bytes exceeds {self.config.max_batch_bytes}"
            )
        self._append_local(batch)
        self._complete_parked_fetches(state, now_ms)
        return AppendResult(batch.base_offset, batch.last_offset, batch.epoch)

    # ----------------------------------------------------------------- voter changes

    def add_voter(self, voter: Voter, now_ms: int) -> VoterChangeResult:
        """AddRaftVoter on the leader: the new voter, fetching as an observer from its own
        directory, must have caught up with the log end recently; then the new set is
        appended (and counts at once). Done when the returned offset commits."""
        self._now_ms = now_ms
        view = self._leader_view()
        if isinstance(view, VoterChangeResult):
            return view
        state = self.state
        assert isinstance(state, Leader)
        progress = state.progress.progress(voter.key)
        problem = add_problem(view, voter, progress, now_ms, self.config.fetch_timeout_ms)
        return problem or self._append_voters(self.voter_set.with_voter(voter), now_ms)

    def remove_voter(self, key: ReplicaKey, now_ms: int) -> VoterChangeResult:
        """RemoveRaftVoter on the leader. A leader that removes itself leads until the change
        commits, then resigns."""
        self._now_ms = now_ms
        view = self._leader_view()
        if isinstance(view, VoterChangeResult):
            return view
        problem = remove_problem(view, key)
        return problem or self._append_voters(self.voter_set.without(key.node_id), now_ms)

    def update_voter(self, voter: Voter, now_ms: int) -> VoterChangeResult:
        """UpdateRaftVoter on the leader: a voter's new endpoints, same id and directory."""
        self._now_ms = now_ms
        view = self._leader_view()
        if isinstance(view, VoterChangeResult):
            return view
        problem = update_problem(view, voter)
        return problem or self._append_voters(self.voter_set.with_voter(voter), now_ms)

    def upgrade_to_dynamic(
        self,
        endpoints: Mapping[int, tuple[Endpoint, ...]],
        now_ms: int,
        *,
        validate_only: bool = False,
    ) -> VoterChangeResult:
        """kraft.version 0 -> 1 on the leader: the static voters become the first VotersRecord,
        each under the directory id its recent fetches carry and with its ``endpoints``. The
        majorities do not change (the same node ids), so this is safe at any time the leader
        has committed in its epoch; every voter must be fetching, or its directory is unknown.
        Done when the returned offset commits; no offset if the quorum is dynamic already."""
        self._now_ms = now_ms
        state = self.state
        if not isinstance(state, Leader):
            return VoterChangeResult(
                ErrorCode.NOT_LEADER_OR_FOLLOWER, f"not the leader (leader {self.leader_id})"
            )
        if self.kraft_version >= KRAFT_VERSION_DYNAMIC:
            return VoterChangeResult(ErrorCode.NONE, "the quorum is dynamic already")
        if self.high_watermark <= state.epoch_start_offset:
            return VoterChangeResult(
                ErrorCode.REQUEST_TIMED_OUT,
                "the leader has not yet committed a record of its epoch; retry shortly",
            )
        voters: list[Voter] = []
        for node_id in sorted(self.voters):
            directory = self.directory_id
            if node_id != self.node_id:
                progress = state.progress[node_id]
                directory = progress.directory_id
                caught_up = progress.last_caught_up_ms
                if caught_up is None or now_ms - caught_up > self.config.fetch_timeout_ms:
                    return VoterChangeResult(
                        ErrorCode.REQUEST_TIMED_OUT,
                        f"voter {node_id} has not fetched recently; every voter must be up",
                    )
            if directory is None:
                return VoterChangeResult(
                    ErrorCode.INVALID_REQUEST,
                    f"voter {node_id}'s directory has no directory.id (formatted before they "
                    "existed); it cannot be a dynamic voter",
                )
            if not endpoints.get(node_id):
                return VoterChangeResult(
                    ErrorCode.INVALID_REQUEST, f"no endpoint known for voter {node_id}"
                )
            voters.append(Voter(ReplicaKey(node_id, directory), endpoints[node_id]))
        if validate_only:
            listed = ", ".join(str(voter.key) for voter in voters)
            return VoterChangeResult(ErrorCode.NONE, f"the first VotersRecord would be {listed}")
        batch = membership_batch(
            self.log.end_offset,
            self.epoch,
            VoterSet(voters),
            kraft_version=KRAFT_VERSION_DYNAMIC,
        )
        self._append_local(batch)
        self._complete_parked_fetches(state, now_ms)
        return VoterChangeResult(ErrorCode.NONE, "", batch.base_offset, batch.epoch)

    def _leader_view(self) -> LeaderView | VoterChangeResult:
        state = self.state
        if not isinstance(state, Leader):
            return VoterChangeResult(
                ErrorCode.NOT_LEADER_OR_FOLLOWER, f"not the leader (leader {self.leader_id})"
            )
        pending = self._membership.last_change_offset
        return LeaderView(
            self.voter_set,
            self.kraft_version,
            committed_own_epoch=self.high_watermark > state.epoch_start_offset,
            change_pending=pending is not None and pending >= self.high_watermark,
        )

    def _append_voters(self, voters: VoterSet, now_ms: int) -> VoterChangeResult:
        state = self.state
        assert isinstance(state, Leader)
        batch = membership_batch(self.log.end_offset, self.epoch, voters)
        self._append_local(batch)
        self._complete_parked_fetches(state, now_ms)
        return VoterChangeResult(ErrorCode.NONE, "", batch.base_offset, batch.epoch)

    def resign(self, now_ms: int, *, shutting_down: bool = True) -> None:
        """Step down gracefully, naming successors by how far they have replicated.

        A node that resigns to shut down holds back from campaigning for twice the fetch timeout
        (how long a runtime lingers for its successor): winning the next epoch itself would
        undo the handover. If it is still running after that, something stalled, and taking
        part again beats a quorum that cannot elect. Without ``shutting_down`` it campaigns
        after an election timeout as usual.
        """
        state = self.state
        if not isinstance(state, Leader):
            return
        ranked = state.progress.successors()
        self._leave_leadership(state, now_ms)
        deadline = now_ms + self._election_timeout()
        if shutting_down:
            deadline += 2 * self.config.fetch_timeout_ms
        resigned = Resigned(deadline, ranked)
        self.state = resigned
        for voter in ranked:
            self._send_end_quorum_epoch(voter, resigned, now_ms)

    def unreachable(
        self, destination: int, request: Request, now_ms: int, *, peer_down: bool = False
    ) -> None:
        """The runtime could not get ``request`` to ``destination`` or no answer came back
        (the connection was refused, reset or is still reconnecting).

        A fetch that failed that way is sent again after the retry backoff rather than after
        ``fetch_resend_ms``: otherwise one fetch lost to a reconnecting channel, typically
        the first one to a leader that has just been restarted, costs as much as the fetch
        timeout, which then fires first and starts an election against a live leader. Any
        other request is left to its own timer, as before.

        ``peer_down`` says more: the connection to ``destination`` was closed by its end or
        refused, which is what the OS does for a process that died. When that is the leader a
        voter follows, waiting out the whole fetch timeout only delays the election, so the
        voter campaigns after a short random delay instead, and an observer looks for the
        new leader at once (see :meth:`_leader_unreachable`).
        """
        if peer_down:
            self._leader_unreachable(destination, now_ms)
        if not isinstance(request, FetchRequest | FetchSnapshotRequest):
            return
        in_flight = self._fetch_in_flight
        if in_flight is None or in_flight[0] != destination:
            return
        position = request.fetch_offset if isinstance(request, FetchRequest) else request.position
        if in_flight[1] != position:
            return
        self._retry_fetch_later(now_ms)

    def _leader_unreachable(self, destination: int, now_ms: int) -> None:
        """The leader this voter follows looks dead: campaign soon, through a pre-vote.

        Only a hint, so it moves nothing but timing: the voter still starts with a pre-vote,
        which the other voters refuse while they hear from the leader, so a link that flaps
        between this voter and a live leader cannot unseat it. The delay is random within
        half an election timeout because the other voters saw the same connection close at
        the same moment; campaigning together they would split the vote. Once a pre-vote
        round was refused (the others still hear from the leader), the hint is ignored for a
        fetch timeout, so a broken link to a live leader does not start a round every few
        milliseconds.
        """
        state = self.state
        if not (isinstance(state, Follower) and state.leader_id == destination):
            return
        if not self.may_vote:
            # An observer (a broker) has no election to wait for: it asks the voters who
            # leads now, so it finds the successor as soon as one is elected.
            self._become_unattached(self.epoch, now_ms)
            return
        if now_ms - self._pre_vote_refused_ms < self.config.fetch_timeout_ms:
            return
        state.leader_unreachable = True
        if state.leader_resigned:
            return  # EndQuorumEpoch already set the handover's own, better ordered, deadline
        delay = 1 + self.rng.randrange(max(1, self.config.election_timeout_ms // 2))
        state.fetch_deadline_ms = min(state.fetch_deadline_ms, now_ms + delay)

    def snapshot_taken(
        self, snapshot_id: SnapshotId, size: int, *, advance_log_start: bool = True
    ) -> None:
        """The state machine wrote a snapshot of committed state; serve it to lagging fetchers."""
        if snapshot_id.end_offset > self.high_watermark:
            raise LogInvariantError("a snapshot may only hold committed records")
        if snapshot_id.end_offset <= self.log.start_offset:
            return
        if self.log.epoch_at(snapshot_id.end_offset - 1) != snapshot_id.epoch:
            raise LogInvariantError(f"snapshot {snapshot_id} does not match the log")
        self._latest_snapshot = snapshot_id
        self._latest_snapshot_size = size
        if advance_log_start:
            self.log.advance_start(snapshot_id)
            self._membership.start_moved(self.log.start_offset)
            self._log_ops.append(AdvanceLogStart(snapshot_id))

    # ----------------------------------------------------------------- output

    def has_ready(self) -> bool:
        if self._ready_in_flight is not None:
            return False
        return bool(
            self._election_dirty
            or self._log_ops
            or self._messages
            or self._messages_after_persist
            or self._hw_changed
            or self._leader_change is not None
            or self._loaded_snapshot is not None
            or self._rejected
            or self.high_watermark > self._delivered_offset
        )

    def ready(self) -> Ready | None:
        """Everything to persist, send and apply since the last Ready; None if nothing."""
        if not self.has_ready():
            return None
        committed: list[Batch] = []
        backlog = False
        if self.high_watermark > self._delivered_offset:
            committed = self.log.batches_between(
                self._delivered_offset,
                self.high_watermark,
                max_records=self.config.commit_delivery_max_records,
            )
            delivered_to = committed[-1].next_offset if committed else self.high_watermark
            backlog = delivered_to < self.high_watermark
            self._delivered_offset = delivered_to if backlog else self.high_watermark
        # A leader change is told once every batch committed by then has been delivered: a
        # new leader's state machine must not act on a state it has not finished reading.
        leader_change = None if backlog else self._leader_change
        ready = Ready(
            election_state=self._election if self._election_dirty else None,
            log_ops=self._log_ops,
            messages=self._messages,
            messages_after_persist=self._messages_after_persist,
            loaded_snapshot=self._loaded_snapshot,
            committed=committed,
            high_watermark=self.high_watermark if self._hw_changed else None,
            leader_change=leader_change,
            log_end_offset=self.log.end_offset,
            next_deadline_ms=self.next_deadline_ms(),
            rejected=self._rejected,
            commit_backlog=backlog,
        )
        self._election_dirty = False
        self._log_ops = []
        self._messages = []
        self._messages_after_persist = []
        self._loaded_snapshot = None
        self._hw_changed = False
        if not backlog:
            self._leader_change = None
        self._rejected = []
        self._truncated_since_ready = None
        self._ready_in_flight = ready
        return ready

    def advance(self, ready: Ready, now_ms: int) -> None:
        """The runtime made ``ready`` durable and sent its messages."""
        if ready is not self._ready_in_flight:
            raise RuntimeError("advance() must be given the Ready most recently returned")
        self._ready_in_flight = None
        self._now_ms = now_ms
        durable = ready.log_end_offset
        if self._truncated_since_ready is not None:
            durable = min(durable, self._truncated_since_ready)
        self._durable_end = min(max(self._durable_end, durable), self.log.end_offset)
        state = self.state
        if isinstance(state, Leader):
            self._maybe_advance_high_watermark(state, now_ms)

    # ----------------------------------------------------------------- input checks

    def _input_problem(self, sender: int, message: Message) -> Refusal | None:
        """Why ``message`` from ``sender`` must not be acted on, or None.

        Only fetches may come from anyone (observers are not known in advance); everything
        else is part of the voters' protocol, so its sender and every id it names must be
        voters, and a request that names its sender must name the node it came from.

        One exception, in a dynamic quorum only: this node's voter set may be behind (it has
        not fetched the VotersRecord that added the sender), so a candidate or a new leader
        outside it is heard when its request names this node by its directory id, as only a
        node holding this node in its own voter set can. Refusing it could leave the quorum
        one vote short for good; whether its votes make a majority is for its own set.
        """
        problem = message_problem(message)
        if problem is not None:
            return problem
        if sender == self.node_id or not node_id_in_range(sender):
            return Refusal(ErrorCode.INVALID_REQUEST, f"sender {sender} cannot send to this node")
        if isinstance(message, FetchRequest | FetchSnapshotRequest):
            return None
        key_problem = self._voter_key_problem(message)
        if key_problem is not None:
            return key_problem
        named_me = self._names_this_voter(message)
        if sender not in self.voters and not named_me and not self._also_known(sender):
            return Refusal(ErrorCode.INCONSISTENT_VOTER_SET, f"node {sender} is not a voter")
        named: int | None
        if isinstance(message, VoteRequest):
            named = message.candidate_id
        elif isinstance(message, BeginQuorumEpochRequest | EndQuorumEpochRequest):
            named = message.leader_id
        else:
            named = None
        if named is not None and named != sender:
            return Refusal(ErrorCode.INVALID_REQUEST, f"node {sender} speaks for node {named}")
        if isinstance(message, EndQuorumEpochRequest):
            strangers = set(message.preferred_successors) - self.voters
            if strangers:
                return Refusal(
                    ErrorCode.INCONSISTENT_VOTER_SET,
                    f"successors {sorted(strangers)} are not voters",
                )
        leader = getattr(message, "leader_id", None)
        if (
            leader is not None
            and leader not in self.voters
            and not named_me
            and not self._also_known(leader)
        ):
            return Refusal(ErrorCode.INCONSISTENT_VOTER_SET, f"leader {leader} is not a voter")
        return self._epoch_leap_problem(message)

    def _epoch_leap_problem(self, message: Message) -> Refusal | None:
        """A request that would move this node more than ``max_epoch_leap`` epochs ahead.

        Epochs are int32 and persisted: a node that took in an epoch near the limit, and every
        node it told, could never hold another election, restarts included. Only a forged
        request names such an epoch; a real quorum moves one epoch per election. So a request
        may raise this node's epoch by at most the leap; answers to this node's own requests
        (its pre-votes, votes and fetches, on connections it opened) may raise it by any
        amount, which is how a voter or broker that was away for any length of time learns
        the current epoch and rejoins.
        """
        epoch: int
        if isinstance(message, VoteRequest) and not message.pre_vote:
            epoch = message.candidate_epoch
        elif isinstance(message, BeginQuorumEpochRequest | EndQuorumEpochRequest):
            epoch = message.leader_epoch
        else:
            return None
        if epoch - self.epoch <= self.config.max_epoch_leap:
            return None
        return Refusal(
            ErrorCode.INVALID_REQUEST,
            f"epoch {epoch} is more than {self.config.max_epoch_leap} ahead of this node's "
            f"{self.epoch}; a node learns such an epoch only from answers to its own requests",
        )

    def _also_known(self, node_id: int) -> bool:
        """A node that is not a current voter may still speak as one: a voter of the
        committed set (an uncommitted change may have removed it, and it may still lead or
        campaign), or the leader this node follows, vouched for when it announced itself."""
        return (
            node_id in (self.leader_id, self._election.leader_id)
            or node_id in self._membership.at(self.high_watermark).voters.ids
        )

    def _voter_key_problem(self, message: Message) -> Refusal | None:
        """KIP-853's INVALID_VOTER_KEY: a request meant for another directory of this node id
        (this node was wiped and re-formatted since the sender last knew it: it has forgotten
        the votes and log that directory had, so it must not answer for it)."""
        if isinstance(message, VoteRequest | BeginQuorumEpochRequest):
            meant_for = message.voter_directory_id
            if meant_for is not None and meant_for != self.directory_id:
                return Refusal(
                    ErrorCode.INVALID_VOTER_KEY,
                    f"request for directory {meant_for} of node {self.node_id}, which is "
                    f"{self.directory_id}",
                )
        return None

    def _names_this_voter(self, message: Message) -> bool:
        """A dynamic quorum's Vote or BeginQuorumEpoch naming this node by its directory id:
        its sender holds this node in its voter set (see ``_input_problem``)."""
        return (
            self.kraft_version >= KRAFT_VERSION_DYNAMIC
            and self.directory_id is not None
            and isinstance(message, VoteRequest | BeginQuorumEpochRequest)
            and message.voter_directory_id == self.directory_id
            and (not isinstance(message, VoteRequest) or message.candidate_directory_id is not None)
        )

    def _contradiction(self, epoch: int, leader: int) -> Refusal | None:
        """A message names ``leader`` (not us) as the leader of our epoch: refuse it if we led
        this epoch ourselves. One epoch has one leader, so such a message is forged or comes
        from a node whose state is broken; it is not acted on, and the node goes on.

        A follower only knows its leader second-hand; it takes the latest leader named, as it
        always has, so that a wrong name is corrected by the next answer that names the right
        one rather than leaving it outside the epoch until the next election.
        """
        if self._election.leader_id != self.node_id:
            return None
        return Refusal(
            ErrorCode.INVALID_REQUEST,
            f"node {leader} named as leader of epoch {epoch}, which this node led",
        )

    def _refuse(self, sender: int, message: Message, refusal: Refusal) -> None:
        self._rejected.append(RejectedInput(sender, message, refusal.error, refusal.reason))
        if isinstance(message, Request):
            answer = refusal_response(message, refusal.error, self.epoch, self.leader_id)
            self._reply(sender, answer)

    # ----------------------------------------------------------------- epochs

    def _observe_epoch(self, sender: int, message: Message, now_ms: int) -> bool:
        """Move to a newer epoch a message reveals; False if the message is to be dropped."""
        if isinstance(message, VoteRequest):
            if message.pre_vote or message.candidate_epoch <= self.epoch:
                return True
            if not self._may_vote_on(message):
                return True  # answered with a rejection; an observer has no say in epochs
            self._become_unattached(message.candidate_epoch, now_ms)
            return True
        if isinstance(message, FetchRequest | FetchSnapshotRequest):
            return True  # a fetcher's epoch is checked against ours when answering
        is_request = isinstance(message, BeginQuorumEpochRequest | EndQuorumEpochRequest)
        leader: int | None
        if isinstance(message, BeginQuorumEpochRequest | EndQuorumEpochRequest):
            epoch, leader = message.leader_epoch, message.leader_id
        else:
            epoch, leader = message.epoch, message.leader_id
        if isinstance(message, VoteResponse) and message.vote_granted:
            # A voter that grants does not count the leader it names as live any more.
            leader = None
        if epoch > self.epoch:
            if leader is not None and leader != self.node_id:
                self._become_follower(epoch, leader, now_ms, heard_from_leader=sender == leader)
            else:
                self._become_unattached(epoch, now_ms)
        elif epoch == self.epoch and leader is not None and leader != self.node_id:
            contradiction = self._contradiction(epoch, leader)
            if contradiction is not None:
                self._refuse(sender, message, contradiction)
                return False
            state = self.state
            if (
                isinstance(state, Prospective)
                and state.leader_resigned
                and state.retained_leader_id == leader
            ):
                # Old news of the leader that resigned (a fetch answer it sent before its
                # EndQuorumEpoch, overtaken on another connection, or a voter that has not
                # heard of the resignation yet): following it again would drop the handover
                # and leave the quorum leaderless until a fetch timeout.
                return is_request or epoch >= self.epoch
            if isinstance(state, Prospective) and isinstance(message, VoteResponse):
                self._pre_vote_refused_ms = now_ms  # a voter still follows that leader
            if not (isinstance(state, Follower) and state.leader_id == leader):
                self._become_follower(epoch, leader, now_ms, heard_from_leader=sender == leader)
        # Requests are always answered (with our epoch, so a stale sender learns of it);
        # responses from an older epoch answer a question nobody is asking any more.
        return is_request or epoch >= self.epoch

    # ----------------------------------------------------------------- transitions

    def _set_election(self, election: ElectionState) -> None:
        if election != self._election:
            if election.epoch < self._election.epoch:
                raise AssertionError("the epoch never goes back")
            self._election = election
            self._election_dirty = True

    def _election_timeout(self) -> int:
        timeout = self.config.election_timeout_ms
        return timeout + self.rng.randrange(timeout)

    def _fetch_deadline(self, now_ms: int) -> int:
        """Fetch timeout plus a random part of the election timeout.

        Followers that lost the same leader heard from it at nearly the same moment; without
        the random part they would campaign together and split the vote.
        """
        if not self.is_voter:
            return now_ms + self.config.fetch_timeout_ms
        jitter = self.rng.randrange(max(1, self.config.election_timeout_ms // 2))
        return now_ms + self.config.fetch_timeout_ms + jitter

    def _leave_leadership(self, state: Leader, now_ms: int) -> None:
        for replica_id, parked in sorted(state.parked.items()):
            self._reply(
                replica_id,
                FetchResponse(
                    ErrorCode.NOT_LEADER_OR_FOLLOWER,
                    self.epoch,
                    None,
                    parked.request.fetch_offset,
                ),
            )
        state.parked.clear()

    def _reset_role(self, now_ms: int) -> None:
        state = self.state
        if isinstance(state, Leader):
            self._leave_leadership(state, now_ms)
        self._fetch_in_flight = None
        self._fetch_retry_ms = NO_DEADLINE
        self._download = None

    def _voters_changed(self, previous: VoterSet) -> None:
        """The voter set changed (a VotersRecord appended, truncated away, or a snapshot
        installed). A leader counts the new voters at once; a node that stopped being a voter
        stops campaigning but keeps its election state, since a vote it cast in this epoch
        still binds it if it is added back."""
        now_ms = self._now_ms
        state = self.state
        if isinstance(state, Leader):
            state.progress.set_voters(self.voter_set, now_ms)
            for added in sorted(self.voters - previous.ids - {self.node_id}):
                state.begin_epoch_due_ms[added] = now_ms
            for removed in previous.ids - self.voters:
                state.begin_epoch_due_ms.pop(removed, None)
            self._maybe_advance_high_watermark(state, now_ms)
            return
        if not self.may_vote and isinstance(state, Unattached | Prospective | Candidate):
            self._become_observer(now_ms)

    def _resign_if_removed(self, now_ms: int) -> None:
        """A leader that removed itself leads until the change commits, then hands over."""
        if self.is_voter or not isinstance(self.state, Leader):
            return
        change = self._membership.last_change_offset
        if change is not None and self.high_watermark > change:
            self.resign(now_ms, shutting_down=False)

    def _become_observer(self, now_ms: int) -> None:
        """No longer a voter: look for the leader as an observer, keeping the election state."""
        self._reset_role(now_ms)
        self.state = Unattached(now_ms + self._election_timeout())
        self._note_leader_change()
        self._send_fetch(now_ms)

    def _become_unattached(self, epoch: int, now_ms: int) -> None:
        self._reset_role(now_ms)
        if epoch > self.epoch:
            self._set_election(ElectionState(epoch, None, None))
        elif not self.is_voter:  # forget the leader, never a vote cast in this epoch
            election = self._election
            self._set_election(
                ElectionState(epoch, election.voted_id, None, election.voted_directory_id)
            )
        self.state = Unattached(now_ms + self._election_timeout())
        self._note_leader_change()
        if not self.is_voter:
            self._send_fetch(now_ms)

    def _become_follower(
        self, epoch: int, leader_id: int, now_ms: int, *, heard_from_leader: bool = True
    ) -> None:
        self._reset_role(now_ms)
        voted, voted_directory = None, None
        if epoch == self.epoch:
            voted, voted_directory = self._election.voted_id, self._election.voted_directory_id
        self._set_election(ElectionState(epoch, voted, leader_id, voted_directory))
        last_heard = now_ms if heard_from_leader else -self.config.fetch_timeout_ms
        self.state = Follower(leader_id, self._fetch_deadline(now_ms), last_heard)
        self._election_retries = 0
        self._note_leader_change()
        self._send_fetch(now_ms)

    def _become_prospective(self, now_ms: int) -> None:
        if not self.may_vote:
            raise AssertionError("observers never campaign")
        if not epoch_in_range(self.epoch + 1):
            # The epochs are used up (only a forged message could have brought us here, and
            # those are refused): an election could never finish, so wait instead.
            self._become_unattached(self.epoch, now_ms)
            return
        previous = self.state
        retained: int | None = None
        resigned = False
        if isinstance(previous, Follower):
            retained, resigned = previous.leader_id, previous.leader_resigned
        elif isinstance(previous, Prospective):  # another round: remember what we knew
            retained, resigned = previous.retained_leader_id, previous.leader_resigned
        self._reset_role(now_ms)
        # After a graceful resignation nobody leads, so there is no one to disrupt: a round
        # that a slower peer refused (it had not heard of the resignation yet) is retried
        # after a short backoff rather than a whole election timeout.
        wait = self._election_backoff() if resigned else self._election_timeout()
        prospective = Prospective(now_ms + wait, retained, resigned, self._own_vote())
        self.state = prospective
        if len(prospective.granted) >= self.majority:
            self._become_candidate(now_ms)
            return
        self._request_votes(self.epoch + 1, pre_vote=True)

    def _own_vote(self) -> set[int]:
        """A candidate votes for itself, but the vote counts only if it is in its own
        latest voter set: one that an uncommitted change removed campaigns (it may hold the
        longest log) without counting itself. An abstaining voter does not count itself
        either: its log may lack what it acknowledged."""
        return {self.node_id} if self.is_voter and not self.abstaining else set()

    @property
    def abstaining(self) -> bool:
        """Whether this voter withholds its votes after a repair that cut its log (KIP-966's
        unclean shutdown, applied to voters)."""
        until = self._abstain_until_ms
        return until is not None and self._now_ms < until

    def _caught_up_after_repair(self, leader_high_watermark: int) -> None:
        """Holding a leader's log up to its high watermark, in its epoch, this node holds
        every committed record again (all of them are in the leader's log below its
        high watermark once it has committed in its epoch, or before its epoch's first
        record), so its votes are safe once more."""
        if (
            self._abstain_until_ms is not None
            and self.log.last_epoch == self.epoch
            and self.log.end_offset >= leader_high_watermark
        ):
            self._abstain_until_ms = None

    def _become_candidate(self, now_ms: int) -> None:
        self._reset_role(now_ms)
        epoch = self.epoch + 1
        self._set_election(ElectionState(epoch, self.node_id, None, self.directory_id))
        candidate = Candidate(now_ms + self._election_timeout(), self._own_vote())
        self.state = candidate
        self._note_leader_change()
        if len(candidate.granted) >= self.majority:
            self._become_leader(now_ms)
            return
        self._request_votes(epoch, pre_vote=False)

    def _request_votes(self, epoch: int, *, pre_vote: bool) -> None:
        for voter in self.voter_set:
            if voter.node_id == self.node_id:
                continue
            request = VoteRequest(
                epoch,
                self.node_id,
                self.log.last_epoch,
                self.log.end_offset,
                pre_vote=pre_vote,
                candidate_directory_id=self.directory_id,
                voter_directory_id=voter.key.directory_id,
            )
            self._send(voter.node_id, request, after_persist=True)

    def _become_leader(self, now_ms: int) -> None:
        state = self.state
        if not isinstance(state, Candidate):
            raise AssertionError("only a candidate becomes leader")
        granting = frozenset(state.granted)
        self._reset_role(now_ms)
        self._set_election(ElectionState(self.epoch, self.node_id, self.node_id, self.directory_id))
        leader = Leader(
            epoch_start_offset=self.log.end_offset,
            granting_voters=granting,
            progress=ProgressTracker(self.node_id, self.voter_set, now_ms),
            begin_epoch_due_ms={v: now_ms for v in self.voters if v != self.node_id},
        )
        self.state = leader
        self._election_retries = 0
        self._append_local(
            leader_change_batch(
                self.log.end_offset, self.epoch, self.node_id, self.voters, granting
            )
        )
        self._copy_bootstrap_voters()
        self._leader_tick(leader, now_ms)
        self._maybe_advance_high_watermark(leader, now_ms)

    def _copy_bootstrap_voters(self) -> None:
        """The first leader of a dynamic quorum writes the bootstrap voter set into the log
        (as Kafka's leader does with its bootstrap checkpoint): until then it exists only in
        the voters' bootstrap files, and a node that joins later learns its voters by
        fetching the log from the start."""
        if (
            self.kraft_version >= KRAFT_VERSION_DYNAMIC
            and self._membership.last_change_offset is None
            and self.log.start_offset == 0
            and self._latest_snapshot is None
        ):
            self._append_local(
                membership_batch(
                    self.log.end_offset,
                    self.epoch,
                    self.voter_set,
                    kraft_version=self.kraft_version,
                )
            )

    def _become_resigned_after_lost_quorum(self, state: Leader, now_ms: int) -> None:
        self._leave_leadership(state, now_ms)
        self.state = Resigned(now_ms + self._election_timeout(), ())

    def _note_leader_change(self) -> None:
        if isinstance(self.state, Leader):
            return  # announced once the epoch start commits
        self._leader_change = LeaderAndEpoch(self.leader_id, self.epoch)

    # ----------------------------------------------------------------- votes

    def _candidate_log_is_current(self, request: VoteRequest) -> bool:
        mine = (self.log.last_epoch, self.log.end_offset)
        return (request.last_offset_epoch, request.last_offset) >= mine

    def _has_live_leader(self, candidate_id: int, now_ms: int) -> bool:
        state = self.state
        if isinstance(state, Leader):
            return True
        return (
            isinstance(state, Follower)
            and not state.leader_resigned
            and not state.leader_unreachable
            and state.leader_id != candidate_id
            and now_ms - state.last_heard_ms < self.config.fetch_timeout_ms
        )

    def _on_vote_request(self, sender: int, request: VoteRequest, now_ms: int) -> None:
        def answer(granted: bool, error: ErrorCode = ErrorCode.NONE) -> None:
            response = VoteResponse(
                error,
                self.epoch,
                self.leader_id,
                granted,
                request.candidate_epoch,
                request.pre_vote,
            )
            self._send(sender, response, after_persist=True)

        if not self._may_vote_on(request):
            answer(False, ErrorCode.INCONSISTENT_VOTER_SET)
            return
        if self.abstaining:
            answer(False)
            return
        if request.pre_vote:
            granted = (
                request.candidate_epoch > self.epoch
                and not self._has_live_leader(request.candidate_id, now_ms)
                and self._candidate_log_is_current(request)
            )
            state = self.state
            if granted and isinstance(state, Follower):
                # Give the voter just backed time to persist its vote and ask for ours: its
                # followers lost the leader together, and campaigning now would split the vote.
                state.fetch_deadline_ms = max(
                    state.fetch_deadline_ms, now_ms + self.config.election_timeout_ms // 2
                )
            answer(granted)
            return
        if request.candidate_epoch < self.epoch:
            answer(False)
            return
        election = self._election
        candidate_id, candidate_directory = request.candidate_id, request.candidate_directory_id
        granted = (
            election.leader_id is None
            and (
                election.voted_id is None
                or (election.voted_id, election.voted_directory_id)
                == (candidate_id, candidate_directory)
            )
            and self._candidate_log_is_current(request)
        )
        if granted and election.voted_id is None:
            self._reset_role(now_ms)
            self._set_election(ElectionState(self.epoch, candidate_id, None, candidate_directory))
            self.state = Unattached(now_ms + self._election_timeout())
        answer(granted)

    def _on_vote_response(self, sender: int, response: VoteResponse, now_ms: int) -> None:
        if sender not in self.voters:
            return
        state = self.state
        if isinstance(state, Prospective):
            if not response.pre_vote or response.candidate_epoch != self.epoch + 1:
                return
            (state.granted if response.vote_granted else state.rejected).add(sender)
            if len(state.granted) >= self.majority:
                self._become_candidate(now_ms)
            elif len(state.rejected) >= self.majority:
                if state.retained_leader_id is not None:
                    self._pre_vote_refused_ms = now_ms
                    self._become_follower(
                        self.epoch, state.retained_leader_id, now_ms, heard_from_leader=False
                    )
                    follower = self.state
                    if state.leader_resigned and isinstance(follower, Follower):
                        self._election_retries += 1
                        follower.leader_resigned = True
                        follower.fetch_deadline_ms = now_ms + self._election_backoff()
                else:
                    self.state = Unattached(now_ms + self._election_timeout())
        elif isinstance(state, Candidate):
            if response.pre_vote or response.candidate_epoch != self.epoch:
                return
            (state.granted if response.vote_granted else state.rejected).add(sender)
            if len(state.granted) >= self.majority:
                self._become_leader(now_ms)
            elif len(state.rejected) >= self.majority and not state.backing_off:
                self._election_retries += 1
                state.backing_off = True
                state.election_deadline_ms = now_ms + self._election_backoff()

    def _election_backoff(self) -> int:
        """A random wait in a window that doubles with each lost round up to the maximum.

        Drawn uniformly inside the capped window: capping a draw from the uncapped one made
        almost every draw the maximum after a few rounds, so candidates that split a vote
        retried in step and split it again (seen over a 350 ms link: no leader in 20 s)."""
        exponent = min(self._election_retries, 16)
        base = self.config.election_backoff_base_ms
        window = min(base << exponent, self.config.election_backoff_max_ms)
        return base + self.rng.randrange(max(1, window - base + 1))

    # ----------------------------------------------------------------- graceful handover

    def _send_end_quorum_epoch(self, voter: int, state: Resigned, now_ms: int) -> None:
        request = EndQuorumEpochRequest(self.node_id, self.epoch, state.preferred_successors)
        self._send(voter, request, after_persist=False)
        state.end_epoch_due_ms[voter] = now_ms + self.config.fetch_timeout_ms // 2

    def _on_end_quorum_epoch(
        self, sender: int, request: EndQuorumEpochRequest, now_ms: int
    ) -> None:
        self._reply(sender, EndQuorumEpochResponse(ErrorCode.NONE, self.epoch, self.leader_id))
        state = self.state
        if request.leader_epoch != self.epoch or not isinstance(state, Follower):
            return
        if state.leader_id != request.leader_id:
            return
        state.leader_resigned = True
        successors = request.preferred_successors
        if self.node_id in successors:
            position = successors.index(self.node_id)
            max_backoff = self.config.election_backoff_max_ms
            delay = 0 if position == 0 else (max_backoff >> (len(successors) - 1)) << (position - 1)
        else:
            delay = self.config.election_backoff_max_ms
        state.fetch_deadline_ms = min(state.fetch_deadline_ms, now_ms + delay)

    # ----------------------------------------------------------------- leader

    def _check_quorum_deadline(self, state: Leader) -> int:
        return state.progress.check_quorum_deadline(self.config.check_quorum_timeout_ms)

    def _leader_tick(self, state: Leader, now_ms: int) -> None:
        if len(self.voters) > 1 and now_ms >= self._check_quorum_deadline(state):
            self._become_resigned_after_lost_quorum(state, now_ms)
            return
        for voter, due in sorted(state.begin_epoch_due_ms.items()):
            if now_ms >= due:
                key = self.voter_set.key_of(voter)
                request = BeginQuorumEpochRequest(
                    self.node_id, self.epoch, None if key is None else key.directory_id
                )
                self._send(voter, request, after_persist=True)
                state.begin_epoch_due_ms[voter] = now_ms + self.config.fetch_timeout_ms // 2
        expired = [r for r, p in state.parked.items() if now_ms >= p.deadline_ms]
        for replica_id in sorted(expired):
            parked = state.parked.pop(replica_id)
            self._answer_fetch(replica_id, parked.request)

    def _append_local(self, batch: Batch) -> None:
        self.log.append(batch)
        if self._log_ops and isinstance(self._log_ops[-1], AppendBatches):
            pending = self._log_ops[-1]
            self._log_ops[-1] = AppendBatches((*pending.batches, batch))
        else:
            self._log_ops.append(AppendBatches((batch,)))
        previous = self.voter_set
        if self._membership.appended(batch):
            self._voters_changed(previous)

    def _majority_durable_offset(self, state: Leader) -> int:
        """The largest log end a majority of voters has made durable."""
        return state.progress.majority_end_offset(min(self._durable_end, self.log.end_offset))

    def _maybe_advance_high_watermark(self, state: Leader, now_ms: int) -> None:
        if not self.voters:
            return  # nobody left to commit (the leader removed the last other voter)
        candidate = self._majority_durable_offset(state)
        if candidate > state.epoch_start_offset and candidate > self.high_watermark:
            self.high_watermark = candidate
            self._hw_changed = True
            if not state.announced:
                state.announced = True
                self._leader_change = LeaderAndEpoch(self.node_id, self.epoch)
            self._tell_parked_fetches_soon(state, now_ms)
            self._resign_if_removed(now_ms)

    def _tell_parked_fetches_soon(self, state: Leader, now_ms: int) -> None:
        """The high watermark moved: answer parked fetches within the high watermark delay,
        or at once with the next batch if one is proposed first (see ``RaftConfig``)."""
        delay = self.config.high_watermark_delay_ms
        if delay <= 0:
            self._complete_parked_fetches(state, now_ms)
            return
        due = now_ms + delay
        for parked in state.parked.values():
            parked.deadline_ms = min(parked.deadline_ms, due)

    def _complete_parked_fetches(self, state: Leader, now_ms: int) -> None:
        for replica_id in sorted(state.parked):
            self._answer_fetch(replica_id, state.parked[replica_id].request)
        state.parked.clear()

    def _fetch_error(self, error: ErrorCode, request: FetchRequest) -> FetchResponse:
        return FetchResponse(error, self.epoch, self.leader_id, request.fetch_offset)

    def _on_fetch_request(self, sender: int, request: FetchRequest, now_ms: int) -> None:
        state = self.state
        if not isinstance(state, Leader):
            self._reply(sender, self._fetch_error(ErrorCode.NOT_LEADER_OR_FOLLOWER, request))
            return
        if request.current_leader_epoch < self.epoch:
            self._reply(sender, self._fetch_error(ErrorCode.FENCED_LEADER_EPOCH, request))
            return
        if request.current_leader_epoch > self.epoch:
            self._reply(sender, self._fetch_error(ErrorCode.UNKNOWN_LEADER_EPOCH, request))
            return
        fetcher = ReplicaKey(sender, request.replica_directory_id)
        state.progress.contact(fetcher, now_ms)
        if self.voter_set.is_voter(fetcher):
            state.begin_epoch_due_ms.pop(sender, None)
        problem = self._fetch_position_problem(request)
        if problem is not None:
            self._reply(sender, problem)
            return
        state.progress.fetched(fetcher, request.fetch_offset, self.log.end_offset, now_ms)
        old_high_watermark = self.high_watermark
        if self.voter_set.is_voter(fetcher):
            self._maybe_advance_high_watermark(state, now_ms)
        state.parked.pop(sender, None)
        fetcher_knows_high_watermark = (
            request.high_watermark is None or request.high_watermark >= self.high_watermark
        )
        wait = 0
        if request.fetch_offset >= self.log.end_offset:
            wait = min(request.max_wait_ms, self.config.fetch_max_wait_ms)
            if self.high_watermark != old_high_watermark or not fetcher_knows_high_watermark:
                # Only news of the high watermark to give: it may wait a little for a batch.
                wait = min(wait, self.config.high_watermark_delay_ms)
        if wait > 0:
            state.parked[sender] = ParkedFetch(request, now_ms + wait)
            return
        self._answer_fetch(sender, request)

    def _fetch_position_problem(self, request: FetchRequest) -> FetchResponse | None:
        """Why the fetcher's log cannot simply continue at its fetch offset, if it cannot."""
        position = check_fetch_position(
            self.log, self._latest_snapshot, request.fetch_offset, request.last_fetched_epoch
        )
        if position.valid:
            return None
        return FetchResponse(
            ErrorCode.NONE,
            self.epoch,
            self.node_id,
            request.fetch_offset,
            self.high_watermark,
            self.log.start_offset,
            diverging=position.diverging,
            snapshot_id=position.snapshot_id,
        )

    def _answer_fetch(self, replica_id: int, request: FetchRequest) -> None:
        max_bytes = min(request.max_bytes, self.config.fetch_max_bytes)
        batches = self.log.read(request.fetch_offset, max_bytes)
        response = FetchResponse(
            ErrorCode.NONE,
            self.epoch,
            self.node_id,
            request.fetch_offset,
            self.high_watermark,
            self.log.start_offset,
            batches,
        )
        self._send(replica_id, response, after_persist=False)

    def _on_fetch_snapshot_request(
        self, sender: int, request: FetchSnapshotRequest, now_ms: int
    ) -> None:
        state = self.state

        def fail(error: ErrorCode) -> None:
            response = FetchSnapshotResponse(
                error, self.epoch, self.leader_id, request.snapshot_id, request.position
            )
            self._reply(sender, response)

        if not isinstance(state, Leader):
            fail(ErrorCode.NOT_LEADER_OR_FOLLOWER)
            return
        if request.current_leader_epoch != self.epoch:
            fail(
                ErrorCode.FENCED_LEADER_EPOCH
                if request.current_leader_epoch < self.epoch
                else ErrorCode.UNKNOWN_LEADER_EPOCH
            )
            return
        fetcher = ReplicaKey(sender, request.replica_directory_id)
        state.progress.contact(fetcher, now_ms)
        if self.voter_set.is_voter(fetcher):
            state.begin_epoch_due_ms.pop(sender, None)
        if request.snapshot_id != self._latest_snapshot:
            fail(ErrorCode.SNAPSHOT_NOT_FOUND)
            return
        size = self._latest_snapshot_size
        if request.position < 0 or request.position > size:
            fail(ErrorCode.POSITION_OUT_OF_RANGE)
            return
        length = min(request.max_bytes, self.config.snapshot_chunk_bytes, size - request.position)
        membership = self._membership.at(request.snapshot_id.end_offset)
        response = FetchSnapshotResponse(
            ErrorCode.NONE,
            self.epoch,
            self.node_id,
            request.snapshot_id,
            request.position,
            size,
            length,
            voters=membership.voters,
            kraft_version=membership.kraft_version,
        )
        self._send(sender, response, after_persist=False)

    # ----------------------------------------------------------------- follower

    def _fetch_target(self) -> int | None:
        state = self.state
        if isinstance(state, Follower):
            return state.leader_id
        if isinstance(state, Unattached) and not self.is_voter:
            return self.rng.choice(sorted(self.voters))
        return None

    def _send_fetch(self, now_ms: int) -> None:
        target = self._fetch_target()
        if target is None:
            return
        download = self._download
        if download is not None:
            self._send(
                target,
                FetchSnapshotRequest(
                    self.epoch,
                    download.snapshot_id,
                    download.position,
                    self.config.snapshot_chunk_bytes,
                    self.directory_id,
                ),
                after_persist=True,
            )
            self._fetch_in_flight = (target, download.position)
        else:
            self._send(
                target,
                FetchRequest(
                    self.epoch,
                    self.log.end_offset,
                    self.log.last_epoch,
                    self.config.fetch_max_wait_ms,
                    self.config.fetch_max_bytes,
                    high_watermark=self.high_watermark,
                    replica_directory_id=self.directory_id,
                ),
                after_persist=True,
            )
            self._fetch_in_flight = (target, self.log.end_offset)
        self._fetch_retry_ms = now_ms + self.config.fetch_resend_ms

    def _retry_fetch_later(self, now_ms: int) -> None:
        self._fetch_in_flight = None
        self._fetch_retry_ms = now_ms + self.config.retry_backoff_ms

    def _on_fetch_response(self, sender: int, response: FetchResponse, now_ms: int) -> None:
        if self._fetch_in_flight != (sender, response.fetch_offset) or self._download is not None:
            return
        state = self.state
        if response.error is not ErrorCode.NONE:
            # A newer epoch or leader it named was taken in by _observe_epoch already. A leader
            # of our epoch saying it does not lead has resigned or restarted: stop deferring.
            if (
                isinstance(state, Follower)
                and state.leader_id == sender
                and response.error is ErrorCode.NOT_LEADER_OR_FOLLOWER
                and response.epoch == self.epoch
            ):
                state.leader_resigned = True
            self._retry_fetch_later(now_ms)
            return
        if not isinstance(state, Follower) or state.leader_id != sender:
            return
        if response.diverging is not None:
            target = self._divergence_target(response)
            if target < self.high_watermark:
                # A correct leader never diverges below what it committed, so this answers an
                # earlier fetch at the same offset and came after a later answer moved the log
                # on (answers can be reordered or repeated): drop it, logged, and wait for the
                # answer to this fetch. Cutting committed records is never an option.
                self._refuse(
                    sender,
                    response,
                    Refusal(
                        ErrorCode.INVALID_REQUEST,
                        f"a divergence at {target} is below the high watermark "
                        f"{self.high_watermark}: a stale answer, dropped",
                    ),
                )
                return
        if response.diverging is None and response.snapshot_id is None:
            problem = self._fetched_batches_problem(response.batches)
            if problem is not None:
                self._refuse(sender, response, problem)
                return
        if not state.leader_resigned:
            # An answer the leader sent before its EndQuorumEpoch may arrive after it (they
            # travel on different connections): it must not push back the handover's deadline.
            state.fetch_deadline_ms = self._fetch_deadline(now_ms)
        state.last_heard_ms = now_ms
        state.leader_unreachable = False
        self._fetch_in_flight = None
        if response.diverging is not None:
            self._truncate_after_divergence(response)
        elif response.snapshot_id is not None:
            self._download = _Download(response.snapshot_id)
        else:
            for batch in response.batches:
                if batch.base_offset >= self.log.end_offset:
                    self._append_local(batch)
            self._update_follower_high_watermark(response.high_watermark)
            self._caught_up_after_repair(response.high_watermark)
        self._send_fetch(now_ms)

    def _fetched_batches_problem(self, batches: Sequence[Batch]) -> Refusal | None:
        """Why fetched batches cannot extend our log: each new one must follow the last, from
        an epoch no later than ours and no earlier than the log's last."""
        end, last_epoch = self.log.end_offset, self.log.last_epoch
        for batch in batches:
            if batch.base_offset < self.log.end_offset:
                continue
            if batch.base_offset != end or not last_epoch <= batch.epoch <= self.epoch:
                return Refusal(
                    ErrorCode.INVALID_REQUEST,
                    f"batch at {batch.base_offset} of epoch {batch.epoch} cannot follow log end "
                    f"{end} of epoch {last_epoch} in epoch {self.epoch}",
                )
            end, last_epoch = batch.next_offset, batch.epoch
        return None

    def _update_follower_high_watermark(self, leader_high_watermark: int) -> None:
        new_high_watermark = min(leader_high_watermark, self.log.end_offset)
        if new_high_watermark > self.high_watermark:
            self.high_watermark = new_high_watermark
            self._hw_changed = True

    def _divergence_target(self, response: FetchResponse) -> int:
        """Where the log must be cut to follow a leader that reported ``diverging``."""
        assert response.diverging is not None
        leader_end = response.diverging
        local_end = self.log.end_offset_for_epoch(leader_end.epoch)
        target = min(leader_end.offset, local_end.offset) if local_end.epoch >= 0 else 0
        target = max(target, self.log.start_offset)
        while not self.log.is_batch_boundary(target):
            target -= 1
        return target

    def _truncate_after_divergence(self, response: FetchResponse) -> None:
        target = self._divergence_target(response)
        if target < self.high_watermark:
            raise LogInvariantError(
                f"node {self.node_id} asked to truncate to {target}, below its high watermark "
                f"{self.high_watermark}"
            )
        if target < self.log.end_offset:
            self.log.truncate_to(target)
            previous = self.voter_set
            if self._membership.truncated(target):
                self._voters_changed(previous)
            self._log_ops.append(TruncateLog(target))
            self._durable_end = min(self._durable_end, target)
            self._truncated_since_ready = (
                target
                if self._truncated_since_ready is None
                else min(self._truncated_since_ready, target)
            )

    def _on_fetch_snapshot_response(
        self, sender: int, response: FetchSnapshotResponse, now_ms: int
    ) -> None:
        download = self._download
        state = self.state
        if (
            download is None
            or self._fetch_in_flight != (sender, response.position)
            or not isinstance(state, Follower)
            or state.leader_id != sender
            or response.snapshot_id != download.snapshot_id
        ):
            return
        self._fetch_in_flight = None
        if response.error is not ErrorCode.NONE:
            # The leader moved to a newer snapshot (or is gone): start over from a fetch.
            self._download = None
            self._retry_fetch_later(now_ms)
            return
        state.fetch_deadline_ms = self._fetch_deadline(now_ms)
        state.last_heard_ms = now_ms
        state.leader_unreachable = False
        if len(response.data) != response.chunk_length:
            raise AssertionError("the runtime must fill a snapshot chunk before delivery")
        download.size = response.size
        if response.voters is not None and response.kraft_version is not None:
            download.membership = Membership(response.kraft_version, response.voters)
        self._log_ops.append(
            WriteSnapshotChunk(
                download.snapshot_id, response.position, response.data, response.size
            )
        )
        download.position = response.position + len(response.data)
        if download.position >= response.size:
            self._install_snapshot(download.snapshot_id)
        self._send_fetch(now_ms)

    def _install_snapshot(self, snapshot_id: SnapshotId) -> None:
        if isinstance(self.state, Leader):
            raise AssertionError("a leader never loads a snapshot")
        download = self._download
        self._download = None
        if snapshot_id.end_offset < self.high_watermark:
            raise LogInvariantError("a snapshot from the leader cannot end below our commit")
        self.log.reset_to_snapshot(snapshot_id)
        membership = download.membership if download is not None else None
        previous = self.voter_set
        # A snapshot from a static quorum names no voters: they are the ones configured.
        self._membership.reset(membership or Membership(self.kraft_version, previous))
        self._log_ops.append(InstallSnapshot(snapshot_id, membership))
        self._latest_snapshot = snapshot_id
        self._latest_snapshot_size = (download.size or 0) if download is not None else 0
        self._durable_end = min(self._durable_end, snapshot_id.end_offset)
        self._truncated_since_ready = 0
        self._loaded_snapshot = snapshot_id
        self._delivered_offset = snapshot_id.end_offset
        self.high_watermark = snapshot_id.end_offset
        self._hw_changed = True
        if self.voter_set != previous:
            self._voters_changed(previous)

    # ----------------------------------------------------------------- sending

    def _send(self, destination: int, message: Message, *, after_persist: bool) -> None:
        outbound = Outbound(destination, message)
        if after_persist or self._election_dirty:
            self._messages_after_persist.append(outbound)
        else:
            self._messages.append(outbound)

    def _reply(self, destination: int, message: Message) -> None:
        self._send(destination, message, after_persist=True)
