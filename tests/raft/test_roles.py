"""Role behaviour of the consensus core, one situation and one claim per test."""

from __future__ import annotations

import pytest

from raftmeta.errors import ErrorCode
from raftmeta.raft.batch import OffsetAndEpoch, SnapshotId, make_batch
from raftmeta.raft.control import LeaderChange, decode_control_record
from raftmeta.raft.core import NotLeaderError, RaftCore
from raftmeta.raft.log import RaftLog
from raftmeta.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    VoteRequest,
    VoteResponse,
)
from raftmeta.raft.ready import AppendBatches, InstallSnapshot, TruncateLog
from raftmeta.raft.roles import Role
from raftmeta.raft.state import ElectionState
from tests.raft.builder import (
    CONFIG,
    CoreCluster,
    drain,
    new_core,
    with_elected_leader,
    with_snapshot,
)


def tick_until_role_changes(core: RaftCore, limit_ms: int = 10_000) -> int:
    """Fire the core's deadlines one after another until its role changes; return the time."""
    role = core.role
    now = 0
    while core.role is role:
        now = core.next_deadline_ms()
        assert now <= limit_ms, f"still {role} at {now} ms"
        core.tick(now)
        drain(core, now)
    return now


def votes_in(drained_messages: list[object]) -> list[VoteRequest]:
    return [m for m in drained_messages if isinstance(m, VoteRequest)]


# ---------------------------------------------------------------- unattached and pre-vote


def test_unattached_voter_asks_for_pre_votes_after_election_timeout_without_bumping_epoch() -> None:
    core = new_core()
    drain(core)
    assert core.role is Role.UNATTACHED
    deadline = core.next_deadline_ms()
    assert CONFIG.election_timeout_ms <= deadline < 2 * CONFIG.election_timeout_ms
    core.tick(deadline)
    out = drain(core, deadline)
    assert core.role is Role.PROSPECTIVE
    assert core.epoch == 0
    requests = votes_in([m.message for m in out.sent])
    assert {r.pre_vote for r in requests} == {True}
    assert {r.candidate_epoch for r in requests} == {1}
    assert all(r.election_state is None for r in out.readies), "a pre-vote persists nothing"


def test_prospective_with_majority_becomes_candidate_and_persists_its_vote_first() -> None:
    core = new_core()
    core.tick(core.next_deadline_ms())
    drain(core)
    core.step(2, VoteResponse(ErrorCode.NONE, 0, None, True, 1, pre_vote=True), 700)
    ready = core.ready()
    assert ready is not None
    assert core.role is Role.CANDIDATE and core.epoch == 1
    assert ready.election_state == ElectionState(1, 1, None)
    assert ready.messages == [], "vote requests must wait for the vote to be durable"
    assert {type(m.message) for m in ready.messages_after_persist} == {VoteRequest}


def test_prospective_rejected_by_majority_returns_to_the_leader_it_knew() -> None:
    core = new_core(election=ElectionState(3, None, 2))
    assert core.role is Role.FOLLOWER
    tick_until_role_changes(core)
    assert core.role is Role.PROSPECTIVE
    core.step(2, VoteResponse(ErrorCode.NONE, 3, 2, False, 4, pre_vote=True), 2000)
    core.step(3, VoteResponse(ErrorCode.NONE, 3, 2, False, 4, pre_vote=True), 2000)
    assert core.role is Role.FOLLOWER and core.leader_id == 2 and core.epoch == 3


def test_follower_refuses_pre_votes_while_its_leader_is_live() -> None:
    core = new_core(election=ElectionState(3, None, 2))
    drain(core)
    core.step(3, VoteRequest(4, 3, 3, 10, pre_vote=True), 10)
    response = drain(core).sent_to(3)[0]
    assert isinstance(response, VoteResponse) and not response.vote_granted
    assert core.epoch == 3, "a pre-vote never moves the epoch"


