"""The event queue: NOT_CONTROLLER, leadership loss, deadlines, idle NoOps, pending state."""

from __future__ import annotations

import asyncio

import pytest

from raftmeta.common.configs import ConfigResourceRef
from raftmeta.common.topics import NewTopic
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.raft.batch import Batch, encode_records
from raftmeta.records import NoOpRecord, TopicRecord, encode_record
from tests.controller.harness import Harness, run_async


@run_async
async def test_not_leading_answers_not_controller() -> None:
    h = Harness()
    await h.start(lead=False)
    with pytest.raises(KafkaError) as raised:
        await h.controller.create_topics([NewTopic("t", 1, 1)])
    assert raised.value.code is ErrorCode.NOT_CONTROLLER
    assert raised.value.message == "No controller appears to be active."
    h.controller.handle_leader_change(7, 4)
    with pytest.raises(KafkaError) as raised:
        await h.controller.create_topics([NewTopic("t", 1, 1)])
    assert raised.value.message == "The active controller appears to be node 7."
    await h.stop()


@run_async
async def test_leadership_loss_fails_pending_and_drops_pending_state() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    committed_before = h.controller.committed_image.digest()
    task = await h.submit(h.controller.create_topics([NewTopic("t", 1, 1)]))
    assert h.controller.latest_image.topic_by_name("t") is not None
    h.log.lose_leadership(7)
    with pytest.raises(KafkaError) as raised:
        await task
    assert raised.value.code is ErrorCode.NOT_CONTROLLER
    assert raised.value.message == "The active controller appears to be node 7."
    assert not h.controller.is_active
    assert h.controller.latest_image is h.controller.committed_image
    assert h.controller.committed_image.digest() == committed_before
    # Leading again, the topic can be created: the lost pending create left no trace.
    h.log.become_leader()
    [result] = await h.run(h.controller.create_topics([NewTopic("t", 1, 1)]))
    assert result.error.ok
    assert h.log.replay_all() == h.controller.committed_image
    await h.stop()


@run_async
async def test_append_refused_means_not_controller() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    h.log.leader_id = 9  # Raft knows before the controller is told
    with pytest.raises(KafkaError) as raised:
        await h.controller.create_topics([NewTopic("t", 1, 1)])
    assert raised.value.code is ErrorCode.NOT_CONTROLLER
    assert "node 9" in raised.value.message
    assert not h.controller.is_active
    assert h.controller.latest_image.topic_by_name("t") is None
    await h.stop()


@run_async
async def test_commit_in_another_epoch_fails_the_waiter() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    task = await h.submit(h.controller.create_topics([NewTopic("t", 1, 1)]))
    # Another leader's batch lands on the same offsets before this node hears of it.
    ours = h.log.batches.pop()
    noops = [encode_record(NoOpRecord())] * ours.record_count
    other = Batch(ours.base_offset, ours.epoch + 1, ours.record_count, encode_records(noops))
    h.log.batches.append(other)
    h.log.commit()
    with pytest.raises(KafkaError) as raised:
        await task
    assert raised.value.code is ErrorCode.NOT_CONTROLLER
    assert not h.controller.is_active
    assert h.controller.latest_image.topic_by_name("t") is None
    await h.stop()


@run_async
async def test_deadline_passes_in_purgatory() -> None:
    h = Harness(request_timeout_ms=1_000)
    await h.start()
    await h.add_brokers(1)
    task = await h.submit(h.controller.create_topics([NewTopic("t", 1, 1)]))
    h.clock.advance(999)
    await h.controller.tick()
    assert not task.done()
    h.clock.advance(1)
    await h.controller.tick()
    with pytest.raises(KafkaError) as raised:
        await task
    assert raised.value.code is ErrorCode.REQUEST_TIMED_OUT
    # The records were appended and may still commit, as in Kafka.
    h.log.commit()
    assert h.controller.committed_image.topic_by_name("t") is not None
    await h.stop()


