"""A write whose answer is lost is answered by its retry, not echoed back as an error.

A real three-node quorum in one process, reached through TCP proxies. The leader's proxy lets
a CreateTopics through and holds back the answer; once every node has committed the topic the
leader is killed and the connection cut. The AdminClient retries the same call (the same
request id) against the new leader, which answers with the first outcome: success, where a
client without request ids is told TOPIC_ALREADY_EXISTS about the topic it just created.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.admin import AsyncAdminClient, NewTopic
from raftmeta.channel import ControllerChannel
from tests.admin.brokers import register_unfenced
from tests.support.controller_quorum import DEADLINE_S, ControllerQuorum
from tests.support.scenario import run_scenario
from tests.support.tcp_proxy import TcpProxy
from tests.support.waiting import wait_until_async

QUIET = {"auto.leader.rebalance.enable": False, "broker.session.timeout.ms": 60_000}


async def lose_the_answer_then_kill_the_leader(
    cluster: ControllerQuorum, proxies: dict[int, TcpProxy], leader_id: int, committed: str
) -> None:
    """Hold back the leader's answers until ``committed`` names a topic every node's image
    holds, then kill the leader and cut its clients' connections."""
    members = list(cluster.members.values())

    def everywhere() -> bool:
        return all(m.controller.committed_image.topic_by_name(committed) for m in members)

    await wait_until_async(everywhere, f"{committed} committed on every node", DEADLINE_S)
    assert proxies[leader_id].held_bytes > 0, "the answer was held back"
    await cluster.stop(leader_id, graceful=False)
    for proxy in proxies.values():
        proxy.cut()


def test_a_create_whose_answer_was_lost_succeeds_on_retry_not_topic_already_exists(
    tmp_path: Path,
) -> None:
    proxies: dict[int, TcpProxy] = {}

    async def scenario(cluster: ControllerQuorum) -> None:
        async with ControllerChannel(cluster.addresses.values()) as lifecycle:
            await register_unfenced(lifecycle, [1, 2, 3])
        leader = await cluster.wait_for_active()
        for node_id, port in cluster.ports.items():
            proxies[node_id] = TcpProxy("127.0.0.1", port)
            await proxies[node_id].start()
        # The leader's proxy first: the client's first call goes there and stays there.
        order = [leader.node_id] + [n for n in cluster.ids if n != leader.node_id]
        servers = ",".join(proxies[n].address for n in order)
        try:
            async with AsyncAdminClient({"bootstrap.servers": servers}) as admin:
                await admin.describe_cluster()
                proxies[leader.node_id].hold_answers()
                created = admin.create_topics([NewTopic("orders", 2, 3)])["orders"]
                await lose_the_answer_then_kill_the_leader(
                    cluster, proxies, leader.node_id, "orders"
                )
                await created  # an echo would raise TOPIC_ALREADY_EXISTS here
                described = await admin.describe_topics(["orders"])["orders"]
        finally:
            for proxy in proxies.values():
                await proxy.close()
        assert len(described.partitions) == 2
        # The retry wrote nothing: one outcome, of the one logical call, on every survivor.
        for member in cluster.members.values():
            kept = member.controller.committed_image.requests_seen.records()
            assert [record.operation for record in kept] == ["CreateTopics"]

    run_scenario(scenario, ControllerQuorum(tmp_path, QUIET), 60)


def test_without_request_ids_the_lost_answer_comes_back_as_an_echo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the test above guards against, shown with the ids switched off."""
    monkeypatch.setattr("raftmeta.admin.grpc_transport.new_request_id", lambda: b"")
    proxies: dict[int, TcpProxy] = {}

    async def scenario(cluster: ControllerQuorum) -> None:
        async with ControllerChannel(cluster.addresses.values()) as lifecycle:
            await register_unfenced(lifecycle, [1, 2, 3])
        leader = await cluster.wait_for_active()
        for node_id, port in cluster.ports.items():
            proxies[node_id] = TcpProxy("127.0.0.1", port)
            await proxies[node_id].start()
        order = [leader.node_id] + [n for n in cluster.ids if n != leader.node_id]
        servers = ",".join(proxies[n].address for n in order)
        try:
            async with AsyncAdminClient({"bootstrap.servers": servers}) as admin:
                await admin.describe_cluster()
                proxies[leader.node_id].hold_answers()
                created = admin.create_topics([NewTopic("orders", 2, 3)])["orders"]
                await lose_the_answer_then_kill_the_leader(
                    cluster, proxies, leader.node_id, "orders"
                )
                with pytest.raises(Exception, match="TOPIC_ALREADY_EXISTS"):
                    await created
        finally:
            for proxy in proxies.values():
                await proxy.close()

    run_scenario(scenario, ControllerQuorum(tmp_path, QUIET), 60)
