"""A node's outbound Raft calls over the stream: the client side of the stream transport.

One long-lived connection per peer carries every call to it, many at once. The peer's RAFT
listener is not configured here: the node asks the peer itself, with the gRPC
``DescribeEndpoints`` call on the address it already has, once for each new connection (a
restarted peer may listen on a new port). A peer that serves no RAFT listener, or an older
one without the call, is reached over gRPC as before, and asked again after
:data:`FALLBACK_RECHECK_S`; so a quorum of mixed configurations or versions keeps working.

A connection that breaks, or on which a call goes unanswered for its whole timeout (it may
have died without a word), fails the calls waiting on it (the core resends on its own timers)
and is opened again on the next call, after a backoff that starts at 50 ms and doubles to
500 ms, as the gRPC channels' reconnect backoff does. Election messages wait for a
reconnecting peer up to their timeout, trying again after each backoff, as they wait for a
gRPC channel to become ready; fetches fail at once, and the core retries them after its own
short backoff. A call that finds the connection closed by the peer, or the peer refusing a new
one, raises :class:`~raftmeta.quorum.transport.PeerDownError` rather than returning nothing:
that is how a process killed outright looks, and its followers need not wait out the fetch
timeout to elect another leader. A call from the peer ends the backoff
(:meth:`StreamPeers.heard_from`): a voter restarted while this node had no need of it is then
reached at once when it becomes the leader or the first successor of a handover, not up to a
backoff later.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Mapping
from enum import Enum

import grpc

from raftmeta.quorum.peers import Peers, decode_answer, encode_request
from raftmeta.quorum.stream.connection import StreamConnection
from raftmeta.quorum.stream.frames import PB_RESPONSE, REQUEST_KIND, Status
from raftmeta.quorum.transport import Connect, PeerDownError
from raftmeta.raft.messages import FetchRequest, FetchSnapshotRequest, Request, Response

log = logging.getLogger(__name__)

CLOSE_WAIT_S = 2.0
"""How long closing a link waits for its tasks to end after cancelling them; a stop must not
hang on one that does not."""

FALLBACK_RECHECK_S = 10.0
"""How long a peer without a usable RAFT listener is reached over gRPC before it is asked
again (it may have been restarted with one)."""
MIN_BACKOFF_S = 0.05
MAX_BACKOFF_S = 0.5
KEEP_OPEN_CHECK_S = 0.1
"""How often a link looks whether its connection needs opening again (each attempt is still
paced by the reconnect backoff)."""


class _Route(Enum):
    GRPC = "grpc"
    """Call this peer over gRPC."""
    NONE = "none"
    """The peer cannot be reached now."""


class _PeerLink:
    """The connection to one peer, opened on demand, one opening at a time."""

    def __init__(self, owner: StreamPeers, peer_id: int) -> None:
        self._owner = owner
        self.peer_id = peer_id
        self.connection: StreamConnection | None = None
        self._opening: asyncio.Task[StreamConnection | _Route] | None = None
        self._grpc_until = 0.0
        self._next_attempt = 0.0
        self._backoff_s = MIN_BACKOFF_S
        self._peer_is_up = asyncio.Event()
        self.down = False
        """The last connection broke from the peer's end, or opening one failed: the peer
        is likely not running (cleared when a connection opens)."""
        self._keeper: asyncio.Task[None] | None = None

    def keep_open(self) -> None:
        """Open the connection now and again whenever it breaks, ahead of any call.

        Followers call nobody but their leader, so without this a voter restarted a while ago
        is first dialled by the others when an election or a new leader needs it, and the
        ``DescribeEndpoints`` call and TCP connect then sit on the critical path of the
        handover or failover (tens of milliseconds on a busy host).
        """
        if self._keeper is None:
            self._keeper = asyncio.create_task(
                self._keep_open(), name=f"raft-stream-keep-{self.peer_id}"
            )

    async def _keep_open(self) -> None:
        timeout_s = self._owner.request_timeout_s
        while True:
            connection = self.connection
            if (connection is None or connection.closed) and time.monotonic() >= self._grpc_until:
                # Not waiting for ready: an attempt the backoff does not allow yet is skipped.
                await self.route(timeout_s, wait_for_ready=False)
            await asyncio.sleep(KEEP_OPEN_CHECK_S)

    def heard_from(self) -> None:
        """The peer called this node: it is up, so the backoff is over."""
        connection = self.connection
        if connection is not None and not connection.closed:
            return
        self._next_attempt = 0.0
        self._backoff_s = MIN_BACKOFF_S
        self._peer_is_up.set()

    def use_grpc_for_now(self) -> None:
        self._grpc_until = time.monotonic() + FALLBACK_RECHECK_S

    def grpc_failed(self) -> None:
        """A gRPC call failed: the peer may have restarted, with a RAFT listener now."""
        self._grpc_until = 0.0

    async def route(self, timeout_s: float, wait_for_ready: bool) -> StreamConnection | _Route:
        """The open connection, or where else to send (see :class:`_Route`)."""
        deadline = time.monotonic() + timeout_s
        while True:
            connection = self.connection
            if connection is not None and not connection.closed:
                return connection
            now = time.monotonic()
            if now < self._grpc_until:
                return _Route.GRPC
            if self._opening is None:
                if now < self._next_attempt and not wait_for_ready:
                    return _Route.NONE
                self._opening = asyncio.create_task(self._open(self._next_attempt - now))
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return _Route.NONE
            try:
                # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a cancel
                # that lands as the opening completes, and the keeper's loop would never end.
                async with asyncio.timeout(remaining):
                    outcome = await asyncio.shield(self._opening)
            except TimeoutError:
                return _Route.NONE
            if isinstance(outcome, StreamConnection) or outcome is _Route.GRPC:
                return outcome
            if not wait_for_ready:
                return _Route.NONE

    async def _open(self, delay_s: float) -> StreamConnection | _Route:
        owner = self._owner
        try:
            if delay_s > 0:
                self._peer_is_up.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay_s):
                        await self._peer_is_up.wait()
            try:
                # One attempt, paced by this link's backoff: an election message waits for the
                # peer by trying again (see route), not inside a gRPC channel's own backoff,
                # which nothing could cut short when the peer is heard from again.
                endpoint = await owner.grpc.describe_endpoints(
                    self.peer_id, owner.request_timeout_s, wait_for_ready=False
                )
            except ConnectionError as error:
                log.debug("node %d: cannot ask node %d: %s", owner.local_id, self.peer_id, error)
                self.down = True
                self._failed()
                return _Route.NONE
            if endpoint is None:
                log.info(
                    "node %d: node %d serves no Raft stream; reaching it over gRPC",
                    owner.local_id,
                    self.peer_id,
                )
                self.use_grpc_for_now()
                return _Route.GRPC
            host, port = endpoint
            try:
                connection = await StreamConnection.open(
                    host,
                    port,
                    name=f"node {self.peer_id} at {host}:{port}",
                    ssl_context=owner.ssl_context,
                    timeout_s=owner.request_timeout_s,
                )
            except (OSError, ssl.SSLError, TimeoutError) as error:
                # The peer answers on gRPC but its stream cannot be reached (a firewall, a
                # certificate it does not accept): keep the quorum working over gRPC.
                log.warning(
                    "node %d: cannot open the Raft stream to node %d at %s:%d (%s); "
                    "reaching it over gRPC",
                    owner.local_id,
                    self.peer_id,
                    host,
                    port,
                    error or type(error).__name__,
                )
                self._failed()
                self.use_grpc_for_now()
                return _Route.GRPC
            log.info(
                "node %d: Raft stream to node %d at %s:%d open",
                owner.local_id,
                self.peer_id,
                host,
                port,
            )
            self._backoff_s = MIN_BACKOFF_S
            self._next_attempt = 0.0
            self.down = False
            self.connection = connection
            return connection
        finally:
            self._opening = None

    def _failed(self) -> None:
        self._next_attempt = time.monotonic() + self._backoff_s
        self._backoff_s = min(self._backoff_s * 2, MAX_BACKOFF_S)

    async def drop(self, connection: StreamConnection) -> None:
        """Close ``connection`` if it is still this link's; the next call opens another."""
        if self.connection is connection:
            self.connection = None
        await connection.close()

    async def close(self) -> None:
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.cancel()
            await asyncio.wait({keeper}, timeout=CLOSE_WAIT_S)
        opening = self._opening
        if opening is not None:
            opening.cancel()
            await asyncio.wait({opening}, timeout=CLOSE_WAIT_S)
        if self.connection is not None:
            await self.connection.close()
            self.connection = None


