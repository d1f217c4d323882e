"""The controller's event queue: requests in, records to Raft, replies out at commit.

Every operation takes the same path. It is queued; when the single consumer reaches it, its
handler (a domain manager's method, see :mod:`raftmeta.controller.controller`) checks it
against the *latest* image (committed records plus this controller's own pending ones) and
returns a :class:`~raftmeta.controller.result.ControllerResult`: the records ``placement/`` and
``elections/`` produced, and the reply. Handlers leave no records behind on the controller;
the consumer applies the returned records to the latest image at the offsets they will take,
appends them to Raft as one batch, and parks the reply in a purgatory keyed by the last
offset. ``handle_commit`` releases replies as the high watermark passes them.

Group commit. While ``appends_in_flight`` appends await their commit, a request's records are
staged (the next request already sees them) but not appended; when an earlier append commits,
everything staged meanwhile goes as one batch. Under many clients this turns one Raft batch per
request (one replication message and one fsync per voter each) into one per commit round; a
lone request still appends at once. Each request keeps its own atomicity (its records are
never split across batches) and its own reply, released when its last record commits.

Adaptive wait. A commit here is often faster than clients come back with their next request,
so group commit alone still sends most requests alone. When the controller has lately seen
several write requests outstanding at once (:mod:`raftmeta.controller.write_concurrency`),
staged records that could go wait until as many are outstanding again, or until
``append_linger_max_ms`` runs out, whichever is first. A lone client is never waited for: it
never has more than one request outstanding, so it appends at once, as without the wait. The
wait runs on the injected ``call_later`` timer, which resigning cancels.

Pending state. The active controller applies its records to a fork of the committed image
before appending them (:mod:`raftmeta.controller.pending`) and parks each reply until its last
record commits (:mod:`raftmeta.controller.purgatory`). Leadership counts as lost on whichever
comes first: a leader change, an append Raft refuses, a commit future that fails, or a
committed batch of another epoch; losing it fails every parked reply with NOT_CONTROLLER and
drops the fork, and nothing needs undoing.

Concurrency. Handlers and Raft callbacks are synchronous and run on one asyncio loop, so a
callback never runs in the middle of a handler; the queue gives requests their order and lets a
deadline pass while a request waits its turn. Time comes from the injected ``clock`` (monotonic
milliseconds) and periodic work runs in :meth:`EventQueue.tick`, so tests step time.

Replies that wrote nothing still wait for this controller's pending records to commit, so a
client never acts on state that may yet be lost (a validate-only CreateTopics that reports
TOPIC_ALREADY_EXISTS because of a pending create, say). Reads (DescribeConfigs) answer from
the committed image, so a standby can serve them too.

Nothing here knows a domain: :class:`~raftmeta.controller.controller.QuorumController` builds
on this class, adding the request methods, the domains' periodic duties and their soft state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

from elections import EXCESSIVE_BATCH_MESSAGE
from raftmeta.controller.event_holds import COMMIT, EventHolds
from raftmeta.controller.log import MetadataLog
from raftmeta.controller.pending import PendingImages
from raftmeta.controller.purgatory import Purgatory, Waiter
from raftmeta.controller.requests_seen import (
    AnsweredBefore,
    RequestTag,
    answered_before,
    outcome_record,
    wall_clock_ms,
)
from raftmeta.controller.result import MAX_RECORDS_PER_USER_OP, ControllerResult
from raftmeta.controller.settings import ControllerSettings
from raftmeta.controller.write_concurrency import WriteConcurrency
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage, load_snapshot_image
from raftmeta.raft.batch import Batch
from raftmeta.raft.core import NotLeaderError
from raftmeta.records import NoOpRecord, Record, encode_each
from raftmeta.storage.snapshots import SnapshotReader

log = logging.getLogger(__name__)

EVENTS_PER_TURN = 64
"""At most this many queued events run in one turn of the loop (and share a Raft batch)."""

_T = TypeVar("_T")


class Cancellable(Protocol):
    """A scheduled callback that can be called off (an ``asyncio.TimerHandle``)."""

    def cancel(self) -> None: ...


CallLater = Callable[[float, Callable[[], None]], Cancellable]
"""Runs a callback after so many seconds (``loop.call_later``), for the adaptive wait."""

NOTHING: ControllerResult[None] = ControllerResult((), None)
"""A handler's result when it writes nothing and answers nothing."""


