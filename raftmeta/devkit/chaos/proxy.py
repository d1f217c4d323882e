"""The campaign's network: a TCP relay in front of every node's Raft stream, so that links can
be cut (both ways or one way), slowed, or a node partitioned from the rest, while the nodes
themselves run unchanged.

Each controller listens for the stream on a pinned RAFT port and advertises the relay's port
instead (``advertised.listeners``), so every Raft message between nodes, and every broker's
fetch, passes through here. A connection's first frame is a request that names its sender
(``candidate_id``, ``leader_id`` or ``replica_id``), so the relay knows which directed link
each byte travels: bytes from the dialling node to the listening one on link (dialler,
listener), answers on link (listener, dialler).

A cut link drops its bytes silently and keeps the connection open, as a network that loses
packets does: the sender learns of it only when its calls time out. Dropped bytes leave the
connection out of step with its framing, so when the links heal every connection that lost
bytes is closed, and the nodes dial again (as after a TCP connection that timed out). A slow
link delivers every chunk ``delay`` seconds after it arrived, in order.

The relay carries the Raft stream only: admin clients, broker heartbeats and
``DescribeEndpoints`` reach the controllers directly over gRPC, so a partition here is of the
quorum's replication and elections, the part whose safety the campaign checks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from raftmeta.quorum.stream.frames import HEADER_BYTES, MAX_FRAME_BYTES, PB_REQUEST, Kind

log = logging.getLogger(__name__)

SENDER_FIELD: Mapping[Kind, str] = {
    Kind.VOTE: "candidate_id",
    Kind.BEGIN_QUORUM_EPOCH: "leader_id",
    Kind.END_QUORUM_EPOCH: "leader_id",
    Kind.FETCH: "replica_id",
    Kind.FETCH_SNAPSHOT: "replica_id",
}
"""Which field of each request names the node that sent it."""
UNKNOWN_SENDER = -1
CHUNK_BYTES = 64 * 1024

_LENGTH = struct.Struct(">I")
_HEADER = struct.Struct(">QBB")


@dataclass(slots=True)
class LinkState:
    """One directed link's faults."""

    cut: bool = False
    delay_s: float = 0.0


@dataclass(eq=False, slots=True)
class _Relayed:
    """One relayed connection: the dialler's side and the listener's side."""

    source: int
    destination: int
    writers: tuple[asyncio.StreamWriter, asyncio.StreamWriter]
    lost_bytes: bool = False
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    def close(self) -> None:
        for writer in self.writers:
            writer.close()


def sender_of(first_frame: bytes) -> int:
    """The node that sent a stream's first frame (its length prefix stripped), or
    :data:`UNKNOWN_SENDER` when it is not a request the relay can read."""
    if len(first_frame) < HEADER_BYTES:
        return UNKNOWN_SENDER
    _, kind_number, _ = _HEADER.unpack_from(first_frame)
    try:
        kind = Kind(kind_number)
        message = PB_REQUEST[kind].FromString(first_frame[HEADER_BYTES:])
    except Exception:  # an unknown kind, or a body protobuf cannot parse
        return UNKNOWN_SENDER
    sender = getattr(message, SENDER_FIELD[kind])
    return sender if isinstance(sender, int) else UNKNOWN_SENDER


