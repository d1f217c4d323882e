"""The campaign's fault proxy on real TCP: it tells each connection's links apart by the
first frame's sender, passes bytes on a whole link, drops them on a cut one (one way only),
delays them on a slow one, and closes connections that lost bytes when the links heal."""

from __future__ import annotations

import asyncio
import struct
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from raftmeta.devkit.chaos.proxy import UNKNOWN_SENDER, FaultProxy, sender_of
from raftmeta.devkit.ports import free_ports
from raftmeta.quorum.stream.frames import Frame, Kind, Status, encode_frame, read_frame
from raftmeta.rpc import raft_pb2 as pb
from tests.support.scenario import async_test

NODE = 1
"""The node behind the proxy; the test dials it as node 7."""
DIALLER = 7
DEADLINE_S = 5.0


def vote_frame(correlation: int, candidate: int = DIALLER) -> bytes:
    body = pb.VoteRequest(cluster_id="c", candidate_id=candidate).SerializeToString()
    return encode_frame(correlation, Kind.VOTE, Status.REQUEST, body)


async def answer_every_frame(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """The node: answers each request with an empty answer of the same correlation."""
    try:
        while (frame := await read_frame(reader, 2**20)) is not None:
            writer.write(encode_frame(frame.correlation, frame.kind, Status.ANSWER, b""))
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


@asynccontextmanager
async def proxied() -> AsyncIterator[FaultProxy]:
    node_port, proxy_port = free_ports(2)
    node = await asyncio.start_server(answer_every_frame, "127.0.0.1", node_port)
    proxy = FaultProxy({NODE: node_port}, {NODE: proxy_port})
    await proxy.start()
    try:
        yield proxy
    finally:
        await proxy.stop()
        node.close()


async def dial(proxy: FaultProxy) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", proxy.listen_ports[NODE])


async def answer(reader: asyncio.StreamReader, timeout_s: float = DEADLINE_S) -> Frame | None:
    return await asyncio.wait_for(read_frame(reader, 2**20), timeout_s)


def test_the_sender_is_read_from_each_kind_of_first_frame() -> None:
    fetch = pb.FetchRequest(cluster_id="c", replica_id=4).SerializeToString()
    begin = pb.BeginQuorumEpochRequest(cluster_id="c", leader_id=5).SerializeToString()
    assert sender_of(vote_frame(1, candidate=3)[4:]) == 3
    assert sender_of(encode_frame(1, Kind.FETCH, Status.REQUEST, fetch)[4:]) == 4
    assert sender_of(encode_frame(1, Kind.BEGIN_QUORUM_EPOCH, Status.REQUEST, begin)[4:]) == 5
    assert sender_of(b"\x00" * 3) == UNKNOWN_SENDER
    unknown_kind = struct.pack(">QBB", 1, 99, 0) + fetch
    assert sender_of(unknown_kind) == UNKNOWN_SENDER


@async_test(30.0)
async def test_bytes_pass_on_both_links_of_a_connection() -> None:
    async with proxied() as proxy:
        reader, writer = await dial(proxy)
        writer.write(vote_frame(1) + vote_frame(2))
        first, second = await answer(reader), await answer(reader)
        assert first is not None and second is not None
        assert (first.correlation, second.correlation) == (1, 2)
        assert proxy.forwarded[(DIALLER, NODE)] == 2 * len(vote_frame(1))
        assert proxy.forwarded[(NODE, DIALLER)] > 0
        writer.close()


@async_test(30.0)
async def test_a_one_way_cut_drops_answers_only_and_healing_closes_the_connection() -> None:
    async with proxied() as proxy:
        reader, writer = await dial(proxy)
        writer.write(vote_frame(1))
        assert await answer(reader) is not None
        proxy.cut(NODE, DIALLER)  # the node can hear the dialler but not answer it
        writer.write(vote_frame(2))
        await writer.drain()
        started = time.monotonic()
        while proxy.dropped.get((NODE, DIALLER), 0) == 0:
            assert time.monotonic() - started < DEADLINE_S, "the answer was never dropped"
            await asyncio.sleep(0.01)
        assert proxy.forwarded[(DIALLER, NODE)] == 2 * len(vote_frame(1))
        assert proxy.dropped.get((DIALLER, NODE), 0) == 0
        proxy.heal()
        # The connection lost bytes, so it is closed rather than left out of step.
        assert await answer(reader) is None
        # A new connection works at once.
        reader, writer = await dial(proxy)
        writer.write(vote_frame(3))
        healed = await answer(reader)
        assert healed is not None and healed.correlation == 3
        writer.close()


@async_test(30.0)
async def test_a_partition_drops_both_ways_and_new_connections_too() -> None:
    async with proxied() as proxy:
        proxy.partition(NODE, [DIALLER])
        reader, writer = await dial(proxy)
        writer.write(vote_frame(1))
        try:
            got = await answer(reader, timeout_s=0.5)
        except TimeoutError:
            got = None
        assert got is None
        assert proxy.dropped[(DIALLER, NODE)] == len(vote_frame(1))
        assert (DIALLER, NODE) not in proxy.forwarded
        writer.close()


@async_test(30.0)
async def test_a_slow_link_delivers_late_and_in_order() -> None:
    async with proxied() as proxy:
        proxy.delay(DIALLER, NODE, 0.3)
        reader, writer = await dial(proxy)
        started = time.monotonic()
        writer.write(vote_frame(1))
        writer.write(vote_frame(2))
        first, second = await answer(reader), await answer(reader)
        assert time.monotonic() - started >= 0.3
        assert first is not None and second is not None
        assert (first.correlation, second.correlation) == (1, 2)
        writer.close()
