"""A connection's read-ahead: frames come out in order, the reader waits at the bound, the
answerer waits while nothing is held, and the end of the stream (None) comes out last."""

from __future__ import annotations

import asyncio

import pytest

from raftmeta.server.kafka.pipeline import FramePipeline

WAIT_S = 5.0


async def _frames_come_out_in_order_with_the_end_last() -> None:
    pipeline = FramePipeline(4)
    for frame in (b"a", b"b", b"c", None):
        await pipeline.put(frame)
    assert [await pipeline.get() for _ in range(4)] == [b"a", b"b", b"c", None]
    assert pipeline.empty()


async def _the_reader_waits_at_the_bound_until_a_frame_is_taken() -> None:
    pipeline = FramePipeline(2)
    await pipeline.put(b"a")
    await pipeline.put(b"b")
    third = asyncio.create_task(pipeline.put(b"c"))
    for _ in range(5):
        await asyncio.sleep(0)
    assert not third.done(), "a third frame is held back while two are"
    assert await pipeline.get() == b"a"
    await asyncio.wait_for(third, WAIT_S)
    assert [await pipeline.get(), await pipeline.get()] == [b"b", b"c"]


async def _the_answerer_waits_for_a_frame() -> None:
    pipeline = FramePipeline(2)
    taking = asyncio.create_task(pipeline.get())
    for _ in range(5):
        await asyncio.sleep(0)
    assert not taking.done()
    await pipeline.put(b"a")
    assert await asyncio.wait_for(taking, WAIT_S) == b"a"


async def _a_cancelled_wait_leaves_the_pipeline_usable() -> None:
    pipeline = FramePipeline(1)
    taking = asyncio.create_task(pipeline.get())
    await asyncio.sleep(0)
    taking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await taking
    await pipeline.put(b"a")
    assert await asyncio.wait_for(pipeline.get(), WAIT_S) == b"a"


def test_a_pipeline_holds_at_least_one_frame() -> None:
    with pytest.raises(ValueError, match="at least one"):
        FramePipeline(0)


def test_frames_come_out_in_order_with_the_end_last() -> None:
    asyncio.run(_frames_come_out_in_order_with_the_end_last())


def test_the_reader_waits_at_the_bound_until_a_frame_is_taken() -> None:
    asyncio.run(_the_reader_waits_at_the_bound_until_a_frame_is_taken())


def test_the_answerer_waits_for_a_frame() -> None:
    asyncio.run(_the_answerer_waits_for_a_frame())


def test_a_cancelled_wait_leaves_the_pipeline_usable() -> None:
    asyncio.run(_a_cancelled_wait_leaves_the_pipeline_usable())
