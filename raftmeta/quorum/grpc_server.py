"""``RaftServer``: the one gRPC server a composition root runs beside a ``RaftNode``.

The server carries the node's ``Raft`` service and whatever services the composition root
registers (a controller's Admin and BrokerLifecycle), so one port serves them all. The node
never sees it: the root builds the server, starts it once the node's directory is open, and
stops it after the node has stopped, so a call that arrives in between is answered
UNAVAILABLE (peers retry) rather than refused at the socket.

:func:`serve_raft` is the usual way in: open the node's directory, then serve on the node's
configured listener, which is what each composition root (the controller node, the broker,
the test harness, the benchmark nodes) does before ``RaftNode.start``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from raftmeta.quorum.identity import IdentityRule
from raftmeta.quorum.node import RaftNode
from raftmeta.quorum.peers import SERVER_OPTIONS
from raftmeta.quorum.raft_service import RaftService, add_raft_service
from raftmeta.quorum.transport import RaftEndpoint

log = logging.getLogger(__name__)

PLAINTEXT_WARNING = (
    "node %d: the Raft listener on %s:%d is plaintext and unauthenticated: any host that can "
    "reach this port can speak for a voter, so it must not be reachable by untrusted hosts"
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
    ) -> None:
        """``credentials`` None serves plaintext; ``identity`` is the Raft calls' rule of
        :mod:`raftmeta.quorum.identity` (off when None)."""
        self._endpoint = endpoint
        self._services = tuple(services)
        self._credentials = credentials
        self._identity = identity
        self._server: Any = None
        self.port: int | None = None
        """The port bound, once :meth:`start` returned."""

    async def start(self, host: str, port: int) -> int:
        """Bind ``host:port`` (0: a port the OS chooses) and serve; returns the port bound.

        Raises ``RuntimeError`` when the port cannot be bound (one in use, say)."""
        if self._server is not None:
            raise RuntimeError("the server is already running")
        # No SO_REUSEPORT: a second node on the same port must fail to start, not share it.
        server = grpc.aio.server(options=(*SERVER_OPTIONS, ("grpc.so_reuseport", 0)))
        add_raft_service(RaftService(self._endpoint, self._identity), server)
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
        if self._credentials is None:  # a plaintext Raft listener: say so once per start
            log.warning(PLAINTEXT_WARNING, self._endpoint.node_id, host, bound)
        return bound

    async def stop(self) -> None:
        """Stop at once: calls still open are cancelled (their callers retry elsewhere)."""
        server, self._server = self._server, None
        if server is not None:
            await server.stop(grace=None)


async def serve_raft(
    node: RaftNode,
    services: Sequence[Register] = (),
    *,
    credentials: grpc.ServerCredentials | None = None,
    identity: IdentityRule | None = None,
) -> RaftServer:
    """Open ``node``'s directory and serve it, with ``services``, on the node's configured
    listener (``settings.listen_host`` and ``listen_port``); returns the running server.
    With ``credentials`` the listener speaks TLS (see :class:`RaftServer`).

    Calls that arrive before ``node.start`` are answered UNAVAILABLE. Raises the storage
    layer's error for a bad directory and ``RuntimeError`` for a port that cannot be bound,
    in which case the directory is closed again. Stop the server after the node.
    """
    await node.open()
    server = RaftServer(node, services, credentials=credentials, identity=identity)
    try:
        await server.start(node.settings.listen_host, node.settings.listen_port)
    except BaseException:
        await node.stop(graceful=False)
        raise
    return server
