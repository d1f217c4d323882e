"""The stream's frame codec on its own: the exact bytes of a frame, every kind and status read
back as itself, and a frame of an unknown kind or status refused as a framing error."""

from __future__ import annotations

import asyncio
import struct

import pytest

from raftmeta.quorum.stream.frames import (
    HEADER_BYTES,
    MAX_FRAME_BYTES,
    Frame,
    FrameError,
    Kind,
    Status,
    encode_frame,
    read_frame,
)


def read_all(data: bytes) -> list[Frame]:
    """Every frame in ``data``, read the way a connection reads them."""

    async def main() -> list[Frame]:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        frames = []
        while (frame := await read_frame(reader, MAX_FRAME_BYTES)) is not None:
            frames.append(frame)
        return frames

    return asyncio.run(main())


def test_a_frame_is_its_length_then_correlation_kind_status_and_body_big_endian() -> None:
    body = b"the body"
    data = encode_frame(2**64 - 2, Kind.FETCH, Status.ANSWER, body)
    assert data == struct.pack(">I", HEADER_BYTES + len(body)) + (
        b"\xff" * 7 + b"\xfe" + bytes([Kind.FETCH, Status.ANSWER]) + body
    )


def test_every_kind_and_status_reads_back_as_itself() -> None:
    sent = [
        Frame(correlation, kind, status, bytes([kind]) * correlation)
        for correlation, (kind, status) in enumerate(
            (kind, status) for kind in Kind for status in Status
        )
    ]
    data = b"".join(encode_frame(*frame) for frame in sent)
    received = read_all(data)
    assert received == sent
    assert all(type(f.kind) is Kind and type(f.status) is Status for f in received)


@pytest.mark.parametrize(
    ("kind", "status"),
    [pytest.param(0, Status.REQUEST, id="kind-0"), pytest.param(Kind.FETCH, 3, id="status-3")],
)
def test_an_unknown_kind_or_status_is_a_framing_error(kind: int, status: int) -> None:
    data = struct.pack(">IQBB", HEADER_BYTES, 1, kind, status)
    with pytest.raises(FrameError, match=f"unknown kind {kind} or status {status}"):
        read_all(data)