def test_follower_grants_pre_vote_once_its_leader_resigned() -> None:
    core = new_core(election=ElectionState(3, None, 2))
    drain(core)
    core.step(2, EndQuorumEpochRequest(2, 3, (1, 3)), 10)
    core.step(3, VoteRequest(4, 3, 0, 0, pre_vote=True), 10)
    response = drain(core).sent_to(3)[0]
    assert isinstance(response, VoteResponse) and response.vote_granted


def test_a_first_successor_is_not_pulled_back_by_a_late_answer_from_the_resigned_leader() -> None:
    """A fetch answer the leader sent before its EndQuorumEpoch travels on another connection
    and may arrive after it: the first successor must go on campaigning, not follow the
    resigned leader again until a fetch timeout (which made handovers take seconds)."""
    core = new_core(election=ElectionState(3, None, 2))
    drain(core)
    core.step(2, EndQuorumEpochRequest(2, 3, (1, 3)), 10)
    core.tick(10)
    drain(core, 10)
    assert core.role is Role.PROSPECTIVE

    core.step(2, FetchResponse(ErrorCode.NONE, 3, 2, 0, high_watermark=0), 11)
    assert core.role is Role.PROSPECTIVE
    # A voter that had not heard of the resignation refuses, naming the old leader; the
    # round is lost, but the handover's short backoff is kept.
    core.step(3, VoteResponse(ErrorCode.NONE, 3, 2, False, 4, pre_vote=True), 12)
    core.step(2, VoteResponse(ErrorCode.NONE, 3, None, False, 4, pre_vote=True), 12)
    drain(core, 12)
    assert core.next_deadline_ms() <= 12 + CONFIG.election_backoff_max_ms
    assert core.role is Role.FOLLOWER


def test_a_late_fetch_answer_from_the_resigned_leader_keeps_the_handover_deadline() -> None:
    core = new_core(node_id=3, election=ElectionState(3, None, 2))
    drain(core)
    core.step(2, EndQuorumEpochRequest(2, 3, (1, 3)), 10)
    deadline = core.next_deadline_ms()
    assert deadline <= 10 + CONFIG.election_backoff_max_ms

    core.step(2, FetchResponse(ErrorCode.NONE, 3, 2, 0, high_watermark=0), 11)
    drain(core, 11)

    assert core.role is Role.FOLLOWER
    assert core.next_deadline_ms() <= deadline


def test_a_later_successor_is_not_pulled_back_by_a_voter_still_following_the_old_leader() -> None:
    core = new_core(node_id=3, election=ElectionState(3, None, 2))
    drain(core)
    core.step(2, EndQuorumEpochRequest(2, 3, (1, 3)), 10)
    tick_until_role_changes(core)
    assert core.role is Role.PROSPECTIVE
    now = core.next_deadline_ms() - 1
    core.step(1, VoteResponse(ErrorCode.NONE, 3, 2, False, 4, pre_vote=True), now)
    assert core.role is Role.PROSPECTIVE
    core.step(2, VoteResponse(ErrorCode.NONE, 3, None, True, 4, pre_vote=True), now)
    assert core.role is Role.CANDIDATE and core.epoch == 4


# ---------------------------------------------------------------- votes


def test_vote_is_granted_once_per_epoch_and_only_after_it_is_durable() -> None:
    core = new_core(node_id=1)
    drain(core)
    core.step(2, VoteRequest(1, 2, 0, 0), 10)
    ready = core.ready()
    assert ready is not None
    assert ready.election_state == ElectionState(1, 2, None)
    assert ready.messages == []
    granted = [m.message for m in ready.messages_after_persist]
    assert isinstance(granted[0], VoteResponse) and granted[0].vote_granted
    core.advance(ready, 10)
    core.step(3, VoteRequest(1, 3, 0, 0), 11)
    second = drain(core).sent_to(3)[0]
    assert isinstance(second, VoteResponse) and not second.vote_granted
    core.step(2, VoteRequest(1, 2, 0, 0), 12)
    again = drain(core).sent_to(2)[0]
    assert isinstance(again, VoteResponse) and again.vote_granted, "a retry gets the same vote"