class NotControllerError(KafkaError):
    """NOT_CONTROLLER, carrying the leader's id so a service can name its endpoint."""

    def __init__(self, leader_id: int | None) -> None:
        if leader_id is None:
            message = "No controller appears to be active."
        else:
            message = f"The active controller appears to be node {leader_id}."
        super().__init__(ErrorCode.NOT_CONTROLLER, message)
        self.leader_id = leader_id


def not_controller(leader_id: int | None) -> NotControllerError:
    """NOT_CONTROLLER naming the leader (if one is known), so clients can follow it."""
    return NotControllerError(leader_id)


def timed_out(name: str) -> KafkaError:
    return KafkaError(ErrorCode.REQUEST_TIMED_OUT, f"{name} did not complete before its deadline.")


@dataclass(slots=True)
class _Event:
    name: str
    handler: Callable[[], ControllerResult[Any] | Iterator[ControllerResult[Any]]]
    """One result, or one per item of a request (see :mod:`raftmeta.controller.result`)."""
    future: asyncio.Future[object]
    deadline_ms: int | None
    needs_leadership: bool = True
    wait_for_commit: bool = True
    on_expired: Callable[[], None] | None = None
    """Runs instead of the handler when the deadline passed while the event was queued."""
    request: RequestTag | None = None
    """The client's request id: a retry is answered from the image (see requests_seen)."""
    queued_at: float = field(default_factory=time.monotonic)
    """Wall-clock monotonic seconds, for the queue-time metric (not the injected clock)."""


