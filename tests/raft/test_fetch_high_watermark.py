"""A fetcher that holds every record but not the news that they committed is answered soon.

An observer (an embedded broker) receives a new batch on the append, before it commits, and
fetches again at the leader's log end; if the high watermark advances between that answer and
the next fetch, a leader that parked the fetch would keep the commit from the broker for the
whole max wait (250 ms by default: the propagation time broker_scale_bench measured). The
fetch carries the high watermark the fetcher knows (as KIP-1166 adds to Kafka's Fetch), and
a leader with a newer one answers within the high watermark delay (2 ms), or at once with the
next batch if one is proposed first: a serial writer appends again right after its commit, and
an answer sent at once would leave no fetch parked for that append, costing it a round trip.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from raftmeta.raft.messages import FetchRequest, FetchResponse
from tests.raft.builder import CONFIG, CoreCluster, with_elected_leader


def _answers(leader_sent: Sequence[object]) -> list[FetchResponse]:
    return [m for m in leader_sent if isinstance(m, FetchResponse)]


def _stale_fetch(cluster: CoreCluster) -> tuple[FetchRequest, int]:
    leader = cluster.leader()
    end, high_watermark = leader.log.end_offset, leader.high_watermark
    assert high_watermark == end  # everything committed, nothing new to send
    request = FetchRequest(
        leader.epoch, end, leader.log.last_epoch, CONFIG.fetch_max_wait_ms, 1024, 0
    )
    return request, high_watermark


def test_a_fetch_at_the_log_end_with_a_stale_high_watermark_is_answered_within_the_delay() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    stale, high_watermark = _stale_fetch(cluster)
    now = cluster.now_ms
    leader.step(9, stale, now)
    ready = leader.ready()
    if ready is not None:
        assert _answers([m.message for m in ready.messages if m.destination == 9]) == []
        leader.advance(ready, now)
    delay = CONFIG.high_watermark_delay_ms
    assert 0 < delay < CONFIG.fetch_max_wait_ms
    assert leader.next_deadline_ms() <= now + delay

    leader.tick(now + delay)
    ready = leader.ready()
    assert ready is not None
    [answer] = _answers([m.message for m in ready.messages if m.destination == 9])
    assert answer.high_watermark == high_watermark and not answer.batches


def test_a_batch_proposed_within_the_delay_carries_the_high_watermark_news() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    stale, high_watermark = _stale_fetch(cluster)
    leader.step(9, stale, cluster.now_ms)
    ready = leader.ready()
    if ready is not None:
        leader.advance(ready, cluster.now_ms)

    leader.propose([b"next"], cluster.now_ms)
    ready = leader.ready()
    assert ready is not None
    [answer] = _answers([m.message for m in ready.messages if m.destination == 9])
    assert answer.high_watermark == high_watermark and answer.batches


def test_with_no_delay_a_stale_high_watermark_is_answered_at_once() -> None:
    config = dataclasses.replace(CONFIG, high_watermark_delay_ms=0)
    cluster = with_elected_leader(config=config)
    leader = cluster.leader()
    stale, high_watermark = _stale_fetch(cluster)
    leader.step(9, stale, cluster.now_ms)
    ready = leader.ready()
    assert ready is not None
    [answer] = _answers([m.message for m in ready.messages if m.destination == 9])
    assert answer.high_watermark == high_watermark and not answer.batches


def test_a_fetch_that_knows_the_high_watermark_is_parked_until_there_is_news() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    end, epoch, high_watermark = leader.log.end_offset, leader.epoch, leader.high_watermark

    for known in (high_watermark, None):  # None: a peer that does not send the field
        current = FetchRequest(
            epoch, end, leader.log.last_epoch, CONFIG.fetch_max_wait_ms, 1024, known
        )
        leader.step(9, current, cluster.now_ms)
        ready = leader.ready()
        sent = [] if ready is None else [m.message for m in ready.messages if m.destination == 9]
        assert _answers(sent) == [], known
        if ready is not None:
            leader.advance(ready, cluster.now_ms)

    # The parked fetch is answered by the next append.
    leader.propose([b"news"], cluster.now_ms)
    ready = leader.ready()
    assert ready is not None
    [answer] = _answers([m.message for m in ready.messages if m.destination == 9])
    assert answer.batches
