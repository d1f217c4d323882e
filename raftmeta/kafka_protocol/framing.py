"""Kafka's framing: each request and response is a 4-byte big-endian size, then that many bytes.

A size below the smallest request header or above ``socket.request.max.bytes`` means the peer
does not speak the protocol (or tries to make the node allocate without bound): Kafka closes the
connection, and so does this listener, after logging it once.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Awaitable, Callable

SIZE = struct.Struct(">i")
DEFAULT_MAX_REQUEST_BYTES = 104_857_600
"""Kafka's default ``socket.request.max.bytes`` (100 MiB)."""
MIN_REQUEST_BYTES = 8
"""api_key, api_version and correlation_id: the least a request can hold."""


class FrameError(Exception):
    """A size that cannot start a request; the connection is closed."""


class IdleTimeout(Exception):
    """No byte of a next frame arrived within the idle timeout; nothing was consumed."""


class PartialFrameTimeout(Exception):
    """A frame begun was not finished within its timeout; the connection is closed."""


async def read_frame_within(
    reader: asyncio.StreamReader,
    max_bytes: int,
    *,
    idle_timeout_s: float | None,
    partial_timeout_s: float | None,
    take: Callable[[int], Awaitable[None]] | None = None,
) -> bytes | None:
    """:func:`read_frame`, with deadlines: the frame's first byte must come within
    ``idle_timeout_s`` (else ``IdleTimeout``, and the stream is as it was), and once it has, the
    size within ``partial_timeout_s`` and the body within another ``partial_timeout_s`` (else
    ``PartialFrameTimeout``). ``take(size)`` runs between the size and the body, outside the
    deadlines: it may wait for room to hold the body (``queued.max.request.bytes``).
    """
    if _buffered(reader) >= SIZE.size:
        # The size came in already (a client's frames usually arrive whole): no deadline
        # can pass while reading it.
        (size,) = SIZE.unpack(await reader.readexactly(SIZE.size))
    else:
        size = await _read_size_within(reader, idle_timeout_s, partial_timeout_s)
        if size is None:
            return None
    _check_size(size, max_bytes)
    if take is not None:
        await take(size)
    if _buffered(reader) >= size:
        return await reader.readexactly(size)
    try:
        async with asyncio.timeout(partial_timeout_s):
            return await reader.readexactly(size)
    except TimeoutError:
        raise PartialFrameTimeout(f"a frame of {size} bytes was not sent in time") from None


async def _read_size_within(
    reader: asyncio.StreamReader, idle_timeout_s: float | None, partial_timeout_s: float | None
) -> int | None:
    """A frame's size, its first byte within ``idle_timeout_s`` and the rest within
    ``partial_timeout_s``; ``None`` at a clean end of stream."""
    try:
        async with asyncio.timeout(idle_timeout_s):
            first = await reader.readexactly(1)
    except asyncio.IncompleteReadError:
        return None
    except TimeoutError:
        raise IdleTimeout() from None
    if _buffered(reader) >= SIZE.size - 1:
        # The rest of the size came with its first byte, as it nearly always does.
        (size,) = SIZE.unpack(first + await reader.readexactly(SIZE.size - 1))
        return int(size)
    try:
        async with asyncio.timeout(partial_timeout_s):
            (size,) = SIZE.unpack(first + await reader.readexactly(SIZE.size - 1))
    except TimeoutError:
        raise PartialFrameTimeout("the frame's size was not sent in time") from None
    return int(size)


def _buffered(reader: asyncio.StreamReader) -> int:
    """How many bytes ``reader`` holds already (0 where that cannot be seen). A read of no
    more than that returns without waiting, so it needs no deadline: arming one schedules and
    cancels a timer, which cost more than the rest of reading a small frame that arrived
    whole."""
    buffer = getattr(reader, "_buffer", None)
    return len(buffer) if isinstance(buffer, bytearray) else 0


def _check_size(size: int, max_bytes: int) -> None:
    if size < MIN_REQUEST_BYTES:
        raise FrameError(f"frame size {size} is smaller than a request header")
    if size > max_bytes:
        raise FrameError(f"frame size {size} is larger than the limit ({max_bytes} bytes)")


async def read_frame(reader: asyncio.StreamReader, max_bytes: int) -> bytes | None:
    """The next frame's payload; ``None`` at a clean end of stream between frames.

    Raises ``FrameError`` for a bad size and ``asyncio.IncompleteReadError`` for a stream that
    ends inside a frame.
    """
    try:
        prefix = await reader.readexactly(SIZE.size)
    except asyncio.IncompleteReadError as error:
        if not error.partial:
            return None
        raise
    (size,) = SIZE.unpack(prefix)
    _check_size(size, max_bytes)
    return await reader.readexactly(size)
