"""An in-process metadata log for driving the controller: it commits only when told to.

This is the one stand-in in the controller tests. It keeps the batches the controller appends,
hands them to ``handle_commit`` when a test calls :meth:`FakeLog.commit`, and can take
leadership away (dropping uncommitted batches, as a new leader would truncate them), so
pending state, purgatory, timeouts and leadership loss are all stepped by the test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence, Set
from dataclasses import dataclass, field
from typing import Any, TypeVar

from placement import ReplicaPlacer
from raftmeta.common.brokers import (
    BrokerHeartbeatReply,
    BrokerHeartbeatRequest,
    BrokerRegistrationRequest,
)
from raftmeta.controller import ControllerSettings, QuorumController
from raftmeta.image import MetadataImage
from raftmeta.raft.batch import Batch, encode_records
from raftmeta.raft.core import NotLeaderError
from raftmeta.records import Record, decode_record
from tests.support.scenario import async_test

CLUSTER_ID = "test-cluster-0000000000"
NODE_ID = 3000

T = TypeVar("T")


class FakeClock:
    def __init__(self, now_ms: int = 1_000_000) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms

    def advance(self, ms: int) -> None:
        self.now_ms += ms


class FakeTimers:
    """The controller's ``call_later``: callbacks wait here until the test fires them."""

    @dataclass
    class Timer:
        seconds: float
        callback: Callable[[], None]
        cancelled: bool = False

        def cancel(self) -> None:
            self.cancelled = True

    def __init__(self) -> None:
        self.scheduled: list[FakeTimers.Timer] = []

    def call_later(self, seconds: float, callback: Callable[[], None]) -> FakeTimers.Timer:
        timer = FakeTimers.Timer(seconds, callback)
        self.scheduled.append(timer)
        return timer

    @property
    def armed(self) -> list[FakeTimers.Timer]:
        return [timer for timer in self.scheduled if not timer.cancelled]

    def fire(self) -> int:
        """Runs every armed timer, as if its time came; how many ran."""
        due, self.scheduled = self.armed, []
        for timer in due:
            timer.callback()
        return len(due)


@dataclass
class FakeLog:
    """A single-node log whose high watermark moves only when the test says so."""

    node_id: int = NODE_ID
    epoch: int = 0
    leader_id: int | None = None
    batches: list[Batch] = field(default_factory=list)
    committed_count: int = 0
    """How many of ``batches`` have been handed to the controller."""
    _futures: dict[int, asyncio.Future[int]] = field(default_factory=dict)
    controller: QuorumController | None = None

    # MetadataLog
    def next_offset(self) -> int:
        return self.batches[-1].next_offset if self.batches else 0

    def append(self, records: Sequence[bytes]) -> tuple[int, asyncio.Future[int]]:
        if self.leader_id != self.node_id:
            raise NotLeaderError(self.leader_id, self.epoch)
        batch = Batch(self.next_offset(), self.epoch, len(records), encode_records(records))
        self.batches.append(batch)
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._futures[batch.base_offset] = future
        return batch.last_offset, future

    # test controls
    @property
    def uncommitted(self) -> list[Batch]:
        return self.batches[self.committed_count :]

    def records(self, batch: Batch) -> list[Record]:
        return [decode_record(data) for data in batch.records()]

    def uncommitted_records(self) -> list[Record]:
        return [record for batch in self.uncommitted for record in self.records(batch)]

    def commit(self, count: int | None = None) -> None:
        """Commits the next ``count`` batches (all of them by default)."""
        assert self.controller is not None
        end = len(self.batches) if count is None else self.committed_count + count
        newly = self.batches[self.committed_count : end]
        self.committed_count = end
        if newly:
            self.controller.handle_commit(newly)
        for batch in newly:
            future = self._futures.pop(batch.base_offset, None)
            if future is not None and not future.done():
                future.set_result(batch.last_offset)

    def fail_appends(self, new_leader: int | None) -> None:
        """Raft fails the pending appends' futures before any leader change is delivered."""
        for batch in self.uncommitted:
            future = self._futures.pop(batch.base_offset, None)
            if future is not None and not future.done():
                future.set_exception(NotLeaderError(new_leader, self.epoch + 1))

    def become_leader(self) -> None:
        assert self.controller is not None
        self.epoch += 1
        self.leader_id = self.node_id
        # A new leader's LeaderChange control batch, committed before it hears it leads.
        control = Batch(self.next_offset(), self.epoch, 1, encode_records([b"leader"]), 0, True)
        self.batches.append(control)
        self.commit()
        self.controller.handle_leader_change(self.node_id, self.epoch)

    def lose_leadership(self, new_leader: int | None) -> None:
        """Another node takes over; batches not yet committed are truncated away."""
        assert self.controller is not None
        self.epoch += 1
        self.leader_id = new_leader
        for batch in self.uncommitted:
            future = self._futures.pop(batch.base_offset, None)
            if future is not None and not future.done():
                future.set_exception(NotLeaderError(new_leader, self.epoch))
        del self.batches[self.committed_count :]
        self.controller.handle_leader_change(new_leader, self.epoch)

    def replay_all(self) -> MetadataImage:
        """A fresh image from every committed record, as a standby would build it."""
        image = MetadataImage()
        for batch in self.batches[: self.committed_count]:
            if not batch.is_control:
                image.apply_batch(self.records(batch), batch.base_offset)
        return image