def test_vote_refused_to_a_candidate_with_a_shorter_log() -> None:
    log = RaftLog([make_batch(0, 2, [b"a", b"b"])])
    core = new_core(election=ElectionState(2, None, None), log=log)
    core.step(2, VoteRequest(3, 2, 2, 1), 10)
    response = drain(core).sent_to(2)[0]
    assert isinstance(response, VoteResponse) and not response.vote_granted
    assert core.epoch == 3, "the higher epoch is adopted even when the vote is refused"


def test_invalid_vote_request_is_answered_with_invalid_request() -> None:
    core = new_core()
    core.step(2, VoteRequest(1, 2, 5, 10), 10)
    response = drain(core).sent_to(2)[0]
    assert isinstance(response, VoteResponse) and response.error is ErrorCode.INVALID_REQUEST
    assert core.epoch == 0


def test_observers_never_vote_and_never_campaign() -> None:
    core = new_core(node_id=9)
    assert not core.is_voter
    core.step(2, VoteRequest(1, 2, 0, 0), 10)
    response = drain(core).sent_to(2)[0]
    assert isinstance(response, VoteResponse) and not response.vote_granted
    for now in range(0, 5000, 100):
        core.tick(now)
        drain(core, now)
    assert core.role is Role.UNATTACHED
    assert core.epoch == 0


# ---------------------------------------------------------------- candidate


def test_lost_election_backs_off_within_the_configured_maximum() -> None:
    core = new_core()
    core.tick(core.next_deadline_ms())
    drain(core)
    core.step(2, VoteResponse(ErrorCode.NONE, 0, None, True, 1, pre_vote=True), 600)
    drain(core)
    assert core.role is Role.CANDIDATE
    core.step(2, VoteResponse(ErrorCode.NONE, 1, None, False, 1), 601)
    core.step(3, VoteResponse(ErrorCode.NONE, 1, None, False, 1), 601)
    assert core.role is Role.CANDIDATE
    assert 601 < core.next_deadline_ms() <= 601 + CONFIG.election_backoff_max_ms


def test_candidate_with_majority_leads_and_opens_its_epoch_with_leader_change() -> None:
    core = new_core()
    core.tick(core.next_deadline_ms())
    drain(core)
    core.step(2, VoteResponse(ErrorCode.NONE, 0, None, True, 1, pre_vote=True), 600)
    drain(core)
    core.step(2, VoteResponse(ErrorCode.NONE, 1, None, True, 1), 601)
    ready = core.ready()
    assert ready is not None
    assert core.role is Role.LEADER
    appended = [b for op in ready.log_ops if isinstance(op, AppendBatches) for b in op.batches]
    assert len(appended) == 1 and appended[0].is_control
    change = decode_control_record(appended[0].records()[0])
    assert isinstance(change, LeaderChange)
    assert change.leader_id == 1 and set(change.granting_voters) == {1, 2}
    begins = [
        m for m in ready.messages_after_persist if isinstance(m.message, BeginQuorumEpochRequest)
    ]
    assert {m.destination for m in begins} == {2, 3}


# ---------------------------------------------------------------- leader


def test_leader_commits_only_once_a_majority_holds_an_entry_of_its_epoch() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    before = leader.high_watermark
    cluster.down = {2, 3}
    leader.propose([b"x"], cluster.now_ms)
    drain(leader, cluster.now_ms)
    assert leader.high_watermark == before, "its own copy alone is not a majority"
    cluster.down = set()
    follower = next(i for i in (2, 3) if i != leader.node_id)
    leader.step(
        follower,
        FetchRequest(leader.epoch, leader.log.end_offset, leader.epoch, 0),
        cluster.now_ms,
    )
    drain(leader, cluster.now_ms)
    assert leader.high_watermark == leader.log.end_offset


def test_leader_high_watermark_ignores_observers() -> None:
    cluster = CoreCluster(voters=3, observers=1)
    cluster.elect()
    leader = cluster.leader()
    cluster.down = {i for i in (1, 2, 3) if i != leader.node_id}
    leader.propose([b"x"], cluster.now_ms)
    cluster.pump()
    assert cluster.cores[4].log.end_offset == leader.log.end_offset, "the observer has it"
    assert leader.high_watermark < leader.log.end_offset, "but it does not count"


