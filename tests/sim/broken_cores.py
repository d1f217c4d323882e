"""Deliberately broken cores, one per invariant, to prove the checker can fail.

Each keeps the real core and changes one rule, the way a plausible bug would.
"""

from __future__ import annotations

import dataclasses

from raftmeta.raft.batch import SnapshotId, make_batch
from raftmeta.raft.core import AppendResult, RaftCore
from raftmeta.raft.messages import FetchRequest, FetchResponse, Message, VoteResponse
from raftmeta.raft.ready import AdvanceLogStart, Outbound, Ready
from raftmeta.raft.roles import Leader
from raftmeta.raft.state import ElectionState
from raftmeta.raft.validation import Refusal
from raftmeta.raft.voter_change import LeaderView, VoterChangeResult


class SelfElectingCore(RaftCore):
    """A candidate that declares itself leader without waiting for votes."""

    def _become_candidate(self, now_ms: int) -> None:
        super()._become_candidate(now_ms)
        from raftmeta.raft.roles import Candidate

        if isinstance(self.state, Candidate):
            self._become_leader(now_ms)


class EpochRegressingCore(RaftCore):
    """Recovery that is off by one: it writes back an epoch one lower than it read."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        if self._election.epoch > 0:
            self._election = ElectionState(self._election.epoch - 1, None, None)
            self._election_dirty = True


class EagerVoterCore(RaftCore):
    """Answers a vote before its election state is durable."""

    def _send(self, destination: int, message: Message, *, after_persist: bool) -> None:
        if isinstance(message, VoteResponse):
            self._messages.append(Outbound(destination, message))
            return
        super()._send(destination, message, after_persist=after_persist)


class ForgetfulFollowerCore(RaftCore):
    """Takes whatever high watermark the leader sends, even a lower one."""

    def _update_follower_high_watermark(self, leader_high_watermark: int) -> None:
        new_high_watermark = min(leader_high_watermark, self.log.end_offset)
        if new_high_watermark != self.high_watermark:
            self.high_watermark = new_high_watermark
            self._hw_changed = True


class AckBeforeFsyncCore(RaftCore):
    """Acknowledges fetched records (by fetching again) before they are fsynced."""

    def _send(self, destination: int, message: Message, *, after_persist: bool) -> None:
        if isinstance(message, FetchRequest):
            self._messages.append(Outbound(destination, message))
            return
        super()._send(destination, message, after_persist=after_persist)


class OldEpochCommitCore(RaftCore):
    """Counts entries of earlier epochs toward the high watermark (Raft's Figure 8 bug)."""

    def _maybe_advance_high_watermark(self, state: Leader, now_ms: int) -> None:
        candidate = self._majority_durable_offset(state)
        if candidate > self.high_watermark:
            self.high_watermark = candidate
            self._hw_changed = True
            self._complete_parked_fetches(state, now_ms)
        if not state.announced and candidate > state.epoch_start_offset:
            state.announced = True


class EpochBlindLeaderCore(RaftCore):
    """A leader that checks only the fetch offset, never the fetcher's last epoch."""

    def _fetch_position_problem(self, request: FetchRequest) -> FetchResponse | None:
        log = self.log
        if log.start_offset <= request.fetch_offset <= log.end_offset and log.is_batch_boundary(
            request.fetch_offset
        ):
            return None
        return super()._fetch_position_problem(request)


class OverCompactingCore(RaftCore):
    """Deletes the whole log it has written, past the snapshot that covers part of it."""

    def snapshot_taken(
        self, snapshot_id: SnapshotId, size: int, *, advance_log_start: bool = True
    ) -> None:
        super().snapshot_taken(snapshot_id, size, advance_log_start=False)
        end = self.log.end_offset
        if end > snapshot_id.end_offset:
            self._log_ops.append(AdvanceLogStart(SnapshotId(end, self.log.last_epoch)))


class SnapshotReloadingLeaderCore(RaftCore):
    """Reloads its latest snapshot into the state machine whenever it becomes leader."""

    def _become_leader(self, now_ms: int) -> None:
        super()._become_leader(now_ms)
        if self._latest_snapshot is not None:
            self._loaded_snapshot = self._latest_snapshot


class DoubleAppendCore(RaftCore):
    """Appends every proposal twice."""

    def propose(self, records: list[bytes], now_ms: int, timestamp_ms: int = 0) -> AppendResult:  # type: ignore[override]
        result = super().propose(records, now_ms, timestamp_ms)
        self._append_local(make_batch(self.log.end_offset, self.epoch, records))
        return result


class NeverCampaignsCore(RaftCore):
    """Never asks for votes: a quorum of these never elects anyone."""

    def _become_prospective(self, now_ms: int) -> None:
        from raftmeta.raft.roles import Unattached

        self._reset_role(now_ms)
        self.state = Unattached(now_ms + self._election_timeout())


class UncheckedCore(RaftCore):
    """Takes every peer message as it comes: no range or membership checks at all."""

    def _input_problem(self, sender: int, message: Message) -> Refusal | None:
        return None


class AssertingCore(RaftCore):
    """Stops, as the core once did, when a message names another leader for an epoch it led."""

    def _contradiction(self, epoch: int, leader: int) -> Refusal | None:
        refusal = super()._contradiction(epoch, leader)
        if refusal is not None:
            raise AssertionError(refusal.reason)
        return None


class TwoChangesAtOnceCore(RaftCore):
    """Accepts a voter change while an earlier one is still uncommitted."""

    def _leader_view(self) -> LeaderView | VoterChangeResult:
        view = super()._leader_view()
        if isinstance(view, LeaderView):
            return dataclasses.replace(view, change_pending=False)
        return view


class EarlyChangeCore(RaftCore):
    """Accepts a voter change before it has committed a record of its own epoch."""

    def _leader_view(self) -> LeaderView | VoterChangeResult:
        view = super()._leader_view()
        if isinstance(view, LeaderView):
            return dataclasses.replace(view, committed_own_epoch=True)
        return view


class UnabstainingCore(RaftCore):
    """Votes at once after a repair cut its log, as if it had lost nothing it acknowledged."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs["log_repaired"] = False
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]


class PreVoteSkippingCore(RaftCore):
    """Takes the transport's word that its leader is down and starts a real election at once,
    skipping the pre-vote: a link that resets between it and a live leader unseats the leader
    (not a safety invariant; ``test_leader_unreachable`` checks the leader keeps its epoch)."""

    def _leader_unreachable(self, destination: int, now_ms: int) -> None:
        from raftmeta.raft.roles import Follower

        state = self.state
        if isinstance(state, Follower) and state.leader_id == destination and self.may_vote:
            self._become_candidate(now_ms)


class EagerAnnouncingCore(RaftCore):
    """Tells the state machine of a leader change while committed batches still wait to be
    delivered: a new leader's controller would activate on a state it has not read in full."""

    def ready(self) -> Ready | None:
        ready = super().ready()
        if ready is not None and ready.commit_backlog and self._leader_change is not None:
            ready.leader_change, self._leader_change = self._leader_change, None
        return ready
