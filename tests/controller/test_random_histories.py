"""Random histories of requests, partial commits, ticks and failovers, checked after each step.

The invariant behind the pending-state design: while active, the latest image equals a replay
of the whole log (committed batches and this controller's uncommitted ones); otherwise it is the
committed image, and the committed image always equals a replay of the committed batches.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable

import pytest

from raftmeta.common.brokers import BrokerHeartbeatRequest
from raftmeta.common.topics import NewPartitions, NewTopic
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.raft.batch import Batch, encode_records
from tests.controller.harness import Harness, run_async

NAMES = ("a", "b", "c", "d")
ACCEPTED_FAILURES = {ErrorCode.NOT_CONTROLLER, ErrorCode.REQUEST_TIMED_OUT}


def replay_whole_log(h: Harness) -> MetadataImage:
    image = MetadataImage()
    for batch in h.log.batches:
        if not batch.is_control:
            image.apply_batch(h.log.records(batch), batch.base_offset)
    return image


def check(h: Harness) -> None:
    controller = h.controller
    assert controller.committed_image == h.log.replay_all()
    if controller.is_active:
        expected = replay_whole_log(h)
        # Records that gathered while earlier appends were in flight: staged, not appended.
        for offset, record in controller.unappended_records:
            expected.apply(record, offset)
        assert controller.latest_image == expected
    else:
        assert controller.latest_image is controller.committed_image
        assert h.log.uncommitted == []


async def step(h: Harness, rng: random.Random, epochs: dict[int, int]) -> asyncio.Task[object]:
    controller = h.controller
    choice = rng.randrange(8)
    call: Awaitable[object]
    if choice == 0:
        call = controller.create_topics(
            [NewTopic(rng.choice(NAMES), rng.randint(1, 3), rng.randint(1, 2))]
        )
    elif choice == 1:
        call = controller.delete_topics([rng.choice(NAMES)])
    elif choice == 2:
        call = controller.create_partitions([NewPartitions(rng.choice(NAMES), rng.randint(1, 5))])
    elif choice == 3:
        broker_id = rng.randint(1, 3)
        call = controller.broker_heartbeat(
            BrokerHeartbeatRequest(
                broker_id, epochs[broker_id], h.log.next_offset(), rng.random() < 0.3
            ),
            timeout_ms=60_000,
        )
    elif choice == 4:
        h.log.commit(rng.randint(0, len(h.log.uncommitted)))
        if rng.random() < 0.5:
            h.timers.fire()  # an adaptive wait runs out
        call = controller.flush_events()
    elif choice == 7:
        if h.log.leader_id == h.log.node_id:
            # Raft writes a batch of its own (a voter change) between the controller's.
            h.log.batches.append(
                Batch(h.log.next_offset(), h.log.epoch, 1, encode_records([b"voters"]), 0, True)
            )
        call = controller.flush_events()
    elif choice == 5:
        h.clock.advance(rng.choice((100, 600, 10_000)))
        call = controller.tick()
    else:
        if controller.is_active and rng.random() < 0.5:
            h.log.lose_leadership(rng.choice((7, None)))
        elif not controller.is_active:
            h.log.become_leader()
        call = controller.flush_events()
    return await h.submit(call)


@pytest.mark.parametrize(
    ("appends_in_flight", "append_linger_max_ms"), [(None, 0), (1, 0), (2, 0), (1, 5), (2, 5)]
)
@pytest.mark.parametrize("seed", range(12))
def test_random_history(
    seed: int, appends_in_flight: int | None, append_linger_max_ms: int
) -> None:
    @run_async
    async def body() -> None:
        rng = random.Random(seed)
        h = Harness(
            broker_session_timeout_ms=9_000,
            request_timeout_ms=30_000,
            appends_in_flight=appends_in_flight,
            append_linger_max_ms=append_linger_max_ms,
        )
        await h.start()
        epochs = await h.add_brokers(3)
        tasks = []
        for _ in range(60):
            tasks.append(await step(h, rng, epochs))
            check(h)
        if not h.controller.is_active:
            h.log.become_leader()
        while h.log.uncommitted or h.timers.armed:  # each commit may append what gathered
            h.log.commit()
            h.timers.fire()
            check(h)
        for task in tasks:
            try:
                await task
            except KafkaError as error:
                assert error.code in ACCEPTED_FAILURES, error
        while h.log.uncommitted or h.timers.armed:  # what the last tasks wrote (a NoOp, say)
            h.log.commit()
            h.timers.fire()
            check(h)
        assert h.controller.latest_image == h.controller.committed_image
        await h.stop()

    body()
