"""A fetch the runtime could not deliver is sent again after the retry backoff.

After a graceful handover to a node that was restarted a moment earlier, the other follower's
channel to it is often still reconnecting, and its first fetch fails at once. Left to the fetch
resend time (half a second on the defaults) that one lost fetch held the new leader's first
commit back as long as a fetch timeout; the runtime now reports the failure and the core
retries after ``retry_backoff_ms``.
"""

from __future__ import annotations

from collections.abc import Sequence

from raftmeta.raft.messages import FetchRequest, Message, VoteRequest, VoteResponse
from raftmeta.raft.roles import Follower, Role
from raftmeta.raft.state import ElectionState
from tests.raft.builder import CONFIG, CoreCluster, drain, new_core


def _fetches(core_output: Sequence[Message]) -> list[FetchRequest]:
    return [m for m in core_output if isinstance(m, FetchRequest)]


def test_a_fetch_reported_unreachable_is_resent_after_the_retry_backoff() -> None:
    follower = new_core(2, election=ElectionState(3, None, 1), now_ms=0)
    [lost] = _fetches(drain(follower, 0).sent_to(1))

    follower.unreachable(1, lost, 5)

    due = follower.next_deadline_ms()
    assert due == 5 + CONFIG.retry_backoff_ms < CONFIG.fetch_resend_ms
    follower.tick(due)
    [again] = _fetches(drain(follower, due).sent_to(1))
    assert again.fetch_offset == lost.fetch_offset
    assert follower.role is Role.FOLLOWER and follower.epoch == 3


def test_an_unreachable_report_for_an_older_fetch_changes_nothing() -> None:
    follower = new_core(2, election=ElectionState(3, None, 1), now_ms=0)
    [current] = _fetches(drain(follower, 0).sent_to(1))
    stale = FetchRequest(3, current.fetch_offset + 1, 3, 0, 1024)

    follower.unreachable(1, stale, 5)
    follower.unreachable(3, current, 5)

    assert follower.next_deadline_ms() == CONFIG.fetch_resend_ms


def test_handover_whose_first_fetch_is_lost_commits_without_an_election() -> None:
    cluster = CoreCluster(seed=3)
    old = cluster.elect()
    epoch = old.epoch
    old.resign(cluster.now_ms)
    cluster.down.add(old.node_id)
    # Deliver the EndQuorumEpoch and the successor's election, holding back the fetches the
    # remaining follower sends to the new leader: the first one is lost on its way.
    survivors = [c for i, c in cluster.cores.items() if i != old.node_id]
    ready = old.ready()
    assert ready is not None
    old.advance(ready, cluster.now_ms)
    for outbound in (*ready.messages, *ready.messages_after_persist):
        cluster.cores[outbound.destination].step(old.node_id, outbound.message, cluster.now_ms)
    lost: list[tuple[int, int, FetchRequest]] = []
    votes: list[VoteRequest] = []
    for _ in range(100):
        moved = False
        for core in survivors:
            core.tick(cluster.now_ms)
            out = core.ready()
            if out is None:
                continue
            moved = True
            core.advance(out, cluster.now_ms)
            for outbound in (*out.messages, *out.messages_after_persist):
                message = outbound.message
                if outbound.destination == old.node_id:
                    continue
                if isinstance(message, VoteRequest):
                    votes.append(message)
                target = cluster.cores[outbound.destination]
                if isinstance(message, FetchRequest) and target.role is Role.LEADER and not lost:
                    lost.append((core.node_id, outbound.destination, message))
                    continue
                target.step(core.node_id, message, cluster.now_ms)
        if not moved:
            break
    new = cluster.leader()
    assert new.epoch == epoch + 1 and lost
    follower_id, leader_id, fetch = lost[0]
    follower = cluster.cores[follower_id]
    votes_before = len(votes)
    follower.unreachable(leader_id, fetch, cluster.now_ms)

    cluster.advance_time(cluster.now_ms + CONFIG.retry_backoff_ms)

    assert new.high_watermark == new.log.end_offset, "the new epoch's start is committed"
    assert follower.role is Role.FOLLOWER and follower.epoch == epoch + 1
    assert len(votes) == votes_before


# ----------------------------------------------------------------- the leader's connection closed


def _followers_fetch_from(cluster: CoreCluster, leader_id: int) -> list[int]:
    return [i for i, c in cluster.cores.items() if i != leader_id and i not in cluster.down]


