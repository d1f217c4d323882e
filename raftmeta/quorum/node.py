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

Here are the node's life cycle and driver; beside it, what they use: ``application``,
``inbound`` (calls awaiting the core's answer), ``node_snapshots``, ``node_clock``,
``node_voters`` and ``leadership_log``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence

from raftmeta.errors import ErrorCode
from raftmeta.quorum.application import (
    Application,
    NoApplication,
    SnapshotInstall,
    SnapshotWork,
    build_snapshot_state,
)
from raftmeta.quorum.disk import NodeDisk
from raftmeta.quorum.fetch_latency import FetchRoundTrips
from raftmeta.quorum.inbound import (
    RESPONSE_TO_REQUEST,
    Answer,
    InboundCalls,
    NodeStoppedError,
    answers,
)
from raftmeta.quorum.leadership_log import LeadershipLog
from raftmeta.quorum.membership import (
    VoterChangeWaits,
    timed_out,
    voter_addresses,
)
from raftmeta.quorum.node_clock import Wakeup, monotonic_ms, on_wall_clock
from raftmeta.quorum.node_snapshots import SnapshotTaking, fill_snapshot_chunk, load_snapshot
from raftmeta.quorum.node_voters import dialled_endpoints, resume_membership, successor_reachable
from raftmeta.quorum.refusals import RefusalLog
from raftmeta.quorum.settings import NodeSettings
from raftmeta.quorum.transport import Connect, PeerDownError, RaftChannel
from raftmeta.quorum.write_placement import WritePlacement, persist
from raftmeta.raft.core import NotLeaderError, QuorumDescription, RaftCore
from raftmeta.raft.membership import Membership
from raftmeta.raft.messages import (
    FetchRequest,
    FetchResponse,
    FetchSnapshotResponse,
    Message,
    Request,
    Response,
)
from raftmeta.raft.ready import Outbound, Ready
from raftmeta.raft.roles import Role
from raftmeta.raft.voter_change import VoterChangeResult
from raftmeta.raft.voters import ReplicaKey, Voter
from raftmeta.storage.data_dir import MetadataDir

__all__ = [
    "RESPONSE_TO_REQUEST",
    "Answer",
    "Application",
    "NodeStoppedError",
    "RaftNode",
    "SnapshotInstall",
    "SnapshotWork",
    "answers",
    "build_snapshot_state",
    "monotonic_ms",
]

log = logging.getLogger(__name__)


class RaftNode:
    """A Raft node on ``settings.data_dir`` that reaches its peers through ``connect``.

    Life cycle: :meth:`open` (the directory; a transport's server may then hand requests in,
    answered as unavailable until the node runs), :meth:`start`, :meth:`stop`.
    """

    def __init__(self, settings: NodeSettings, connect: Connect) -> None:
        self.settings = settings
        self.node_id = settings.node_id
        self._connect = connect
        self._app: Application = NoApplication()
        self._disk: NodeDisk | None = None
        self._cluster_id: str | None = None
        self._core: RaftCore | None = None
        self._channel: RaftChannel | None = None
        self._voter_addresses: dict[int, str] = {}
        self._driver: asyncio.Task[None] | None = None
        self._wakeup = Wakeup()
        self._idle = asyncio.Event()
        self._progress = asyncio.Event()
        """Set whenever the core took input or a Ready was done: its state may have moved."""
        self._stopping = False
        self._inbound = InboundCalls()
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
        self._snapshots = SnapshotTaking(self.node_id, self._wakeup)
        self.failure: BaseException | None = None
        """Why the driver stopped on its own, if it did; the node is unusable after it."""
        self._refusals = RefusalLog(log, self.node_id)
        self._leadership = LeadershipLog(self.node_id)
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
        membership = await resume_membership(self.settings, disk, addresses)
        core = disk.new_core(membership, self.settings.raft, monotonic_ms(), random.Random())
        addresses = voter_addresses(core.voter_set, voter_addresses(membership.voters, addresses))
        latest = disk.directory.latest_snapshot
        self._applied_offset = core.log.start_offset
        self.written_offset = core.log.end_offset
        if latest is not None:
            await load_snapshot(self._app, disk, latest)
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
            handover_possible = successor_reachable(
                core, self.node_id, self.settings.raft.fetch_timeout_ms
            )
            epoch, committed = core.epoch, core.high_watermark
            self._idle.clear()
            core.resign(monotonic_ms())
            self._after_input()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2.0):
                    await self._idle.wait()
            if handover_possible:
                await self._linger(epoch, committed)
            if self._calls:
                await asyncio.wait(set(self._calls), timeout=1.0)
        self._stopping = True
        self._wakeup.set()
        if self._driver is not None:
            await self._driver
            self._driver = None
        await self._snapshots.finish()
        self._inbound.fail_all(self.node_id)
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
            response = await fill_snapshot_chunk(self._disk, response, self.node_id)
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
        raft = self.settings.raft
        timeout_s = (raft.request_timeout_ms + raft.fetch_max_wait_ms) / 1000
        withdraw = self._inbound.wait(sender, request, answer, timeout_s)
        # A core that fails on this input fails every waiter, this one included.
        with contextlib.suppress(NodeStoppedError):
            self._step(sender, request)
        return withdraw

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
        self._inbound.fail_all(self.node_id)
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
        return on_wall_clock(core.describe())

    # ------------------------------------------------------------------------ driver

    async def _run(self) -> None:
        core = self.core
        try:
            while not self._stopping:
                self._wakeup.clear()
                written = self._snapshots.take_written()
                if written is not None:
                    core.snapshot_taken(*written)
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
            await persist(disk, ready, self._write_placement)
        self.written_offset = ready.log_end_offset
        self._send(ready.messages_after_persist)
        app = self._app
        if ready.loaded_snapshot is not None:
            await load_snapshot(app, disk, ready.loaded_snapshot)
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

    def _log_rejected(self, ready: Ready) -> None:
        """One line per peer message the core refused, within each sender's budget."""
        for rejected in ready.rejected:
            self._refusals.refused(
                rejected.sender,
                type(rejected.message).__name__,
                f"{rejected.error.name}: {rejected.reason}",
            )

    def _maybe_snapshot(self, core: RaftCore, disk: NodeDisk) -> None:
        """Start a snapshot, written off the driver, when the application wants one."""
        if not self._stopping:
            self._snapshots.start_if_due(core, disk, self._app, self._applied_offset)

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
            self._inbound.answer(item.destination, message)

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

    # ------------------------------------------------------------------------ membership

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
        endpoints = dialled_endpoints(self._voter_addresses)
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
