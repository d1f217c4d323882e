"""A TCP proxy in front of one server, on the test's event loop, that can lose answers.

Clients connect to the proxy's port; each connection is piped to the server. ``hold_answers``
keeps forwarding what clients send but holds back what the server sends, so a request reaches
the server and runs while its answer never arrives, as when a leader dies between committing a
write and replying. ``cut`` then closes every connection, the way a dead peer's kernel would.
"""

from __future__ import annotations

import asyncio
import contextlib


class TcpProxy:
    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self._upstream = (upstream_host, upstream_port)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.holding = False
        self.held_bytes = 0
        """Bytes from the server that were held back (never delivered)."""

    @property
    def port(self) -> int:
        assert self._server is not None
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)

    def hold_answers(self) -> None:
        self.holding = True

    def cut(self) -> None:
        """Close every open connection (new ones are still accepted) and stop holding."""
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        self.holding = False

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self.cut()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))
        for task in (
            asyncio.ensure_future(self._pipe(reader, up_writer, answers=False)),
            asyncio.ensure_future(self._pipe(up_reader, writer, answers=True)),
        ):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pipe(
        self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, *, answers: bool
    ) -> None:
        try:
            while data := await source.read(65536):
                if answers and self.holding:
                    self.held_bytes += len(data)
                    continue
                sink.write(data)
                await sink.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            sink.transport.abort()
            self._writers.discard(sink)
