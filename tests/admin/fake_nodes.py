"""Stand-in nodes for testing the client's routing before (and apart from) the real servicers.

Each is a real grpc.aio server on 127.0.0.1 that answers DescribeCluster either as the active
controller or with NOT_CONTROLLER naming whoever the test says leads. They are test harness: the
routing rules they exercise are the client's, not theirs.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

import grpc

from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as pb
from raftmeta.rpc import admin_pb2_grpc as pb_grpc
from raftmeta.rpc import raft_pb2 as rpb
from raftmeta.rpc.options import SERVER_OPTIONS


@dataclass
class FakeCluster:
    """``count`` fake nodes and who leads them (``None`` while an election runs)."""

    scenario_timeout_s: ClassVar[float] = 20.0

    count: int = 3
    nodes: list[FakeNode] = field(default_factory=list)
    controller: FakeNode | None = None
    epoch: int = 1
    """The epoch DescribeQuorum reports the controller in."""
    calls: int = 0
    elect_after_calls: tuple[int, FakeNode] | None = None
    """Once this many calls reached any node, the given node becomes the controller."""

    def count_call(self) -> None:
        self.calls += 1
        if self.elect_after_calls is not None and self.calls >= self.elect_after_calls[0]:
            self.controller = self.elect_after_calls[1]
            self.elect_after_calls = None

    async def start(self) -> None:
        self.nodes = [await FakeNode(i + 1, self).start() for i in range(self.count)]

    async def close(self) -> None:
        for node in self.nodes:
            await node.stop()


class FakeNode(pb_grpc.AdminServicer):
    def __init__(self, node_id: int, cluster: FakeCluster) -> None:
        self.node_id = node_id
        self.cluster = cluster
        self.calls = 0
        self.metadata: list[dict[str, str]] = []
        self.answer_error = ErrorCode.NONE
        self.describe_quorum_calls = 0
        self.frozen = False
        """DescribeCluster never answers (a paused process whose connection stays open)."""
        self.endpoint = ""
        self._server: grpc.aio.Server | None = None

    async def start(self, port: int = 0) -> FakeNode:
        # The real servers' options: they accept the clients' keepalive pings.
        server = grpc.aio.server(options=SERVER_OPTIONS)
        pb_grpc.add_AdminServicer_to_server(self, server)
        bound = server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        self._server = server
        self.endpoint = f"127.0.0.1:{bound}"
        return self

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.stop(None)
            self._server = None

    async def DescribeCluster(
        self, request: pb.DescribeClusterRequest, context: Any
    ) -> pb.DescribeClusterResponse:
        self.calls += 1
        self.cluster.count_call()
        self.metadata.append({k: v for k, v in context.invocation_metadata()})
        if self.frozen:
            await asyncio.Event().wait()
        controller = self.cluster.controller
        if controller is not self:
            header = pb.ResponseHeader(
                error_code=ErrorCode.NOT_CONTROLLER,
                error_message="not the controller",
                controller_id=controller.node_id if controller else -1,
                controller_endpoint=controller.endpoint if controller else "",
            )
            return pb.DescribeClusterResponse(header=header)
        header = pb.ResponseHeader(error_code=self.answer_error, controller_id=self.node_id)
        return pb.DescribeClusterResponse(header=header, controller_id=self.node_id)

    async def DescribeQuorum(
        self, request: rpb.DescribeQuorumRequest, context: Any
    ) -> rpb.DescribeQuorumResponse:
        self.describe_quorum_calls += 1
        controller = self.cluster.controller
        if controller is self:
            return rpb.DescribeQuorumResponse(
                leader_id=self.node_id, leader_epoch=self.cluster.epoch
            )
        return rpb.DescribeQuorumResponse(
            error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
            leader_id=controller.node_id if controller else -1,
            leader_epoch=self.cluster.epoch if controller else -1,
            leader_endpoint=controller.endpoint if controller else "",
        )


@contextmanager
def refusing_endpoint() -> Iterator[str]:
    """An endpoint that refuses connections: a port bound but not listening, held until the
    end of the block so no other process can take it meanwhile."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{sock.getsockname()[1]}"


@contextmanager
def silent_endpoint() -> Iterator[str]:
    """An endpoint that takes connections but never speaks, like a paused process: the kernel
    completes the TCP handshake on the listening socket, nobody answers above it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield f"127.0.0.1:{sock.getsockname()[1]}"