def test_leader_without_a_majority_resigns_after_check_quorum_timeout() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    cluster.down = {i for i in (1, 2, 3) if i != leader.node_id}
    start = cluster.now_ms
    cluster.advance_time(start + CONFIG.check_quorum_timeout_ms + 10)
    assert leader.role is not Role.LEADER
    with pytest.raises(NotLeaderError):
        leader.propose([b"late"], cluster.now_ms)


def test_fetch_from_a_diverged_follower_gets_the_diverging_epoch() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    follower = next(i for i in (1, 2, 3) if i != leader.node_id)
    # The follower claims an epoch-0 entry the leader never had, past the leader's epoch 0.
    leader.step(follower, FetchRequest(leader.epoch, 5, 0, 0), cluster.now_ms)
    response = drain(leader).sent_to(follower)[-1]
    assert isinstance(response, FetchResponse)
    assert response.diverging == OffsetAndEpoch(0, 0), "no epoch at or below 0: start over"
    assert response.batches == ()


def test_fetch_below_the_log_start_gets_the_snapshot_id() -> None:
    cluster, snapshot = with_snapshot()
    leader = cluster.leader()
    follower = next(i for i in (1, 2, 3) if i != leader.node_id)
    leader.step(follower, FetchRequest(leader.epoch, 0, 0, 0), cluster.now_ms)
    response = drain(leader).sent_to(follower)[-1]
    assert isinstance(response, FetchResponse) and response.snapshot_id == snapshot


def test_fetch_snapshot_serves_chunks_of_the_latest_snapshot_only() -> None:
    cluster, snapshot = with_snapshot()
    leader = cluster.leader()
    follower = next(i for i in (1, 2, 3) if i != leader.node_id)
    leader.step(follower, FetchSnapshotRequest(leader.epoch, snapshot, 40, 30), cluster.now_ms)
    chunk = drain(leader).sent_to(follower)[-1]
    assert isinstance(chunk, FetchSnapshotResponse)
    assert (chunk.position, chunk.chunk_length, chunk.size) == (40, 30, 100)
    stale = SnapshotId(1, 1)
    leader.step(follower, FetchSnapshotRequest(leader.epoch, stale, 0, 30), cluster.now_ms)
    refused = drain(leader).sent_to(follower)[-1]
    assert isinstance(refused, FetchSnapshotResponse)
    assert refused.error is ErrorCode.SNAPSHOT_NOT_FOUND


def test_graceful_resign_names_the_most_caught_up_successor_first() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    leader.resign(cluster.now_ms)
    ends = drain(leader).of_type(EndQuorumEpochRequest)
    assert leader.role is Role.RESIGNED
    assert {m.destination for m in ends} == {1, 2, 3} - {leader.node_id}
    message = ends[0].message
    assert isinstance(message, EndQuorumEpochRequest) and len(message.preferred_successors) == 2


def test_first_preferred_successor_campaigns_at_once() -> None:
    core = new_core(node_id=2, election=ElectionState(4, None, 1))
    drain(core)
    core.step(1, EndQuorumEpochRequest(1, 4, (2, 3)), 100)
    assert core.next_deadline_ms() == 100
    core.tick(100)
    assert core.role is Role.PROSPECTIVE


def test_restarted_leader_does_not_lead_its_old_epoch_again() -> None:
    core = new_core(election=ElectionState(5, 1, 1))
    assert core.role is Role.RESIGNED
    with pytest.raises(NotLeaderError):
        core.propose([b"x"], 0)


# ---------------------------------------------------------------- follower


def follower_of(
    leader_id: int = 2, epoch: int = 3, log: RaftLog | None = None
) -> tuple[RaftCore, FetchRequest]:
    core = new_core(node_id=1, election=ElectionState(epoch, None, leader_id), log=log)
    fetch = drain(core).sent_to(leader_id)[0]
    assert isinstance(fetch, FetchRequest)
    return core, fetch