def test_followers_told_their_leaders_connection_closed_elect_another_within_half_a_timeout() -> (
    None
):
    cluster = CoreCluster(seed=5)
    old = cluster.elect()
    epoch = old.epoch
    cluster.down.add(old.node_id)
    killed_at = cluster.now_ms
    for follower_id in _followers_fetch_from(cluster, old.node_id):
        fetch = FetchRequest(epoch, 0, 0)
        cluster.cores[follower_id].unreachable(old.node_id, fetch, killed_at, peer_down=True)

    cluster.advance_time(killed_at + CONFIG.election_timeout_ms // 2 + 20)

    new = cluster.leader()
    assert new.node_id != old.node_id and new.epoch == epoch + 1
    assert killed_at + CONFIG.election_timeout_ms // 2 + 20 < killed_at + CONFIG.fetch_timeout_ms


def test_without_the_hint_followers_wait_out_the_fetch_timeout() -> None:
    cluster = CoreCluster(seed=5)
    old = cluster.elect()
    epoch = old.epoch
    cluster.down.add(old.node_id)
    killed_at = cluster.now_ms
    for follower_id in _followers_fetch_from(cluster, old.node_id):
        fetch = FetchRequest(epoch, 0, 0)
        cluster.cores[follower_id].unreachable(old.node_id, fetch, killed_at)

    cluster.advance_time(killed_at + CONFIG.election_timeout_ms // 2 + 20)

    assert all(
        cluster.cores[i].role is Role.FOLLOWER and cluster.cores[i].epoch == epoch
        for i in _followers_fetch_from(cluster, old.node_id)
    )


def test_a_closed_connection_to_a_live_leader_does_not_unseat_it() -> None:
    """The hint only starts a pre-vote, which the voter that still hears from the leader
    refuses; a second hint right after is ignored for a fetch timeout."""
    cluster = CoreCluster(seed=5)
    leader = cluster.elect()
    epoch = leader.epoch
    flapping = cluster.cores[_followers_fetch_from(cluster, leader.node_id)[0]]
    fetch = FetchRequest(epoch, 0, 0)
    flapping.unreachable(leader.node_id, fetch, cluster.now_ms, peer_down=True)
    cluster.advance_time(cluster.now_ms + CONFIG.election_timeout_ms // 2 + 20)

    assert cluster.leader() is leader and leader.epoch == epoch
    assert flapping.role is Role.FOLLOWER and flapping.leader_id == leader.node_id

    before = flapping.state
    assert isinstance(before, Follower)
    deadline = before.fetch_deadline_ms
    flapping.unreachable(leader.node_id, fetch, cluster.now_ms, peer_down=True)
    assert flapping.state is before and before.fetch_deadline_ms == deadline
    assert not before.leader_unreachable


def test_a_hint_about_a_peer_that_does_not_lead_changes_no_deadline() -> None:
    cluster = CoreCluster(seed=5)
    leader = cluster.elect()
    follower_id, other_id = _followers_fetch_from(cluster, leader.node_id)
    follower = cluster.cores[follower_id]
    before = follower.next_deadline_ms()

    follower.unreachable(other_id, VoteRequest(9, other_id, 0, 0), cluster.now_ms, peer_down=True)

    assert follower.next_deadline_ms() == before


def test_an_observer_told_its_leaders_connection_closed_finds_the_successor_at_once() -> None:
    """A broker's observer has no election to wait for: it asks the voters who leads now
    instead of fetching from a dead leader until the fetch timeout."""
    cluster = CoreCluster(voters=3, observers=1, seed=5)
    cluster.refuse_when_down = True
    old = cluster.elect()
    observer = cluster.cores[4]
    assert observer.role is Role.FOLLOWER and observer.leader_id == old.node_id
    cluster.down.add(old.node_id)
    killed_at = cluster.now_ms
    for node_id in _followers_fetch_from(cluster, old.node_id):
        fetch = FetchRequest(old.epoch, 0, 0)
        cluster.cores[node_id].unreachable(old.node_id, fetch, killed_at, peer_down=True)

    assert observer.role is Role.UNATTACHED
    cluster.advance_time(killed_at + CONFIG.election_timeout_ms // 2 + 40)

    new = cluster.leader()
    assert observer.role is Role.FOLLOWER and observer.leader_id == new.node_id


def test_a_follower_that_backs_anothers_pre_vote_stands_by_for_its_vote() -> None:
    """Both followers of a killed leader are told at once; the one that grants the other's
    pre-vote waits for its real vote instead of campaigning too and splitting the vote."""
    core = new_core(2, election=ElectionState(3, None, 1), now_ms=0)
    drain(core, 0)
    core.unreachable(1, FetchRequest(3, 0, 0), 10, peer_down=True)
    assert core.next_deadline_ms() <= 10 + CONFIG.election_timeout_ms // 2

    core.step(3, VoteRequest(4, 3, 0, 0, pre_vote=True), 11)

    [answer] = [m for m in drain(core, 11).sent_to(3) if isinstance(m, VoteResponse)]
    assert answer.vote_granted
    state = core.state
    assert isinstance(state, Follower)
    assert state.fetch_deadline_ms >= 11 + CONFIG.election_timeout_ms // 2
