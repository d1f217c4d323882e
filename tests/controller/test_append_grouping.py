"""Appends gather while earlier ones await their commit (``appends_in_flight``).

Requests that run while the limit is reached stage their records on the latest image and
append together, as one batch, when an earlier append commits; each still answers only once
its own records commit, and a failure of the shared append fails every request in it.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import raftmeta.controller.event_queue as event_queue_module
from raftmeta.common.topics import NewTopic
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.raft.batch import Batch, encode_records
from raftmeta.records import TopicRecord
from tests.controller.harness import Harness, run_async


def topic_names(h: Harness, batch: Batch) -> list[str]:
    return [record.name for record in h.log.records(batch) if isinstance(record, TopicRecord)]


async def start(appends_in_flight: int | None) -> Harness:
    h = Harness(appends_in_flight=appends_in_flight)
    await h.start()
    await h.add_brokers(1)
    return h


@run_async
async def test_requests_behind_an_append_in_flight_share_the_next_batch() -> None:
    h = await start(1)
    controller = h.controller
    before = len(h.log.batches)
    first = await h.submit(controller.create_topics([NewTopic("a", 1, 1)]))
    second = await h.submit(controller.create_topics([NewTopic("b", 1, 1)]))
    third = await h.submit(controller.create_topics([NewTopic("c", 2, 1)]))
    # One append in flight: "b" and "c" are staged (seen by later requests), not appended.
    assert [topic_names(h, batch) for batch in h.log.batches[before:]] == [["a"]]
    assert [offset for offset, _ in controller.unappended_records] == list(
        range(h.log.next_offset(), h.log.next_offset() + 5)
    )
    assert controller.latest_image.topic_by_name("c") is not None
    h.log.commit(1)
    assert (await first)[0].error.code is ErrorCode.NONE
    assert not second.done() and not third.done()
    assert [topic_names(h, batch) for batch in h.log.batches[before + 1 :]] == [["b", "c"]]
    assert controller.unappended_records == []
    h.log.commit()
    assert [result[0].name for result in (await second, await third)] == ["b", "c"]
    assert controller.latest_image == controller.committed_image


@pytest.mark.parametrize("appends_in_flight", [None, 2])
def test_each_request_appends_at_once_below_the_limit(appends_in_flight: int | None) -> None:
    @run_async
    async def body() -> None:
        h = await start(appends_in_flight)
        before = len(h.log.batches)
        for name in ("a", "b"):
            await h.submit(h.controller.create_topics([NewTopic(name, 1, 1)]))
        assert [topic_names(h, batch) for batch in h.log.batches[before:]] == [["a"], ["b"]]

    body()


class FailingAppends:
    """Wraps the harness log so that appends of more than one request's records fail."""

    def __init__(self, h: Harness) -> None:
        self.inner = h.log
        self.refused: list[int] = []

    def next_offset(self) -> int:
        return self.inner.next_offset()

    def append(self, records: Sequence[bytes]) -> object:
        if len(records) > 1 and self.refused == [] and self.inner.uncommitted == []:
            self.refused.append(len(records))
            raise OSError("disk gone")
        return self.inner.append(records)


@run_async
async def test_a_failed_shared_append_fails_every_request_in_it_and_leaves_no_trace() -> None:
    h = await start(1)
    controller = h.controller
    await h.submit(controller.create_topics([NewTopic("a", 1, 1)]))
    second = await h.submit(controller.create_topics([NewTopic("b", 1, 1)]))
    third = await h.submit(controller.create_topics([NewTopic("c", 1, 1)]))
    failing = FailingAppends(h)
    controller._log = failing  # type: ignore[assignment]
    h.log.commit()  # "a" commits; "b" and "c" go as one append, which fails
    assert failing.refused == [4]
    for task in (second, third):
        with pytest.raises(KafkaError) as raised:
            await task
        assert raised.value.code is ErrorCode.UNKNOWN_SERVER_ERROR
        assert "disk gone" in raised.value.message
    assert controller.unappended_records == []
    assert controller.latest_image == controller.committed_image
    assert controller.latest_image.topic_by_name("b") is None
    # Still active, and the names are free again.
    controller._log = h.log
    [result] = await h.run(controller.create_topics([NewTopic("b", 1, 1)]))
    assert result.error.code is ErrorCode.NONE


def test_a_group_goes_at_the_size_of_the_largest_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(event_queue_module, "MAX_RECORDS_PER_USER_OP", 5)

    @run_async
    async def body() -> None:
        h = await start(1)
        before = len(h.log.batches)
        for name in ("a", "b", "c"):
            await h.submit(h.controller.create_topics([NewTopic(name, 1, 1)]))
        # "a" is in flight; "b" and "c" (4 records) wait for it.
        assert [topic_names(h, batch) for batch in h.log.batches[before:]] == [["a"]]
        await h.submit(h.controller.create_topics([NewTopic("d", 1, 1)]))
        # 6 records staged: at least a request's worth, so they go without waiting.
        assert [topic_names(h, batch) for batch in h.log.batches[before:]] == [
            ["a"],
            ["b", "c", "d"],
        ]

    body()


@pytest.mark.parametrize("commit_control_batch", [True, False])
def test_a_batch_raft_writes_meanwhile_fails_the_staged_requests_retriably(
    commit_control_batch: bool,
) -> None:
    @run_async
    async def body() -> None:
        h = await start(1)
        controller = h.controller
        await h.submit(controller.create_topics([NewTopic("a", 1, 1)]))
        staged = await h.submit(controller.create_topics([NewTopic("b", 1, 1)]))
        # Raft appends a control batch of its own (a voter change) while "b" waits its turn;
        # "a" commits with it, or alone (then "b" finds its offsets taken when it appends).
        h.log.batches.append(
            Batch(h.log.next_offset(), h.log.epoch, 1, encode_records([b"voters"]), 0, True)
        )
        h.log.commit(None if commit_control_batch else 1)
        with pytest.raises(KafkaError) as raised:
            await staged
        assert raised.value.code is ErrorCode.NOT_CONTROLLER
        h.log.commit()
        # No trace of "b", and the controller still leads: the next requests go through.
        assert controller.is_active
        assert controller.unappended_records == []
        assert controller.latest_image == controller.committed_image
        [result] = await h.run(controller.create_topics([NewTopic("b", 1, 1)]))
        assert result.error.code is ErrorCode.NONE
        assert controller.committed_image.topic_by_name("b") is not None

    body()
