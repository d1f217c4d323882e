"""A fetcher that holds every record but not the news that they committed is answered at once.

An observer (an embedded broker) receives a new batch on the append, before it commits, and
fetches again at the leader's log end; if the high watermark advances between that answer and
the next fetch, a leader that parked the fetch would keep the commit from the broker for the
whole max wait (250 ms by default: the propagation time broker_scale_bench measured). The
fetch carries the high watermark the fetcher knows (as KIP-1166 adds to Kafka's Fetch), and
a leader with a newer one answers at once.
"""

from __future__ import annotations

from collections.abc import Sequence

from raftmeta.raft.messages import FetchRequest, FetchResponse
from tests.raft.builder import CONFIG, with_elected_leader


def _answers(leader_sent: Sequence[object]) -> list[FetchResponse]:
    return [m for m in leader_sent if isinstance(m, FetchResponse)]


def test_a_fetch_at_the_log_end_with_a_stale_high_watermark_is_answered_at_once() -> None:
    cluster = with_elected_leader()
    leader = cluster.leader()
    end, epoch, high_watermark = leader.log.end_offset, leader.epoch, leader.high_watermark
    assert high_watermark == end  # everything committed, nothing new to send

    stale = FetchRequest(epoch, end, leader.log.last_epoch, CONFIG.fetch_max_wait_ms, 1024, 0)
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
