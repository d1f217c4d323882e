"""The active controller: one event queue turning requests into records, replying at commit.

Every operation takes the same path. It is queued; when the single consumer reaches it, its
handler checks it against the *latest* image (committed records plus this controller's own
pending ones) and returns a :class:`~raftmeta.controller.result.ControllerResult`: the records
``placement/`` and ``elections/`` produced, and the reply. Handlers leave no records behind on
the controller; the consumer applies the returned records to the latest image at the offsets
they will take, appends them to Raft as one batch, and parks the reply in a purgatory keyed by
the last offset. ``handle_commit`` releases replies as the high watermark passes them.

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

Pending state. A standby (or a controller that lost its epoch) holds one image, the committed
one. On becoming active it forks a second image from it (a snapshot round trip through
``to_records``) and from then on applies its own records to that fork *speculatively*, before
appending, so the next request already sees them; committed batches are replayed into the
committed image, and into the fork only where it has not seen them (it has seen everything this
controller wrote). Losing leadership fails every parked reply with NOT_CONTROLLER and drops the
fork: the committed image is all that remains true, and nothing needs undoing. This costs a
second image on the active controller only; Kafka avoids the copy with timeline data
structures, which would mean rewriting the image as versioned collections. Leadership counts
as lost on whichever comes first: a leader change, an append Raft refuses, a commit future that
fails, or a committed batch of another epoch.

An operation that fails after staging some records (a bug, or an oversized result) rebuilds the
fork from the committed image plus the still-pending records, so a failed request leaves no
trace.

Concurrency. Handlers and Raft callbacks are synchronous and run on one asyncio loop, so a
callback never runs in the middle of a handler; the queue gives requests their order and lets a
deadline pass while a request waits its turn. Time comes from the injected ``clock`` (monotonic
milliseconds) and periodic work runs in :meth:`QuorumController.tick`, so tests step time.

Replies that wrote nothing still wait for this controller's pending records to commit, so a
client never acts on state that may yet be lost (a validate-only CreateTopics that reports
TOPIC_ALREADY_EXISTS because of a pending create, say). Reads (DescribeConfigs) answer from
the committed image, so a standby can serve them too.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

import raftmeta.controller.acls as acl_control
import raftmeta.controller.brokers as lifecycle
import raftmeta.controller.registration as controller_registration
from elections import (
    EXCESSIVE_BATCH_MESSAGE,
    elect_leaders,
    elections_for_unclean_shutdown,
    online_elections_for_broker_removal,
    preferred_rebalance,
    unclean_elections_for_leaderless,
)
from placement import ReplicaPlacer, StripedReplicaPlacer
from raftmeta.common.acls import AclBinding, AclBindingFilter, AclDeleteResult
from raftmeta.common.brokers import (
    AlterPartitionRequest,
    AlterPartitionResult,
    BrokerHeartbeatReply,
    BrokerHeartbeatRequest,
    BrokerRegistrationRequest,
)
from raftmeta.common.configs import (
    AlterConfig,
    AlterConfigsResult,
    ConfigResourceRef,
    DescribeConfigsResult,
)
from raftmeta.common.elections import ElectionType, TopicPartition, TopicResults
from raftmeta.common.features import FeatureUpdate
from raftmeta.common.items import DUPLICATE_TOPIC, OK, ItemError, duplicated
from raftmeta.common.topics import CreateTopicResult, NewPartitions, NewTopic, TopicResult
from raftmeta.config.node import RaftmetaConfig
from raftmeta.controller.alter_partition import check_isr_change
from raftmeta.controller.brokers import BrokerSession, BrokerState
from raftmeta.controller.configs import (
    MIN_INSYNC_REPLICAS,
    UNCLEAN_LEADER_ELECTION_ENABLE,
    alter_config_records,
    describe_config,
)
from raftmeta.controller.features import (
    ALL_FAILED_PREFIX,
    SupportedRange,
    check_broker_features,
    supported_ranges,
    update_feature_records,
)
from raftmeta.controller.log import MetadataLog
from raftmeta.controller.requests_seen import (
    AnsweredBefore,
    RequestTag,
    answered_before,
    outcome_record,
    wall_clock_ms,
)
from raftmeta.controller.result import MAX_RECORDS_PER_USER_OP, ControllerResult
from raftmeta.controller.topics import (
    check_partition_total,
    check_topic_name,
    create_partitions_records,
    create_topic_records,
    delete_topic_records,
)
from raftmeta.controller.write_concurrency import WriteConcurrency
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage, PartitionKey, ReplayError
from raftmeta.raft.batch import Batch
from raftmeta.raft.core import NotLeaderError
from raftmeta.records import (
    FeatureLevelRecord,
    NoOpRecord,
    Record,
    RegisterBrokerRecord,
    UnregisterBrokerRecord,
    decode_record,
    encode_each,
)
from raftmeta.storage.snapshots import SnapshotReader

log = logging.getLogger(__name__)

RERUN_CAPPED_MS = 10
"""How soon a periodic election run that stopped at its cap runs again, as in Kafka."""

APPENDS_IN_FLIGHT = 1
"""The default of ``controller.append.max.in.flight``: appends awaiting their commit at once."""

APPEND_LINGER_MAX_MS = 5
"""The default of ``controller.append.linger.max.ms``: the longest staged records wait for the
other writers the controller expects (see *Adaptive wait* above)."""

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


@dataclass(frozen=True, slots=True)
class ControllerSettings:
    """The settings the controller reads, under Kafka's names where Kafka has them."""

    node_id: int
    cluster_id: str
    voter_ids: frozenset[int] = frozenset()
    """The controllers' ids (``controller.quorum.voters``): no broker may register under one."""
    metadata_max_idle_interval_ms: int = 500
    broker_session_timeout_ms: int = 9_000
    broker_heartbeat_interval_ms: int = 2_000
    num_partitions: int = 1
    default_replication_factor: int = 1
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False
    request_timeout_ms: int = 30_000
    """The deadline of a request that names none."""
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_per_broker_percentage: int = 10
    leader_imbalance_check_interval_seconds: int = 300
    leader_imbalance_catch_up_ms: int = 10_000
    unclean_leader_election_interval_ms: int = 300_000
    appends_in_flight: int | None = APPENDS_IN_FLIGHT
    """How many appends may await their commit at once; requests that run meanwhile stage
    their records and append them together, as one batch, once an earlier append commits.
    None appends each request's records as it runs."""
    append_linger_max_ms: int = APPEND_LINGER_MAX_MS
    """The longest staged records that could go to Raft wait for the other writers this
    controller expects, when it has lately seen several at once; 0 never waits, nor does a
    controller without a limit of appends in flight."""
    bootstrap_features: tuple[tuple[str, int], ...] = ()
    """The feature levels ``format --release-version`` chose, written by the first controller
    to lead an empty log (none: the cluster runs with no finalized features, as before)."""

    @classmethod
    def from_config(
        cls,
        config: RaftmetaConfig,
        cluster_id: str,
        bootstrap_features: Mapping[str, int] | None = None,
    ) -> ControllerSettings:
        """The node's settings; ``cluster_id`` is the one in ``meta.properties``."""
        return cls(
            bootstrap_features=tuple(sorted((bootstrap_features or {}).items())),
            node_id=config.node_id,
            cluster_id=cluster_id,
            voter_ids=frozenset(config.controller_quorum_voters),
            metadata_max_idle_interval_ms=config.metadata_max_idle_interval_ms,
            broker_session_timeout_ms=config.broker_session_timeout_ms,
            broker_heartbeat_interval_ms=config.broker_heartbeat_interval_ms,
            num_partitions=config.num_partitions,
            default_replication_factor=config.default_replication_factor,
            min_insync_replicas=config.min_insync_replicas,
            unclean_leader_election_enable=config.unclean_leader_election_enable,
            auto_leader_rebalance_enable=config.auto_leader_rebalance_enable,
            leader_imbalance_per_broker_percentage=config.leader_imbalance_per_broker_percentage,
            leader_imbalance_check_interval_seconds=config.leader_imbalance_check_interval_seconds,
            leader_imbalance_catch_up_ms=config.leader_imbalance_catch_up_ms,
            unclean_leader_election_interval_ms=config.unclean_leader_election_interval_ms,
            appends_in_flight=config.controller_append_max_in_flight or None,
            append_linger_max_ms=config.controller_append_linger_max_ms,
        )


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


