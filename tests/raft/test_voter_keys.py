"""Voters are (node id, directory id) pairs (KIP-853): the same id on another directory is not
the voter, cannot vote or be voted for, and its fetches do not count toward the commit."""

from __future__ import annotations

from raftmeta.errors import ErrorCode
from raftmeta.raft.core import RaftCore
from raftmeta.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    FetchRequest,
    VoteRequest,
    VoteResponse,
)
from raftmeta.raft.roles import Role
from raftmeta.raft.state import ElectionState
from raftmeta.raft.voters import ReplicaKey, VoterSet, majorities_overlap
from tests.raft.builder import drain, new_core

VOTERS = VoterSet.of(ReplicaKey(i, f"d{i}") for i in (1, 2, 3))


def test_a_static_voter_matches_any_directory_and_a_keyed_one_only_its_own() -> None:
    static = VoterSet.of([1, 2, 3])
    assert static.is_voter(ReplicaKey(2, "anything")) and static.is_voter(ReplicaKey(2))
    assert VOTERS.is_voter(ReplicaKey(2, "d2"))
    assert not VOTERS.is_voter(ReplicaKey(2, "wiped")) and not VOTERS.is_voter(ReplicaKey(2))
    assert not VOTERS.is_voter(ReplicaKey(4, "d4"))


def test_a_node_on_a_new_directory_is_an_observer_and_never_campaigns() -> None:
    core = new_core(2, VOTERS, directory_id="wiped")
    assert not core.is_voter
    sent = drain(core).sent
    assert sent and all(isinstance(m.message, FetchRequest) for m in sent)
    assert all(m.message.replica_directory_id == "wiped" for m in sent)  # type: ignore[union-attr]


def test_vote_meant_for_another_directory_is_refused_with_invalid_voter_key() -> None:
    core = new_core(1, VOTERS, directory_id="d1")
    request = VoteRequest(1, 2, 0, 0, candidate_directory_id="d2", voter_directory_id="old")
    core.step(2, request, 0)
    answers = drain(core).sent_to(2)
    assert answers == [VoteResponse(ErrorCode.INVALID_VOTER_KEY, 0, None, False, 1)]
    assert core.election_state == ElectionState()


def test_candidate_outside_a_stale_voter_set_that_names_this_voter_gets_its_vote() -> None:
    """Node 1 has not fetched the record that added node 4; node 4 has, and it is committed.
    If node 1 refused it, a quorum whose other members are down could never elect again."""
    core = new_core(1, VOTERS, directory_id="d1", kraft_version=1)
    request = VoteRequest(1, 4, 0, 0, candidate_directory_id="d4", voter_directory_id="d1")
    core.step(4, request, 0)
    (answer,) = drain(core).sent_to(4)
    assert isinstance(answer, VoteResponse) and answer.vote_granted
    # Without its directory named (or in a static quorum) a stranger is refused.
    static = new_core(1, VOTERS, directory_id="d1")
    static.step(4, request, 0)
    (refused,) = drain(static).sent_to(4)
    assert isinstance(refused, VoteResponse)
    assert refused.error is ErrorCode.INCONSISTENT_VOTER_SET and not refused.vote_granted


def test_vote_is_persisted_with_the_candidates_directory() -> None:
    core = new_core(1, VOTERS, directory_id="d1")
    core.step(2, VoteRequest(1, 2, 0, 0, candidate_directory_id="d2", voter_directory_id="d1"), 0)
    (answer,) = drain(core).sent_to(2)
    assert isinstance(answer, VoteResponse) and answer.vote_granted
    assert core.election_state == ElectionState(1, 2, None, "d2")


def test_begin_quorum_epoch_for_another_directory_is_refused() -> None:
    core = new_core(1, VOTERS, directory_id="d1")
    core.step(2, BeginQuorumEpochRequest(2, 4, voter_directory_id="old"), 0)
    (answer,) = drain(core).sent_to(2)
    assert answer == BeginQuorumEpochResponse(ErrorCode.INVALID_VOTER_KEY, 0, None)
    assert core.role is Role.UNATTACHED and core.epoch == 0


def _single_grant_leader() -> tuple[RaftCore, int]:
    """Node 1 of VOTERS, elected with node 2's vote; returns the core and the time."""
    core = new_core(1, VOTERS, directory_id="d1")
    now = core.next_deadline_ms()
    core.tick(now)  # prospective
    core.step(2, VoteResponse(ErrorCode.NONE, 0, None, True, 1, pre_vote=True), now)
    core.step(2, VoteResponse(ErrorCode.NONE, 1, None, True, 1), now)
    assert core.role is Role.LEADER
    drain(core, now)
    return core, now


def test_fetch_from_a_wiped_directory_does_not_commit() -> None:
    core, now = _single_grant_leader()
    assert core.high_watermark == 0
    end = core.log.end_offset
    core.step(2, FetchRequest(1, end, 1, replica_directory_id="wiped"), now)
    drain(core, now)
    assert core.high_watermark == 0, "the same node id on a new directory is an observer"
    description = core.describe()
    assert [(o.replica_id, o.directory_id) for o in description.observers] == [(2, "wiped")]
    core.step(2, FetchRequest(1, end, 1, replica_directory_id="d2"), now)
    drain(core, now)
    assert core.high_watermark == end


def test_single_changes_overlap_and_double_changes_need_not() -> None:
    three = [ReplicaKey(i) for i in (1, 2, 3)]
    assert majorities_overlap(three, [*three, ReplicaKey(4)])
    assert majorities_overlap(three, three[:2])
    assert not majorities_overlap(three, [*three, ReplicaKey(4), ReplicaKey(5)])
    assert not majorities_overlap([ReplicaKey(1)], [ReplicaKey(2)])


def test_a_fetch_without_a_directory_under_an_observers_id_keeps_one_entry() -> None:
    """A broker (observer 7) fetches with its directory; a Fetch under its id that names no
    directory (an older fetcher or a forged one) must not add a second entry: with two,
    DescribeQuorum compared a directory id with None and failed on every call."""
    core, now = _single_grant_leader()
    end = core.log.end_offset
    core.step(7, FetchRequest(1, end, 1, replica_directory_id="b7"), now)
    core.step(7, FetchRequest(1, 0, 0), now + 1)
    drain(core, now + 1)
    observers = core.describe().observers
    assert [(o.replica_id, o.directory_id) for o in observers] == [(7, "b7")]
    assert observers[0].log_end_offset == 0, "the later fetch is counted against the one entry"


def test_an_observer_first_seen_without_a_directory_is_rekeyed_when_it_names_one() -> None:
    core, now = _single_grant_leader()
    end = core.log.end_offset
    core.step(8, FetchRequest(1, 0, 0), now)
    core.step(8, FetchRequest(1, end, 1, replica_directory_id="b8"), now + 1)
    drain(core, now + 1)
    observers = core.describe().observers
    assert [(o.replica_id, o.directory_id, o.log_end_offset) for o in observers] == [(8, "b8", end)]
