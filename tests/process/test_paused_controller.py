"""A controller that stops answering in the middle of a call (SIGSTOP: a stalled VM, a long GC
pause, a hung disk) must not hold a client until its deadline.

The client's connection to it is established, so nothing fails at the TCP level; gRPC
keepalive pings on that connection go unanswered, the call fails as UNAVAILABLE, and the
client moves to another server and finds the newly elected controller.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from raftmeta.admin.quorum import wait_for_leader
from raftmeta.channel import ControllerChannel
from raftmeta.devkit.cluster import DevCluster
from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2
from tests.process.helpers import DEADLINE_S, SCENARIO_TIMEOUT_S, free_base_port
from tests.support.scenario import run_with_deadline

REQUEST_TIMEOUT_MS = 60_000
"""Far longer than a failover: a call that waited for the paused node would time out."""


async def describe(channel: ControllerChannel) -> admin_pb2.DescribeClusterResponse:
    request = admin_pb2.DescribeClusterRequest()
    response: admin_pb2.DescribeClusterResponse = await channel.call(
        "Admin/DescribeCluster", request
    )
    return response


async def scenario(cluster: DevCluster) -> None:
    channel = ControllerChannel(cluster.bootstrap_servers, request_timeout_ms=REQUEST_TIMEOUT_MS)
    async with channel:
        first = await describe(channel)
        assert first.header.error_code == ErrorCode.NONE, first
        controller = channel.controller_endpoint
        assert controller is not None
        (paused,) = [
            cluster.nodes[node_id]
            for node_id, port in cluster.ports.items()
            if controller == f"127.0.0.1:{port}"
        ]
        paused.signal(signal.SIGSTOP)
        try:
            loop = asyncio.get_running_loop()
            started = loop.time()
            second = await describe(channel)
            took_s = loop.time() - started
        finally:
            paused.signal(signal.SIGCONT)
        assert second.header.error_code == ErrorCode.NONE, second
        assert channel.controller_endpoint != controller
        # Not a timing claim about speed: a call that waited for the paused node would only
        # have ended with REQUEST_TIMED_OUT at its 60 s deadline.
        assert took_s < REQUEST_TIMEOUT_MS / 1000 / 2, took_s


def test_a_call_to_a_paused_controller_fails_over_to_the_new_one(tmp_path: Path) -> None:
    cluster = DevCluster(tmp_path / "cluster", free_base_port(), {}, brokers=0)
    cluster.prepare()
    try:
        cluster.start()
        wait_for_leader(cluster.bootstrap_servers, cluster.cluster_id, DEADLINE_S)
        run_with_deadline(scenario(cluster), SCENARIO_TIMEOUT_S)
    finally:
        cluster.stop()
