"""The Raft stream's frames: how the core's messages travel on one long-lived TCP connection.

A frame is::

    length        uint32  the bytes after this field: header and body
    correlation   uint64  chosen by the caller; the answer carries the same one
    kind          uint8   which message (:class:`Kind`)
    status        uint8   :class:`Status`: a request, an answer, or "no answer"
    body          the message in the gRPC service's protobuf encoding (:mod:`raftmeta.quorum.wire`)

All integers are big-endian. The body is the very message the gRPC transport sends, so both
transports share one codec and one set of edge checks; only the envelope differs. Many frames
may be in flight on a connection in both directions; answers come back in any order and are
matched by correlation id (a parked Fetch must not hold up a Vote behind it).

A frame longer than the reader's cap, of an unknown kind or status, or cut off by the end of
the stream is a :class:`FrameError`: the connection cannot be trusted to be in step any more,
so the reader closes it (the peer reconnects, and the core resends).
"""

from __future__ import annotations

import asyncio
import enum
import struct
from typing import Any, NamedTuple

from raftmeta.raft.messages import (
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchSnapshotRequest,
    Request,
    VoteRequest,
)
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc.options import MAX_MESSAGE_BYTES

_LENGTH = struct.Struct(">I")
_HEADER = struct.Struct(">QBB")
HEADER_BYTES = _HEADER.size
_PREFIX = struct.Struct(">IQBB")
"""The length and the header together, packed in one call: every answer pays it."""

MAX_FRAME_BYTES = MAX_MESSAGE_BYTES + HEADER_BYTES
"""The default cap: the gRPC transport's message limit plus the header, so a full fetch
response fits either way."""


class Kind(enum.IntEnum):
    """Which Raft message a frame carries."""

    VOTE = 1
    BEGIN_QUORUM_EPOCH = 2
    END_QUORUM_EPOCH = 3
    FETCH = 4
    FETCH_SNAPSHOT = 5


class Status(enum.IntEnum):
    REQUEST = 0
    ANSWER = 1
    NO_ANSWER = 2
    """The node gave no answer (not running, superseded, timed out); the body is a one-line
    reason in UTF-8. The caller's core resends on its own timers, as after gRPC UNAVAILABLE."""


REQUEST_KIND: dict[type[Request], Kind] = {
    VoteRequest: Kind.VOTE,
    BeginQuorumEpochRequest: Kind.BEGIN_QUORUM_EPOCH,
    EndQuorumEpochRequest: Kind.END_QUORUM_EPOCH,
    FetchRequest: Kind.FETCH,
    FetchSnapshotRequest: Kind.FETCH_SNAPSHOT,
}

PB_REQUEST: dict[Kind, type[Any]] = {
    Kind.VOTE: pb.VoteRequest,
    Kind.BEGIN_QUORUM_EPOCH: pb.BeginQuorumEpochRequest,
    Kind.END_QUORUM_EPOCH: pb.EndQuorumEpochRequest,
    Kind.FETCH: pb.FetchRequest,
    Kind.FETCH_SNAPSHOT: pb.FetchSnapshotRequest,
}
"""The protobuf request type of each kind, as the gRPC service's methods take them."""

PB_RESPONSE: dict[Kind, type[Any]] = {
    Kind.VOTE: pb.VoteResponse,
    Kind.BEGIN_QUORUM_EPOCH: pb.BeginQuorumEpochResponse,
    Kind.END_QUORUM_EPOCH: pb.EndQuorumEpochResponse,
    Kind.FETCH: pb.FetchResponse,
    Kind.FETCH_SNAPSHOT: pb.FetchSnapshotResponse,
}


_KINDS: dict[int, Kind] = {kind.value: kind for kind in Kind}
_STATUSES: dict[int, Status] = {status.value: status for status in Status}
"""Wire byte to member by a dict look-up: calling the enum per frame costs several times more."""


class FrameError(Exception):
    """The stream broke the framing; the message is one line for the log."""


class Frame(NamedTuple):
    """One frame as read; a named tuple, because one is built for every message received and
    a frozen dataclass's ``__init__`` costs several times as much."""

    correlation: int
    kind: Kind
    status: Status
    body: bytes


def encode_frame(correlation: int, kind: Kind, status: Status, body: bytes) -> bytes:
    """One frame's bytes, ready for a single ``write``."""
    return _PREFIX.pack(HEADER_BYTES + len(body), correlation, kind, status) + body


async def read_frame(reader: asyncio.StreamReader, max_frame_bytes: int) -> Frame | None:
    """The next frame, or None at a clean end of stream (between frames).

    Raises :class:`FrameError` for a frame over ``max_frame_bytes`` (before reading its
    body), one too short for its header, of an unknown kind or status, or cut off."""
    try:
        prefix = await reader.readexactly(_LENGTH.size)
    except asyncio.IncompleteReadError as error:
        if not error.partial:
            return None
        raise FrameError("the stream ended inside a frame's length") from None
    (length,) = _LENGTH.unpack(prefix)
    if length > max_frame_bytes:
        raise FrameError(f"a frame of {length} bytes is over the {max_frame_bytes}-byte cap")
    if length < HEADER_BYTES:
        raise FrameError(
            f"a frame of {length} bytes is shorter than its {HEADER_BYTES}-byte header"
        )
    try:
        data = await reader.readexactly(length)
    except asyncio.IncompleteReadError as error:
        raise FrameError(
            f"the stream ended {length - len(error.partial)} bytes before the frame's end"
        ) from None
    correlation, kind, status = _HEADER.unpack_from(data)
    try:
        return Frame(correlation, _KINDS[kind], _STATUSES[status], data[HEADER_BYTES:])
    except KeyError:
        raise FrameError(f"a frame of unknown kind {kind} or status {status}") from None
