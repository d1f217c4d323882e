"""Fencing and controlled shutdown written in bounded slices, with requests served between.

A broker in more ISRs than one slice holds is fenced (or shut down) over several events; each
slice is its own append of at most ``MAX_ELECTIONS_PER_SLICE`` elections, the end state is
what one unsliced write makes, and a request queued while the work runs is served between
two slices rather than after all of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from raftmeta.common.brokers import BrokerHeartbeatReply
from raftmeta.common.topics import NewTopic
from raftmeta.controller.brokers import fence_records
from raftmeta.controller.slices import MAX_ELECTIONS_PER_SLICE
from raftmeta.image import MetadataImage
from raftmeta.records import (
    BrokerRegistrationChangeRecord,
    PartitionChangeRecord,
    Record,
    TopicRecord,
)
from tests.controller.harness import Harness, run_async

PARTITIONS = 2 * MAX_ELECTIONS_PER_SLICE + 100
"""Partitions broker 1 is in: three slices' worth."""
ALONE = 10
"""Partitions whose only replica is broker 1: they go leaderless and keep it in the ISR, so a
slice that revisits them must find nothing left to change there."""


async def cluster_with_a_big_broker(h: Harness) -> dict[int, int]:
    """Broker 1 leads a third of topic ``big``'s partitions and follows in the rest, and is
    the only replica of topic ``alone``'s."""
    await h.start()
    epochs = await h.add_brokers(3)
    big = {p: ((1, 2), (2, 1), (3, 1))[p % 3] for p in range(PARTITIONS)}
    alone = {p: (1,) for p in range(ALONE)}
    created = await h.run(
        h.controller.create_topics(
            [NewTopic("big", assignments=big), NewTopic("alone", assignments=alone)]
        )
    )
    assert all(result.error.ok for result in created), created
    return epochs


def partition_states(image: MetadataImage) -> dict[tuple[str, int], tuple[int, tuple[int, ...]]]:
    states = {}
    for name in ("big", "alone"):
        topic = image.topic_by_name(name)
        assert topic is not None
        states.update({(name, p): (reg.leader, reg.isr) for p, reg in topic.partitions.items()})
    return states


async def tick_committing(h: Harness) -> None:
    """Runs the periodic duties, committing each slice as it is appended (each waits for its
    commit before the next is computed)."""
    ticking = asyncio.ensure_future(h.controller.tick())
    while not ticking.done():
        await asyncio.sleep(0)
        h.log.commit()
    await ticking


def assert_bounded(batches: Sequence[Sequence[Record]]) -> None:
    for records in batches:
        elections = [r for r in records if isinstance(r, PartitionChangeRecord)]
        assert len(elections) <= MAX_ELECTIONS_PER_SLICE, f"a batch of {len(elections)}"


@run_async
async def test_a_stale_broker_is_fenced_in_slices_with_a_request_served_between() -> None:
    h = Harness(broker_session_timeout_ms=9_000)
    epochs = await cluster_with_a_big_broker(h)
    before = h.controller.committed_image
    expected = before.copy()
    expected.apply_batch(fence_records(before, 1, unclean_default=False), before.offset + 1)
    h.clock.advance(5_000)
    await h.heartbeat(2, epochs[2])
    await h.heartbeat(3, epochs[3])
    h.clock.advance(5_000)  # broker 1: 10 s silent
    first_batch = len(h.log.batches)

    fencing = asyncio.ensure_future(tick_committing(h))
    while len(h.log.batches) == first_batch:  # the first slice is appended
        await asyncio.sleep(0)
    created = asyncio.ensure_future(h.controller.create_topics([NewTopic("between")]))
    await fencing

    written = [h.log.records(batch) for batch in h.log.batches[first_batch:]]
    assert_bounded(written)
    fenced_in = [
        index
        for index, records in enumerate(written)
        if any(isinstance(r, BrokerRegistrationChangeRecord) and r.fenced == 1 for r in records)
    ]
    created_in = [
        index
        for index, records in enumerate(written)
        if any(isinstance(r, TopicRecord) for r in records)
    ]
    assert fenced_in == [len(written) - 1] and len(written) >= 3, "the fencing comes last"
    assert created_in and 0 < created_in[0] < fenced_in[0], "served between two slices"
    h.log.commit()
    await created
    image = h.log.replay_all()
    assert partition_states(image) == partition_states(expected)
    registration = image.broker(1)
    assert registration is not None and registration.fenced
    await h.stop()


@run_async
async def test_a_controlled_shutdown_moves_the_rest_in_slices_then_lets_the_broker_go() -> None:
    h = Harness()
    epochs = await cluster_with_a_big_broker(h)
    first_batch = len(h.log.batches)
    reply = await h.heartbeat(1, epochs[1], want_shut_down=True)
    assert reply == BrokerHeartbeatReply(True, False, False)
    [first] = [h.log.records(batch) for batch in h.log.batches[first_batch:]]
    assert first[0] == BrokerRegistrationChangeRecord(1, epochs[1], in_controlled_shutdown=1)
    assert len(first) == 1 + MAX_ELECTIONS_PER_SLICE

    await tick_committing(h)  # the periodic duties move the rest, slice by slice
    written = [h.log.records(batch) for batch in h.log.batches[first_batch:]]
    assert_bounded(written)
    assert len(written) >= 3
    h.log.commit()
    image = h.log.replay_all()
    assert image.leader_count(1) == 0
    assert not image.partitions_with_isr_member(1) - {
        key for key, reg in image.partitions() if reg.isr == (1,)
    }, "out of every ISR but the ones it is alone in"
    for broker_id in (2, 3):
        await h.heartbeat(broker_id, epochs[broker_id])
    reply = await h.heartbeat(1, epochs[1], want_shut_down=True)
    assert reply == BrokerHeartbeatReply(True, True, True)
    await h.stop()


@run_async
async def test_a_new_controller_finishes_a_controlled_shutdown_left_half_way() -> None:
    h = Harness()
    epochs = await cluster_with_a_big_broker(h)
    await h.heartbeat(1, epochs[1], want_shut_down=True)  # the marker and the first slice
    assert h.controller.committed_image.leader_count(1) > 0
    h.log.lose_leadership(None)
    h.log.become_leader()
    await tick_committing(h)
    h.log.commit()
    image = h.log.replay_all()
    assert image.leader_count(1) == 0
    registration = image.broker(1)
    assert registration is not None and registration.in_controlled_shutdown
    await h.stop()


@run_async
async def test_no_slice_holds_the_queue_longer_than_the_longest_event_recorded() -> None:
    h = Harness(broker_session_timeout_ms=9_000)
    await cluster_with_a_big_broker(h)
    h.controller.holds.take_longest()
    h.clock.advance(10_000)
    await tick_committing(h)
    name, seconds, cpu_name, cpu_seconds = h.controller.holds.take_longest()
    assert name in ("fenceStaleBroker", "handleCommit") and seconds > 0
    assert cpu_name in ("fenceStaleBroker", "handleCommit") and cpu_seconds > 0
    assert h.controller.holds.take_longest() == ("", 0.0, "", 0.0)
    await h.stop()
