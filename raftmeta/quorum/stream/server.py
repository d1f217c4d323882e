"""A node's RAFT listener: the server side of the stream transport.

Each connection is read frame by frame; every request is answered by its own task, so a
Fetch the leader parks does not hold up a Vote or a second peer's answer behind it, and the
answers go back in whatever order they are ready, under the request's correlation id.

A request passes :class:`~raftmeta.quorum.edge.RaftEdge`'s checks, the same as on the gRPC
listener; with TLS the caller is the certificate the connection's handshake presented. A
frame that breaks the framing (over the size cap, an unknown kind, a body that does not
decode, an answer where a request belongs) closes that connection with one WARNING line,
within the sender's budget; the listener and the node go on serving everyone else.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import ssl
from collections.abc import Iterable, Mapping
from typing import Any

from raftmeta.quorum import wire
from raftmeta.quorum.edge import EdgeAnswer, NoAnswer, RaftEdge
from raftmeta.quorum.stream.frames import (
    MAX_FRAME_BYTES,
    PB_REQUEST,
    Frame,
    FrameError,
    Kind,
    Status,
    encode_frame,
    read_frame,
)

log = logging.getLogger(__name__)


class TlsPeer:
    """A TLS connection's peer as :mod:`raftmeta.quorum.identity` asks for it: the shape of a
    grpc ``auth_context()``, holding the certificate the peer presented (if any)."""

    def __init__(self, ssl_object: ssl.SSLObject | None) -> None:
        der = None if ssl_object is None else ssl_object.getpeercert(binary_form=True)
        self._context: dict[str, list[bytes]] = {}
        if der:
            self._context["x509_pem_cert"] = [ssl.DER_cert_to_PEM_cert(der).encode("ascii")]

    def auth_context(self) -> Mapping[str, Iterable[bytes]]:
        return self._context


class StreamServer:
    """Serves one node's Raft requests as frames; ``ssl_context`` None is plaintext."""

    def __init__(
        self,
        edge: RaftEdge,
        *,
        ssl_context: ssl.SSLContext | None = None,
        max_frame_bytes: int = MAX_FRAME_BYTES,
    ) -> None:
        self._edge = edge
        self._ssl = ssl_context
        self._max_frame_bytes = max_frame_bytes
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.host: str | None = None
        self.port: int | None = None
        """The port bound, once :meth:`start` returned."""
        self.requests_answered = 0
        """Requests answered (by the core or refused at the edge), for tests and benchmarks."""

    async def start(self, host: str, port: int) -> int:
        """Bind ``host:port`` (0: a port the OS chooses) and serve; returns the port bound.
        Raises ``RuntimeError`` when it cannot be bound."""
        if self._server is not None:
            raise RuntimeError("the stream listener is already running")
        try:
            server = await asyncio.start_server(
                self._serve, host or None, port, ssl=self._ssl, reuse_address=True
            )
        except OSError as error:
            raise RuntimeError(f"cannot serve the Raft stream on {host}:{port}: {error}") from None
        self._server = server
        self.host = host
        self.port = int(server.sockets[0].getsockname()[1])
        return self.port

    async def stop(self) -> None:
        """Stop listening and drop every connection; callers reconnect or fall back."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for connection in list(self._connections):
            connection.cancel()
        if self._connections:
            await asyncio.wait(set(self._connections))
        with contextlib.suppress(Exception):
            await server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        peer = _peer_name(writer)
        calls: set[asyncio.Task[None]] = set()
        caller = TlsPeer(writer.get_extra_info("ssl_object"))
        try:
            while True:
                frame = await read_frame(reader, self._max_frame_bytes)
                if frame is None:
                    break
                message = _request_of(frame)
                if frame.kind is not Kind.FETCH_SNAPSHOT:
                    # Answered from the node's driver as it sends, without a task per call.
                    self._edge.answer_soon(
                        message, caller, functools.partial(self._reply, frame, writer)
                    )
                    continue
                call = asyncio.create_task(self._answer(frame, message, caller, writer))
                calls.add(call)
                call.add_done_callback(calls.discard)
        except FrameError as error:
            self._edge.refused(peer, "a Raft stream frame", f"{error}; connection closed")
        except (ConnectionError, ssl.SSLError, asyncio.CancelledError):
            pass
        finally:
            for call in list(calls):
                call.cancel()
            writer.close()
            # A stop() that cancels this task while it waits here must still let it end
            # cleanly: the Python 3.11 stream protocol reports a cancelled task as an error.
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()
            self._connections.discard(task)

    def _reply(
        self, frame: Frame, writer: asyncio.StreamWriter, outcome: EdgeAnswer | NoAnswer
    ) -> None:
        """Write the answer to ``frame`` now (the transport buffers what the socket does not
        take at once; a parked fetch's answer is small). Nothing is encoded for a connection
        already closing."""
        if writer.is_closing():
            return
        if isinstance(outcome, NoAnswer):
            data = encode_frame(frame.correlation, frame.kind, Status.NO_ANSWER, _line(outcome))
        else:
            body = outcome.response.SerializeToString()
            data = encode_frame(frame.correlation, frame.kind, Status.ANSWER, body)
        self.requests_answered += 1
        writer.write(data)

    async def _answer(
        self, frame: Frame, message: Any, caller: TlsPeer, writer: asyncio.StreamWriter
    ) -> None:
        try:
            answer = await self._edge.answer(message, caller)
            data = encode_frame(
                frame.correlation, frame.kind, Status.ANSWER, answer.response.SerializeToString()
            )
        except NoAnswer as error:
            data = encode_frame(frame.correlation, frame.kind, Status.NO_ANSWER, _line(error))
        except Exception as error:
            node_id = self._edge.node.node_id
            log.error("node %d: %s failed", node_id, frame.kind.name, exc_info=error)
            reason = f"node {node_id} could not answer {frame.kind.name} ({type(error).__name__})"
            data = encode_frame(frame.correlation, frame.kind, Status.NO_ANSWER, reason.encode())
        if writer.is_closing():
            return
        self.requests_answered += 1
        writer.write(data)
        with contextlib.suppress(ConnectionError):
            await writer.drain()


def _request_of(frame: Frame) -> wire.PbRequest:
    """The protobuf request a frame carries; raises :class:`FrameError`."""
    if frame.status is not Status.REQUEST:
        raise FrameError(f"a {frame.status.name} frame where a request belongs")
    request_type = PB_REQUEST[frame.kind]
    try:
        message: wire.PbRequest = request_type.FromString(frame.body)
    except Exception as error:  # protobuf's DecodeError, or any other parse failure
        raise FrameError(f"undecodable {request_type.__name__}: {_one_line(error)}") from None
    return message


def _peer_name(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"{peer[0]}:{peer[1]}"
    return str(peer)


def _one_line(error: BaseException, limit: int = 120) -> str:
    line = " ".join(str(error).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _line(error: BaseException) -> bytes:
    return _one_line(error, 300).encode()
