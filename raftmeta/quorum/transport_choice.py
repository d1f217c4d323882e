"""Which transport a node's calls take, from ``controller.quorum.transport`` and its TLS
settings: the one place a composition root (a controller, a broker's observer, a benchmark
node) turns configuration into a :class:`~raftmeta.quorum.transport.Connect` and the Raft
stream listener's TLS context, so that every root secures both transports the same way.
"""

from __future__ import annotations

import ssl

from raftmeta.quorum.peers import Peers
from raftmeta.quorum.settings import GRPC, STREAM
from raftmeta.quorum.stream.peers import StreamPeers
from raftmeta.quorum.transport import Connect
from raftmeta.security.credentials import channel_credentials
from raftmeta.security.ssl_contexts import client_ssl_context, server_ssl_context
from raftmeta.security.tls import TlsSettings

TRANSPORTS = (GRPC, STREAM)


def node_connect(transport: str, tls: TlsSettings | None) -> Connect:
    """The ``Connect`` for ``transport`` (``grpc`` or ``stream``); with ``tls`` the calls
    present the node's certificate and check the peer's against the truststore. Raises
    ``ConfigError`` for unreadable TLS files and ``ValueError`` for an unknown transport."""
    credentials = None if tls is None else channel_credentials(tls)
    if transport == GRPC:
        return Peers.over_tls(credentials)
    if transport == STREAM:
        context = None if tls is None else client_ssl_context(tls)
        return StreamPeers.connector(credentials, context)
    raise ValueError(f"unknown Raft transport {transport!r}: expected grpc or stream")


def stream_server_ssl(tls: TlsSettings | None) -> ssl.SSLContext | None:
    """The Raft stream listener's TLS context for a listener secured by ``tls`` (None:
    plaintext). Raises ``ConfigError`` as the gRPC server credentials do."""
    return None if tls is None else server_ssl_context(tls)