def test_follower_appends_fetched_batches_and_acknowledges_only_after_persisting() -> None:
    core, fetch = follower_of()
    batch = make_batch(0, 3, [b"a", b"b"])
    core.step(2, FetchResponse(ErrorCode.NONE, 3, 2, fetch.fetch_offset, 2, 0, (batch,)), 10)
    ready = core.ready()
    assert ready is not None
    assert ready.log_ops == [AppendBatches((batch,))]
    assert ready.messages == []
    next_fetch = ready.messages_after_persist[0].message
    assert isinstance(next_fetch, FetchRequest) and next_fetch.fetch_offset == 2
    assert ready.high_watermark == 2
    assert [b.base_offset for b in ready.committed] == [0]


def test_follower_truncates_to_the_diverging_epoch_end() -> None:
    log = RaftLog([make_batch(0, 1, [b"a"]), make_batch(1, 2, [b"b"]), make_batch(2, 2, [b"c"])])
    core, fetch = follower_of(log=log)
    assert (fetch.fetch_offset, fetch.last_fetched_epoch) == (3, 2)
    core.step(2, FetchResponse(ErrorCode.NONE, 3, 2, 3, 0, 0, diverging=OffsetAndEpoch(1, 1)), 10)
    ready = core.ready()
    assert ready is not None and ready.log_ops == [TruncateLog(1)]
    assert core.log.end_offset == 1


def test_a_diverging_answer_below_the_high_watermark_is_dropped_as_stale() -> None:
    """A leader never diverges below what it committed: such an answer replies to an earlier
    fetch at the same offset, overtaken by a later answer (reordered in the simulator's seed
    1838, where cutting the log raised LogInvariantError). The answer to the fetch in flight
    is still taken."""
    log = RaftLog([make_batch(0, 1, [b"a"]), make_batch(1, 1, [b"b"])])
    core, fetch = follower_of(log=log)
    core.step(2, FetchResponse(ErrorCode.NONE, 3, 2, fetch.fetch_offset, 2, 0), 10)
    drain(core)
    assert core.high_watermark == 2
    core.step(2, FetchResponse(ErrorCode.NONE, 3, 2, 2, 2, 0, diverging=OffsetAndEpoch(1, 1)), 20)
    assert (core.log.end_offset, core.high_watermark) == (2, 2)
    assert all(TruncateLog(1) not in r.log_ops for r in drain(core).readies)
    batch = make_batch(2, 3, [b"c"])
    core.step(2, FetchResponse(ErrorCode.NONE, 3, 2, 2, 3, 0, (batch,)), 30)
    assert (core.log.end_offset, core.high_watermark) == (3, 3)


def test_follower_ignores_duplicated_and_late_fetch_responses() -> None:
    core, _ = follower_of()
    batch = make_batch(0, 3, [b"a"])
    response = FetchResponse(ErrorCode.NONE, 3, 2, 0, 1, 0, (batch,))
    core.step(2, response, 10)
    core.step(2, response, 11)
    assert core.log.end_offset == 1


def test_follower_downloads_and_installs_a_snapshot_then_fetches_after_it() -> None:
    core, _ = follower_of()
    snapshot = SnapshotId(50, 2)
    core.step(2, FetchResponse(ErrorCode.NONE, 3, 2, 0, 50, 50, snapshot_id=snapshot), 10)
    request = drain(core).sent_to(2)[-1]
    assert isinstance(request, FetchSnapshotRequest) and request.position == 0
    core.step(2, FetchSnapshotResponse(ErrorCode.NONE, 3, 2, snapshot, 0, 8, 5, b"01234"), 11)
    request = drain(core).sent_to(2)[-1]
    assert isinstance(request, FetchSnapshotRequest) and request.position == 5
    core.step(2, FetchSnapshotResponse(ErrorCode.NONE, 3, 2, snapshot, 5, 8, 3, b"567"), 12)
    ready = core.ready()
    assert ready is not None
    assert InstallSnapshot(snapshot) in ready.log_ops
    assert ready.loaded_snapshot == snapshot
    assert core.log.start_offset == 50 and core.high_watermark == 50
    fetch_after = [m.message for m in ready.messages_after_persist][-1]
    assert isinstance(fetch_after, FetchRequest)
    assert (fetch_after.fetch_offset, fetch_after.last_fetched_epoch) == (50, 2)