class StreamPeers:
    """A :class:`~raftmeta.quorum.transport.RaftChannel` over the Raft stream, with gRPC for
    the peers that serve none; build its :class:`~raftmeta.quorum.transport.Connect` with
    :meth:`connector`."""

    def __init__(
        self,
        local_id: int,
        cluster_id: str,
        addresses: Mapping[int, str],
        request_timeout_ms: int,
        *,
        grpc_credentials: grpc.ChannelCredentials | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.local_id = local_id
        self.cluster_id = cluster_id
        self.request_timeout_s = request_timeout_ms / 1000
        self.ssl_context = ssl_context
        self.grpc = Peers(
            local_id, cluster_id, addresses, request_timeout_ms, credentials=grpc_credentials
        )
        self._links = {
            peer_id: _PeerLink(self, peer_id) for peer_id in addresses if peer_id != local_id
        }
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass  # built outside a loop (a test): links open on their first call
        else:
            for link in self._links.values():
                link.keep_open()

    @classmethod
    def connector(
        cls,
        grpc_credentials: grpc.ChannelCredentials | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> Connect:
        """A ``Connect`` for a node: plaintext when both are None, else TLS on both paths
        (the same certificates, see :mod:`raftmeta.security.ssl_contexts`)."""

        def connect(
            local_id: int, cluster_id: str, addresses: Mapping[int, str], request_timeout_ms: int
        ) -> StreamPeers:
            return cls(
                local_id,
                cluster_id,
                addresses,
                request_timeout_ms,
                grpc_credentials=grpc_credentials,
                ssl_context=ssl_context,
            )

        return connect

    def heard_from(self, peer_id: int) -> None:
        link = self._links.get(peer_id)
        if link is not None:
            link.heard_from()

    async def call(self, destination: int, request: Request) -> Response | None:
        """Send ``request`` and return the answer; a failure is logged and dropped, and a
        closed or refused connection raised as ``PeerDownError``."""
        link = self._links.get(destination)
        if link is None:
            return await self.grpc.call(destination, request)
        timeout_s = self.request_timeout_s
        wait_for_ready = True
        if isinstance(request, FetchRequest):
            timeout_s += request.max_wait_ms / 1000
            wait_for_ready = False
        elif isinstance(request, FetchSnapshotRequest):
            wait_for_ready = False
        route = await link.route(self.request_timeout_s, wait_for_ready)
        if route is _Route.NONE:
            if link.down:
                raise PeerDownError(f"node {destination} is not accepting connections")
            return None
        if route is _Route.GRPC:
            response = await self.grpc.call(destination, request)
            if response is None:
                link.grpc_failed()
            return response
        message = encode_request(self.local_id, self.cluster_id, destination, request)
        if message is None:
            return None
        kind = REQUEST_KIND[type(request)]
        try:
            frame = await route.call(kind, message.SerializeToString(), timeout_s)
        except TimeoutError:
            # A peer that answers nothing within a whole timeout (a parked fetch is answered
            # by its max wait) may sit behind a connection that died silently: open anew.
            log.debug(
                "node %d: %s to node %d timed out; reconnecting",
                self.local_id,
                type(request).__name__,
                destination,
            )
            await link.drop(route)
            return None
        except ConnectionError as error:
            log.debug(
                "node %d: %s to node %d failed: %s",
                self.local_id,
                type(request).__name__,
                destination,
                error,
            )
            link.down = True
            raise PeerDownError(str(error)) from None
        if frame.status is Status.NO_ANSWER:
            log.debug(
                "node %d: node %d gave no answer to %s: %s",
                self.local_id,
                destination,
                type(request).__name__,
                frame.body[:300].decode(errors="replace"),
            )
            return None
        try:
            answer = PB_RESPONSE[kind].FromString(frame.body)
        except Exception as error:  # protobuf's DecodeError
            log.warning(
                "node %d: undecodable %s from node %d: %s",
                self.local_id,
                kind.name,
                destination,
                error,
            )
            return None
        return decode_answer(self.local_id, destination, answer, request)

    async def close(self) -> None:
        for link in self._links.values():
            await link.close()
        await self.grpc.close()
