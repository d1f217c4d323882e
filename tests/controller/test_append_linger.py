"""The adaptive wait before appending (``append_linger_max_ms``), on the real controller.

Staged records that could go to Raft wait for as many writers as the controller has lately
seen outstanding at once, or for the cap, whichever is first; a lone writer never waits. The
harness steps the timer (``h.timers``) and the commits, so every wait here is decided by the
test, not by time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest

from raftmeta.common.topics import CreateTopicResult, NewTopic
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.raft.batch import Batch, encode_records
from tests.controller.harness import Harness, run_async
from tests.controller.test_append_grouping import topic_names
from tests.support.waiting import wait_until_async

CAP_MS = 5


async def start(*, linger_ms: int = CAP_MS, request_timeout_ms: int = 30_000) -> Harness:
    h = Harness(
        appends_in_flight=1, append_linger_max_ms=linger_ms, request_timeout_ms=request_timeout_ms
    )
    await h.start()
    await h.add_brokers(1)
    return h


def create(
    h: Harness, name: str, timeout_ms: int | None = None
) -> Coroutine[Any, Any, list[CreateTopicResult]]:
    return h.controller.create_topics([NewTopic(name, 1, 1)], timeout_ms=timeout_ms)


async def settle(h: Harness) -> None:
    """Commits everything, letting waits run out, until nothing is staged or in flight."""
    for _ in range(100):
        if not (h.log.uncommitted or h.controller.unappended_records):
            break
        h.log.commit()
        h.timers.fire()
    else:
        raise AssertionError("staged records never went to Raft")
    await asyncio.sleep(0)


async def show_writers(h: Harness, count: int, prefix: str = "seen") -> None:
    """``count`` writers with a request outstanding at once, all then answered: the
    controller has seen that many write together."""
    tasks = [await h.submit(create(h, f"{prefix}-{n}")) for n in range(count)]
    await settle(h)
    for task in tasks:
        await task


def new_batches(h: Harness, before: int) -> list[list[str]]:
    return [topic_names(h, batch) for batch in h.log.batches[before:] if not batch.is_control]


@run_async
async def test_a_lone_writer_appends_at_once() -> None:
    h = await start()
    before = len(h.log.batches)
    for name in ("a", "b", "c"):
        task = await h.submit(create(h, name))
        # Appended as it ran: nothing waits for a timer.
        assert new_batches(h, before)[-1] == [name]
        assert h.timers.armed == []
        h.log.commit()
        await task
    assert h.timers.scheduled == []


@run_async
async def test_writers_seen_together_share_one_append() -> None:
    h = await start()
    await show_writers(h, 4)
    before = len(h.log.batches)
    tasks = []
    for name in ("a", "b", "c"):
        tasks.append(await h.submit(create(h, name)))
        # Fewer than the four writers seen lately: staged, waiting for the others.
        assert new_batches(h, before) == []
        assert len(h.timers.armed) == 1
    tasks.append(await h.submit(create(h, "d")))
    # The fourth arrived: all four go as one append, and the timer is called off.
    assert new_batches(h, before) == [["a", "b", "c", "d"]]
    assert h.timers.armed == []
    h.log.commit()
    for task in tasks:
        [result] = await task
        assert result.error.code is ErrorCode.NONE


@run_async
async def test_the_estimate_grows_with_writers_arriving_during_an_append() -> None:
    # Counting only what a commit released would stay at 3 here (the trap of small groups):
    # the requests that arrive while an append is in flight count too.
    h = await start()
    await show_writers(h, 3)
    before = len(h.log.batches)
    for name in ("a", "b", "c"):
        await h.submit(create(h, name))
    assert new_batches(h, before) == [["a", "b", "c"]]
    for name in ("d", "e", "f", "g"):  # behind the append in flight
        await h.submit(create(h, name))
    h.log.commit()  # "a", "b" and "c" answered; seven were outstanding at once
    assert new_batches(h, before) == [["a", "b", "c"]]
    for name in ("h", "i"):
        await h.submit(create(h, name))
        assert len(new_batches(h, before)) == 1
    await h.submit(create(h, "j"))
    assert new_batches(h, before) == [["a", "b", "c"], ["d", "e", "f", "g", "h", "i", "j"]]


@run_async
async def test_the_cap_bounds_the_wait() -> None:
    h = await start()
    await show_writers(h, 3)
    before = len(h.log.batches)
    task = await h.submit(create(h, "a"))
    [timer] = h.timers.armed
    assert timer.seconds == CAP_MS / 1000
    assert new_batches(h, before) == []
    h.timers.fire()  # the cap ran out before the other writers came
    assert new_batches(h, before) == [["a"]]
    h.log.commit()
    assert (await task)[0].error.code is ErrorCode.NONE


@run_async
async def test_what_gathered_behind_an_append_waits_at_its_commit_for_the_writers_seen() -> None:
    h = await start()
    await show_writers(h, 4)
    before = len(h.log.batches)
    for name in ("a", "b"):
        await h.submit(create(h, name))
    h.timers.fire()
    assert new_batches(h, before) == [["a", "b"]]
    await h.submit(create(h, "c"))  # behind "a" and "b": no timer while there is no room
    assert h.timers.armed == []
    h.log.commit()  # room again, but "c" waits (at most the cap) for more writers
    assert new_batches(h, before) == [["a", "b"]]
    assert len(h.timers.armed) == 1
    await h.submit(create(h, "d"))
    h.timers.fire()
    assert new_batches(h, before) == [["a", "b"], ["c", "d"]]


@run_async
async def test_a_writer_left_alone_waits_out_the_cap_once() -> None:
    h = await start()
    await show_writers(h, 5)
    before = len(h.log.batches)
    task = await h.submit(create(h, "a"))
    h.timers.fire()
    h.log.commit()
    await task
    # Alone through a whole wait: the earlier writers are gone, the next request goes at once.
    await h.submit(create(h, "b"))
    assert new_batches(h, before) == [["a"], ["b"]]
    assert h.timers.armed == []


@run_async
async def test_a_request_whose_deadline_falls_within_the_wait_goes_at_once() -> None:
    h = await start()
    await show_writers(h, 4)
    before = len(h.log.batches)
    await h.submit(create(h, "a", timeout_ms=CAP_MS - 1))
    assert new_batches(h, before) == [["a"]]
    assert h.timers.armed == []


@run_async
async def test_zero_turns_the_wait_off() -> None:
    h = await start(linger_ms=0)
    await show_writers(h, 4)
    before = len(h.log.batches)
    await h.submit(create(h, "a"))
    assert new_batches(h, before) == [["a"]]
    assert h.timers.scheduled == []


@pytest.mark.parametrize("how", ["resign", "stop"])
def test_losing_leadership_or_stopping_calls_off_a_pending_wait(how: str) -> None:
    @run_async
    async def body() -> None:
        h = await start()
        await show_writers(h, 4)
        before = len(h.log.batches)
        task = await h.submit(create(h, "a"))
        [timer] = h.timers.armed
        if how == "resign":
            h.log.lose_leadership(7)
        else:
            await h.stop()
        with pytest.raises(KafkaError) as raised:
            await task
        assert raised.value.code is ErrorCode.NOT_CONTROLLER
        assert timer.cancelled
        if how == "stop":
            return
        assert h.controller.unappended_records == []
        # Even if the callback ran late anyway, it appends nothing for a former leader.
        timer.callback()
        assert new_batches(h, before) == []
        # Leading again, it learns its writers afresh: a lone one appends at once.
        h.log.become_leader()
        [result] = await h.run(create(h, "a"))
        assert result.error.code is ErrorCode.NONE
        assert h.timers.armed == []

    body()


@pytest.mark.parametrize("commit_control_batch", [True, False])
def test_a_batch_raft_writes_during_a_wait_fails_the_waiting_requests(
    commit_control_batch: bool,
) -> None:
    @run_async
    async def body() -> None:
        h = await start()
        await show_writers(h, 3)
        before = len(h.log.batches)
        tasks = [await h.submit(create(h, name)) for name in ("a", "b")]
        # Raft writes a batch of its own (a voter change) at the offsets "a" and "b" would
        # take; it commits during the wait, or the wait runs out first.
        h.log.batches.append(
            Batch(h.log.next_offset(), h.log.epoch, 1, encode_records([b"voters"]), 0, True)
        )
        if commit_control_batch:
            h.log.commit()
        else:
            h.timers.fire()
        for task in tasks:
            with pytest.raises(KafkaError) as raised:
                await task
            assert raised.value.code is ErrorCode.NOT_CONTROLLER
        # Nothing left waiting, no timer left to end a later group's wait early.
        assert h.timers.armed == []
        assert h.controller.is_active
        assert h.controller.unappended_records == []
        assert h.controller.latest_image.topic_by_name("a") is None
        h.log.commit()
        await h.submit(create(h, "c"))
        assert new_batches(h, before) == []  # waits for the writers seen, on a fresh timer
        assert len(h.timers.armed) == 1

    body()


@run_async
async def test_the_wait_runs_on_the_event_loop_timer_by_default() -> None:
    h = Harness(appends_in_flight=1, append_linger_max_ms=1, real_timers=True)
    await h.start()
    await h.add_brokers(1)
    before = len(h.log.batches)
    first = await h.submit(create(h, "a"))
    second = await h.submit(create(h, "b"))  # behind "a"
    h.log.commit()  # two were outstanding at once: "b" waits for a second writer
    assert new_batches(h, before) == [["a"]]
    await wait_until_async(
        lambda: len(h.log.batches) > before + 1 or None, "the loop's timer ends the wait"
    )
    assert new_batches(h, before) == [["a"], ["b"]]
    h.log.commit()
    await asyncio.gather(first, second)
    await h.stop()
