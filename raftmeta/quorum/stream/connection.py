"""One client connection to a peer's RAFT listener, multiplexed by correlation id.

Any number of calls share the connection: each writes its request frame and waits on a
future that the connection's reader task completes when the answer with the same
correlation id arrives, in whatever order answers come. When the connection breaks (the peer
stopped, a frame was malformed, the stream ended) every call still waiting fails with
``ConnectionError`` and the connection is done; the owner opens a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import socket
import ssl

from raftmeta.quorum.stream.frames import (
    MAX_FRAME_BYTES,
    Frame,
    FrameError,
    Kind,
    Status,
    encode_frame,
    read_frame,
)

log = logging.getLogger(__name__)


class StreamConnection:
    """Open with :meth:`open`; :meth:`call` until :attr:`closed`; then :meth:`close`."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        name: str,
        max_frame_bytes: int,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.name = name
        self._max_frame_bytes = max_frame_bytes
        self._correlations = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Frame]] = {}
        self._broken: str | None = None
        self._reading = asyncio.create_task(self._read(), name=f"raft-stream-{name}")

    @classmethod
    async def open(
        cls,
        host: str,
        port: int,
        *,
        name: str,
        ssl_context: ssl.SSLContext | None = None,
        timeout_s: float,
        max_frame_bytes: int = MAX_FRAME_BYTES,
    ) -> StreamConnection:
        """Connect (and with ``ssl_context`` complete the TLS handshake, checking the
        server's certificate against ``host``) within ``timeout_s``; raises ``OSError``
        (``ConnectionError``), ``ssl.SSLError`` or ``TimeoutError``."""
        # asyncio.timeout, not wait_for: a link keeper's loop connects here, and on Python
        # 3.11 wait_for can swallow the close's cancel when the connection opens that moment.
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection(
                host,
                port,
                ssl=ssl_context,
                server_hostname=host if ssl_context is not None else None,
                limit=2**20,
            )
        sock = writer.get_extra_info("socket")
        if sock is not None:
            # Small frames go out at once; Nagle's delay would sit on every commit.
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(reader, writer, name, max_frame_bytes)

    @property
    def closed(self) -> bool:
        return self._broken is not None

    async def call(self, kind: Kind, body: bytes, timeout_s: float) -> Frame:
        """Send a request and wait for its answer frame; raises ``ConnectionError`` when the
        connection broke and ``TimeoutError`` when no answer came in ``timeout_s`` (the
        connection stays usable: a late answer is dropped)."""
        if self._broken is not None:
            raise ConnectionError(self._broken)
        correlation = next(self._correlations)
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[Frame] = loop.create_future()
        self._waiting[correlation] = waiter
        # A timer on the waiter rather than wait_for, which wraps it in another future and
        # costs turns of the loop on every answer.
        timer = loop.call_later(timeout_s, _time_out, waiter, timeout_s)
        try:
            self._writer.write(encode_frame(correlation, kind, Status.REQUEST, body))
            await self._writer.drain()
            return await waiter
        finally:
            timer.cancel()
            self._waiting.pop(correlation, None)

    async def close(self) -> None:
        self._break("closed")
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reading
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()

    async def _read(self) -> None:
        try:
            while True:
                frame = await read_frame(self._reader, self._max_frame_bytes)
                if frame is None:
                    self._break(f"{self.name} closed the connection")
                    break
                if frame.status is Status.REQUEST:
                    raise FrameError("a request frame where an answer belongs")
                waiter = self._waiting.pop(frame.correlation, None)
                if waiter is not None and not waiter.done():
                    waiter.set_result(frame)
        except FrameError as error:
            log.warning("Raft stream to %s: %s; connection closed", self.name, error)
            self._break(str(error))
        except (OSError, ssl.SSLError) as error:
            self._break(f"connection to {self.name} lost: {error}")
        finally:
            self._writer.close()

    def _break(self, reason: str) -> None:
        if self._broken is None:
            self._broken = reason
        waiting, self._waiting = self._waiting, {}
        for waiter in waiting.values():
            if not waiter.done():
                waiter.set_exception(ConnectionError(reason))


def _time_out(waiter: asyncio.Future[Frame], timeout_s: float) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError(f"no answer within {timeout_s:g} s"))