@run_async
async def test_deadline_passes_in_queue() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    before = len(h.log.batches)
    with pytest.raises(KafkaError) as raised:
        await h.controller.create_topics([NewTopic("t", 1, 1)], timeout_ms=0)
    assert raised.value.code is ErrorCode.REQUEST_TIMED_OUT
    assert len(h.log.batches) == before
    await h.stop()


@run_async
async def test_noop_when_idle() -> None:
    h = Harness()
    await h.start()
    before = len(h.log.batches)
    h.clock.advance(499)
    await h.controller.tick()
    assert len(h.log.batches) == before
    h.clock.advance(1)
    await h.controller.tick()
    assert h.log.uncommitted_records() == [NoOpRecord()]
    h.log.commit()
    # A write resets the idle clock.
    h.clock.advance(499)
    await h.controller.tick()
    assert len(h.log.batches) == before + 1
    await h.stop()


@run_async
async def test_oversized_operation_is_policy_violation_and_leaves_pending_intact() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    pending = await h.submit(h.controller.create_topics([NewTopic("small", 1, 1)]))
    with pytest.raises(KafkaError) as raised:
        await h.controller.create_topics([NewTopic("huge", 10_000, 1)])
    assert raised.value.code is ErrorCode.POLICY_VIOLATION
    assert raised.value.message == "Unable to perform excessively large batch operation."
    latest = h.controller.latest_image
    assert latest.topic_by_name("huge") is None
    assert latest.topic_by_name("small") is not None, "the earlier pending create survives"
    h.log.commit()
    [result] = await pending
    assert result.error.ok
    assert h.log.replay_all() == h.controller.committed_image
    await h.stop()


@run_async
async def test_standby_replays_commits_into_one_image() -> None:
    h = Harness()
    await h.start(lead=False)
    h.log.batches.append(
        Batch(0, 1, 1, encode_records([encode_record(TopicRecord("t", b"\x01" * 16))]))
    )
    h.log.commit()
    assert h.controller.committed_image.topic_by_name("t") is not None
    assert h.controller.latest_image is h.controller.committed_image
    # Becoming active forks the committed image; pending writes then go to the fork only.
    h.log.become_leader()
    assert h.controller.latest_image is not h.controller.committed_image
    assert h.controller.latest_image == h.controller.committed_image
    await h.stop()


@run_async
async def test_reads_do_not_need_leadership() -> None:
    h = Harness()
    await h.start(lead=False)
    [result] = await h.controller.describe_configs([ConfigResourceRef(4, "")])
    assert result.error.ok
    await h.stop()


@run_async
async def test_failed_commit_future_ends_leadership() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    task = await h.submit(h.controller.create_topics([NewTopic("t", 1, 1)]))
    h.log.fail_appends(5)
    await asyncio.sleep(0)  # the future's callbacks run on the next loop pass
    assert not h.controller.is_active
    with pytest.raises(KafkaError) as raised:
        await task
    assert raised.value.code is ErrorCode.NOT_CONTROLLER
    assert raised.value.message == "The active controller appears to be node 5."
    assert h.controller.latest_image is h.controller.committed_image
    await h.stop()


@run_async
async def test_await_leader_returns_as_soon_as_a_leader_is_named() -> None:
    h = Harness()
    await h.start(lead=False)
    waiting = asyncio.ensure_future(h.controller.await_leader(30.0))
    await asyncio.sleep(0)
    h.controller.handle_leader_change(None, 5)  # a new epoch, its election still running
    await asyncio.sleep(0)
    assert not waiting.done()
    h.controller.handle_leader_change(7, 5)
    await asyncio.wait_for(waiting, 5.0)
    # Once a leader is known there is nothing to wait for.
    await asyncio.wait_for(h.controller.await_leader(30.0), 5.0)
    await h.stop()


@run_async
async def test_await_leader_gives_up_after_its_timeout() -> None:
    h = Harness()
    await h.start(lead=False)
    await asyncio.wait_for(h.controller.await_leader(0.01), 5.0)
    assert h.controller.leader_id is None and not h.controller.is_active
    await h.stop()
