"""Reading Kafka frames with deadlines: a frame that came in whole is read at once, and
whatever part of a frame is still missing keeps its deadline, however much of the rest was
already buffered."""

from __future__ import annotations

import asyncio
import struct

import pytest

from raftmeta.kafka_protocol.framing import (
    IdleTimeout,
    PartialFrameTimeout,
    read_frame_within,
)

SHORT_S = 0.05
"""The deadline under test: passing it is what the tests wait for."""
LONG_S = 30.0
"""A deadline no test comes near."""
GUARD_S = 5.0
"""The longest any read in these tests may take."""


def framed(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


async def read(reader: asyncio.StreamReader, idle_s: float, partial_s: float) -> bytes | None:
    """The next frame; a read the deadlines under test do not end fails the test (as a
    ``TimeoutError``) rather than hanging it."""
    async with asyncio.timeout(GUARD_S):
        return await read_frame_within(
            reader, 1 << 20, idle_timeout_s=idle_s, partial_timeout_s=partial_s
        )


def fed(*chunks: bytes, eof: bool = False) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    for chunk in chunks:
        reader.feed_data(chunk)
    if eof:
        reader.feed_eof()
    return reader


def test_frames_that_came_in_whole_are_read_in_order() -> None:
    async def main() -> list[bytes | None]:
        reader = fed(framed(b"first request"), framed(b"second request"), eof=True)
        return [await read(reader, SHORT_S, SHORT_S) for _ in range(3)]

    assert asyncio.run(main()) == [b"first request", b"second request", None]


def test_a_frame_fed_a_byte_at_a_time_is_read_whole() -> None:
    async def main() -> bytes | None:
        reader = asyncio.StreamReader()
        reading = asyncio.create_task(read(reader, LONG_S, LONG_S))
        for byte in framed(b"trickled"):
            reader.feed_data(bytes([byte]))
            await asyncio.sleep(0)
        return await reading

    assert asyncio.run(main()) == b"trickled"


def test_a_body_missing_after_a_buffered_size_still_has_its_deadline() -> None:
    async def main() -> None:
        reader = fed(framed(b"cut short")[:-3])
        await read(reader, LONG_S, SHORT_S)

    with pytest.raises(PartialFrameTimeout, match="9 bytes"):
        asyncio.run(main())


def test_a_size_cut_after_its_first_byte_still_has_its_deadline() -> None:
    async def main() -> None:
        reader = fed(framed(b"x")[:2])
        await read(reader, LONG_S, SHORT_S)

    with pytest.raises(PartialFrameTimeout, match="size"):
        asyncio.run(main())


def test_no_byte_at_all_is_an_idle_timeout_that_consumes_nothing() -> None:
    async def main() -> bytes | None:
        reader = asyncio.StreamReader()
        with pytest.raises(IdleTimeout):
            await read(reader, SHORT_S, LONG_S)
        reader.feed_data(framed(b"a late request"))
        return await read(reader, SHORT_S, SHORT_S)

    assert asyncio.run(main()) == b"a late request"
