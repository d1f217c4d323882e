"""``RaftNode``: one consensus core on a real disk, talking through a transport, driven by asyncio.

A single driver task owns the order of work the Ready contract demands: send what may go early,
persist (a small append inline while the disk is fast, anything else off the event loop: see
``write_placement``), send what waited for the disk, hand commits to the application,
then ``advance``. Inbound calls and answers to our own calls are stepped into the core as they
arrive, even while a Ready is being persisted; the core allows that, and it keeps a slow fsync
from stalling elections and fetches.

The node owns no socket: it sends through the :class:`~raftmeta.quorum.transport.RaftChannel`
its ``connect`` opens, and whoever serves the transport hands inbound requests to
:meth:`RaftNode.handle_request`. The composition root chooses the transport (gRPC in
production, see ``raftmeta.quorum.grpc_server``) and owns the server's life cycle.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import gc
import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

from raftmeta.errors import ErrorCode
from raftmeta.quorum.disk import NodeDisk
from raftmeta.quorum.fetch_latency import FetchRoundTrips
from raftmeta.quorum.membership import (
    VoterChangeWaits,
    controller_endpoint,
    discover_membership,
    starting_membership,
    timed_out,
    voter_addresses,
)
from raftmeta.quorum.refusals import RefusalLog
from raftmeta.quorum.settings import NodeSettings
from raftmeta.quorum.transport import Connect, PeerDownError, RaftChannel
from raftmeta.quorum.write_placement import WritePlacement
from raftmeta.raft.batch import Batch, SnapshotId
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC
from raftmeta.raft.core import NotLeaderError, QuorumDescription, RaftCore, ReplicaState
from raftmeta.raft.membership import Membership
from raftmeta.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    Message,
    Request,
    Response,
    VoteRequest,
    VoteResponse,
)
from raftmeta.raft.ready import LeaderAndEpoch, Outbound, Ready
from raftmeta.raft.roles import Follower, Prospective, Resigned, Role
from raftmeta.raft.snapshot_policy import snapshot_id_for
from raftmeta.raft.voter_change import VoterChangeResult
from raftmeta.raft.voters import ReplicaKey, Voter
from raftmeta.storage.data_dir import MetadataDir
from raftmeta.storage.errors import SnapshotError
from raftmeta.storage.snapshots import SnapshotReader

log = logging.getLogger(__name__)


SnapshotWork = Callable[[], Iterable[bytes]]
"""Serializes a state captured earlier. It runs on a worker thread while the node goes on
committing, so it must read nothing that later commits change."""

SnapshotInstall = Callable[[], None]
"""The on-loop half of loading a snapshot: puts in place a state prepared on a worker thread."""


RESPONSE_TO_REQUEST: dict[type[Response], type[Request]] = {
    VoteResponse: VoteRequest,
    BeginQuorumEpochResponse: BeginQuorumEpochRequest,
    EndQuorumEpochResponse: EndQuorumEpochRequest,
    FetchResponse: FetchRequest,
    FetchSnapshotResponse: FetchSnapshotRequest,
}
"""Which request a response answers, to find the inbound call waiting for it."""


Answer = Callable[["Response | BaseException"], None]
"""Called once with the core's answer to an inbound request, or with why none will come
(``NodeStoppedError``: not running or superseded; ``TimeoutError``)."""


class _Waiter:
    """An inbound request waiting for the core's answer, and whom to tell."""

    __slots__ = ("answer", "request", "timer")

    def __init__(self, request: Request, answer: Answer) -> None:
        self.request = request
        self.answer: Answer | None = answer
        self.timer: asyncio.TimerHandle | None = None

    def finish(self, outcome: Response | BaseException) -> None:
        answer, self.answer = self.answer, None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if answer is None:
            return
        try:
            answer(outcome)
        except Exception:  # one caller's failure must not stop the driver
            log.exception("answering %s failed", type(self.request).__name__)


def answers(request: Request, response: Response) -> bool:
    """Whether ``response`` answers ``request`` rather than an earlier request of its kind.

    One request per (peer, kind) waits for its answer, so when a candidate's real vote
    arrives before the answer to its pre-vote went out, that answer must not be taken for the
    vote's: the wire echoes the waiting request's round, so the candidate would read a pre-vote
    grant in its old epoch as the vote's answer and lose the vote it was granted.
    """
    if isinstance(request, VoteRequest) and isinstance(response, VoteResponse):
        # A refusal echoes the epoch clamped into range, so only an accepted answer's must match.
        return response.pre_vote == request.pre_vote and (
            response.error is not ErrorCode.NONE
            or response.candidate_epoch == request.candidate_epoch
        )
    return True


def monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class Application(Protocol):
    """What the node tells the layer above it; ``RaftClient`` is the usual one."""

    def prepare_snapshot(self, reader: SnapshotReader) -> SnapshotInstall:
        """Builds the state ``reader`` holds, on a worker thread, and returns what installs it;
        the node calls that on the event loop before it hands over anything after the snapshot.

        While this runs the node's driver waits for it, so no other call of this protocol
        comes in meanwhile: the build may read state that only these calls change, but must
        change nothing (the loop goes on, and may read or write the application's state)."""
        ...

    def commit(self, batches: Sequence[Batch]) -> None: ...

    def leader_change(self, leader: LeaderAndEpoch) -> None: ...

    def state_changed(self) -> None:
        """The core took input: its role or epoch may have moved."""

    def snapshot_due(self) -> SnapshotWork | None:
        """When a snapshot is wanted: the work that yields the records rebuilding the state as
        of the last commit. Called on the event loop; the work runs on a worker thread."""


class _NoApplication:
    def prepare_snapshot(self, reader: SnapshotReader) -> SnapshotInstall:
        return _nothing_to_install

    def commit(self, batches: Sequence[Batch]) -> None:
        pass

    def leader_change(self, leader: LeaderAndEpoch) -> None:
        pass

    def state_changed(self) -> None:
        pass

    def snapshot_due(self) -> SnapshotWork | None:
        return None


def _nothing_to_install() -> None:
    pass


def build_snapshot_state(prepare: Callable[[], SnapshotInstall]) -> SnapshotInstall:
    """Runs ``prepare`` (on a worker thread) with the cyclic collector paused, then moves what
    it built out of the collector's young generation in one step.

    Otherwise the new state (millions of objects for a large image) would sit in generation 0
    (the image's own load pauses the collector too), and the first allocation after would
    walk it all in one young collection: 0.23 s for 200k partitions, holding the interpreter,
    so the event loop as well, for all of it. ``gc.freeze`` moves every tracked object out of
    sight at once; a process that keeps its loaded state frozen (``raftmeta.quorum.collector``)
    keeps the new state frozen too (the replaced one is still freed by reference counts), and
    any other process has it moved back at once into the oldest generation, where it would
    have ended up after a few young collections (full collections walk it as before).

    The collector's switch is process-wide: while a build runs, no thread collects, as during
    any image load. Two builds at once leave it as they found it, at worst collecting the
    rest of the later one as usual.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return prepare()
    finally:
        keeps_state_frozen = gc.get_freeze_count() > 0
        gc.freeze()
        if not keeps_state_frozen:
            gc.unfreeze()
        if was_enabled:
            gc.enable()


class _LeadershipLog:
    """Logs at INFO, once each, every change of the leader this node knows of, and why.

    The core is looked at after every input it takes; a change is a new (leader, epoch) pair,
    or this node resigning. Why is read off what the node saw before: a leader it followed
    that had resigned (EndQuorumEpoch) makes the next leader a handover.
    """

    __slots__ = ("_handing_over", "_known", "_last", "_node_id", "_resumed")

    def __init__(self, node_id: int) -> None:
        self._node_id = node_id
        self._last: tuple[int | None, int, bool] | None = None
        self._handing_over = False
        self._known: tuple[int, int] | None = None
        """The last (leader, epoch) this node knew of."""
        self._resumed = False
        """The last line was the one for resuming from disk: a leader of that same epoch was
        elected before the restart, not under this node's eyes."""

    def observe(self, core: RaftCore) -> None:
        state = core.state
        resigned = isinstance(state, Resigned)
        current = (core.leader_id, core.epoch, resigned)
        last = self._last
        if isinstance(state, Follower | Prospective) and state.leader_resigned:
            self._handing_over = True
        if current == last:
            return
        self._last = current
        leader, epoch, _ = current
        if last is None:
            reason = "resumed from disk"
        elif resigned:
            if isinstance(state, Resigned) and state.preferred_successors:
                successors = ", ".join(str(v) for v in state.preferred_successors)
                reason = f"resigned, handing over to {successors}"
                self._handing_over = True
            else:
                reason = "resigned"
        elif leader is None:
            electing = core.role in (Role.PROSPECTIVE, Role.CANDIDATE)
            reason = "no leader known: election under way" if electing else "no leader known"
        elif (leader, epoch) == self._known:
            reason = "unchanged after a pre-vote round that did not win"
        elif epoch == last[1] and last[0] is None and self._resumed and not self._handing_over:
            reason = "learned of the leader of this epoch"
        elif self._handing_over:
            reason = "handover"
        else:
            reason = "elected"
        self._resumed = last is None
        if leader is not None:
            self._handing_over = False
            self._known = (leader, epoch)
        log.info(
            "node %d: leader is now %s in epoch %d (%s)",
            self._node_id,
            "nobody" if leader is None else f"node {leader}",
            epoch,
            reason,
        )