class EventQueue:
    """The controller's queue and Raft listener; active only while its node leads Raft.

    It is the ``Listener`` the Raft client calls (``handle_commit``, ``handle_load_snapshot``,
    ``handle_leader_change``) and appends through a :class:`MetadataLog`. Call :meth:`start`
    on the event loop before submitting requests.
    """

    def __init__(
        self,
        settings: ControllerSettings,
        metadata_log: MetadataLog,
        *,
        clock: Callable[[], int],
        wall_clock: Callable[[], int] = wall_clock_ms,
        call_later: CallLater | None = None,
    ) -> None:
        """``wall_clock`` (ms since the epoch) only dates request outcome records;
        ``call_later(seconds, callback)`` runs the adaptive wait's timer (the event loop's
        ``call_later`` unless a test steps it)."""
        self._call_later = call_later
        self.settings = settings
        self._wall_clock = wall_clock
        self._log = metadata_log
        self._clock = clock
        self._images = PendingImages()
        self._appended_ends: deque[int] = deque()
        """The last offset of each append not yet committed (see ``appends_in_flight``)."""
        self._purgatory = Purgatory()
        self._writes = WriteConcurrency()
        """Write requests outstanding, and how many at once lately: the adaptive wait's guide."""
        self._linger: Cancellable | None = None
        """The timer ending the adaptive wait of the staged records, while they wait."""
        self._staged_deadline_ms: int | None = None
        """The earliest deadline among the staged write requests."""
        self._leader_id: int | None = None
        self._leader_waiters: list[asyncio.Future[None]] = []
        """Callers of :meth:`await_leader`, woken when a leader is named."""
        self._epoch = -1
        self._active = False
        self._last_write_ms = clock()
        self._queue: asyncio.Queue[_Event] = asyncio.Queue()
        self._consumer: asyncio.Task[None] | None = None
        self._ticker: asyncio.Task[None] | None = None
        # A metric (raftmeta.server.metrics reads it; nothing here depends on it).
        self.queue_time_observer: Callable[[float], None] | None = None
        """Called with each event's seconds in the queue before it ran."""
        self.holds = EventHolds()  # how long each event (and commit) held the queue

    # --- reading ------------------------------------------------------------------------

    @property
    def is_active(self) -> bool:
        return self._active

    @property
    def leader_id(self) -> int | None:
        return self._leader_id

    @property
    def committed_image(self) -> MetadataImage:
        return self._images.committed

    @property
    def latest_image(self) -> MetadataImage:
        """Committed plus pending records; the committed image itself when not active."""
        return self._images.latest

    @property
    def unappended_records(self) -> list[tuple[int, Record]]:
        """Records staged on the latest image but not yet appended (they gathered while
        ``appends_in_flight`` earlier appends awaited their commit), with their offsets."""
        return self._images.unappended_records()

    def parked_replies(self) -> Counter[str]:
        """Replies waiting in the purgatory for their records to commit, by operation."""
        return self._purgatory.parked()

    # --- running ------------------------------------------------------------------------

    def start(self, *, tick_interval_ms: int | None = None) -> None:
        """Starts the queue's consumer, and a timer calling :meth:`tick` if an interval is
        given (production; tests call ``tick`` themselves after stepping the clock)."""
        if self._consumer is None:
            self._consumer = asyncio.get_running_loop().create_task(self._consume())
        if tick_interval_ms is not None and self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(
                self._tick_every(tick_interval_ms)
            )

    async def stop(self) -> None:
        for task in (self._ticker, self._consumer):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._ticker = self._consumer = None
        self._reset_linger()
        self._wake_leader_waiters()  # they find no active controller and say so
        self._purgatory.fail_all(not_controller(self._leader_id))
        while not self._queue.empty():
            event = self._queue.get_nowait()
            if not event.future.done():
                event.future.set_exception(not_controller(self._leader_id))

    async def _tick_every(self, interval_ms: int) -> None:
        while True:
            await asyncio.sleep(interval_ms / 1000)
            await self.tick()

    async def _consume(self) -> None:
        queue = self._queue
        while True:
            self._run_guarded(await queue.get())
            # What queued meanwhile runs in this same turn, so that the appends of a burst
            # of requests join one Raft batch (the client proposes what gathered in a turn
            # as one batch): one replication message and one fsync per voter for all of
            # them, not one each. Bounded, so that the loop still turns under a flood.
            for _ in range(EVENTS_PER_TURN - 1):
                if queue.empty():
                    break
                self._run_guarded(queue.get_nowait())

    def _run_guarded(self, event: _Event) -> None:
        if self.queue_time_observer is not None:
            self.queue_time_observer(time.monotonic() - event.queued_at)
        began = self.holds.begin()
        try:
            self._run(event)
        except Exception as error:
            # A bug must cost one request, never the queue every later request needs.
            log.exception("controller event %s failed", event.name)
            if not event.future.done():
                event.future.set_exception(
                    KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"{type(error).__name__}: {error}")
                )
        self.holds.record(event.name, began)

    async def flush_events(self) -> None:
        """Returns once every event queued before this call has run."""
        await self._submit(
            "flush",
            lambda: NOTHING,
            needs_leadership=False,
            wait_for_commit=False,
            deadline=False,
            timeout_ms=None,
        )

    async def sync(self, *, timeout_ms: int | None = None) -> None:
        """Returns once every record this controller appended before the call has committed.

        Reads that must show a client its own earlier writes (DescribeTopics, DescribeCluster)
        call this, then read :attr:`committed_image`. NOT_CONTROLLER on a standby.
        """
        await self._submit("sync", lambda: NOTHING, timeout_ms=timeout_ms)

    async def write_records(
        self, records: Sequence[Record], *, timeout_ms: int | None = None
    ) -> int:
        """Appends ``records`` as they are, as one batch, through the queue like any request;
        the last one's offset once it commits.

        For tools that write records of their own (``raftmeta serve``'s load generator). The
        records must replay on the image; one that does not fails the request and nothing is
        written.
        """

        def handler() -> ControllerResult[int]:
            return ControllerResult(tuple(records), self._next_write_offset() + len(records) - 1)

        return await self._submit("writeRecords", handler, timeout_ms=timeout_ms)

    async def _submit(
        self,
        name: str,
        handler: Callable[[], ControllerResult[_T]],
        *,
        timeout_ms: int | None,
        needs_leadership: bool = True,
        wait_for_commit: bool = True,
        deadline: bool = True,
        on_expired: Callable[[], None] | None = None,
        request: RequestTag | None = None,
    ) -> _T:
        """Queues ``handler``; its response once its records commit (see :meth:`_run`)."""
        return cast(
            _T,
            await self._enqueue(
                name,
                handler,
                timeout_ms=timeout_ms,
                needs_leadership=needs_leadership,
                wait_for_commit=wait_for_commit,
                deadline=deadline,
                on_expired=on_expired,
                request=request,
            ),
        )

    async def _submit_each(
        self,
        name: str,
        handler: Callable[[], Iterator[ControllerResult[_T]]],
        *,
        timeout_ms: int | None,
        request: RequestTag | None = None,
    ) -> list[_T]:
        """Queues a handler of one result per item; the items' responses, in order."""
        return cast(
            list[_T],
            await self._enqueue(name, handler, timeout_ms=timeout_ms, request=request),
        )

    async def _enqueue(
        self,
        name: str,
        handler: Callable[[], ControllerResult[Any] | Iterator[ControllerResult[Any]]],
        *,
        timeout_ms: int | None,
        needs_leadership: bool = True,
        wait_for_commit: bool = True,
        deadline: bool = True,
        on_expired: Callable[[], None] | None = None,
        request: RequestTag | None = None,
    ) -> object:
        """Raises :class:`AnsweredBefore` for a ``request`` whose id the image knows."""
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        deadline_ms: int | None = None
        if deadline:
            timeout = self.settings.request_timeout_ms if timeout_ms is None else timeout_ms
            deadline_ms = self._clock() + timeout
        self._queue.put_nowait(
            _Event(
                name,
                handler,
                future,
                deadline_ms,
                needs_leadership,
                wait_for_commit,
                on_expired,
                request,
            )
        )
        response = await future
        if isinstance(response, AnsweredBefore):
            raise response
        return response

    def _run(self, event: _Event) -> None:
        future = event.future
        if future.done():
            return
        if event.deadline_ms is not None and self._clock() >= event.deadline_ms:
            if event.on_expired is not None and self._active:
                event.on_expired()
            future.set_exception(timed_out(event.name))
            return
        if event.needs_leadership and not self._active:
            future.set_exception(not_controller(self._leader_id))
            return
        staged: list[Record] = []
        base = self._next_write_offset() if self._active else 0
        handler = event.handler
        tag = event.request
        try:
            answered = None if tag is None else answered_before(self.latest_image, tag)
            if answered is not None:
                handler = lambda: ControllerResult((), answered)  # noqa: E731
            response, atomic = self._images.stage_result(handler(), staged, base)
            if atomic and len(staged) > MAX_RECORDS_PER_USER_OP:
                raise KafkaError(ErrorCode.POLICY_VIOLATION, EXCESSIVE_BATCH_MESSAGE)
            if tag is not None and staged:
                kept = outcome_record(self.latest_image, tag, response, self._wall_clock())
                if kept is not None:
                    self._images.stage((kept,), staged, base)
        except KafkaError as error:
            self._images.discard_staged(staged)
            future.set_exception(error)
            return
        except Exception as error:
            log.exception("controller event %s failed", event.name)
            self._images.discard_staged(staged)
            future.set_exception(
                KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"{type(error).__name__}: {error}")
            )
            return
        if staged:
            last_offset = self._images.keep(staged, base)
            if event.wait_for_commit:
                self._writes.stage()
                if event.deadline_ms is not None and (
                    self._staged_deadline_ms is None or event.deadline_ms < self._staged_deadline_ms
                ):
                    self._staged_deadline_ms = event.deadline_ms
            if self._append_due():
                try:
                    self._append_unappended()
                except KafkaError as error:
                    future.set_exception(error)
                    return
            if not event.wait_for_commit:
                future.set_result(response)
                return
            wait_offset: int | None = last_offset
        else:
            wait_offset = self._images.last_offset
        if wait_offset is None or not event.wait_for_commit:
            future.set_result(response)
            return
        self._purgatory.park(
            Waiter(wait_offset, self._epoch, future, response, event.deadline_ms, event.name)
        )

    # --- staging and appending ----------------------------------------------------------

    def _next_write_offset(self) -> int:
        """The offset a running handler's first record will take (it runs only when active):
        after the records staged and not yet appended."""
        return self._log.next_offset() + self._images.unappended

    def _room_to_append(self) -> bool:
        """Whether staged records go to Raft now: below the limit of appends in flight, or
        once they would make a batch as large as one request may write (so a flood of small
        requests never builds a batch larger than any single request could)."""
        limit = self.settings.appends_in_flight
        return (
            limit is None
            or len(self._appended_ends) < limit
            or self._images.unappended >= MAX_RECORDS_PER_USER_OP
        )

    def _append_due(self) -> bool:
        """Whether the staged records go to Raft now; if they wait for more writers, arms
        the timer that ends the wait.

        They go when there is room (see :meth:`_room_to_append`) and: the wait is off (or
        appends are not limited, so each request goes as it runs), or every writer
        lately seen at once is outstanding (always so for a lone client), or they already
        make a batch as large as one request may write, or a staged request's deadline would
        pass during the wait.
        """
        if not self._room_to_append():
            return False
        linger_ms = self.settings.append_linger_max_ms
        if (
            linger_ms <= 0
            or self.settings.appends_in_flight is None  # one append per request, as asked
            or self._images.unappended >= MAX_RECORDS_PER_USER_OP
            or self._writes.all_expected_here()
        ):
            return True
        deadline = self._staged_deadline_ms
        if deadline is not None and deadline <= self._clock() + linger_ms:
            return True
        if self._linger is None:
            call_later = self._call_later or asyncio.get_running_loop().call_later
            self._linger = call_later(linger_ms / 1000, self._end_linger)
        return False

    def _end_linger(self) -> None:
        """The timer: the staged records waited long enough and go.

        The timer is armed only when there was room to append, and every append or drop of
        the staged records, and resigning, cancels it; so when it fires they can go.
        """
        self._linger = None
        self._writes.waited_out()
        if self._images.unappended and self._room_to_append():
            with contextlib.suppress(KafkaError):  # its requests were failed with the error
                self._append_unappended()

    def _reset_linger(self) -> None:
        """No staged records remain to wait: stop the timer, forget the wait."""
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        self._staged_deadline_ms = None

    def _append_unappended(self) -> None:
        """Appends every staged record not yet appended (the tail of ``_pending``), as one
        batch."""
        if not self._images.unappended:
            return
        self._reset_linger()
        tail = self._images.unappended_records()
        base = tail[0][0]
        if self._log.next_offset() != base:  # not yet committed, so not caught there
            # Raft appended a batch of its own (a VotersRecord, say) since these were staged:
            # their offsets, and whatever was built on them (a broker epoch), are taken. The
            # requests had no effect; they fail, retriably, and this controller stays active.
            error = not_controller(self._leader_id)
            self._drop_from(base, error)
            raise error
        self._images.unappended = 0
        self._append([record for _, record in tail], base)
        self._writes.append()

    def _append(self, records: list[Record], base: int) -> int:
        """Appends staged records, already in ``_pending`` from ``base`` on, as one batch;
        the offset of the last.

        When Raft refuses them, every request whose records were among them fails: the
        ones parked here with NOT_CONTROLLER or UNKNOWN_SERVER_ERROR, and the caller's with
        the error raised."""
        try:
            last_offset, raft_future = self._log.append(encode_each(records))
        except NotLeaderError as error:
            self._resign(error.leader_id)
            raise not_controller(error.leader_id) from None
        except Exception as error:
            log.exception("append of %d records failed", len(records))
            failure = KafkaError(
                ErrorCode.UNKNOWN_SERVER_ERROR, f"append failed: {type(error).__name__}: {error}"
            )
            self._drop_from(base, failure)
            raise failure from None
        if last_offset != base + len(records) - 1:
            # Someone else wrote to the log: the latest image no longer matches it.
            self._resign(self._leader_id)
            raise KafkaError(
                ErrorCode.UNKNOWN_SERVER_ERROR,
                f"records landed at {last_offset - len(records) + 1}, not at {base}",
            )
        epoch = self._epoch
        raft_future.add_done_callback(lambda done: self._on_append_done(done, epoch))
        self._appended_ends.append(last_offset)
        self._last_write_ms = self._clock()
        return last_offset

    def _drop_from(self, offset: int, error: KafkaError) -> None:
        """Forget the pending records from ``offset`` on (never appended) and fail the
        replies parked on them."""
        self._writes.drop_staged()
        self._reset_linger()
        self._purgatory.drop_from(offset, error)
        self._images.drop_from(offset)

    def _on_append_done(self, future: asyncio.Future[int], epoch: int) -> None:
        if future.cancelled():
            return
        error = future.exception()
        if isinstance(error, NotLeaderError) and self._active and self._epoch == epoch:
            self._resign(error.leader_id)

    # --- Raft callbacks -----------------------------------------------------------------

    def handle_commit(self, batches: Sequence[Batch]) -> None:
        began = self.holds.begin()
        self._handle_commit(batches)
        self.holds.record(COMMIT, began)

    def _handle_commit(self, batches: Sequence[Batch]) -> None:
        images = self._images
        for batch in batches:
            if batch.next_offset <= images.committed_end:
                continue
            if self._active and batch.epoch != self._epoch:
                # Another leader's batch: this controller's epoch is over, whatever it was told.
                self._resign(None)
            if images.unappended and batch.last_offset >= images.first_unappended_offset():
                # Raft wrote this batch (a VotersRecord, say) at offsets records staged here
                # were to take: those requests had no effect and fail, retriably.
                self._drop_from(images.first_unappended_offset(), not_controller(self._leader_id))
            images.apply_committed(batch, self._epoch if self._active else None)
            appended_ends = self._appended_ends
            while appended_ends and appended_ends[0] <= batch.last_offset:
                appended_ends.popleft()
                self._writes.commit()
            self._purgatory.release(batch, lambda: not_controller(self._leader_id))
        if images.unappended and self._active and self._append_due():
            # What gathered while earlier appends were in flight goes as one batch now.
            with contextlib.suppress(KafkaError):  # its requests were failed with the error
                self._append_unappended()

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        self.prepare_snapshot(reader)()

    def prepare_snapshot(self, reader: SnapshotReader) -> Callable[[], None]:
        """Decodes the snapshot and builds its image; returns the install, which swaps it in.

        The build is the slow part (seconds for a million partitions) and reads and writes
        nothing of this controller, only the file and a new image, so the Raft client runs it
        on a worker thread while the event loop goes on serving; meanwhile the active
        controller's writes go on against the images in place, and the install (on the loop)
        resigns before it replaces them, failing those writes' waiters as before.
        """
        end_offset = reader.snapshot_id.end_offset
        image = load_snapshot_image(reader)

        def install() -> None:
            if self._active:
                self._resign(self._leader_id)
            self._images.install(image, end_offset)

        return install

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        if self._active and (leader_id != self.settings.node_id or epoch != self._epoch):
            self._resign(leader_id)
        self._leader_id = leader_id
        self._epoch = epoch
        if leader_id == self.settings.node_id and not self._active:
            self._activate()
        if leader_id is not None:
            self._wake_leader_waiters()

    async def await_leader(self, timeout_s: float) -> None:
        """Returns once a leader is known (this controller active, or another one named), at
        once if one is, or after ``timeout_s`` if none is named by then.

        For an operation that arrives while an election runs: answered NOT_CONTROLLER at once
        it names nobody, and its client can only pause and ask again.
        """
        if self._active or self._leader_id is not None:
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._leader_waiters.append(waiter)
        try:
            await asyncio.wait_for(waiter, timeout_s)
        except TimeoutError:
            pass
        finally:
            with contextlib.suppress(ValueError):
                self._leader_waiters.remove(waiter)

    def _wake_leader_waiters(self) -> None:
        waiters, self._leader_waiters = self._leader_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _activate(self) -> None:
        self._active = True
        self._images.fork()
        now = self._clock()
        self._last_write_ms = now
        self._on_activate(self._images.committed, now)
        log.info("node %d is the active controller in epoch %d", self.settings.node_id, self._epoch)

    def _resign(self, leader_id: int | None) -> None:
        """Leadership is gone: fail parked replies, drop the pending state and soft state."""
        if not self._active:
            return
        self._active = False
        self._leader_id = leader_id
        self._images.drop_fork()
        self._appended_ends.clear()
        self._writes.clear()
        self._reset_linger()
        self._on_resign()
        self._purgatory.fail_all(not_controller(leader_id))

    def _on_activate(self, committed: MetadataImage, now_ms: int) -> None:
        """Becoming active, before any request runs: where the domains set up their soft
        state from the committed image."""

    def _on_resign(self) -> None:
        """Leadership is gone: where the domains drop their soft state."""

    async def _periodic_duties(self) -> None:
        """The domains' periodic work, queued by :meth:`tick` before its idle NoOp."""

    # --- periodic work ------------------------------------------------------------------

    async def tick(self) -> None:
        """Periodic duties: expire deadlines, queue the domains' periodic work, and write a
        NoOp when idle."""
        self._purgatory.expire(self._clock(), timed_out)
        if not self._active:
            return
        try:
            await self._periodic_duties()
            await self._submit_periodic("maybeWriteNoOp", self._maybe_write_noop)
        except KafkaError as error:
            # Leadership went while the checks were queued; the next leader runs its own.
            log.info("periodic controller work stopped: %s", error.message)

    async def _submit_periodic(self, name: str, handler: Callable[[], ControllerResult[_T]]) -> _T:
        """Queues the controller's own work: no deadline, answered as soon as it has run."""
        return await self._submit(
            name, handler, timeout_ms=None, wait_for_commit=False, deadline=False
        )

    def _maybe_write_noop(self) -> ControllerResult[None]:
        if self._clock() - self._last_write_ms >= self.settings.metadata_max_idle_interval_ms:
            return ControllerResult((NoOpRecord(),), None)
        return NOTHING
