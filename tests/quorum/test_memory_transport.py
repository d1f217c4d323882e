"""The transport seam is real: nodes elect, commit and hand over with no gRPC at all.

``MemoryNetwork`` implements both sides of ``raftmeta.quorum.transport`` in a few lines: a
channel's call is the destination node's ``handle_request``. gRPC's server and channel
constructors are made to fail, so nothing here can reach a socket.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import grpc
import pytest

from raftmeta.quorum import (
    NodeSettings,
    NotLeaderError,
    RaftChannel,
    RaftClient,
    RaftEndpoint,
    RaftNode,
)
from raftmeta.raft.messages import Request, Response
from raftmeta.raft.roles import Role
from raftmeta.storage import MetadataDir
from tests.quorum.harness import CLUSTER_ID, DEADLINE_S, Changes, Recorder
from tests.support.waiting import wait_until_async

VOTERS = {1: "memory:1", 2: "memory:2", 3: "memory:3"}


class MemoryNetwork:
    """Every node attached here can call every other one, in this event loop."""

    def __init__(self) -> None:
        self.endpoints: dict[int, RaftEndpoint] = {}
        self.calls = 0

    def connect(
        self,
        local_id: int,
        cluster_id: str,
        addresses: Mapping[int, str],
        request_timeout_ms: int,
    ) -> RaftChannel:
        return MemoryChannel(self, local_id, cluster_id)


class MemoryChannel:
    def __init__(self, network: MemoryNetwork, local_id: int, cluster_id: str) -> None:
        self._network = network
        self._local_id = local_id
        self._cluster_id = cluster_id

    async def call(self, destination: int, request: Request) -> Response | None:
        endpoint = self._network.endpoints.get(destination)
        if endpoint is None or endpoint.cluster_id != self._cluster_id:
            return None
        self._network.calls += 1
        try:
            return await endpoint.handle_request(self._local_id, request)
        except (TimeoutError, ConnectionError):
            return None

    def heard_from(self, peer_id: int) -> None:
        pass

    async def close(self) -> None:
        pass


@pytest.fixture(autouse=True)
def no_grpc(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the node reached for gRPC")

    monkeypatch.setattr(grpc.aio, "server", refuse)
    monkeypatch.setattr(grpc.aio, "insecure_channel", refuse)


def test_nodes_elect_commit_and_hand_over_through_an_in_memory_transport(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        network = MemoryNetwork()
        changes = Changes()
        nodes: dict[int, RaftNode] = {}
        clients: dict[int, RaftClient] = {}
        recorders: dict[int, Recorder] = {}
        for node_id in VOTERS:
            data_dir = tmp_path / f"node-{node_id}"
            MetadataDir.format(data_dir, node_id, CLUSTER_ID)
            node = RaftNode(
                NodeSettings(node_id=node_id, voters=VOTERS, data_dir=data_dir),
                network.connect,
            )
            recorders[node_id] = Recorder(node_id, changes)
            clients[node_id] = RaftClient(node, recorders[node_id])
            network.endpoints[node_id] = node
            nodes[node_id] = node

        def leader(newer_than: int = -1) -> int | None:
            for node_id, node in nodes.items():
                if not node.running or node.core.role is not Role.LEADER:
                    continue
                epoch = node.core.epoch
                if epoch > newer_than and recorders[node_id].leader == (node_id, epoch):
                    return node_id
            return None

        try:
            for node in nodes.values():
                await node.start()
            await wait_until_async(leader, "a leader", DEADLINE_S, changed=changes.next_change)
            first = leader()
            assert first is not None
            _, committed = clients[first].append([b"a", b"b"])
            offset = await asyncio.wait_for(committed, DEADLINE_S)
            await wait_until_async(
                lambda: all(r.committed_offset > offset for r in recorders.values()),
                "every node to commit the append",
                DEADLINE_S,
                changed=changes.next_change,
            )
            assert all(r.values == [b"a", b"b"] for r in recorders.values())

            description = nodes[first].describe_quorum()
            assert description.leader_id == first
            assert [v.replica_id for v in description.voters] == sorted(VOTERS)
            follower = next(n for n in nodes if n != first)
            with pytest.raises(NotLeaderError):
                nodes[follower].describe_quorum()

            epoch = nodes[first].core.epoch
            await nodes.pop(first).stop(graceful=True)
            await wait_until_async(
                lambda: leader(newer_than=epoch),
                "a leader of a newer epoch",
                DEADLINE_S,
                changed=changes.next_change,
            )
            second = leader(newer_than=epoch)
            assert second is not None and second != first
            _, committed = clients[second].append([b"c"])
            await asyncio.wait_for(committed, DEADLINE_S)
            assert network.calls > 0
        finally:
            for node in nodes.values():
                await node.stop(graceful=False)

    asyncio.run(asyncio.wait_for(main(), 45.0))
