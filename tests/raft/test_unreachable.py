"""A fetch the runtime could not deliver is sent again after the retry backoff.

After a graceful handover to a node that was restarted a moment earlier, the other follower's
channel to it is often still reconnecting, and its first fetch fails at once. Left to the fetch
resend time (half a second on the defaults) that one lost fetch held the new leader's first
commit back as long as a fetch timeout; the runtime now reports the failure and the core
retries after ``retry_backoff_ms``.
"""

from __future__ import annotations

from collections.abc import Sequence

from raftmeta.raft.messages import FetchRequest, Message, VoteRequest
from raftmeta.raft.roles import Role
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
