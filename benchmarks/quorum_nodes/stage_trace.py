"""Timestamps of each stage of the write path in one node process, for the commit breakdown.

Installed only by the benchmark's node (``raftmeta_node.py --trace``): it wraps a handful of
functions on the write path with a recorder, so the library itself carries no tracing code and
pays nothing when it is off. Every timestamp is ``time.monotonic_ns()``, which reads the one
``CLOCK_MONOTONIC`` all processes on the machine share, so the driver can lay the three
processes' stages on one time line (see ``quorum_bench.py --breakdown``).

Stages recorded (the name, and where):

* ``append`` / ``commit``: ``RaftClient.append`` called; its batch handed to the listener
  (leader only);
* ``propose``: the client proposes the gathered batch to the core;
* ``driver_send``: the node's driver sends a Ready's messages (before or after the persist);
* ``persist_start`` / ``persist_end``: the disk work of a Ready, on the worker thread;
* ``frame_in`` / ``frame_out``: a stream frame read off a connection / encoded to be written,
  with the frame's kind (``FETCH`` ...) and whether it is a request or an answer;
* ``step``: a peer's message is stepped into the core, with its type;
* ``gc_start`` / ``gc_stop``: a collection of Python's cyclic garbage collector, with its
  generation (a pause of the whole process, a suspect for the tail).
"""

from __future__ import annotations

import functools
import gc
import time
from collections.abc import Callable
from typing import Any

Event = tuple[int, str, str]
"""(monotonic ns, stage, detail)."""


class StageTrace:
    """The events of one node process, kept in memory until the driver collects them."""

    def __init__(self, limit: int = 200_000) -> None:
        self.events: list[Event] = []
        self.limit = limit
        self.enabled = False

    def mark(self, stage: str, detail: str = "") -> None:
        if self.enabled and len(self.events) < self.limit:
            self.events.append((time.monotonic_ns(), stage, detail))

    def take(self) -> list[Event]:
        events, self.events = self.events, []
        return events


def _wrap(
    owner: Any,
    name: str,
    before: Callable[..., None] | None = None,
    after: Callable[..., None] | None = None,
) -> None:
    original = getattr(owner, name)

    @functools.wraps(original)
    def traced(*args: Any, **kwargs: Any) -> Any:
        if before is not None:
            before(*args, **kwargs)
        result = original(*args, **kwargs)
        if after is not None:
            after(result, *args, **kwargs)
        return result

    setattr(owner, name, traced)


def install(trace: StageTrace) -> None:
    """Wrap the write path's functions so that each records its stage into ``trace``."""
    from raftmeta.quorum import client, disk, node
    from raftmeta.quorum.stream import connection, frames, server

    _wrap(client.RaftClient, "append", before=lambda *a, **k: trace.mark("append"))
    _wrap(client.RaftClient, "flush", before=lambda *a, **k: trace.mark("propose"))
    _wrap(client.RaftClient, "commit", before=lambda *a, **k: trace.mark("commit"))
    _wrap(
        disk.NodeDisk,
        "persist",
        before=lambda *a, **k: trace.mark("persist_start"),
        after=lambda *a, **k: trace.mark("persist_end"),
    )

    def sent(_self: Any, outbound: Any) -> None:
        for item in outbound:
            trace.mark("driver_send", type(item.message).__name__)

    _wrap(node.RaftNode, "_send", before=sent)

    def stepped(_self: Any, _sender: int, message: Any) -> None:
        trace.mark("step", type(message).__name__)

    _wrap(node.RaftNode, "_step", before=stepped)

    original_read = frames.read_frame

    async def read_frame(reader: Any, max_frame_bytes: int) -> Any:
        frame = await original_read(reader, max_frame_bytes)
        if frame is not None:
            trace.mark("frame_in", f"{frame.kind.name} {frame.status.name}")
        return frame

    original_encode = frames.encode_frame

    def encode_frame(correlation: int, kind: Any, status: Any, body: bytes) -> bytes:
        trace.mark("frame_out", f"{kind.name} {status.name}")
        return original_encode(correlation, kind, status, body)

    for module in (connection, server):
        module.read_frame = read_frame  # type: ignore[attr-defined]
        module.encode_frame = encode_frame  # type: ignore[attr-defined]

    def collected(phase: str, info: dict[str, int]) -> None:
        trace.mark(f"gc_{phase}", str(info["generation"]))

    gc.callbacks.append(collected)