def _timed_persist(disk: NodeDisk, ready: Ready) -> float:
    """Make ``ready`` durable; returns the milliseconds the disk work took."""
    started = time.perf_counter()
    disk.persist(ready)
    return (time.perf_counter() - started) * 1000


class _Wakeup:
    """What the driver sleeps on between Readys: set by any input, or its deadline passing.

    An ``asyncio.Event`` under ``wait_for`` costs a task and several turns of the loop per
    wake, on the path of every commit; this is one future and one timer.
    """

    __slots__ = ("_is_set", "_sleeping")

    def __init__(self) -> None:
        self._is_set = False
        self._sleeping: asyncio.Future[None] | None = None

    def set(self) -> None:
        self._is_set = True
        sleeping = self._sleeping
        if sleeping is not None and not sleeping.done():
            sleeping.set_result(None)

    def clear(self) -> None:
        self._is_set = False

    async def wait(self, timeout_s: float) -> None:
        """Return once set (at once if it is), or after ``timeout_s``."""
        if self._is_set:
            return
        loop = asyncio.get_running_loop()
        sleeping: asyncio.Future[None] = loop.create_future()
        self._sleeping = sleeping
        timer = loop.call_later(timeout_s, _wake, sleeping)
        try:
            await sleeping
        finally:
            timer.cancel()
            self._sleeping = None


def _wake(sleeping: asyncio.Future[None]) -> None:
    if not sleeping.done():
        sleeping.set_result(None)


class NodeStoppedError(ConnectionError):
    """The node is not running, so a call into it can get no answer."""