def test_follower_that_stops_hearing_from_its_leader_campaigns() -> None:
    core, _ = follower_of()
    campaigned_at = tick_until_role_changes(core)
    assert (
        CONFIG.fetch_timeout_ms
        <= campaigned_at
        < CONFIG.fetch_timeout_ms + CONFIG.election_timeout_ms
    )
    assert core.role is Role.PROSPECTIVE


def test_begin_quorum_epoch_makes_a_voter_follow_the_new_leader() -> None:
    core = new_core(election=ElectionState(2, 3, None))
    core.step(3, BeginQuorumEpochRequest(3, 2), 10)
    ready = core.ready()
    assert core.role is Role.FOLLOWER and core.leader_id == 3
    assert ready is not None and ready.election_state == ElectionState(2, 3, 3)


def test_first_successor_campaigns_at_once_even_after_a_not_leader_answer() -> None:
    core, fetch = follower_of(leader_id=2, epoch=4)
    refusal = FetchResponse(ErrorCode.NOT_LEADER_OR_FOLLOWER, 4, None, fetch.fetch_offset)
    core.step(2, refusal, 100)
    core.step(2, EndQuorumEpochRequest(2, 4, (1, 3)), 101)
    assert core.next_deadline_ms() == 101
    core.tick(101)
    assert core.role is Role.PROSPECTIVE


def test_a_leader_named_by_a_peer_is_not_taken_as_heard_from() -> None:
    """A refusal naming the old leader must not make us defend that leader against the
    pre-votes of the other survivor: only the leader itself proves it is alive."""
    core = new_core(node_id=1, election=ElectionState(3, None, None))
    drain(core)
    core.step(3, BeginQuorumEpochResponse(ErrorCode.NONE, 4, 2), 100)
    assert core.role is Role.FOLLOWER and core.leader_id == 2
    core.step(3, VoteRequest(5, 3, 4, 0, pre_vote=True), 101)
    response = drain(core).sent_to(3)[-1]
    assert isinstance(response, VoteResponse) and response.vote_granted


def test_a_leader_resigning_to_shut_down_holds_back_while_it_lingers() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    resigned_at = cluster.now_ms
    leader.resign(resigned_at)
    cluster.down = {i for i in (1, 2, 3) if i != leader.node_id}
    linger = 2 * CONFIG.fetch_timeout_ms
    for now in range(resigned_at, resigned_at + linger + CONFIG.election_timeout_ms, 10):
        leader.tick(now)
        drain(leader, now)
    assert leader.role is Role.RESIGNED, "no campaign while a successor may be taking over"
    campaigned_at = tick_until_role_changes(leader, limit_ms=resigned_at + 10_000)
    assert campaigned_at >= resigned_at + linger + CONFIG.election_timeout_ms
    assert leader.role is Role.PROSPECTIVE, "a node that failed to stop takes part again"


def test_graceful_resign_names_first_the_voter_it_can_reach_among_equals() -> None:
    # Node 1 is down while 2 and 3 elect; back, it fetches from the leader and catches up,
    # but the leader's requests to it are lost (its link to the restarted node is still
    # reconnecting), so node 1 never answers this leader's BeginQuorumEpoch.
    cluster = CoreCluster()
    cluster.down.add(1)
    leader = cluster.elect()
    other = ({2, 3} - {leader.node_id}).pop()
    cluster.down.discard(1)
    cluster.lost_requests.add((leader.node_id, 1))
    cluster.advance_time(cluster.now_ms + 3_000)
    assert cluster.cores[1].leader_id == leader.node_id
    described = {r.replica_id: r for r in leader.describe().voters}
    assert described[1].log_end_offset == described[other].log_end_offset == leader.log.end_offset
    leader.resign(cluster.now_ms)
    ends = drain(leader).of_type(EndQuorumEpochRequest)
    message = ends[0].message
    assert isinstance(message, EndQuorumEpochRequest)
    # By id alone node 1 would come first and the reachable voter would wait its backoff.
    assert message.preferred_successors == (other, 1)
