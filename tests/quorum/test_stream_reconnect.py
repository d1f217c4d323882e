"""A stream link waiting out its reconnect backoff tries again once the peer calls this node.

A voter restarted while another node had no need of it leaves that node's link to it in
backoff (up to 500 ms, plus the gRPC channel's own for the ``DescribeEndpoints`` that finds
its stream port). When it then becomes the leader or the first successor of a handover, the
peer that just heard from it must reach it at once: its first fetch or vote otherwise waits out
both backoffs, which made graceful handovers after a restart take half a second.

The backoffs are stretched here far past the test's deadline, so only the cut-short path can
reach the peer in time.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from raftmeta.devkit.ports import free_ports
from raftmeta.quorum import NodeSettings, RaftNode, serve_raft
from raftmeta.quorum import peers as grpc_peers
from raftmeta.quorum.settings import STREAM
from raftmeta.quorum.stream import peers as stream_peers
from raftmeta.quorum.stream.peers import StreamPeers
from raftmeta.quorum.transport import PeerDownError
from raftmeta.quorum.transport_choice import node_connect
from raftmeta.raft.config import RaftConfig
from raftmeta.raft.messages import FetchRequest, FetchResponse
from raftmeta.storage import MetadataDir
from tests.quorum.harness import CLUSTER_ID, DEADLINE_S
from tests.support.waiting import wait_until_async

LONG_BACKOFF_S = 600.0
QUIET = RaftConfig(election_timeout_ms=600_000, fetch_timeout_ms=1_200_000)
"""Timeouts that keep the nodes from campaigning during a test, so no Raft call between them
can end a backoff for it."""


@pytest.fixture(autouse=True)
def long_backoffs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_peers, "MIN_BACKOFF_S", LONG_BACKOFF_S)
    monkeypatch.setattr(stream_peers, "MAX_BACKOFF_S", LONG_BACKOFF_S)
    long_ms = int(LONG_BACKOFF_S * 1000)
    options = tuple(
        (name, long_ms) if "reconnect_backoff" in name else (name, value)
        for name, value in grpc_peers.CHANNEL_OPTIONS
    )
    monkeypatch.setattr(grpc_peers, "CHANNEL_OPTIONS", options)


def test_a_call_from_a_restarted_peer_ends_the_backoff_of_the_link_to_it(tmp_path: Path) -> None:
    async def main() -> None:
        local_port, peer_port = free_ports(2)
        addresses = {1: f"127.0.0.1:{local_port}", 2: f"127.0.0.1:{peer_port}"}
        fetch = FetchRequest(0, 0, 0)
        links = StreamPeers(1, CLUSTER_ID, addresses, request_timeout_ms=2_000)
        try:
            # Node 2 is down: the attempt fails and the link (and the gRPC channel that
            # asks for the stream port) back off far longer than this test runs.
            with pytest.raises(PeerDownError):
                await links.call(2, fetch)
            MetadataDir.format(tmp_path, 2, CLUSTER_ID)
            settings = NodeSettings(
                node_id=2,
                voters={},
                data_dir=tmp_path,
                cluster_id=CLUSTER_ID,
                listen_port=peer_port,
                transport=STREAM,
                stream_listen=("127.0.0.1", 0),
            )
            node = RaftNode(settings, node_connect(STREAM, None))
            server = await serve_raft(node)
            await node.start(addresses)
            try:
                # Back, but nothing told the link yet: still backing off.
                with pytest.raises(PeerDownError):
                    await links.call(2, fetch)
                links.heard_from(2)
                answer = await asyncio.wait_for(links.call(2, fetch), DEADLINE_S)
                assert isinstance(answer, FetchResponse)
            finally:
                await node.stop(graceful=False)
                await server.stop()
        finally:
            await links.close()

    asyncio.run(main())


def test_a_peer_that_starts_and_asks_for_the_stream_ends_the_backoff_of_the_link_to_it(
    tmp_path: Path,
) -> None:
    """A voter that starts asks every peer where its stream is (DescribeEndpoints), ahead of
    any Raft call: that alone tells them it is up, so their links to it reconnect at once
    rather than after a backoff started while it was down."""

    async def start(node_id: int, addresses: dict[int, str]) -> tuple[RaftNode, Any]:
        data_dir = tmp_path / f"node-{node_id}"
        MetadataDir.format(data_dir, node_id, CLUSTER_ID)
        settings = NodeSettings(
            node_id=node_id,
            voters={},
            data_dir=data_dir,
            cluster_id=CLUSTER_ID,
            listen_port=int(addresses[node_id].rsplit(":", 1)[1]),
            transport=STREAM,
            stream_listen=("127.0.0.1", 0),
            raft=QUIET,
        )
        node = RaftNode(settings, node_connect(STREAM, None))
        server = await serve_raft(node)
        await node.start(addresses)
        return node, server

    async def main() -> None:
        first_port, second_port = free_ports(2)
        addresses = {1: f"127.0.0.1:{first_port}", 2: f"127.0.0.1:{second_port}"}
        second, second_server = await start(2, addresses)
        channel = second._channel  # the node's own links are what is tested
        assert channel is not None
        fetch = FetchRequest(0, 0, 0)
        try:
            # Node 1 is down: node 2's link to it fails and backs off far past this test.
            with pytest.raises(PeerDownError):
                await channel.call(1, fetch)
            first, first_server = await start(1, addresses)
            try:

                async def reached() -> bool:
                    try:
                        return isinstance(await channel.call(1, fetch), FetchResponse)
                    except PeerDownError:
                        return False

                await wait_until_async(reached, "node 2's link to the started node 1", DEADLINE_S)
            finally:
                await first.stop(graceful=False)
                await first_server.stop()
        finally:
            await second.stop(graceful=False)
            await second_server.stop()

    asyncio.run(main())
