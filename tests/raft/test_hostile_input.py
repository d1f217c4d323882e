"""No peer message may stop a node or plant a value it cannot live with (issue 12).

Each test sends one forged or out-of-range message, as an unauthenticated process could over a
plaintext listener, and checks that the core refuses it with a Kafka error, tells its runtime,
and leaves its role, epoch, vote and log as they were.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.errors import ErrorCode
from raftmeta.raft.batch import SnapshotId, make_batch
from raftmeta.raft.core import RaftCore
from raftmeta.raft.limits import EPOCH_LIMIT
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
from raftmeta.raft.ready import Ready
from raftmeta.raft.roles import Role
from raftmeta.raft.state import ElectionState
from raftmeta.storage.errors import QuorumStateError
from raftmeta.storage.quorum_state import QuorumStateStore
from tests.raft.builder import CONFIG, CoreCluster, drain, new_core, with_elected_leader

RESPONSES = (
    VoteResponse,
    BeginQuorumEpochResponse,
    EndQuorumEpochResponse,
    FetchResponse,
    FetchSnapshotResponse,
)
TOO_LATE = EPOCH_LIMIT
"""2^31 - 1: an epoch no node could ever move past."""


def snapshot_of(core: RaftCore) -> tuple[Role, ElectionState, int, int | None]:
    return core.role, core.election_state, core.log.end_offset, core.leader_id


def refused(
    core: RaftCore, sender: int, message: Message, now_ms: int, error: ErrorCode
) -> list[Message]:
    """Step ``message`` and check it was refused: nothing persisted, state unchanged, the
    runtime told, and (for a request) the sender answered with ``error``."""
    drain(core, now_ms)
    before = snapshot_of(core)
    core.step(sender, message, now_ms)
    ready = core.ready()
    assert ready is not None, "a refusal is reported to the runtime"
    assert ready.election_state is None, "nothing is persisted for a refused message"
    assert ready.log_ops == []
    assert [(r.sender, r.message, r.error) for r in ready.rejected] == [(sender, message, error)]
    assert ready.rejected[0].reason
    core.advance(ready, now_ms)
    assert snapshot_of(core) == before
    answers = [o.message for o in (*ready.messages, *ready.messages_after_persist)]
    if isinstance(message, VoteResponse | FetchResponse | FetchSnapshotResponse):
        assert answers == []
    elif not isinstance(message, BeginQuorumEpochResponse | EndQuorumEpochResponse):
        assert len(answers) == 1
        answer = answers[0]
        assert isinstance(answer, RESPONSES) and answer.error is error
    return answers


def other_voter(leader: RaftCore) -> int:
    return next(v for v in sorted(leader.voters) if v != leader.node_id)


# ---------------------------------------------------------------- another leader for our epoch


def test_begin_quorum_epoch_naming_another_leader_of_our_epoch_does_not_stop_the_leader() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    impostor = other_voter(leader)
    message = BeginQuorumEpochRequest(impostor, leader.epoch)
    refused(leader, impostor, message, cluster.now_ms, ErrorCode.INVALID_REQUEST)
    assert leader.role is Role.LEADER


def test_end_quorum_epoch_naming_another_leader_of_our_epoch_does_not_stop_the_leader() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    impostor = other_voter(leader)
    message = EndQuorumEpochRequest(impostor, leader.epoch, (leader.node_id,))
    refused(leader, impostor, message, cluster.now_ms, ErrorCode.INVALID_REQUEST)
    assert leader.role is Role.LEADER


def test_two_forged_announcements_in_a_row_leave_the_quorum_its_leader() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    epoch = leader.epoch
    for voter in sorted(leader.voters - {leader.node_id}):
        leader.step(voter, BeginQuorumEpochRequest(voter, epoch), cluster.now_ms)
        leader.step(voter, EndQuorumEpochRequest(voter, epoch, ()), cluster.now_ms)
    cluster.pump()
    leader.propose([b"still here"], cluster.now_ms)
    cluster.pump()
    assert cluster.leader() is leader and leader.epoch == epoch
    assert leader.high_watermark == leader.log.end_offset


def test_restarted_leader_refuses_a_claim_on_the_epoch_it_led() -> None:
    core = new_core(election=ElectionState(5, 1, 1))
    assert core.role is Role.RESIGNED
    refused(core, 2, BeginQuorumEpochRequest(2, 5), 10, ErrorCode.INVALID_REQUEST)


def test_follower_follows_the_latest_leader_named_for_its_epoch() -> None:
    """A follower knows its leader second-hand: a later name replaces an earlier one, so a
    wrong name is put right by the next answer naming the real leader."""
    core = new_core(election=ElectionState(4, None, 2))
    core.step(3, BeginQuorumEpochRequest(3, 4), 10)
    assert core.leader_id == 3 and core.epoch == 4
    core.step(3, BeginQuorumEpochResponse(ErrorCode.NONE, 4, 2), 11)
    assert core.leader_id == 2 and core.epoch == 4


def test_response_naming_another_leader_of_our_epoch_is_dropped_and_reported() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    voter = other_voter(leader)
    response = BeginQuorumEpochResponse(ErrorCode.NONE, leader.epoch, voter)
    refused(leader, voter, response, cluster.now_ms, ErrorCode.INVALID_REQUEST)


# ---------------------------------------------------------------- ids that are not voters


@pytest.mark.parametrize("leader_id", [-5, -1, 99])
def test_begin_quorum_epoch_from_a_leader_that_is_not_a_voter_is_refused(leader_id: int) -> None:
    core = new_core(election=ElectionState(3, None, 2))
    error = ErrorCode.INVALID_REQUEST if leader_id < 0 else ErrorCode.INCONSISTENT_VOTER_SET
    refused(core, leader_id, BeginQuorumEpochRequest(leader_id, 4), 10, error)


def test_vote_for_a_candidate_that_is_not_a_voter_is_refused() -> None:
    core = new_core()
    refused(core, 2, VoteRequest(1, 42, 0, 0), 10, ErrorCode.INVALID_REQUEST)
    refused(core, 42, VoteRequest(1, 42, 0, 0), 10, ErrorCode.INCONSISTENT_VOTER_SET)


def test_a_response_naming_a_leader_that_is_not_a_voter_is_refused() -> None:
    core = new_core(election=ElectionState(3, None, 2))
    response = FetchResponse(ErrorCode.NONE, 4, 77, 0)
    refused(core, 2, response, 10, ErrorCode.INCONSISTENT_VOTER_SET)


def test_messages_under_this_nodes_own_id_are_refused() -> None:
    core = new_core(node_id=1, election=ElectionState(3, None, 2))
    refused(core, 1, BeginQuorumEpochRequest(1, 9), 10, ErrorCode.INVALID_REQUEST)


def test_vote_and_epoch_messages_from_strangers_are_refused() -> None:
    core = new_core(election=ElectionState(3, None, 2))
    refused(core, 66, EndQuorumEpochRequest(2, 3, (1,)), 10, ErrorCode.INCONSISTENT_VOTER_SET)
    refused(
        core,
        66,
        VoteResponse(ErrorCode.NONE, 9, None, True, 9),
        10,
        ErrorCode.INCONSISTENT_VOTER_SET,
    )


def test_fetches_claiming_an_observer_id_do_not_keep_an_isolated_leader() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    cluster.down = set(leader.voters - {leader.node_id})
    start = cluster.now_ms
    for now in range(start, start + CONFIG.check_quorum_timeout_ms + 50, 20):
        leader.step(4242, FetchRequest(leader.epoch, leader.log.end_offset, leader.epoch), now)
        leader.tick(now)
        drain(leader, now)
    assert leader.role is not Role.LEADER


# ---------------------------------------------------------------- ranges


@pytest.mark.parametrize(
    "message",
    [
        VoteRequest(TOO_LATE, 2, 0, 0),
        VoteRequest(TOO_LATE, 2, 0, 0, pre_vote=True),
        VoteRequest(5, 2, -1, 0),
        VoteRequest(5, 2, 0, -3),
        VoteRequest(-2, 2, 0, 0),
        BeginQuorumEpochRequest(2, TOO_LATE),
        BeginQuorumEpochRequest(2, 2**40),
        BeginQuorumEpochRequest(2, -7),
        EndQuorumEpochRequest(2, TOO_LATE, (1,)),
        EndQuorumEpochRequest(2, 4, (1, -4)),
        FetchRequest(TOO_LATE, 0, 0),
        FetchRequest(3, -1, 0),
        FetchRequest(3, 0, -1),
        FetchRequest(3, 0, 0, max_bytes=0),
        FetchRequest(3, 0, 0, max_bytes=-5),
        FetchRequest(3, 0, 0, max_wait_ms=-1),
        FetchRequest(3, 2**63, 0),
        FetchSnapshotRequest(3, SnapshotId(10, 1), 0, max_bytes=-1),
        FetchSnapshotRequest(3, SnapshotId(10, 1), -4),
        FetchSnapshotRequest(3, SnapshotId(-1, 1), 0),
        FetchSnapshotRequest(3, SnapshotId(10, TOO_LATE), 0),
    ],
    ids=repr,
)
def test_out_of_range_request_is_refused_with_invalid_request(message: Message) -> None:
    core = new_core(election=ElectionState(3, None, 2))
    refused(core, 2, message, 10, ErrorCode.INVALID_REQUEST)


@pytest.mark.parametrize(
    "message",
    [
        VoteResponse(ErrorCode.NONE, TOO_LATE, None, False, TOO_LATE),
        BeginQuorumEpochResponse(ErrorCode.NONE, TOO_LATE, 3),
        EndQuorumEpochResponse(ErrorCode.NONE, -1, None),
        FetchResponse(ErrorCode.NONE, TOO_LATE, 2, 0),
        FetchResponse(ErrorCode.NONE, 3, 2, 0, high_watermark=-2),
        FetchResponse(ErrorCode.NONE, 3, 2, 0, batches=(make_batch(0, TOO_LATE, [b"x"]),)),
        FetchSnapshotResponse(ErrorCode.NONE, 3, 2, SnapshotId(5, 1), 0, 4, 3, b"ab"),
        FetchSnapshotResponse(ErrorCode.NONE, 3, 2, SnapshotId(5, 1), 0, -4),
    ],
    ids=repr,
)
def test_out_of_range_response_is_dropped_and_reported(message: Message) -> None:
    core = new_core(election=ElectionState(3, None, 2))
    refused(core, 2, message, 10, ErrorCode.INVALID_REQUEST)


def test_vote_at_the_int32_limit_is_neither_granted_nor_persisted() -> None:
    """Issue 12: one Vote at 2^31 - 1 was granted and persisted, and no node could ever build
    its next request again."""
    core = new_core()
    answers = refused(core, 2, VoteRequest(TOO_LATE, 2, 0, 0), 10, ErrorCode.INVALID_REQUEST)
    assert isinstance(answers[0], VoteResponse) and not answers[0].vote_granted
    assert core.epoch == 0


def test_a_node_at_the_last_usable_epoch_does_not_campaign_past_it() -> None:
    last = EPOCH_LIMIT - 1
    core = new_core(election=ElectionState(last, None, None))
    for now in range(0, 5000, 50):
        core.tick(now)
        ready = drain(core, now)
        for r in ready.readies:
            assert r.election_state is None or r.election_state.epoch < EPOCH_LIMIT
        for out in ready.sent:
            assert not isinstance(out.message, VoteRequest) or out.message.candidate_epoch <= last
    assert core.epoch == last


def test_a_batch_from_a_future_epoch_is_refused_not_fatal() -> None:
    core = new_core(election=ElectionState(3, None, 2))
    fetch = drain(core).sent_to(2)[0]
    assert isinstance(fetch, FetchRequest)
    batch = make_batch(0, 9, [b"x"])
    response = FetchResponse(ErrorCode.NONE, 3, 2, fetch.fetch_offset, 1, 0, (batch,))
    refused(core, 2, response, 10, ErrorCode.INVALID_REQUEST)


def test_refusals_are_reported_once() -> None:
    core = new_core()
    core.step(2, VoteRequest(TOO_LATE, 2, 0, 0), 10)
    first = core.ready()
    assert isinstance(first, Ready) and len(first.rejected) == 1
    core.advance(first, 10)
    later = drain(core, 10)
    assert all(r.rejected == [] for r in later.readies)


def test_a_quorum_keeps_working_after_every_refusal() -> None:
    cluster = CoreCluster()
    leader = cluster.elect()
    for core in cluster.cores.values():
        core.step(2 if core.node_id != 2 else 3, VoteRequest(TOO_LATE, 2, 0, 0), cluster.now_ms)
    cluster.pump()
    leader.propose([b"after"], cluster.now_ms)
    cluster.pump()
    assert cluster.leader() is leader
    assert all(c.log.end_offset == leader.log.end_offset for c in cluster.cores.values())


# ---------------------------------------------------------------- the persisted state


@pytest.mark.parametrize(
    "state",
    [
        ElectionState(EPOCH_LIMIT, None, None),
        ElectionState(-1, None, None),
        ElectionState(3, -5, None),
        ElectionState(3, None, 2**31),
    ],
    ids=repr,
)
def test_quorum_state_file_refuses_out_of_range_values(
    tmp_path: Path, state: ElectionState
) -> None:
    path = tmp_path / "quorum-state"
    store = QuorumStateStore(path)
    with pytest.raises(ValueError):
        store.write(state)
    assert not path.exists(), "nothing is persisted"


def test_quorum_state_file_with_an_epoch_at_the_limit_is_unreadable(tmp_path: Path) -> None:
    path = tmp_path / "quorum-state"
    path.write_text(
        f'{{"leaderId": -1, "leaderEpoch": {EPOCH_LIMIT}, "votedId": -1, "data_version": 1}}'
    )
    with pytest.raises(QuorumStateError):
        QuorumStateStore(path).read()