class RaftNode:
    """A Raft node on ``settings.data_dir`` that reaches its peers through ``connect``.

    Life cycle: :meth:`open` (the directory; a transport's server may then hand requests in,
    answered as unavailable until the node runs), :meth:`start`, :meth:`stop`.
    """

    def __init__(self, settings: NodeSettings, connect: Connect) -> None:
        self.settings = settings
        self.node_id = settings.node_id
        self._connect = connect
        self._app: Application = _NoApplication()
        self._disk: NodeDisk | None = None
        self._cluster_id: str | None = None
        self._core: RaftCore | None = None
        self._channel: RaftChannel | None = None
        self._voter_addresses: dict[int, str] = {}
        self._driver: asyncio.Task[None] | None = None
        self._wakeup = _Wakeup()
        self._idle = asyncio.Event()
        self._progress = asyncio.Event()
        """Set whenever the core took input or a Ready was done: its state may have moved."""
        self._stopping = False
        self._waiters: dict[tuple[int, type[Request]], _Waiter] = {}
        self._calls: set[asyncio.Task[None]] = set()
        self._refused: dict[int, int] = {}
        """Peers whose connection refused or closed on this node's last call to them, and
        when (monotonic ms): see :attr:`refused_peers`."""
        self._applied_offset = 0
        self.fetch_round_trips = FetchRoundTrips(self.node_id, settings.raft.fetch_timeout_ms)
        """This node's fetches to its leader, timed (a slow link is warned of)."""
        self.written_offset = 0
        """The log end the last completed write made durable on this node's disk; the log
        beyond it is being written or waits for the next write."""
        self._snapshot_task: asyncio.Task[None] | None = None
        self._snapshot_written: tuple[SnapshotId, int] | None = None
        """A snapshot the worker finished, for the driver to hand to the core between Readys."""
        self.failure: BaseException | None = None
        """Why the driver stopped on its own, if it did; the node is unusable after it."""
        self._refusals = RefusalLog(log, self.node_id)
        self._leadership = _LeadershipLog(self.node_id)
        self._voter_changes = VoterChangeWaits()
        self._retired_channels: list[RaftChannel] = []
        """Channels replaced when the voters' addresses changed; closed at stop, so calls
        already in flight on them still finish."""
        self._write_placement = WritePlacement(inline=settings.inline_small_writes)

    # ------------------------------------------------------------------------ life cycle

    def attach(self, application: Application) -> None:
        if self._core is not None:
            raise RuntimeError("attach the application before the node starts")
        self._app = application

    @property
    def voter_addresses(self) -> Mapping[int, str]:
        """Every voter's ``host:port`` as this node dials it (empty until it starts)."""
        return self._voter_addresses

    @property
    def cluster_id(self) -> str:
        """The directory's cluster id; still known after :meth:`stop`, so a server that
        outlives the node can tell a late caller it is unavailable rather than foreign."""
        if self._cluster_id is None:
            raise RuntimeError("the node has not opened its directory yet")
        return self._cluster_id

    @property
    def core(self) -> RaftCore:
        if self._core is None:
            raise NodeStoppedError(f"node {self.node_id} is not running")
        return self._core

    @property
    def running(self) -> bool:
        return self._core is not None and not self._stopping

    async def open(self) -> None:
        """Open (and lock) the metadata directory, so a server may hand requests in.

        Until :meth:`start`, they are answered as unavailable, so peers just retry. Raises
        the storage layer's error for an unformatted or foreign directory.
        """
        if self._disk is not None:
            return
        settings = self.settings
        directory = await asyncio.to_thread(
            functools.partial(
                MetadataDir.open,
                settings.data_dir,
                settings.node_id,
                settings.cluster_id,
                segment_bytes=settings.segment_bytes,
                retention=settings.retention,
            )
        )
        for repair in directory.startup.repairs():
            log.warning("node %d repaired its metadata directory: %s", settings.node_id, repair)
        if not directory.startup.log_recovery.clean:
            log.warning(
                "node %d: records it acknowledged may be gone, so it grants no votes until a "
                "leader has brought its log up to date (at most %d ms)",
                settings.node_id,
                settings.raft.repaired_voter_abstain_ms,
            )
        self._disk = NodeDisk(directory)
        self._cluster_id = directory.cluster_id

    async def start(self, voters: Mapping[int, str] | None = None) -> None:
        """Resume from disk and join the quorum; ``voters`` overrides the settings' addresses."""
        await self.open()
        disk = self._disk
        assert disk is not None
        addresses = dict(voters if voters is not None else self.settings.voters)
        membership = await self._starting_membership(disk, addresses)
        core = disk.new_core(membership, self.settings.raft, monotonic_ms(), random.Random())
        addresses = voter_addresses(core.voter_set, voter_addresses(membership.voters, addresses))
        latest = disk.directory.latest_snapshot
        self._applied_offset = core.log.start_offset
        self.written_offset = core.log.end_offset
        if latest is not None:
            await self._load_snapshot(disk, latest)
        self._voter_addresses = addresses
        self._channel = self._connect(
            self.node_id,
            disk.directory.cluster_id,
            addresses,
            self.settings.raft.request_timeout_ms,
        )
        self._core = core
        self._leadership.observe(core)
        self._app.state_changed()
        self._driver = asyncio.create_task(self._run(), name=f"raft-node-{self.node_id}")

    async def stop(self, *, graceful: bool = True) -> None:
        """Leave the quorum. A graceful stop of the leader first resigns and asks the other
        voters to elect a successor now, so failover takes round trips rather than a timeout;
        it then stays to vote and fetch until the successor commits (see :meth:`_linger`)."""
        core = self._core
        if graceful and self.running and core is not None and core.role is Role.LEADER:
            successor_reachable = self._successor_reachable(core)
            epoch, committed = core.epoch, core.high_watermark
            self._idle.clear()
            core.resign(monotonic_ms())
            self._after_input()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2.0):
                    await self._idle.wait()
            if successor_reachable:
                await self._linger(epoch, committed)
            if self._calls:
                await asyncio.wait(set(self._calls), timeout=1.0)
        self._stopping = True
        self._wakeup.set()
        if self._driver is not None:
            await self._driver
            self._driver = None
        if self._snapshot_task is not None:
            # The worker thread cannot be interrupted; the directory must outlive its writes.
            await asyncio.wait({self._snapshot_task})
            self._snapshot_task = None
        self._fail_waiters()
        for call in list(self._calls):
            call.cancel()
        if self._calls:
            await asyncio.wait(set(self._calls))
        self._voter_changes.stopped()
        if self._channel is not None:
            await self._channel.close()
            self._channel = None
        for retired in self._retired_channels:
            await retired.close()
        self._retired_channels.clear()
        if self._disk is not None:
            await asyncio.to_thread(self._disk.close)
            self._disk = None
        self._core = None
        self._app.state_changed()

    def _successor_reachable(self, core: RaftCore) -> bool:
        """Whether enough voters fetched lately for a successor to be elected at all; if not,
        lingering for one would only hold the stop up for nothing."""
        now = monotonic_ms()
        recent = sum(
            1
            for voter in core.describe().voters
            if voter.replica_id != self.node_id
            and voter.last_fetch_ms is not None
            and now - voter.last_fetch_ms < self.settings.raft.fetch_timeout_ms
        )
        return recent + 1 >= core.majority

    async def _linger(self, epoch: int, committed: int) -> None:
        """Keep answering after resigning until a successor leads and has committed.

        The successor needs votes and then fetches from a majority. With only the other
        follower to give them, a handover waits on that follower, which may have been
        restarted a moment ago and still be reconnecting; this node is caught up and
        connected, so staying a few round trips longer keeps the handover at a few
        milliseconds. The high watermark passing ``committed`` in a newer epoch means the
        successor's epoch start is committed. Bounded by twice the fetch timeout, the time the
        core holds back from campaigning after resigning to shut down.
        """
        deadline = time.monotonic() + 2 * self.settings.raft.fetch_timeout_ms / 1000
        while self.running:
            core = self.core
            if (
                core.epoch > epoch
                and core.leader_id not in (None, self.node_id)
                and core.high_watermark > committed
            ):
                log.info("node %d handed over to node %s", self.node_id, core.leader_id)
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                log.warning("node %d: no successor committed in time; stopping", self.node_id)
                return
            self._progress.clear()
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancel of
            # the stop that lands as progress is made, and this loop would carry on.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._progress.wait()

    # ------------------------------------------------------------------------ inbound

    @property
    def refused_peers(self) -> Mapping[int, int]:
        """The peers whose connection was refused or closed by their end on this node's last
        call to them (how a killed process looks to the stream transport), with when, in
        monotonic milliseconds. A peer leaves it by answering a call or making one. A Kafka
        listener reads it to stop naming a controller that died."""
        return dict(self._refused)

    def heard_from(self, peer_id: int) -> None:
        """A peer just showed it is up: the link to it may stop backing off and reconnect."""
        self._refused.pop(peer_id, None)
        if self._channel is not None and self.running:
            self._channel.heard_from(peer_id)

    async def handle_request(self, sender: int, request: Request) -> Response:
        """Step an inbound request and wait for the core's answer to it (see
        :meth:`submit_request`, which this awaits)."""
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()

        def answer(outcome: Response | BaseException) -> None:
            if future.done():
                return
            if isinstance(outcome, BaseException):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

        withdraw = self.submit_request(sender, request, answer)
        try:
            response = await future
        except asyncio.CancelledError:
            withdraw()
            raise
        if isinstance(response, FetchSnapshotResponse) and response.chunk_length:
            response = await self._fill_snapshot_chunk(response)
        return response

    def submit_request(self, sender: int, request: Request, answer: Answer) -> Callable[[], None]:
        """Step an inbound request; ``answer`` gets the core's response, or why none will
        come. Returns a function that withdraws the request (its caller went away).

        ``answer`` is called on the event loop from the driver as it sends the Ready holding
        the response, before that Ready's disk work, so a transport that writes the answer
        in it has it on the wire while the leader's fsync runs. A FetchSnapshot response's
        chunk is not read yet (``chunk_length`` set, no data): :meth:`handle_request` reads it.

        One call per (peer, kind) waits at a time: a peer that asks again has given up on the
        earlier call, and the core answers only the latest (a re-sent Fetch replaces the one
        it parked). Raises ``NodeStoppedError`` when the node is not running.
        """
        if not self.running:
            raise NodeStoppedError(f"node {self.node_id} is not running")
        self._refused.pop(sender, None)
        if self._channel is not None:
            self._channel.heard_from(sender)
        key = (sender, type(request))
        previous = self._waiters.pop(key, None)
        if previous is not None:
            previous.finish(NodeStoppedError("superseded by a newer request"))
        waiter = _Waiter(request, answer)
        raft = self.settings.raft
        timeout_s = (raft.request_timeout_ms + raft.fetch_max_wait_ms) / 1000
        waiter.timer = asyncio.get_running_loop().call_later(
            timeout_s, self._expire, key, waiter, timeout_s
        )
        self._waiters[key] = waiter

        def withdraw() -> None:
            self._drop_waiter(key, waiter)
            waiter.answer = None
            if waiter.timer is not None:
                waiter.timer.cancel()

        # A core that fails on this input fails every waiter, this one included.
        with contextlib.suppress(NodeStoppedError):
            self._step(sender, request)
        return withdraw

    def _drop_waiter(self, key: tuple[int, type[Request]], waiter: _Waiter) -> None:
        if self._waiters.get(key) is waiter:
            del self._waiters[key]

    def _expire(self, key: tuple[int, type[Request]], waiter: _Waiter, timeout_s: float) -> None:
        self._drop_waiter(key, waiter)
        waiter.timer = None
        waiter.finish(TimeoutError(f"no answer within {timeout_s:g} s"))

    async def _fill_snapshot_chunk(self, response: FetchSnapshotResponse) -> FetchSnapshotResponse:
        disk = self._disk
        try:
            if disk is None:
                raise SnapshotError("the node stopped")
            data = await asyncio.to_thread(
                disk.read_snapshot_chunk,
                response.snapshot_id,
                response.position,
                response.chunk_length,
            )
        except (OSError, SnapshotError) as error:
            log.warning("node %d: cannot serve snapshot chunk: %s", self.node_id, error)
            return FetchSnapshotResponse(
                ErrorCode.SNAPSHOT_NOT_FOUND,
                response.epoch,
                response.leader_id,
                response.snapshot_id,
                response.position,
            )
        return FetchSnapshotResponse(
            response.error,
            response.epoch,
            response.leader_id,
            response.snapshot_id,
            response.position,
            response.size,
            len(data),
            data,
        )

    def _deliver_response(self, sender: int, response: Response) -> None:
        if self.running:
            with contextlib.suppress(NodeStoppedError):
                self._step(sender, response)

    def _step(self, sender: int, message: Message) -> None:
        try:
            self.core.step(sender, message, monotonic_ms())
        except Exception as error:
            self._fail(error)
            raise NodeStoppedError(f"node {self.node_id} failed: {error!r}") from error
        self._after_input()

    def _fail(self, error: Exception) -> None:
        """The core fails loudly on impossible transitions; a node that hit one must stop
        rather than guess, and an operator decides what to do with its directory."""
        log.error("node %d: stopping after a fatal error", self.node_id, exc_info=error)
        if self.failure is None:
            self.failure = error
        self._stopping = True
        self._wakeup.set()
        self._fail_waiters()
        self._app.state_changed()
        self._progress.set()

    def _after_input(self) -> None:
        core = self._core
        if core is not None:
            self._leadership.observe(core)
        self._app.state_changed()
        self._progress.set()
        self._wakeup.set()

    def wake(self) -> None:
        """The core got input from outside the node (a proposal): run the driver."""
        self._after_input()

    def describe_quorum(self) -> QuorumDescription:
        """The leader's view of every replica's progress, as DescribeQuorum reports it.

        The core keeps times on the monotonic clock; they are turned into wall-clock
        milliseconds here, where the clock is known. Raises ``NotLeaderError`` (naming the
        leader, if known) on a node that does not lead.
        """
        core = self.core
        if core.role is not Role.LEADER:
            raise NotLeaderError(core.leader_id, core.epoch)
        description = core.describe()
        wall_offset = time.time_ns() // 1_000_000 - monotonic_ms()

        def wall(value: int | None) -> int | None:
            return None if value is None else value + wall_offset

        def on_wall_clock(states: Sequence[ReplicaState]) -> tuple[ReplicaState, ...]:
            return tuple(
                dataclasses.replace(
                    state,
                    last_fetch_ms=wall(state.last_fetch_ms),
                    last_caught_up_ms=wall(state.last_caught_up_ms),
                )
                for state in states
            )

        return dataclasses.replace(
            description,
            voters=on_wall_clock(description.voters),
            observers=on_wall_clock(description.observers),
        )

    # ------------------------------------------------------------------------ driver

    async def _run(self) -> None:
        core = self.core
        try:
            while not self._stopping:
                self._wakeup.clear()
                if self._snapshot_written is not None:
                    snapshot_id, size = self._snapshot_written
                    self._snapshot_written = None
                    core.snapshot_taken(snapshot_id, size)
                now = monotonic_ms()
                if now >= core.next_deadline_ms():
                    core.tick(now)
                    self._leadership.observe(core)
                    self._app.state_changed()
                    self._progress.set()
                ready = core.ready()
                if ready is None:
                    self._idle.set()
                    delay_ms = core.next_deadline_ms() - monotonic_ms()
                    if delay_ms > 0:
                        await self._wakeup.wait(delay_ms / 1000)
                    continue
                await self._execute(core, ready)
                if ready.commit_backlog:
                    # The state machine is catching up on a long run of committed records:
                    # one turn for the transports' reads (fetches, votes) between slices, so
                    # a node replaying its log still answers as leader or voter.
                    await asyncio.sleep(0)
        except Exception as error:
            self._fail(error)

    async def _execute(self, core: RaftCore, ready: Ready) -> None:
        disk = self._disk
        assert disk is not None
        self._log_rejected(ready)
        self._send(ready.messages)
        if ready.needs_persist():
            placement = self._write_placement
            if placement.inline(ready):
                if ready.messages:
                    # One turn for whatever the sends woke (a gRPC handler's answer) to go
                    # out before the loop blocks on the disk.
                    await asyncio.sleep(0)
                elapsed_ms = _timed_persist(disk, ready)
            else:
                elapsed_ms = await asyncio.to_thread(_timed_persist, disk, ready)
            placement.observe(elapsed_ms)
        self.written_offset = ready.log_end_offset
        self._send(ready.messages_after_persist)
        app = self._app
        if ready.loaded_snapshot is not None:
            await self._load_snapshot(disk, ready.loaded_snapshot)
            self._applied_offset = ready.loaded_snapshot.end_offset
        if ready.committed:
            app.commit(ready.committed)
            self._applied_offset = ready.committed[-1].next_offset
        if ready.leader_change is not None:
            app.leader_change(ready.leader_change)
        core.advance(ready, monotonic_ms())
        self._app.state_changed()
        self._voters_progressed(core)
        self._progress.set()
        self._maybe_snapshot(core, disk)

    async def _load_snapshot(self, disk: NodeDisk, snapshot_id: SnapshotId) -> None:
        """Read, decode and build the snapshot's state on a worker thread, then install it here.

        A large snapshot (hundreds of thousands of records) takes seconds to decode and build;
        on the loop that held every fetch and vote answer for as long, and followers timed out
        on their leader. The build is pure Python, so the worker and the loop share the
        interpreter, but the loop takes it back every switch interval (5 ms) and keeps
        answering. The driver waits here like it waits for a write: the core's contract (the
        load completes before ``advance``) holds, and inputs that arrive meanwhile queue up
        for the core as they do during any other wait.
        """
        app = self._app
        install = await asyncio.to_thread(
            build_snapshot_state,
            lambda: app.prepare_snapshot(disk.directory.read_snapshot(snapshot_id)),
        )
        install()

    def _log_rejected(self, ready: Ready) -> None:
        """One line per peer message the core refused, within each sender's budget."""
        for rejected in ready.rejected:
            self._refusals.refused(
                rejected.sender,
                type(rejected.message).__name__,
                f"{rejected.error.name}: {rejected.reason}",
            )

    def _maybe_snapshot(self, core: RaftCore, disk: NodeDisk) -> None:
        """Start a snapshot when the application wants one and none is being written.

        Serializing a large image takes seconds (about 3 s at a million partitions). Done on
        the driver, it would stop the node answering fetches for that long and a leader would
        lose its epoch; so the application captures its state here and the records are made
        and written on a worker thread while the node goes on.
        """
        if self._snapshot_task is not None or self._stopping:
            return
        work = self._app.snapshot_due()
        if work is None:
            return
        snapshot_id = snapshot_id_for(core.log, core.high_watermark, self._applied_offset)
        if snapshot_id is None:
            return
        if disk.directory.snapshot_path(snapshot_id).exists():
            return
        membership = core.membership_at(snapshot_id.end_offset)
        kept = membership if membership.kraft_version >= KRAFT_VERSION_DYNAMIC else None
        task = asyncio.create_task(self._write_snapshot(disk, snapshot_id, work, kept))
        self._snapshot_task = task

    async def _write_snapshot(
        self,
        disk: NodeDisk,
        snapshot_id: SnapshotId,
        work: SnapshotWork,
        membership: Membership | None = None,
    ) -> None:
        try:
            size = await asyncio.to_thread(
                lambda: disk.write_snapshot(snapshot_id, work(), membership)
            )
        except Exception as error:
            # A snapshot is an optimization: the log still holds everything. Say so loudly
            # and let the next trigger try again.
            log.error("node %d: snapshot %s failed: %s", self.node_id, snapshot_id, error)
        else:
            log.info("node %d: took snapshot %s", self.node_id, snapshot_id.file_stem())
            self._snapshot_written = (snapshot_id, size)
            self._wakeup.set()
        finally:
            self._snapshot_task = None

    def _send(self, outbound: Sequence[Outbound]) -> None:
        channel = self._channel
        assert channel is not None
        for item in outbound:
            message = item.message
            if isinstance(message, Request):
                call = asyncio.create_task(self._call(channel, item.destination, message))
                self._calls.add(call)
                call.add_done_callback(self._calls.discard)
                continue
            key = (item.destination, RESPONSE_TO_REQUEST[type(message)])
            pending = self._waiters.get(key)
            if pending is None or not answers(pending.request, message):
                # The answer to a superseded request (a pre-vote the candidate's real vote
                # overtook before the answer went out): its caller was already told so.
                continue
            del self._waiters[key]
            pending.finish(message)

    async def _call(self, channel: RaftChannel, destination: int, request: Request) -> None:
        sent_ms = monotonic_ms()
        peer_down = False
        try:
            response = await channel.call(destination, request)
        except PeerDownError:
            response, peer_down = None, True
            self._refused[destination] = monotonic_ms()
        if response is not None:
            self._refused.pop(destination, None)
        if isinstance(request, FetchRequest) and isinstance(response, FetchResponse):
            self.fetch_round_trips.observe(monotonic_ms() - sent_ms, request, response)
        if response is not None:
            self._deliver_response(destination, response)
        elif self.running:
            # Told at once, the core resends a failed fetch after its short retry backoff
            # instead of waiting out the whole fetch resend time.
            try:
                self.core.unreachable(destination, request, monotonic_ms(), peer_down=peer_down)
            except NodeStoppedError:
                return
            self._after_input()

    def _fail_waiters(self) -> None:
        waiters, self._waiters = self._waiters, {}
        for waiter in waiters.values():
            waiter.finish(NodeStoppedError(f"node {self.node_id} stopped"))

    # ------------------------------------------------------------------------ membership

    async def _starting_membership(self, disk: NodeDisk, static: Mapping[int, str]) -> Membership:
        """Where the log starts: kept on disk, static, or asked of the bootstrap servers."""
        directory = disk.directory
        found = await asyncio.to_thread(
            starting_membership, directory.partition_dir, directory.latest_snapshot, static
        )
        if found is not None:
            return found
        discovered = await discover_membership(
            self.settings.bootstrap_servers,
            directory.cluster_id,
            self.settings.raft.fetch_timeout_ms * 20 / 1000,
            tls=self.settings.bootstrap_tls,
        )
        log.info(
            "node %d: learned the voters from the bootstrap servers: %s",
            self.node_id,
            ", ".join(str(voter.key) for voter in discovered.voters),
        )
        return discovered

    @property
    def membership(self) -> Membership:
        """This node's kraft.version and voter set (the latest in its log, committed or not)."""
        core = self.core
        return Membership(core.kraft_version, core.voter_set)

    def _voters_progressed(self, core: RaftCore) -> None:
        """After each Ready: finish voter changes that committed, and dial new voters."""
        self._voter_changes.progressed(core)
        addresses = voter_addresses(core.voter_set, self._voter_addresses)
        if addresses == self._voter_addresses or self._disk is None:
            return
        log.info(
            "node %d: dialling the voters at %s",
            self.node_id,
            ", ".join(f"{node}@{address}" for node, address in sorted(addresses.items())),
        )
        if self._channel is not None:
            self._retired_channels.append(self._channel)
        self._voter_addresses = addresses
        self._channel = self._connect(
            self.node_id,
            self._disk.directory.cluster_id,
            addresses,
            self.settings.raft.request_timeout_ms,
        )

    async def add_voter(self, voter: Voter, timeout_ms: int) -> VoterChangeResult:
        """AddRaftVoter: answered once the new VotersRecord commits (see ``RaftCore``)."""
        return await self._change_voters(lambda core, now: core.add_voter(voter, now), timeout_ms)

    async def remove_voter(self, key: ReplicaKey, timeout_ms: int) -> VoterChangeResult:
        return await self._change_voters(lambda core, now: core.remove_voter(key, now), timeout_ms)

    async def update_voter(self, voter: Voter, timeout_ms: int) -> VoterChangeResult:
        return await self._change_voters(
            lambda core, now: core.update_voter(voter, now), timeout_ms
        )

    async def upgrade_to_dynamic(
        self, timeout_ms: int, *, validate_only: bool = False
    ) -> VoterChangeResult:
        """kraft.version 0 -> 1: the static voters, dialled where this node dials them, become
        the first VotersRecord (see ``RaftCore.upgrade_to_dynamic``)."""
        endpoints = {}
        for node_id, address in self._voter_addresses.items():
            try:
                endpoints[node_id] = (controller_endpoint(address),)
            except ValueError:
                continue
        return await self._change_voters(
            lambda core, now: core.upgrade_to_dynamic(endpoints, now, validate_only=validate_only),
            timeout_ms,
        )

    async def _change_voters(
        self, change: Callable[[RaftCore, int], VoterChangeResult], timeout_ms: int
    ) -> VoterChangeResult:
        if not self.running:
            raise NodeStoppedError(f"node {self.node_id} is not running")
        result = change(self.core, monotonic_ms())
        if result.error is not ErrorCode.NONE or result.offset is None:
            return result
        appended_ms = monotonic_ms()
        waiter = self._voter_changes.wait_for(result)
        self.wake()
        try:
            done = await asyncio.wait_for(asyncio.shield(waiter), timeout_ms / 1000)
        except TimeoutError:
            return timed_out(timeout_ms)
        if done.error is ErrorCode.NONE:
            log.info(
                "node %d: voters now %s (kraft.version %d), committed %d ms after the "
                "change was appended",
                self.node_id,
                ", ".join(str(voter.key) for voter in self.core.voter_set),
                self.core.kraft_version,
                monotonic_ms() - appended_ms,
            )
        return done
