"""Request ids: a retried write is answered with its first outcome and writes nothing more."""

from __future__ import annotations

import pytest

from raftmeta.common.topics import NewTopic
from raftmeta.controller import AnsweredBefore, RequestTag
from raftmeta.controller.requests_seen import MAX_OUTCOME_BYTES
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import (
    REQUEST_ID_RETENTION_MS,
    REQUEST_IDS_KEPT,
    MetadataImage,
    ReplayError,
)
from raftmeta.records import RequestOutcomeRecord, TopicRecord
from tests.controller.harness import Harness, run_async

REQUEST_ID = bytes(range(16))


def tag(operation: str = "CreateTopics", request_id: bytes = REQUEST_ID) -> RequestTag:
    """Keeps the outcome as the created topics' names and error codes."""
    return RequestTag(
        request_id,
        operation,
        lambda results: ";".join(f"{r.name}={int(r.error.code)}" for r in results).encode(),
    )


@run_async
async def test_a_retry_is_answered_from_the_image_and_writes_nothing() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(3)
    created = await h.run(h.controller.create_topics([NewTopic("orders", 1, 3)], request=tag()))
    assert created[0].error.code is ErrorCode.NONE
    written = h.log.records(h.log.batches[-1])
    assert isinstance(written[0], TopicRecord)
    kept = written[-1]
    assert isinstance(kept, RequestOutcomeRecord), "the outcome is in the effects' batch"
    assert (kept.request_id, kept.operation, kept.outcome) == (
        REQUEST_ID,
        "CreateTopics",
        b"orders=0",
    )
    batches = len(h.log.batches)

    with pytest.raises(AnsweredBefore) as again:
        await h.run(h.controller.create_topics([NewTopic("orders", 1, 3)], request=tag()))
    assert again.value.outcome == b"orders=0"
    assert len(h.log.batches) == batches, "a retry writes nothing"

    # Without an id the same request runs again, as it always did.
    plain = await h.run(h.controller.create_topics([NewTopic("orders", 1, 3)]))
    assert plain[0].error.code is ErrorCode.TOPIC_ALREADY_EXISTS


@run_async
async def test_a_retry_waits_for_the_first_run_still_in_flight() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    first = await h.submit(h.controller.create_topics([NewTopic("orders", 1, 1)], request=tag()))
    retry = await h.submit(h.controller.create_topics([NewTopic("orders", 1, 1)], request=tag()))
    assert not retry.done(), "answered only once the first run's records commit"
    h.log.commit()
    assert (await first)[0].error.code is ErrorCode.NONE
    with pytest.raises(AnsweredBefore):
        await retry


@run_async
async def test_a_new_leader_knows_the_ids_its_predecessor_committed() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    await h.run(h.controller.create_topics([NewTopic("orders", 1, 1)], request=tag()))
    h.log.lose_leadership(None)
    h.log.become_leader()
    assert h.log.replay_all().requests_seen.get(REQUEST_ID) is not None
    with pytest.raises(AnsweredBefore):
        await h.run(h.controller.create_topics([NewTopic("orders", 1, 1)], request=tag()))


@run_async
async def test_requests_that_write_nothing_are_not_remembered() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    checked = await h.run(
        h.controller.create_topics([NewTopic("orders", 1, 1)], validate_only=True, request=tag())
    )
    assert checked[0].error.code is ErrorCode.NONE
    failed = await h.run(h.controller.create_topics([NewTopic("bad/name", 1, 1)], request=tag()))
    assert failed[0].error.code is ErrorCode.INVALID_TOPIC_EXCEPTION
    assert len(h.controller.committed_image.requests_seen) == 0
    created = await h.run(h.controller.create_topics([NewTopic("orders", 1, 1)], request=tag()))
    assert created[0].error.code is ErrorCode.NONE


@run_async
async def test_an_id_reused_for_another_operation_is_refused() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    await h.run(h.controller.create_topics([NewTopic("orders", 1, 1)], request=tag()))
    with pytest.raises(KafkaError) as refused:
        await h.run(h.controller.delete_topics(["orders"], request=tag("DeleteTopics")))
    assert refused.value.code is ErrorCode.INVALID_REQUEST
    assert h.controller.committed_image.topic_by_name("orders") is not None


@run_async
async def test_an_outcome_too_large_to_keep_is_not_kept() -> None:
    h = Harness()
    await h.start()
    await h.add_brokers(1)
    huge = RequestTag(REQUEST_ID, "CreateTopics", lambda _results: b"x" * (MAX_OUTCOME_BYTES + 1))
    await h.run(h.controller.create_topics([NewTopic("orders", 1, 1)], request=huge))
    assert len(h.controller.committed_image.requests_seen) == 0


@run_async
async def test_outcome_times_never_go_back_under_a_leader_whose_clock_is_behind() -> None:
    wall = [5_000_000]
    h = Harness()
    h.controller._wall_clock = lambda: wall[0]
    await h.start()
    await h.add_brokers(1)
    await h.run(h.controller.create_topics([NewTopic("a", 1, 1)], request=tag()))
    wall[0] = 1_000
    await h.run(
        h.controller.create_topics([NewTopic("b", 1, 1)], request=tag(request_id=bytes(16)))
    )
    times = [r.written_at_ms for r in h.controller.committed_image.requests_seen.records()]
    assert times == [5_000_000, 5_000_000]


def outcome(n: int, at_ms: int, size: int = 1) -> RequestOutcomeRecord:
    return RequestOutcomeRecord(n.to_bytes(16, "big"), "CreateTopics", at_ms, b"o" * size)


def test_outcomes_expire_by_the_times_records_carry_not_by_the_replaying_clock() -> None:
    image = MetadataImage()
    image.apply(outcome(1, 1_000), 0)
    image.apply(outcome(2, 1_000 + REQUEST_ID_RETENTION_MS), 1)
    assert image.requests_seen.get((1).to_bytes(16, "big")) is not None, "exactly at the limit"
    image.apply(outcome(3, 1_001 + REQUEST_ID_RETENTION_MS), 2)
    assert image.requests_seen.get((1).to_bytes(16, "big")) is None
    assert [r.request_id[-1] for r in image.requests_seen.records()] == [2, 3]


def test_the_table_is_bounded_by_count_oldest_first() -> None:
    image = MetadataImage()
    for n in range(REQUEST_IDS_KEPT + 5):
        image.apply(outcome(n, 1_000), n)
    kept = image.requests_seen.records()
    assert len(kept) == REQUEST_IDS_KEPT
    assert kept[0].request_id == (5).to_bytes(16, "big")


def test_a_snapshot_carries_the_table_and_loads_the_same_one() -> None:
    image = MetadataImage()
    image.apply(outcome(1, 1_000), 0)
    image.apply(outcome(2, 2_000, size=10), 1)
    loaded = MetadataImage.from_records(image.to_records(), image.offset)
    assert loaded == image
    assert loaded.requests_seen.records() == image.requests_seen.records()
    assert loaded.digest() == image.digest()


def test_replay_refuses_a_malformed_request_id() -> None:
    with pytest.raises(ReplayError):
        MetadataImage().apply(RequestOutcomeRecord(b"short", "CreateTopics", 0, b""), 0)