class FaultProxy:
    """One relay listener per node (``listen_ports``) in front of its RAFT listener
    (``upstream``), with a :class:`LinkState` per directed link that the nemesis sets."""

    def __init__(self, upstream: Mapping[int, int], listen_ports: Mapping[int, int]) -> None:
        self.upstream = dict(upstream)
        self.listen_ports = dict(listen_ports)
        self._links: dict[tuple[int, int], LinkState] = {}
        self._servers: list[asyncio.Server] = []
        self._connections: set[_Relayed] = set()
        self.forwarded: dict[tuple[int, int], int] = {}
        """Bytes delivered on each directed link (source, destination)."""
        self.dropped: dict[tuple[int, int], int] = {}
        """Bytes dropped on each directed link by a cut."""

    async def start(self) -> None:
        for node_id, port in self.listen_ports.items():

            async def accept(
                reader: asyncio.StreamReader,
                writer: asyncio.StreamWriter,
                destination: int = node_id,
            ) -> None:
                await self._relay(destination, reader, writer)

            self._servers.append(await asyncio.start_server(accept, "127.0.0.1", port))

    async def stop(self) -> None:
        for server in self._servers:
            server.close()
        for connection in list(self._connections):
            connection.close()
            for task in connection.tasks:
                task.cancel()
        for server in self._servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()
        self._servers.clear()

    # ---------------------------------------------------------------------- the faults

    def link(self, source: int, destination: int) -> LinkState:
        return self._links.setdefault((source, destination), LinkState())

    def state_of(self, link: tuple[int, int]) -> LinkState | None:
        """The link's faults, None while it has none."""
        return self._links.get(link)

    def cut(self, source: int, destination: int) -> None:
        """Drop every byte ``source`` sends ``destination`` (one way)."""
        self.link(source, destination).cut = True

    def cut_both_ways(self, first: int, second: int) -> None:
        self.cut(first, second)
        self.cut(second, first)

    def partition(self, node: int, others: Iterable[int]) -> None:
        """Cut ``node`` off from each of ``others``, both ways."""
        for other in others:
            self.cut_both_ways(node, other)

    def delay(self, source: int, destination: int, seconds: float) -> None:
        self.link(source, destination).delay_s = seconds

    def heal(self) -> None:
        """Every link whole and fast again; connections that lost bytes are closed, since
        their framing can no longer be trusted (the nodes dial again)."""
        self._links.clear()
        for connection in [c for c in self._connections if c.lost_bytes]:
            connection.close()

    # ---------------------------------------------------------------------- relaying

    async def _relay(
        self, destination: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            prefix = await reader.readexactly(_LENGTH.size)
            (length,) = _LENGTH.unpack(prefix)
            if length > MAX_FRAME_BYTES:
                raise ConnectionError(f"a first frame of {length} bytes")
            first = await reader.readexactly(length)
            upstream_reader, upstream_writer = await asyncio.open_connection(
                "127.0.0.1", self.upstream[destination], limit=2**20
            )
        except (OSError, asyncio.IncompleteReadError, ConnectionError):
            writer.close()  # the dialler went away, or the node behind is down
            return
        source = sender_of(first)
        relayed = _Relayed(source, destination, (writer, upstream_writer))
        self._connections.add(relayed)
        outbound = _Pump(self, relayed, (source, destination), reader, upstream_writer)
        inbound = _Pump(self, relayed, (destination, source), upstream_reader, writer)
        outbound.pass_on(prefix + first)
        relayed.tasks = [
            asyncio.create_task(outbound.run(), name=f"proxy {source}->{destination}"),
            asyncio.create_task(inbound.run(), name=f"proxy {destination}->{source}"),
        ]
        try:
            await asyncio.wait(relayed.tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            relayed.close()
            for task in relayed.tasks:
                task.cancel()
            await asyncio.gather(*relayed.tasks, return_exceptions=True)
            self._connections.discard(relayed)


class _Pump:
    """One direction of one connection: reads, then drops, delays or passes each chunk by
    the link's state at the moment it arrived."""

    def __init__(
        self,
        proxy: FaultProxy,
        relayed: _Relayed,
        link: tuple[int, int],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self._proxy = proxy
        self._relayed = relayed
        self._link = link
        self._reader = reader
        self._writer = writer
        self._queue: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue()

    def pass_on(self, data: bytes) -> None:
        """Queue ``data`` unless the link is cut (then it is dropped, and the connection can
        no longer be trusted once the link heals)."""
        proxy, link = self._proxy, self._link
        state = proxy.state_of(link)
        if self._relayed.lost_bytes or (state is not None and state.cut):
            self._relayed.lost_bytes = True
            proxy.dropped[link] = proxy.dropped.get(link, 0) + len(data)
            return
        delay = 0.0 if state is None else state.delay_s
        self._queue.put_nowait((time.monotonic() + delay, data))

    async def run(self) -> None:
        deliver = asyncio.create_task(self._deliver())
        try:
            while True:
                data = await self._reader.read(CHUNK_BYTES)
                if not data:
                    break
                self.pass_on(data)
            self._queue.put_nowait(None)
            await deliver
        except (OSError, ConnectionError):
            pass
        finally:
            deliver.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError, ConnectionError):
                await deliver

    async def _deliver(self) -> None:
        proxy, link = self._proxy, self._link
        while True:
            item = await self._queue.get()
            if item is None:
                return
            due, data = item
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            self._writer.write(data)
            await self._writer.drain()
            proxy.forwarded[link] = proxy.forwarded.get(link, 0) + len(data)
