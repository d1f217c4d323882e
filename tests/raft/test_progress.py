"""The leader's quorum maths on its own: majorities, replica progress and check-quorum."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from raftmeta.raft.majority import majority_size, majority_value
from raftmeta.raft.progress import ProgressTracker
from raftmeta.raft.voters import ReplicaKey, VoterSet

VOTERS = frozenset({1, 2, 3, 4, 5})


def test_a_majority_is_more_than_half_of_the_voters() -> None:
    assert [majority_size(n) for n in (1, 2, 3, 4, 5)] == [1, 2, 2, 3, 3]
    with pytest.raises(ValueError):
        majority_size(0)


def test_majority_value_is_what_a_majority_is_at_or_above() -> None:
    assert majority_value([7]) == 7
    assert majority_value([10, 3, 8]) == 8
    assert majority_value([1, 9, 4, 6, 2]) == 4
    assert majority_value([5, 5, 0, 0]) == 0, "two of four is not a majority"


def test_high_watermark_candidate_counts_only_voters_and_the_leaders_durable_end() -> None:
    tracker = ProgressTracker(1, frozenset({1, 2, 3}), now_ms=0)
    tracker.fetched(2, 40, leader_end=50, now_ms=5)
    tracker.fetched(9, 50, leader_end=50, now_ms=5)  # an observer, fully caught up
    assert tracker.majority_end_offset(leader_durable_end=30) == 30
    assert tracker.majority_end_offset(leader_durable_end=50) == 40
    tracker.fetched(3, 50, leader_end=50, now_ms=6)
    assert tracker.majority_end_offset(leader_durable_end=50) == 50


def test_replicas_never_heard_from_hold_nothing() -> None:
    tracker = ProgressTracker(1, VOTERS, now_ms=0)
    assert tracker.majority_end_offset(leader_durable_end=100) == 0


def test_fetch_at_the_leaders_end_counts_as_caught_up() -> None:
    tracker = ProgressTracker(1, frozenset({1, 2, 3}), now_ms=0)
    tracker.fetched(2, 10, leader_end=20, now_ms=5)
    assert tracker[2].last_caught_up_ms is None
    tracker.fetched(2, 20, leader_end=20, now_ms=8)
    assert (tracker[2].end_offset, tracker[2].last_fetch_ms, tracker[2].last_caught_up_ms) == (
        20,
        8,
        8,
    )


def test_check_quorum_deadline_follows_the_latest_contact_of_a_majority() -> None:
    tracker = ProgressTracker(1, VOTERS, now_ms=0)
    assert tracker.check_quorum_deadline(750) == 750, "a new leader gets a whole timeout"
    tracker.contact(2, 100)
    assert tracker.check_quorum_deadline(750) == 750, "the leader and one voter are two of five"
    tracker.contact(3, 200)
    assert tracker.check_quorum_deadline(750) == 100 + 750
    tracker.contact(4, 300)
    assert tracker.check_quorum_deadline(750) == 200 + 750


def test_observers_never_keep_a_leader_in_office() -> None:
    tracker = ProgressTracker(1, frozenset({1, 2, 3}), now_ms=0)
    for observer in (7, 8, 9):
        tracker.contact(observer, 1000)
    assert tracker.check_quorum_deadline(750) == 750
    assert list(tracker) == [1, 2, 3]
    assert [key.node_id for key, _ in tracker.observers()] == [7, 8, 9]


def test_successors_are_ranked_by_replication_then_id() -> None:
    tracker = ProgressTracker(3, VOTERS, now_ms=0)
    tracker.fetched(5, 30, leader_end=40, now_ms=1)
    tracker.fetched(2, 30, leader_end=40, now_ms=1)
    tracker.fetched(4, 10, leader_end=40, now_ms=1)
    assert tracker.successors() == (2, 5, 4, 1)


_FETCHERS = st.tuples(st.sampled_from([2, 7, 8]), st.sampled_from([None, "a", "b"]))


@given(st.lists(st.tuples(_FETCHERS, st.integers(0, 50)), max_size=30))
def test_a_replica_never_has_an_entry_with_and_one_without_a_directory(
    fetches: list[tuple[tuple[int, str | None], int]],
) -> None:
    """Whatever order fetches with and without directory ids arrive in, an id is kept either
    under its directories or once without one, never both, and the observers always sort."""
    tracker = ProgressTracker(1, VoterSet.of([ReplicaKey(1, "d1"), ReplicaKey(2, "d2")]), now_ms=0)
    for now, ((node_id, directory), offset) in enumerate(fetches, start=1):
        key = ReplicaKey(node_id, directory)
        tracker.contact(key, now)
        tracker.fetched(key, offset, leader_end=50, now_ms=now)
        observers = tracker.observers()
        for node in {k.node_id for k, _ in observers}:
            named = [k for k, _ in observers if k.node_id == node]
            assert len(named) == 1 or all(k.directory_id is not None for k in named), observers
        assert tracker.progress(key) is not None
