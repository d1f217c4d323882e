"""``controller.grpc.thread.enable``: gRPC served from a loop on its own thread, every handler
still run on the node's loop (raftmeta.server.serving_thread)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import raft_pb2 as rpb
from raftmeta.rpc import raft_pb2_grpc as rpb_grpc
from raftmeta.server.controller_node import ControllerNode
from tests.support.controller_quorum import ControllerQuorum
from tests.support.scenario import run_scenario


def _recording_loops(member: ControllerNode, seen: list[asyncio.AbstractEventLoop]) -> None:
    controller = member.controller
    original = controller.create_topics

    async def recording(*args: Any, **kwargs: Any) -> Any:
        seen.append(asyncio.get_running_loop())
        return await original(*args, **kwargs)

    controller.create_topics = recording  # type: ignore[method-assign]


def test_grpc_runs_on_its_own_thread_and_handlers_on_the_nodes_loop(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        home = asyncio.get_running_loop()
        await cluster.register(1)
        active = await cluster.wait_for_active()
        serving = active.grpc_loop
        assert serving is not None and serving is not home and serving.is_running()
        # The serving loop runs on another thread than the node's.
        on_thread: list[int] = []
        serving.call_soon_threadsafe(lambda: on_thread.append(threading.get_ident()))
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(asyncio.sleep(0), serving))
        assert on_thread and on_thread[0] != threading.get_ident()
        seen: list[asyncio.AbstractEventLoop] = []
        _recording_loops(active, seen)
        created = await cluster.create_topic("on-the-home-loop")
        assert created.error_code == ErrorCode.NONE
        assert seen == [home]

    run_scenario(scenario, ControllerQuorum(tmp_path, {"controller.grpc.thread.enable": True}))


def test_by_default_grpc_shares_the_nodes_loop(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        await cluster.register(1)
        active = await cluster.wait_for_active()
        assert active.grpc_loop is None
        created = await cluster.create_topic("on-the-one-loop")
        assert created.error_code == ErrorCode.NONE

    run_scenario(scenario, ControllerQuorum(tmp_path))


@pytest.mark.parametrize("own_thread", [True, False])
def test_raft_over_grpc_is_stepped_on_the_nodes_loop(tmp_path: Path, own_thread: bool) -> None:
    """With the grpc transport every Raft message arrives through the gRPC server: the quorum
    elects, commits and answers DescribeQuorum over it, whichever loop serves gRPC."""

    async def scenario(cluster: ControllerQuorum) -> None:
        await cluster.register(1)
        active = await cluster.wait_for_active()
        assert (active.grpc_loop is not None) is own_thread
        assert active.settings.transport == "grpc"
        created = await cluster.create_topic("replicated-over-grpc")
        assert created.error_code == ErrorCode.NONE
        described = await rpb_grpc.RaftStub(cluster.channel(active.node_id)).DescribeQuorum(
            rpb.DescribeQuorumRequest(cluster_id="raftmeta-controller-test")
        )
        assert described.error_code == ErrorCode.NONE
        assert described.leader_id == active.node_id
        assert len(described.voters) == 3
        listed = await (await cluster.active_admin()).DescribeTopics(
            apb.DescribeTopicsRequest(all_topics=True)
        )
        assert [topic.name for topic in listed.topics] == ["replicated-over-grpc"]

    run_scenario(
        scenario,
        ControllerQuorum(
            tmp_path,
            {
                "controller.quorum.transport": "grpc",
                "controller.grpc.thread.enable": own_thread,
            },
        ),
    )