def fork(image: MetadataImage) -> MetadataImage:
    """An independent copy of ``image`` for speculative changes."""
    return image.copy()


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


@dataclass(slots=True)
class _Waiter:
    """A reply parked until ``offset`` commits in ``epoch``."""

    offset: int
    epoch: int
    future: asyncio.Future[object]
    response: object
    deadline_ms: int | None
    name: str


class QuorumController:
    """The controller state machine of one node; active only while its node leads Raft.

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
        placer: ReplicaPlacer | None = None,
        new_topic_id: Callable[[], bytes] | None = None,
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
        self._placer: ReplicaPlacer = placer if placer is not None else StripedReplicaPlacer()
        self._new_topic_id = new_topic_id or (lambda: uuid.uuid4().bytes)
        self._committed = MetadataImage()
        self._latest = self._committed
        self._committed_end = 0
        """Every offset below this has been handed to ``handle_commit`` (control ones too)."""
        self._pending: deque[tuple[int, Record]] = deque()
        """Records staged on the latest image and not yet committed, with their offsets;
        the last ``_unappended`` of them are not yet appended either."""
        self._unappended = 0
        self._appended_ends: deque[int] = deque()
        """The last offset of each append not yet committed (see ``appends_in_flight``)."""
        self._purgatory: deque[_Waiter] = deque()
        self._writes = WriteConcurrency()
        """Write requests outstanding, and how many at once lately: the adaptive wait's guide."""
        self._linger: Cancellable | None = None
        """The timer ending the adaptive wait of the staged records, while they wait."""
        self._staged_deadline_ms: int | None = None
        """The earliest deadline among the staged write requests."""
        self._sessions: dict[int, BrokerSession] = {}
        self._leader_id: int | None = None
        self._epoch = -1
        self._active = False
        self._bootstrap_due = False
        self._last_write_ms = clock()
        self._next_rebalance_ms = 0
        self._next_unclean_ms = 0
        self._queue: asyncio.Queue[_Event] = asyncio.Queue()
        self._consumer: asyncio.Task[None] | None = None
        self._ticker: asyncio.Task[None] | None = None
        # Metrics (raftmeta.server.metrics reads these; nothing here depends on them).
        self.election_counts: Counter[tuple[str, str]] = Counter()
        """Elections written, by (election type, outcome code name): requested ones per
        partition result, periodic ones per record."""
        self.queue_time_observer: Callable[[float], None] | None = None
        """Called with each event's seconds in the queue before it ran."""

    # --- reading ------------------------------------------------------------------------

    @property
    def is_active(self) -> bool:
        return self._active

    @property
    def leader_id(self) -> int | None:
        return self._leader_id

    @property
    def committed_image(self) -> MetadataImage:
        return self._committed

    @property
    def latest_image(self) -> MetadataImage:
        """Committed plus pending records; the committed image itself when not active."""
        return self._latest

    @property
    def unappended_records(self) -> list[tuple[int, Record]]:
        """Records staged on the latest image but not yet appended (they gathered while
        ``appends_in_flight`` earlier appends awaited their commit), with their offsets."""
        pending = self._pending
        return list(itertools.islice(pending, len(pending) - self._unappended, None))

    def broker_session(self, broker_id: int) -> BrokerSession | None:
        return self._sessions.get(broker_id)

    def parked_replies(self) -> Counter[str]:
        """Replies waiting in the purgatory for their records to commit, by operation."""
        return Counter(waiter.name for waiter in self._purgatory if not waiter.future.done())

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
        self._fail_waiters(not_controller(self._leader_id))
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
        try:
            self._run(event)
        except Exception as error:
            # A bug must cost one request, never the queue every later request needs.
            log.exception("controller event %s failed", event.name)
            if not event.future.done():
                event.future.set_exception(
                    KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"{type(error).__name__}: {error}")
                )

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
            answered = None if tag is None else answered_before(self._latest, tag)
            if answered is not None:
                handler = lambda: ControllerResult((), answered)  # noqa: E731
            response, atomic = self._produce(handler(), staged, base)
            if atomic and len(staged) > MAX_RECORDS_PER_USER_OP:
                raise KafkaError(ErrorCode.POLICY_VIOLATION, EXCESSIVE_BATCH_MESSAGE)
            if tag is not None and staged:
                kept = outcome_record(self._latest, tag, response, self._wall_clock())
                if kept is not None:
                    self._stage((kept,), staged, base)
        except KafkaError as error:
            self._discard_staged(staged)
            future.set_exception(error)
            return
        except Exception as error:
            log.exception("controller event %s failed", event.name)
            self._discard_staged(staged)
            future.set_exception(
                KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"{type(error).__name__}: {error}")
            )
            return
        if staged:
            last_offset = base + len(staged) - 1
            self._pending.extend(zip(range(base, last_offset + 1), staged, strict=True))
            self._unappended += len(staged)
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
            wait_offset = self._pending[-1][0] if self._pending else None
        if wait_offset is None or not event.wait_for_commit:
            future.set_result(response)
            return
        self._purgatory.append(
            _Waiter(wait_offset, self._epoch, future, response, event.deadline_ms, event.name)
        )

    # --- staging and appending ----------------------------------------------------------

    def _produce(
        self,
        produced: ControllerResult[Any] | Iterator[ControllerResult[Any]],
        staged: list[Record],
        base: int,
    ) -> tuple[object, bool]:
        """Stages what a handler returned; its response and whether the event is atomic.

        A handler of one result per item is run item by item, each item's records staged
        before the next item is asked for, so later items see the earlier ones.
        """
        if isinstance(produced, ControllerResult):
            self._stage(produced.records, staged, base)
            return produced.response, produced.atomic
        responses: list[object] = []
        atomic = True
        for item in produced:
            self._stage(item.records, staged, base)
            responses.append(item.response)
            atomic = atomic and item.atomic
        return responses, atomic

    def _next_write_offset(self) -> int:
        """The offset a running handler's first record will take (it runs only when active):
        after the records staged and not yet appended."""
        return self._log.next_offset() + self._unappended

    def _stage(self, records: Iterable[Record], staged: list[Record], base: int) -> None:
        """Applies records to the latest image at the offsets they will be appended at."""
        for record in records:
            assert self._latest is not self._committed, "only the active controller stages"
            try:
                self._latest.apply(record, base + len(staged))
            except ReplayError as error:
                # The failed record may have been half applied: start again from the truth.
                staged.clear()
                self._rebuild_latest()
                raise KafkaError(
                    ErrorCode.UNKNOWN_SERVER_ERROR, f"generated an unappliable record: {error}"
                ) from None
            staged.append(record)

    def _discard_staged(self, staged: list[Record]) -> None:
        if staged and self._active:
            self._rebuild_latest()

    def _rebuild_latest(self) -> None:
        latest = fork(self._committed)
        for offset, record in self._pending:
            latest.apply(record, offset)
        self._latest = latest

    def _first_unappended_offset(self) -> int:
        pending = self._pending
        return pending[len(pending) - self._unappended][0]

    def _room_to_append(self) -> bool:
        """Whether staged records go to Raft now: below the limit of appends in flight, or
        once they would make a batch as large as one request may write (so a flood of small
        requests never builds a batch larger than any single request could)."""
        limit = self.settings.appends_in_flight
        return (
            limit is None
            or len(self._appended_ends) < limit
            or self._unappended >= MAX_RECORDS_PER_USER_OP
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
            or self._unappended >= MAX_RECORDS_PER_USER_OP
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
        if self._unappended and self._room_to_append():
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
        count = self._unappended
        if not count:
            return
        self._reset_linger()
        tail = self.unappended_records
        base = tail[0][0]
        if self._log.next_offset() != base:  # not yet committed, so not caught there
            # Raft appended a batch of its own (a VotersRecord, say) since these were staged:
            # their offsets, and whatever was built on them (a broker epoch), are taken. The
            # requests had no effect; they fail, retriably, and this controller stays active.
            error = not_controller(self._leader_id)
            self._drop_from(base, error)
            raise error
        self._unappended = 0
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
        pending = self._pending
        while pending and pending[-1][0] >= offset:
            pending.pop()
        self._unappended = 0
        self._writes.drop_staged()
        self._reset_linger()
        # Out of the purgatory too: the offsets will be handed out again, and the purgatory
        # releases in offset order.
        purgatory = self._purgatory
        while purgatory and purgatory[-1].offset >= offset:
            waiter = purgatory.pop()
            if not waiter.future.done():
                waiter.future.set_exception(error)
        self._rebuild_latest()

    def _on_append_done(self, future: asyncio.Future[int], epoch: int) -> None:
        if future.cancelled():
            return
        error = future.exception()
        if isinstance(error, NotLeaderError) and self._active and self._epoch == epoch:
            self._resign(error.leader_id)

    # --- Raft callbacks -----------------------------------------------------------------

    def handle_commit(self, batches: Sequence[Batch]) -> None:
        for batch in batches:
            if batch.next_offset <= self._committed_end:
                continue
            if self._active and batch.epoch != self._epoch:
                # Another leader's batch: this controller's epoch is over, whatever it was told.
                self._resign(None)
            if self._unappended and batch.last_offset >= self._first_unappended_offset():
                # Raft wrote this batch (a VotersRecord, say) at offsets records staged here
                # were to take: those requests had no effect and fail, retriably.
                self._drop_from(self._first_unappended_offset(), not_controller(self._leader_id))
            if not batch.is_control:
                records = self._own_records(batch)
                if records is None:
                    records = [decode_record(data) for data in batch.records()]
                self._committed.apply_batch(records, batch.base_offset)
                latest = self._latest
                if latest is not self._committed and batch.last_offset > latest.offset:
                    # Not written by this controller: only possible before it caught up.
                    start = max(0, latest.offset + 1 - batch.base_offset)
                    latest.apply_batch(records[start:], batch.base_offset + start)
            self._committed_end = batch.next_offset
            pending = self._pending
            while pending and pending[0][0] <= batch.last_offset:
                pending.popleft()
            appended_ends = self._appended_ends
            while appended_ends and appended_ends[0] <= batch.last_offset:
                appended_ends.popleft()
                self._writes.commit()
            self._release(batch)
        if self._unappended and self._active and self._append_due():
            # What gathered while earlier appends were in flight goes as one batch now.
            with contextlib.suppress(KafkaError):  # its requests were failed with the error
                self._append_unappended()

    def _own_records(self, batch: Batch) -> list[Record] | None:
        """The records of ``batch`` as this controller staged them, if it wrote the batch.

        Only the leader of an epoch writes batches of that epoch, so a committed batch of this
        controller's epoch at the offsets of its pending records holds exactly those records;
        reusing them saves decoding what was just encoded (0.5 s for a 10k-record election).
        """
        pending = self._pending
        if not (self._active and batch.epoch == self._epoch and pending):
            return None
        if pending[0][0] != batch.base_offset or len(pending) < batch.record_count:
            return None
        staged = list(itertools.islice(pending, batch.record_count))
        if staged[-1][0] != batch.last_offset:
            return None
        return [record for _, record in staged]

    def _release(self, batch: Batch) -> None:
        purgatory = self._purgatory
        while purgatory and purgatory[0].offset <= batch.last_offset:
            waiter = purgatory.popleft()
            if waiter.future.done():
                continue
            if waiter.offset >= batch.base_offset and waiter.epoch != batch.epoch:
                waiter.future.set_exception(not_controller(self._leader_id))
            else:
                waiter.future.set_result(waiter.response)

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
        records = (decode_record(data) for data in reader.records())
        end_offset = reader.snapshot_id.end_offset
        image = MetadataImage.from_records(records, end_offset - 1)

        def install() -> None:
            if self._active:
                self._resign(self._leader_id)
            self._committed = image
            self._latest = image
            self._committed_end = end_offset

        return install

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        if self._active and (leader_id != self.settings.node_id or epoch != self._epoch):
            self._resign(leader_id)
        self._leader_id = leader_id
        self._epoch = epoch
        if leader_id == self.settings.node_id and not self._active:
            self._activate()

    def _activate(self) -> None:
        self._active = True
        image = self._committed
        self._bootstrap_due = bool(self.settings.bootstrap_features) and not (
            image.features or image.brokers or image.topics
        )
        self._latest = fork(self._committed)
        now = self._clock()
        self._last_write_ms = now
        self._next_rebalance_ms = now + self.settings.leader_imbalance_check_interval_seconds * 1000
        self._next_unclean_ms = now + self.settings.unclean_leader_election_interval_ms
        # Heartbeat state is soft: every registered broker gets a fresh session. A broker
        # already in controlled shutdown waits until the others report this controller's
        # starting offset, since where its shutdown began was not kept.
        self._sessions = {}
        for broker_id, registration in self._committed.brokers.items():
            session = self._sessions[broker_id] = BrokerSession(now)
            if registration.in_controlled_shutdown:
                session.controlled_shutdown_offset = self._committed.offset
        log.info("node %d is the active controller in epoch %d", self.settings.node_id, self._epoch)

    def _resign(self, leader_id: int | None) -> None:
        """Leadership is gone: fail parked replies, drop the pending state and soft state."""
        if not self._active:
            return
        self._active = False
        self._leader_id = leader_id
        self._latest = self._committed
        self._pending.clear()
        self._unappended = 0
        self._appended_ends.clear()
        self._writes.clear()
        self._reset_linger()
        self._sessions.clear()
        self._fail_waiters(not_controller(leader_id))

    def _fail_waiters(self, error: KafkaError) -> None:
        purgatory, self._purgatory = self._purgatory, deque()
        for waiter in purgatory:
            if not waiter.future.done():
                waiter.future.set_exception(error)

    # --- periodic work ------------------------------------------------------------------

    async def tick(self) -> None:
        """Periodic duties: expire deadlines, fence stale brokers, run the periodic elections
        when due, and write a NoOp when idle."""
        self._expire_waiters()
        if not self._active:
            return
        try:
            if self._bootstrap_due:
                self._bootstrap_due = False
                await self._submit(
                    "bootstrapFeatures",
                    self._bootstrap_features,
                    timeout_ms=None,
                    wait_for_commit=False,
                    deadline=False,
                )
            while await self._submit(
                "fenceStaleBroker",
                self._fence_one_stale_broker,
                timeout_ms=None,
                wait_for_commit=False,
                deadline=False,
            ):
                pass
            now = self._clock()
            if self.settings.auto_leader_rebalance_enable and now >= self._next_rebalance_ms:
                capped = await self._submit(
                    "preferredRebalance",
                    self._rebalance,
                    timeout_ms=None,
                    wait_for_commit=False,
                    deadline=False,
                )
                interval = self.settings.leader_imbalance_check_interval_seconds * 1000
                self._next_rebalance_ms = now + (RERUN_CAPPED_MS if capped else interval)
            if now >= self._next_unclean_ms:
                capped = await self._submit(
                    "uncleanElections",
                    self._unclean_elections,
                    timeout_ms=None,
                    wait_for_commit=False,
                    deadline=False,
                )
                interval = self.settings.unclean_leader_election_interval_ms
                self._next_unclean_ms = now + (RERUN_CAPPED_MS if capped else interval)
            await self._submit(
                "maybeWriteNoOp",
                self._maybe_write_noop,
                timeout_ms=None,
                wait_for_commit=False,
                deadline=False,
            )
        except KafkaError as error:
            # Leadership went while the checks were queued; the next leader runs its own.
            log.info("periodic controller work stopped: %s", error.message)

    def _expire_waiters(self) -> None:
        now = self._clock()
        for waiter in self._purgatory:
            if (
                waiter.deadline_ms is not None
                and now >= waiter.deadline_ms
                and not waiter.future.done()
            ):
                waiter.future.set_exception(timed_out(waiter.name))
        while self._purgatory and self._purgatory[0].future.done():
            self._purgatory.popleft()

    def _rebalance(self) -> ControllerResult[bool]:
        """Preferred leaders back, for brokers over the imbalance threshold; True if capped."""
        now = self._clock()
        catch_up = self.settings.leader_imbalance_catch_up_ms

        def caught_up(broker_id: int, _key: PartitionKey) -> bool:
            # Soft state: when this controller unfenced the broker. Earlier ones count as warm.
            session = self._sessions.get(broker_id)
            return (
                session is None
                or session.unfenced_at_ms is None
                or now - session.unfenced_at_ms >= catch_up
            )

        run = preferred_rebalance(
            self._latest,
            threshold_percent=self.settings.leader_imbalance_per_broker_percentage,
            eligible=caught_up,
        )
        self.election_counts[(ElectionType.PREFERRED.name, ErrorCode.NONE.name)] += len(run.records)
        return ControllerResult(run.records, run.capped, atomic=False)

    def _unclean_elections(self) -> ControllerResult[bool]:
        """Leaders for leaderless partitions of topics allowing it; True if capped."""
        run = unclean_elections_for_leaderless(
            self._latest,
            unclean_default=self._unclean_default,
            min_isr_default=self.settings.min_insync_replicas,
        )
        self.election_counts[(ElectionType.UNCLEAN.name, ErrorCode.NONE.name)] += len(run.records)
        return ControllerResult(run.records, run.capped, atomic=False)

    def _bootstrap_features(self) -> ControllerResult[None]:
        """The bootstrap feature levels, as Kafka's first controller writes its
        ``bootstrap.checkpoint``: only into a log that finalized nothing yet."""
        image = self._latest
        if image.features or image.brokers or image.topics:
            return NOTHING
        return ControllerResult(
            tuple(
                FeatureLevelRecord(name, level)
                for name, level in self.settings.bootstrap_features
                if level > 0
            ),
            None,
        )

    def _maybe_write_noop(self) -> ControllerResult[None]:
        if self._clock() - self._last_write_ms >= self.settings.metadata_max_idle_interval_ms:
            return ControllerResult((NoOpRecord(),), None)
        return NOTHING

    def _fence_one_stale_broker(self) -> ControllerResult[bool]:
        """Fences the unfenced broker whose last contact is oldest, if its session expired.

        One broker per event, as in Kafka: each fencing is its own append, and the caller
        runs the check again at once until no broker is stale.
        """
        now = self._clock()
        timeout = self.settings.broker_session_timeout_ms
        stale: tuple[int, int] | None = None
        for broker_id, session in self._sessions.items():
            registration = self._latest.broker(broker_id)
            if registration is None or registration.fenced:
                continue
            if session.last_contact_ms + timeout < now:
                candidate = (session.last_contact_ms, broker_id)
                if stale is None or candidate < stale:
                    stale = candidate
        if stale is None:
            return ControllerResult((), False, atomic=False)
        broker_id = stale[1]
        log.info("fencing broker %d: no heartbeat for %d ms", broker_id, now - stale[0])
        records = lifecycle.fence_records(
            self._latest, broker_id, unclean_default=self._unclean_default
        )
        return ControllerResult(tuple(records), True, atomic=False)

    @property
    def _unclean_default(self) -> bool:
        return self.settings.unclean_leader_election_enable

    # --- topics -------------------------------------------------------------------------

    async def create_topics(
        self,
        topics: Sequence[NewTopic],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[CreateTopicResult]:
        """CreateTopics: one result per requested topic, in request order; atomic append.

        With ``request``, a retry of an earlier call raises :class:`AnsweredBefore` (so for
        every write below)."""
        return await self._submit_each(
            "createTopics",
            lambda: self._create_topics(list(topics), validate_only),
            timeout_ms=timeout_ms,
            request=request,
        )

    def _create_topics(
        self, topics: list[NewTopic], validate_only: bool
    ) -> Iterator[ControllerResult[CreateTopicResult]]:
        """One result per topic; each is staged before the next is placed, so topics created
        together see each other's replicas."""
        check_partition_total(topics, self.settings.num_partitions, MAX_RECORDS_PER_USER_OP)
        twice = duplicated(topic.name for topic in topics)
        for topic in topics:
            if topic.name in twice:
                yield ControllerResult((), CreateTopicResult(topic.name, DUPLICATE_TOPIC))
                continue
            try:
                check_topic_name(topic.name)
                topic_id = self._new_topic_id()
                records, partitions, replication_factor = create_topic_records(
                    self._latest,
                    topic,
                    topic_id,
                    self._placer,
                    default_partitions=self.settings.num_partitions,
                    default_replication_factor=self.settings.default_replication_factor,
                )
            except KafkaError as error:
                yield ControllerResult(
                    (), CreateTopicResult(topic.name, ItemError(error.code, error.message))
                )
                continue
            yield ControllerResult(
                () if validate_only else tuple(records),
                CreateTopicResult(
                    topic.name,
                    OK,
                    topic_id,
                    partitions,
                    replication_factor,
                    dict(topic.configs),
                ),
            )

    async def create_partitions(
        self,
        requests: Sequence[NewPartitions],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[TopicResult]:
        return await self._submit_each(
            "createPartitions",
            lambda: self._create_partitions(list(requests), validate_only),
            timeout_ms=timeout_ms,
            request=request,
        )

    def _create_partitions(
        self, requests: list[NewPartitions], validate_only: bool
    ) -> Iterator[ControllerResult[TopicResult]]:
        twice = duplicated(request.topic for request in requests)
        planned = 0
        """New partitions this request has placed so far, validate-only ones included."""
        for request in requests:
            if request.topic in twice:
                yield ControllerResult((), TopicResult(request.topic, DUPLICATE_TOPIC))
                continue
            try:
                records = create_partitions_records(
                    self._latest,
                    request,
                    self._placer,
                    max_new_partitions=MAX_RECORDS_PER_USER_OP - planned,
                )
            except KafkaError as error:
                yield ControllerResult(
                    (), TopicResult(request.topic, ItemError(error.code, error.message))
                )
                continue
            planned += len(records)
            yield ControllerResult(
                () if validate_only else tuple(records), TopicResult(request.topic)
            )

    async def delete_topics(
        self,
        names: Sequence[str],
        *,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[TopicResult]:
        return await self._submit_each(
            "deleteTopics",
            lambda: self._delete_topics(list(names)),
            timeout_ms=timeout_ms,
            request=request,
        )

    def _delete_topics(self, names: list[str]) -> Iterator[ControllerResult[TopicResult]]:
        twice = duplicated(names)
        for name in names:
            if name in twice:
                yield ControllerResult((), TopicResult(name, DUPLICATE_TOPIC))
                continue
            try:
                records = delete_topic_records(self._latest, name)
            except KafkaError as error:
                yield ControllerResult((), TopicResult(name, ItemError(error.code, error.message)))
                continue
            yield ControllerResult(tuple(records), TopicResult(name))

    async def elect_leaders(
        self,
        election_type: ElectionType,
        partitions: Sequence[TopicPartition] | None,
        *,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> tuple[TopicResults, ...]:
        """ElectLeaders (KIP-460): per-partition results once the elections commit.

        ``None`` means every partition. Not atomic: each record is a whole change to its own
        partition, so an outcome larger than one user operation's cap is still written.
        """
        requested = None if partitions is None else list(partitions)
        return await self._submit(
            "electLeaders",
            lambda: self._elect_leaders(election_type, requested),
            timeout_ms=timeout_ms,
            request=request,
        )

    def _elect_leaders(
        self, election_type: ElectionType, partitions: list[TopicPartition] | None
    ) -> ControllerResult[tuple[TopicResults, ...]]:
        outcome = elect_leaders(
            self._latest,
            election_type,
            partitions,
            min_isr_default=self.settings.min_insync_replicas,
        )
        type_name = election_type.name
        counts = self.election_counts
        for topic_results in outcome.results:
            for _partition, result in topic_results.partitions:
                counts[(type_name, result.error.name)] += 1
        return ControllerResult(outcome.records, outcome.results, atomic=False)

    # --- configs ------------------------------------------------------------------------

    async def describe_configs(
        self, resources: Sequence[ConfigResourceRef], *, timeout_ms: int | None = None
    ) -> list[DescribeConfigsResult]:
        """Reads the committed image, so any controller (active or not) can answer."""
        return await self._submit(
            "describeConfigs",
            lambda: ControllerResult(
                (),
                [
                    describe_config(self._committed, resource, self._static_defaults())
                    for resource in resources
                ],
            ),
            timeout_ms=timeout_ms,
            needs_leadership=False,
            wait_for_commit=False,
        )

    def _static_defaults(self) -> dict[str, str]:
        return {
            MIN_INSYNC_REPLICAS: str(self.settings.min_insync_replicas),
            UNCLEAN_LEADER_ELECTION_ENABLE: str(self._unclean_default).lower(),
        }

    async def incremental_alter_configs(
        self,
        changes: Mapping[ConfigResourceRef, Sequence[AlterConfig]],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[AlterConfigsResult]:
        return await self._submit_each(
            "incrementalAlterConfigs",
            lambda: (
                self._alter_configs(resource, list(ops), validate_only)
                for resource, ops in changes.items()
            ),
            timeout_ms=timeout_ms,
            request=request,
        )

    def _alter_configs(
        self, resource: ConfigResourceRef, ops: list[AlterConfig], validate_only: bool
    ) -> ControllerResult[AlterConfigsResult]:
        try:
            records = alter_config_records(self._latest, resource, ops)
        except KafkaError as error:
            return ControllerResult(
                (), AlterConfigsResult(resource, ItemError(error.code, error.message))
            )
        return ControllerResult(
            () if validate_only else tuple(records), AlterConfigsResult(resource)
        )

    # --- ACLs (controller/acls.py) ------------------------------------------------------

    async def create_acls(
        self,
        bindings: Sequence[AclBinding],
        *,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[ItemError]:
        """CreateAcls: one outcome per binding, once the new ACLs commit."""
        return await self._submit_each(
            "createAcls",
            lambda: acl_control.create_acls(self._latest, list(bindings)),
            timeout_ms=timeout_ms,
            request=request,
        )

    async def delete_acls(
        self,
        filters: Sequence[AclBindingFilter],
        *,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[AclDeleteResult]:
        """DeleteAcls: per filter, the ACLs it removed, once the removals commit."""
        return await self._submit(
            "deleteAcls",
            lambda: acl_control.delete_acls(self._latest, list(filters)),
            timeout_ms=timeout_ms,
            request=request,
        )

    async def describe_acls(
        self, acl_filter: AclBindingFilter, *, timeout_ms: int | None = None
    ) -> tuple[AclBinding, ...]:
        """DescribeAcls from the committed image (any controller answers)."""
        return await self._submit(
            "describeAcls",
            lambda: ControllerResult((), acl_control.describe_acls(self._committed, acl_filter)),
            timeout_ms=timeout_ms,
            needs_leadership=False,
            wait_for_commit=False,
        )

    # --- features (controller/features.py) ----------------------------------------------

    async def update_features(
        self,
        updates: Sequence[FeatureUpdate],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
    ) -> None:
        """UpdateFeatures: every update or none, answered once the records commit. A refused
        update fails the whole request with its error under Kafka's top-level prefix."""
        return await self._submit(
            "updateFeatures",
            lambda: self._update_features(list(updates), validate_only),
            timeout_ms=timeout_ms,
        )

    def _update_features(
        self, updates: list[FeatureUpdate], validate_only: bool
    ) -> ControllerResult[None]:
        try:
            records = update_feature_records(
                self._latest, updates, controller_id=self.settings.node_id
            )
        except KafkaError as error:
            raise KafkaError(error.code, ALL_FAILED_PREFIX + error.message) from None
        return ControllerResult(() if validate_only else records, None)

    async def describe_features(
        self, *, timeout_ms: int | None = None
    ) -> tuple[dict[str, int], dict[str, SupportedRange], int]:
        """The finalized levels, the range every unfenced broker and this controller support,
        and the offset of the image they were read from (Kafka's finalized epoch)."""
        return await self._submit(
            "describeFeatures",
            lambda: ControllerResult(
                (),
                (
                    dict(self._committed.features),
                    supported_ranges(self._committed),
                    self._committed.offset,
                ),
            ),
            timeout_ms=timeout_ms,
            needs_leadership=False,
            wait_for_commit=False,
        )

    # --- controllers ----------------------------------------------------------------------

    async def register_controller(
        self,
        request: controller_registration.ControllerRegistrationRequest,
        *,
        timeout_ms: int | None = None,
    ) -> None:
        """ControllerRegistration (KIP-919); returns once the registration is committed."""
        await self._submit(
            "registerController",
            lambda: ControllerResult(
                controller_registration.registration_records(
                    request,
                    cluster_id=self.settings.cluster_id,
                    voter_ids=self.settings.voter_ids,
                    image=self._latest,
                ),
                None,
            ),
            timeout_ms=timeout_ms,
        )

    # --- brokers ------------------------------------------------------------------------

    async def register_broker(
        self, request: BrokerRegistrationRequest, *, timeout_ms: int | None = None
    ) -> int:
        """BrokerRegistration; returns the broker epoch once the registration commits."""
        return await self._submit(
            "registerBroker", lambda: self._register_broker(request), timeout_ms=timeout_ms
        )

    def _register_broker(self, request: BrokerRegistrationRequest) -> ControllerResult[int]:
        if request.cluster_id != self.settings.cluster_id:
            raise KafkaError(
                ErrorCode.INCONSISTENT_CLUSTER_ID,
                f"Expected cluster ID {self.settings.cluster_id}, but got cluster ID "
                f"{request.cluster_id}.",
            )
        lifecycle.check_registration(request, self.settings.voter_ids)
        check_broker_features(self._latest, request.broker_id, request.features)
        broker_id = request.broker_id
        now = self._clock()
        existing = self._latest.broker(broker_id)
        session = self._sessions.get(broker_id)
        if existing is not None and existing.incarnation_id == request.incarnation_id:
            # The same process registering again: amend, keeping epoch and fencing state.
            amended = RegisterBrokerRecord(
                broker_id,
                request.incarnation_id,
                existing.broker_epoch,
                request.endpoints,
                request.features,
                request.rack,
                existing.fenced,
                existing.in_controlled_shutdown,
            )
            if session is None:
                self._sessions[broker_id] = BrokerSession(now)
            else:
                session.last_contact_ms = now
            return ControllerResult((amended,), existing.broker_epoch)
        records: list[Record] = []
        if existing is not None:
            timeout = self.settings.broker_session_timeout_ms
            # A fenced broker holds no live session (it shut down, or its session expired),
            # so its successor need not wait out a session timeout, as in Kafka.
            live = session is not None and session.last_contact_ms + timeout >= now
            if live and not existing.fenced:
                raise KafkaError(
                    ErrorCode.DUPLICATE_BROKER_REGISTRATION,
                    f"Another broker is registered with broker id {broker_id}.",
                )
            clean = request.previous_broker_epoch == existing.broker_epoch
            unclean_stop = (
                ()
                if clean
                else elections_for_unclean_shutdown(
                    self._latest,
                    broker_id,
                    unclean_default=self._unclean_default,
                    min_isr_default=self.settings.min_insync_replicas,
                )
            )
            if unclean_stop:
                # KIP-966: no proof of a clean stop, so its log may have lost a tail; it
                # leaves every ISR and ELR before the new incarnation is written.
                records.extend(unclean_stop)
            elif not existing.fenced:
                # The old incarnation is gone: take it out of ISRs before replacing it.
                records.extend(
                    online_elections_for_broker_removal(
                        self._latest,
                        broker_id,
                        unclean_default=self._unclean_default,
                        min_isr_default=self.settings.min_insync_replicas,
                    )
                )
        # The broker epoch is the offset its registration record will take.
        broker_epoch = self._next_write_offset() + len(records)
        records.append(
            RegisterBrokerRecord(
                broker_id,
                request.incarnation_id,
                broker_epoch,
                request.endpoints,
                request.features,
                request.rack,
                fenced=True,
            )
        )
        self._sessions[broker_id] = BrokerSession(now)
        # Not a user operation: one record per partition the old incarnation was in, however
        # many (capping it would keep a broker in many partitions from ever registering).
        return ControllerResult(tuple(records), broker_epoch, atomic=False)

    async def broker_heartbeat(
        self, request: BrokerHeartbeatRequest, *, timeout_ms: int | None = None
    ) -> BrokerHeartbeatReply:
        """BrokerHeartbeat. The default deadline is half the heartbeat interval, as in Kafka;
        a heartbeat that waited longer in the queue still counts as contact, so a backed-up
        queue does not get live brokers fenced."""
        if timeout_ms is None:
            timeout_ms = self.settings.broker_heartbeat_interval_ms // 2
        return await self._submit(
            "brokerHeartbeat",
            lambda: self._heartbeat(request),
            timeout_ms=timeout_ms,
            on_expired=lambda: self._touch_session(request.broker_id, request.broker_epoch),
        )

    def _touch_session(self, broker_id: int, broker_epoch: int) -> None:
        registration = self._latest.broker(broker_id)
        session = self._sessions.get(broker_id)
        if registration is not None and registration.broker_epoch == broker_epoch and session:
            log.warning("controller event queue overloaded: heartbeat of broker %d", broker_id)
            session.last_contact_ms = self._clock()

    def _registration_at(self, broker_id: int, broker_epoch: int) -> None:
        registration = self._latest.broker(broker_id)
        if registration is None:
            raise KafkaError(ErrorCode.STALE_BROKER_EPOCH, f"Broker {broker_id} is not registered.")
        if registration.broker_epoch != broker_epoch:
            raise KafkaError(
                ErrorCode.STALE_BROKER_EPOCH,
                f"Expected broker epoch {registration.broker_epoch}, but got broker epoch "
                f"{broker_epoch}.",
            )

    def _heartbeat(self, request: BrokerHeartbeatRequest) -> ControllerResult[BrokerHeartbeatReply]:
        broker_id = request.broker_id
        self._registration_at(broker_id, request.broker_epoch)
        registration = self._latest.broker(broker_id)
        assert registration is not None
        session = self._sessions.get(broker_id)
        if session is None:
            session = self._sessions[broker_id] = BrokerSession(self._clock())
        session.last_contact_ms = self._clock()
        session.metadata_offset = request.current_metadata_offset
        current = lifecycle.current_state(self._latest, broker_id)
        target = lifecycle.next_state(
            self._latest,
            broker_id,
            session,
            want_fence=request.want_fence,
            want_shut_down=request.want_shut_down,
            sessions=self._sessions,
        )
        unclean = self._unclean_default
        min_isr = self.settings.min_insync_replicas
        records: list[Record] = []
        if target is not current:
            if target is BrokerState.UNFENCED:
                records = lifecycle.unfence_records(
                    self._latest, broker_id, unclean_default=unclean, min_isr_default=min_isr
                )
                session.unfenced_at_ms = self._clock()
            elif target is BrokerState.CONTROLLED_SHUTDOWN:
                records = lifecycle.controlled_shutdown_records(
                    self._latest, broker_id, unclean_default=unclean, min_isr_default=min_isr
                )
                # The shutdown counts from the offset of its last record.
                session.controlled_shutdown_offset = self._next_write_offset() + len(records) - 1
            elif current is not BrokerState.FENCED:
                records = lifecycle.fence_records(
                    self._latest, broker_id, unclean_default=unclean, min_isr_default=min_isr
                )
        reply = BrokerHeartbeatReply(
            is_caught_up=request.current_metadata_offset >= registration.broker_epoch,
            is_fenced=target in (BrokerState.FENCED, BrokerState.SHUTDOWN_NOW),
            should_shut_down=target is BrokerState.SHUTDOWN_NOW,
        )
        # Fencing, unfencing and a controlled shutdown write one record per partition the
        # broker touches: the controller's own work, which the cap on what one user operation
        # may write must not block (a broker leading more partitions than that would stay
        # fenced, or never be fenced, for good).
        return ControllerResult(tuple(records), reply, atomic=False)

    async def unregister_broker(self, broker_id: int, *, timeout_ms: int | None = None) -> None:
        await self._submit(
            "unregisterBroker", lambda: self._unregister_broker(broker_id), timeout_ms=timeout_ms
        )

    def _unregister_broker(self, broker_id: int) -> ControllerResult[None]:
        registration = self._latest.broker(broker_id)
        if registration is None:
            raise KafkaError(
                ErrorCode.BROKER_ID_NOT_REGISTERED,
                f"Broker ID {broker_id} is not currently registered",
            )
        elections = online_elections_for_broker_removal(
            self._latest,
            broker_id,
            unclean_default=self._unclean_default,
            min_isr_default=self.settings.min_insync_replicas,
        )
        self._sessions.pop(broker_id, None)
        return ControllerResult(
            (*elections, UnregisterBrokerRecord(broker_id, registration.broker_epoch)),
            None,
            atomic=False,
        )

    # --- AlterPartition -----------------------------------------------------------------

    async def alter_partition(
        self, request: AlterPartitionRequest, *, timeout_ms: int | None = None
    ) -> list[AlterPartitionResult]:
        return await self._submit_each(
            "alterPartition", lambda: self._alter_partition(request), timeout_ms=timeout_ms
        )

    def _alter_partition(
        self, request: AlterPartitionRequest
    ) -> Iterator[ControllerResult[AlterPartitionResult]]:
        """One result per partition, reporting the state its record makes (the image's own
        :meth:`~raftmeta.image.PartitionRegistration.merge`); a partition named twice is
        checked the second time against the first change."""
        self._registration_at(request.broker_id, request.broker_epoch)
        for change in request.partitions:
            error, record = check_isr_change(
                self._latest,
                request.broker_id,
                request.topic_id,
                change,
                min_isr_default=self.settings.min_insync_replicas,
            )
            if not error.ok:
                yield ControllerResult((), AlterPartitionResult(change.partition_id, error))
                continue
            current = self._latest.partition(request.topic_id, change.partition_id)
            assert current is not None
            state = current if record is None else current.merge(record)
            yield ControllerResult(
                () if record is None else (record,),
                AlterPartitionResult(
                    change.partition_id,
                    OK,
                    state.leader,
                    state.leader_epoch,
                    state.isr,
                    state.partition_epoch,
                    state.leader_recovery_state,
                ),
            )
