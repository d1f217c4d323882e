"""A voter whose start-up repair cut its log withholds its votes (its own included) until a
leader has brought it up to date, or until a bounded time has passed."""

from __future__ import annotations

import random

from raftmeta.errors import ErrorCode
from raftmeta.raft.batch import make_batch
from raftmeta.raft.core import RaftCore
from raftmeta.raft.log import RaftLog
from raftmeta.raft.messages import (
    BeginQuorumEpochRequest,
    FetchRequest,
    FetchResponse,
    VoteRequest,
    VoteResponse,
)
from raftmeta.raft.roles import Role
from raftmeta.raft.state import ElectionState
from tests.raft.builder import CONFIG, drain

ABSTAIN_MS = CONFIG.repaired_voter_abstain_ms


def repaired_core(
    *, repaired: bool = True, voters: frozenset[int] = frozenset({1, 2, 3})
) -> RaftCore:
    return RaftCore(
        1,
        voters,
        CONFIG,
        election_state=ElectionState(),
        log=RaftLog([make_batch(0, 0, [b"kept"])]),
        now_ms=0,
        rng=random.Random(7),
        log_repaired=repaired,
    )


def vote_answer(core: RaftCore, request: VoteRequest, now_ms: int) -> bool:
    core.step(request.candidate_id, request, now_ms)
    answers = [m for m in drain(core, now_ms).sent_to(request.candidate_id)]
    answer = answers[-1]
    assert isinstance(answer, VoteResponse)
    return answer.vote_granted


def test_a_repaired_voter_refuses_votes_and_pre_votes_an_intact_one_grants() -> None:
    up_to_date_pre_vote = VoteRequest(1, 2, 0, 5, pre_vote=True)
    up_to_date_vote = VoteRequest(1, 2, 0, 5)
    intact = repaired_core(repaired=False)
    drain(intact)
    assert vote_answer(intact, up_to_date_pre_vote, 10)
    assert vote_answer(intact, up_to_date_vote, 10)
    repaired = repaired_core()
    drain(repaired)
    assert repaired.abstaining
    assert not vote_answer(repaired, up_to_date_pre_vote, 10)
    assert not vote_answer(repaired, up_to_date_vote, 10)


def test_the_abstention_ends_after_its_time_bound() -> None:
    core = repaired_core()
    drain(core)
    assert not vote_answer(core, VoteRequest(1, 2, 0, 5), ABSTAIN_MS - 1)
    assert vote_answer(core, VoteRequest(2, 2, 0, 5), ABSTAIN_MS)
    assert not core.abstaining


def test_the_abstention_ends_once_a_leader_brought_the_log_up_to_its_high_watermark() -> None:
    core = repaired_core()
    drain(core)
    core.step(2, BeginQuorumEpochRequest(2, 1), 10)
    fetches = [m for m in drain(core, 10).sent_to(2) if isinstance(m, FetchRequest)]
    assert fetches and fetches[-1].fetch_offset == 1
    # An answer below the leader's high watermark is not enough.
    behind = FetchResponse(
        ErrorCode.NONE, 1, 2, 1, high_watermark=3, batches=(make_batch(1, 1, [b"a"]),)
    )
    core.step(2, behind, 20)
    drain(core, 20)
    assert core.abstaining
    caught_up = FetchResponse(
        ErrorCode.NONE, 1, 2, 2, high_watermark=3, batches=(make_batch(2, 1, [b"b"]),)
    )
    core.step(2, caught_up, 30)
    drain(core, 30)
    assert not core.abstaining
    assert core.log.end_offset == 3


def test_an_abstaining_voter_does_not_count_its_own_vote() -> None:
    alone = repaired_core(voters=frozenset({1}))
    drain(alone)
    now = 0
    while now < ABSTAIN_MS - CONFIG.election_timeout_ms:
        now += 50
        alone.tick(now)
        drain(alone, now)
        assert alone.role is not Role.LEADER, f"led at {now} ms while abstaining"
    while alone.role is not Role.LEADER and now < 3 * ABSTAIN_MS:
        now += 50
        alone.tick(now)
        drain(alone, now)
    assert alone.role is Role.LEADER, "the time bound lets a lone repaired voter lead"
