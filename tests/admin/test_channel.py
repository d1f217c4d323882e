"""ControllerChannel's routing against real gRPC servers on loopback (fake_nodes.FakeNode):
follow NOT_CONTROLLER, skip unreachable servers, wait out elections, time out with the servers
named, send credentials, and refuse bad addresses."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from raftmeta.channel import ControllerChannel, parse_bootstrap_servers
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.rpc import admin_pb2 as pb
from raftmeta.rpc import broker_pb2
from tests.admin.fake_nodes import (
    FakeCluster,
    FakeNode,
    refusing_endpoint,
    silent_endpoint,
)
from tests.support.scenario import run_scenario, run_with_deadline
from tests.support.waiting import wait_until_async

DESCRIBE = "Admin/DescribeCluster"


def run(
    scenario: Callable[[FakeCluster, list[FakeNode]], Coroutine[Any, Any, None]], count: int = 3
) -> None:
    run_scenario(lambda cluster: scenario(cluster, cluster.nodes), FakeCluster(count))


def test_a_follower_redirects_to_the_controller_and_later_calls_go_straight_there() -> None:
    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        follower, controller, _ = nodes
        cluster.controller = controller
        async with ControllerChannel(follower.endpoint) as channel:
            response = await channel.call(DESCRIBE, pb.DescribeClusterRequest())
            assert response.controller_id == controller.node_id
            assert channel.controller_endpoint == controller.endpoint
            await channel.call(DESCRIBE, pb.DescribeClusterRequest())
        assert (follower.calls, controller.calls) == (1, 2)

    run(scenario)


def test_an_unreachable_bootstrap_server_is_skipped() -> None:
    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        cluster.controller = nodes[0]
        with refusing_endpoint() as dead:
            async with ControllerChannel([dead, nodes[0].endpoint]) as channel:
                response = await channel.call(DESCRIBE, pb.DescribeClusterRequest())
        assert response.controller_id == 1

    run(scenario, count=1)


def test_while_no_controller_is_known_the_channel_keeps_trying_until_one_is() -> None:
    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        cluster.elect_after_calls = (5, nodes[2])
        servers = ",".join(n.endpoint for n in nodes[:2])  # the controller is not among them
        async with ControllerChannel(servers) as channel:
            response = await channel.call(DESCRIBE, pb.DescribeClusterRequest())
        assert response.controller_id == 3
        assert nodes[0].calls >= 2 and nodes[1].calls >= 2, "bootstrap servers taken in turn"

    run(scenario)


def test_the_controller_going_away_sends_the_next_call_to_its_successor() -> None:
    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        cluster.controller = nodes[0]
        async with ControllerChannel([n.endpoint for n in nodes]) as channel:
            await channel.call(DESCRIBE, pb.DescribeClusterRequest())
            await nodes[0].stop()
            cluster.controller = nodes[1]
            response = await channel.call(DESCRIBE, pb.DescribeClusterRequest())
        assert response.controller_id == 2

    run(scenario)


def test_a_server_that_never_answers_the_connection_is_passed_over() -> None:
    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        cluster.controller = nodes[0]
        with silent_endpoint() as paused:
            async with ControllerChannel([paused, nodes[0].endpoint]) as channel:
                started = time.monotonic()
                response = await channel.call(DESCRIBE, pb.DescribeClusterRequest())
                elapsed = time.monotonic() - started
            async with ControllerChannel(paused) as alone:
                with pytest.raises(KafkaError) as caught:
                    await alone.call(DESCRIBE, pb.DescribeClusterRequest(), timeout_ms=500)
        assert response.controller_id == 1
        assert elapsed < 3.0, "the silent server did not hold the request until its deadline"
        assert caught.value.code is ErrorCode.REQUEST_TIMED_OUT
        assert f"{paused}: unreachable" in caught.value.message

    run(scenario, count=1)


def test_a_controller_that_stops_answering_is_left_once_the_others_name_a_new_leader() -> None:
    """The frozen node keeps its connection and answers keepalive pings (it is only its
    handler that hangs), so nothing but asking the other servers can find the new leader."""

    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        frozen, successor, _ = nodes
        cluster.controller = frozen
        servers = [node.endpoint for node in nodes]
        async with ControllerChannel(servers, request_timeout_ms=8_000) as channel:
            await channel.call(DESCRIBE, pb.DescribeClusterRequest())
            assert channel.controller_endpoint == frozen.endpoint
            frozen.frozen = True
            waiting = asyncio.ensure_future(channel.call(DESCRIBE, pb.DescribeClusterRequest()))
            await wait_until_async(lambda: frozen.calls == 2, "the call at the frozen node", 5)
            cluster.controller, cluster.epoch = successor, 2
            response = await waiting
        assert response.controller_id == successor.node_id
        assert channel.controller_endpoint == successor.endpoint

    run(scenario)


def test_a_slow_controller_the_others_still_name_is_waited_for() -> None:
    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        slow = nodes[0]
        cluster.controller = slow
        async with ControllerChannel([n.endpoint for n in nodes], request_timeout_ms=1_500) as c:
            await c.call(DESCRIBE, pb.DescribeClusterRequest())
            slow.frozen = True
            with pytest.raises(KafkaError) as caught:
                await c.call(DESCRIBE, pb.DescribeClusterRequest())
        assert caught.value.code is ErrorCode.REQUEST_TIMED_OUT
        assert [n.calls for n in nodes] == [2, 0, 0], "no other node was sent the request"

    run(scenario)


def test_a_call_cancelled_by_its_caller_while_leader_checks_run_is_cancelled() -> None:
    """The channel cancels a call itself when the leader moves; the caller's own
    cancellation must still end the call as cancelled, not as a move or an answer."""

    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        slow = nodes[0]
        cluster.controller = slow
        async with ControllerChannel([n.endpoint for n in nodes], request_timeout_ms=8_000) as c:
            await c.call(DESCRIBE, pb.DescribeClusterRequest())
            slow.frozen = True
            waiting = asyncio.ensure_future(c.call(DESCRIBE, pb.DescribeClusterRequest()))
            await wait_until_async(
                lambda: nodes[1].describe_quorum_calls >= 1, "a leader check under way", 5
            )
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            assert waiting.cancelled()
            # The channel still answers once the controller does.
            slow.frozen = False
            response = await c.call(DESCRIBE, pb.DescribeClusterRequest())
        assert response.controller_id == slow.node_id
        assert [n.calls for n in nodes] == [3, 0, 0], "the cancelled call went nowhere else"

    run(scenario)


def test_calls_waiting_on_one_slow_controller_share_its_leader_checks() -> None:
    """Many calls in flight (a host of brokers heartbeating on one channel) ask the other
    servers once per check round, not once per call."""
    calls = 20

    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        slow = nodes[0]
        cluster.controller = slow
        async with ControllerChannel([n.endpoint for n in nodes], request_timeout_ms=1_500) as c:
            await c.call(DESCRIBE, pb.DescribeClusterRequest())
            slow.frozen = True
            outcomes = await asyncio.gather(
                *(c.call(DESCRIBE, pb.DescribeClusterRequest()) for _ in range(calls)),
                return_exceptions=True,
            )
        assert all(isinstance(o, KafkaError) for o in outcomes), outcomes
        asked = [node.describe_quorum_calls for node in nodes[1:]]
        # About four rounds fit in the 1 s after the first check at 0.5 s; per call it
        # would be four times ``calls``.
        assert all(1 <= count <= 8 for count in asked), asked

    run(scenario)


def test_an_error_other_than_not_controller_is_returned_to_the_caller() -> None:
    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        cluster.controller = nodes[0]
        nodes[0].answer_error = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        async with ControllerChannel(nodes[0].endpoint) as channel:
            response = await channel.call(DESCRIBE, pb.DescribeClusterRequest())
        assert response.header.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        assert nodes[0].calls == 1

    run(scenario, count=1)


def test_no_controller_until_the_deadline_is_request_timed_out_naming_the_servers() -> None:
    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        with refusing_endpoint() as dead:
            async with ControllerChannel([dead, nodes[0].endpoint]) as channel:
                started = time.monotonic()
                with pytest.raises(KafkaError) as caught:
                    await channel.call(DESCRIBE, pb.DescribeClusterRequest(), timeout_ms=300)
                elapsed = time.monotonic() - started
        assert caught.value.code is ErrorCode.REQUEST_TIMED_OUT
        assert dead in caught.value.message and nodes[0].endpoint in caught.value.message
        assert "unreachable" in caught.value.message
        assert "knows none" in caught.value.message
        assert 0.3 <= elapsed < 5.0

    run(scenario, count=1)


def test_every_server_unreachable_times_out_at_the_channel_default() -> None:
    async def scenario() -> None:
        with refusing_endpoint() as first, refusing_endpoint() as second:
            async with ControllerChannel(f"{first},{second}", request_timeout_ms=200) as channel:
                with pytest.raises(KafkaError) as caught:
                    await channel.call(
                        "BrokerLifecycle/BrokerHeartbeat", broker_pb2.BrokerHeartbeatRequest()
                    )
        assert caught.value.code is ErrorCode.REQUEST_TIMED_OUT
        assert first in caught.value.message and second in caught.value.message
        assert "200 ms" in caught.value.message

    run_with_deadline(scenario(), 10)


def test_the_bearer_token_travels_in_call_metadata() -> None:
    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        cluster.controller = nodes[1]
        async with ControllerChannel(nodes[0].endpoint, bearer_token="s3cret") as channel:
            await channel.call(DESCRIBE, pb.DescribeClusterRequest())
        async with ControllerChannel(nodes[1].endpoint) as anonymous:
            await anonymous.call(DESCRIBE, pb.DescribeClusterRequest())
        assert nodes[0].metadata[0]["authorization"] == "Bearer s3cret"
        assert nodes[1].metadata[0]["authorization"] == "Bearer s3cret"
        assert "authorization" not in nodes[1].metadata[1]

    run(scenario, count=2)


def test_a_method_the_server_does_not_serve_fails_at_once() -> None:
    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        cluster.controller = nodes[0]
        async with ControllerChannel(nodes[0].endpoint) as channel:
            with pytest.raises(KafkaError) as caught:
                await channel.call("Admin/DeleteTopics", pb.DeleteTopicsRequest())
            with pytest.raises(ValueError, match="unknown method"):
                await channel.call("Admin/Nope", pb.DeleteTopicsRequest())
        assert caught.value.code is ErrorCode.UNKNOWN_SERVER_ERROR
        assert "UNIMPLEMENTED" in caught.value.message

    run(scenario, count=1)


def test_a_closed_channel_refuses_calls() -> None:
    async def scenario(cluster: FakeCluster, nodes: list[FakeNode]) -> None:
        channel = ControllerChannel(nodes[0].endpoint)
        await channel.close()
        with pytest.raises(RuntimeError, match="closed"):
            await channel.call(DESCRIBE, pb.DescribeClusterRequest())

    run(scenario, count=1)


@pytest.mark.parametrize(
    ("servers", "complaint"),
    [
        ("", "at least one"),
        (" , ", "at least one"),
        ([], "at least one"),
        ("localhost", "not host:port"),
        (":9093", "not host:port"),
        ("localhost:http", "port must be a number"),
        ("localhost:0", "port must be a number"),
        ("localhost:70000", "port must be a number"),
        ("::1:9093", "IPv6"),
        ("my host:9093", "space"),
        ([9093], "host:port strings"),
    ],
)
def test_bad_bootstrap_servers_are_a_clear_value_error(servers: object, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        ControllerChannel(servers)  # type: ignore[arg-type]


def test_bootstrap_servers_are_split_trimmed_and_deduplicated() -> None:
    assert parse_bootstrap_servers(" a:1, b:2,a:1,,[::1]:3 ") == ("a:1", "b:2", "[::1]:3")
    assert parse_bootstrap_servers(["a:1,b:2", "c:3"]) == ("a:1", "b:2", "c:3")


@pytest.mark.parametrize("timeout", [0, -5, True, 1.5])
def test_a_bad_request_timeout_is_a_value_error(timeout: object) -> None:
    with pytest.raises(ValueError, match="request timeout"):
        ControllerChannel("a:1", request_timeout_ms=timeout)  # type: ignore[arg-type]
