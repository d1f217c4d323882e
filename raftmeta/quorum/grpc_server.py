"""``RaftServer``: the one gRPC server a composition root runs beside a ``RaftNode``.

The server carries the node's ``Raft`` service and whatever services the composition root
registers (a controller's Admin and BrokerLifecycle), so one port serves them all. The node
never sees it: the root builds the server, starts it once the node's directory is open, and
stops it after the node has stopped, so a call that arrives in between is answered
UNAVAILABLE (peers retry) rather than refused at the socket. When the node serves the Raft
stream, the server owns that listener too (started first, stopped with it), so that the
``DescribeEndpoints`` call on the gRPC port can name it from the first call.

:func:`serve_raft` is the usual way in: open the node's directory, then serve on the node's
configured listener, which is what each composition root (the controller node, the broker,
the test harness, the benchmark nodes) does before ``RaftNode.start``.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from raftmeta.quorum.edge import RaftEdge
from raftmeta.quorum.identity import IdentityRule, VoterChangeAccess
from raftmeta.quorum.node import RaftNode
from raftmeta.quorum.raft_service import BrokerIds, RaftService, add_raft_service
from raftmeta.quorum.stream.server import StreamServer
from raftmeta.quorum.transport import RaftEndpoint
from raftmeta.rpc.options import SERVER_OPTIONS

log = logging.getLogger(__name__)

PLAINTEXT_WARNING = (
    "node %d: the listener on %s:%d (Raft, and Admin and BrokerLifecycle on a controller) is "
    "plaintext and unauthenticated: any host that can reach it can speak for a voter, so it "
    "must not be reachable by untrusted hosts; set listener.security.protocol.map=CONTROLLER:SSL "
    "and ssl.client.auth=required to enforce peer identities"
)

Register = Callable[[Any], None]
"""Adds one more service to the ``grpc.aio`` server it is given, before the server starts."""


class RaftServer:
    """A ``grpc.aio`` server for one node's Raft service and the root's own services."""

    def __init__(
        self,
        endpoint: RaftEndpoint,
        services: Sequence[Register] = (),
        *,
        credentials: grpc.ServerCredentials | None = None,
        identity: IdentityRule | None = None,
        stream_ssl: ssl.SSLContext | None = None,
        access: VoterChangeAccess | None = None,
        broker_ids: BrokerIds | None = None,
    ) -> None:
        """``credentials`` None serves plaintext;
        ``identity`` is the Raft calls' rule of :mod:`raftmeta.quorum.identity` (off when
        None). ``stream_ssl`` is the TLS context
        of the Raft stream listener, when :meth:`start` is asked to serve one; it must be
        given exactly when ``credentials`` are (the same certificates, see
        :mod:`raftmeta.security.ssl_contexts`). ``access`` authorizes the voter changes
        (every caller may make them when None, as with no authorizer configured);
        ``broker_ids`` the registered brokers, whose ids may not become voters."""
        self._endpoint = endpoint
        self._access = access
        self._broker_ids = broker_ids
        self._stream_ssl = stream_ssl
        self._stream: StreamServer | None = None
        self._stream_advertised: tuple[str, int] | None = None
        self._services = tuple(services)
        self._credentials = credentials
        self._identity = identity
        self._server: Any = None
        self.port: int | None = None
        """The port bound, once :meth:`start` returned."""

    async def start(
        self,
        host: str,
        port: int,
        stream_listen: tuple[str, int] | None = None,
        stream_advertised: tuple[str, int] | None = None,
    ) -> int:
        """Bind ``host:port`` (0: a port the OS chooses) and serve; returns the port bound.
        With ``stream_listen`` (host, port) the node's Raft stream listener is served too,
        first, so that ``DescribeEndpoints`` names it from the first call; it names
        ``stream_advertised`` instead when given (``advertised.listeners``).

        Raises ``RuntimeError`` when a port cannot be bound (one in use, say)."""
        if self._server is not None:
            raise RuntimeError("the server is already running")
        self._stream_advertised = stream_advertised
        if stream_listen is not None:
            if (self._stream_ssl is None) != (self._credentials is None):
                # A plaintext stream beside a TLS listener would let anyone past its checks.
                raise ValueError("the Raft stream must be secured exactly when gRPC is")
            stream = StreamServer(
                RaftEdge(self._endpoint, self._identity), ssl_context=self._stream_ssl
            )
            await stream.start(*stream_listen)
            self._stream = stream
        try:
            return int(await self._start_grpc(self._endpoint, host, port))
        except BaseException:
            await self.stop()
            raise

    @property
    def stream(self) -> StreamServer | None:
        """The Raft stream listener, when one is served."""
        return self._stream

    def _stream_endpoint(self) -> tuple[str, int] | None:
        stream = self._stream
        if stream is None or stream.host is None or stream.port is None:
            return None
        if self._stream_advertised is not None:
            return self._stream_advertised
        return stream.host, stream.port

    async def _start_grpc(self, endpoint: RaftEndpoint, host: str, port: int) -> int:
        # No SO_REUSEPORT: a second node on the same port must fail to start, not share it.
        server = grpc.aio.server(options=(*SERVER_OPTIONS, ("grpc.so_reuseport", 0)))
        add_raft_service(
            RaftService(
                endpoint, self._identity, self._stream_endpoint, self._access, self._broker_ids
            ),
            server,
        )
        for register in self._services:
            register(server)
        address = f"{host}:{port}"
        if self._credentials is None:
            bound = int(server.add_insecure_port(address))
        else:
            bound = int(server.add_secure_port(address, self._credentials))
        await server.start()
        self._server = server
        self.port = bound
        if self._credentials is None:
            # Said once per start, and only once the port is really served: a node refused
            # for a bad directory or a taken port says that one thing only.
            log.warning(PLAINTEXT_WARNING, self._endpoint.node_id, host, bound)
            if self._stream is not None:
                log.warning(
                    "node %d: the Raft stream listener on %s:%s is plaintext and "
                    "unauthenticated too",
                    self._endpoint.node_id,
                    self._stream.host,
                    self._stream.port,
                )
        return bound

    async def stop(self) -> None:
        """Stop at once: calls still open are cancelled (their callers retry elsewhere)."""
        server, self._server = self._server, None
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.stop()
        if server is not None:
            await server.stop(grace=None)


async def serve_raft(
    node: RaftNode,
    services: Sequence[Register] = (),
    *,
    credentials: grpc.ServerCredentials | None = None,
    identity: IdentityRule | None = None,
    stream_ssl: ssl.SSLContext | None = None,
    access: VoterChangeAccess | None = None,
    broker_ids: BrokerIds | None = None,
) -> RaftServer:
    """Open ``node``'s directory and serve it, with ``services``, on the node's configured
    listener (``settings.listen_host`` and ``listen_port``), and its Raft stream on
    ``settings.stream_listen`` if set; returns the running server. With ``credentials``
    (and ``stream_ssl``) the listeners speak TLS (see :class:`RaftServer`).

    Calls that arrive before ``node.start`` are answered UNAVAILABLE. Raises the storage
    layer's error for a bad directory and ``RuntimeError`` for a port that cannot be bound,
    in which case the directory is closed again. Stop the server after the node.
    """
    await node.open()
    server = RaftServer(
        node,
        services,
        credentials=credentials,
        identity=identity,
        stream_ssl=stream_ssl,
        access=access,
        broker_ids=broker_ids,
    )
    settings = node.settings
    try:
        await server.start(
            settings.listen_host,
            settings.listen_port,
            settings.stream_listen,
            settings.stream_advertised,
        )
    except BaseException:
        await node.stop(graceful=False)
        raise
    return server