class Harness:
    def __init__(
        self,
        *,
        placer: ReplicaPlacer | None = None,
        new_topic_id: Callable[[], bytes] | None = None,
        real_timers: bool = False,
        live_voter_ids: Callable[[], Set[int]] | None = None,
        **settings: Any,
    ) -> None:
        """``real_timers`` leaves the controller's timer on the event loop, not on
        :attr:`timers`; ``live_voter_ids`` stands for a dynamic quorum's Raft voter set."""
        self.clock = FakeClock()
        self.log = FakeLog()
        self._ids = 0
        # One batch per request unless a test asks for appends to gather while others are
        # in flight (test_random_histories, test_append_grouping), so a test can commit
        # request by request.
        settings.setdefault("appends_in_flight", None)
        # No adaptive wait unless a test asks for it (test_append_linger): it would hold a
        # test's second concurrent request for the timer.
        settings.setdefault("append_linger_max_ms", 0)
        self.timers = FakeTimers()
        self.controller = QuorumController(
            ControllerSettings(NODE_ID, CLUSTER_ID, **settings),
            self.log,
            clock=self.clock,
            placer=placer,
            new_topic_id=new_topic_id or self._next_topic_id,
            call_later=None if real_timers else self.timers.call_later,
            voter_ids=live_voter_ids,
        )
        self.log.controller = self.controller

    def _next_topic_id(self) -> bytes:
        self._ids += 1
        return self._ids.to_bytes(16, "big")

    async def start(self, *, lead: bool = True) -> None:
        self.controller.start()
        if lead:
            self.log.become_leader()

    async def stop(self) -> None:
        await self.controller.stop()

    async def submit(self, call: Awaitable[T]) -> asyncio.Task[T]:
        """Starts a request and lets the controller process it (not commit it)."""
        task: asyncio.Task[T] = asyncio.ensure_future(call)
        await asyncio.sleep(0)  # let the task queue its event before the flush marker
        await self.controller.flush_events()
        return task

    async def run(self, call: Awaitable[T]) -> T:
        """Starts a request, commits what it wrote and returns its reply."""
        task = await self.submit(call)
        self.log.commit()
        return await task

    async def register(self, broker_id: int, rack: str | None = None) -> int:
        return await self.run(
            self.controller.register_broker(
                BrokerRegistrationRequest(
                    broker_id, CLUSTER_ID, bytes([broker_id % 256]) * 16, rack=rack
                )
            )
        )

    async def heartbeat(
        self,
        broker_id: int,
        epoch: int,
        *,
        offset: int | None = None,
        want_fence: bool = False,
        want_shut_down: bool = False,
    ) -> BrokerHeartbeatReply:
        if offset is None:
            offset = self.log.next_offset()
        return await self.run(
            self.controller.broker_heartbeat(
                BrokerHeartbeatRequest(broker_id, epoch, offset, want_fence, want_shut_down)
            )
        )

    async def add_brokers(self, count: int, *, racks: bool = False) -> dict[int, int]:
        """Registers and unfences brokers 1..count; their epochs by id."""
        epochs: dict[int, int] = {}
        for broker_id in range(1, count + 1):
            rack = f"r{broker_id % 3}" if racks else None
            epochs[broker_id] = await self.register(broker_id, rack)
        for broker_id, epoch in epochs.items():
            await self.heartbeat(broker_id, epoch)
        return epochs


run_async = async_test(timeout_s=5)
"""Runs an async test body in a fresh event loop (the project has no asyncio plugin)."""
