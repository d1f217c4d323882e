"""Kafka's framing: each request and response is a 4-byte big-endian size, then that many bytes.

A size below the smallest request header or above ``socket.request.max.bytes`` means the peer
does not speak the protocol (or tries to make the node allocate without bound): Kafka closes the
connection, and so does this listener, after logging it once.
"""

from __future__ import annotations

import asyncio
import struct

SIZE = struct.Struct(">i")
DEFAULT_MAX_REQUEST_BYTES = 104_857_600
"""Kafka's default ``socket.request.max.bytes`` (100 MiB)."""
MIN_REQUEST_BYTES = 8
"""api_key, api_version and correlation_id: the least a request can hold."""


class FrameError(Exception):
    """A size that cannot start a request; the connection is closed."""


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
    if size < MIN_REQUEST_BYTES:
        raise FrameError(f"frame size {size} is smaller than a request header")
    if size > max_bytes:
        raise FrameError(f"frame size {size} is larger than socket.request.max.bytes ({max_bytes})")
    return await reader.readexactly(size)
