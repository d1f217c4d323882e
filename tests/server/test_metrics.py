"""Prometheus metrics scraped over real HTTP from real nodes, parsed with prometheus_client.

Each test reads the endpoint the way Prometheus does and checks that values move with what
the quorum did: who leads, what committed, which elections ran, which brokers and partitions
are down, what waits in the purgatory.
"""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.common.topics import NewTopic
from raftmeta.errors import ErrorCode
from raftmeta.quorum import NodeSettings, Peers, RaftNode
from raftmeta.rpc import broker_pb2 as bpb
from raftmeta.server.controller_node import ControllerNode
from raftmeta.server.metrics import MetricsServer, start_metrics
from tests.controller.harness import Harness, run_async
from tests.controller.test_periodic import moved_to_second_replica
from tests.support.controller_quorum import ControllerQuorum
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]

STEADY = {
    "controller.quorum.election.timeout.ms": 300,
    "controller.quorum.fetch.timeout.ms": 2000,
}
"""Nothing here fails over: a leader that stays put on a busy machine keeps the checks simple."""


def _fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        body: bytes = response.read()
    return body.decode()


async def scrape(server: MetricsServer) -> Samples:
    """One scrape, off the event loop (the endpoint is served on it)."""
    text = await asyncio.to_thread(_fetch, server.url)
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def test_a_quorum_reports_roles_commits_elections_and_cluster_health(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        servers: dict[int, MetricsServer] = {}
        try:
            for node_id, member in cluster.members.items():
                servers[node_id] = start_metrics(
                    0, member.node, member.controller, client=member.client, host="127.0.0.1"
                )
            active = await cluster.wait_for_active()
            before = {node_id: await scrape(server) for node_id, server in servers.items()}
            leader_view = before[active.node_id]
            assert value(leader_view, "raftmeta_raft_role", role="leader") == 1
            assert value(leader_view, "raftmeta_raft_role", role="follower") == 0
            assert value(leader_view, "raftmeta_controller_active") == 1
            epoch = value(leader_view, "raftmeta_raft_epoch")
            assert epoch >= 1
            for node_id, samples in before.items():
                if node_id != active.node_id:
                    assert value(samples, "raftmeta_controller_active") == 0
                    assert value(samples, "raftmeta_raft_role", role="leader") == 0
                    assert value(samples, "raftmeta_raft_epoch") == epoch

            # Three brokers and two topics: "solo" lives on broker 1 alone.
            epochs = {b: await cluster.register(b, rack) for b, rack in ((1, "a"), (2, "b"))}
            epochs[3] = await cluster.register(3, "c")
            await cluster.create_topic("spread", partitions=3, replication_factor=3)
            controller = active.controller
            [solo] = await controller.create_topics([NewTopic("solo", assignments={0: (1,)})])
            assert solo.error.code is ErrorCode.NONE
            after = await scrape(servers[active.node_id])
            assert value(after, "raftmeta_raft_high_watermark") > value(
                leader_view, "raftmeta_raft_high_watermark"
            )
            assert value(after, "raftmeta_raft_commit_latency_seconds_count") > value(
                leader_view, "raftmeta_raft_commit_latency_seconds_count"
            )
            assert value(after, "raftmeta_controller_event_queue_time_seconds_count") > 0
            assert value(after, "raftmeta_partitions") == 4
            assert value(after, "raftmeta_topics") == 2
            assert value(after, "raftmeta_brokers", state="unfenced") == 3
            assert value(after, "raftmeta_brokers", state="fenced") == 0
            assert value(after, "raftmeta_partitions_offline") == 0

            # Broker 1 asks to be fenced: "solo" loses its only replica, and the partitions
            # broker 1 led move to others.
            stub = await cluster.active_lifecycle()
            reply = await stub.BrokerHeartbeat(
                bpb.BrokerHeartbeatRequest(
                    broker_id=1,
                    broker_epoch=epochs[1],
                    current_metadata_offset=epochs[1] + 1_000_000,
                    want_fence=True,
                )
            )
            assert reply.header.error_code == 0
            fenced = await scrape(servers[active.node_id])
            assert value(fenced, "raftmeta_brokers", state="fenced") == 1
            assert value(fenced, "raftmeta_brokers", state="unfenced") == 2
            assert value(fenced, "raftmeta_partitions_offline") == 1
            assert value(fenced, "raftmeta_partitions_not_led_by_preferred") >= 2

            # Elections: counted per partition result, by type and outcome.
            await controller.elect_leaders(
                ElectionType.UNCLEAN, [TopicPartition("solo", 0), TopicPartition("nope", 0)]
            )
            counted = await scrape(servers[active.node_id])
            for outcome in ("ELIGIBLE_LEADERS_NOT_AVAILABLE", "UNKNOWN_TOPIC_OR_PARTITION"):
                name = "raftmeta_controller_elections_total"
                assert value(counted, name, type="UNCLEAN", outcome=outcome) == 1

            # Every node replays the same image: a standby reports the same health.
            standby = next(n for n in servers if n != active.node_id)
            await wait_until_async(
                lambda: (
                    cluster.members[standby].controller.committed_image.offset
                    >= controller.committed_image.offset
                ),
                "the standby to replay the fencing",
            )
            standby_view = await scrape(servers[standby])
            assert value(standby_view, "raftmeta_partitions_offline") == 1
            assert value(standby_view, "raftmeta_brokers", state="fenced") == 1
        finally:
            for server in servers.values():
                server.close()

    run_scenario(scenario, ControllerQuorum(tmp_path, STEADY))


@run_async
async def test_purgatory_gauges_count_parked_elections() -> None:
    h = Harness()
    await h.start()
    node = RaftNode(NodeSettings(node_id=1, voters={}, data_dir=Path("/nonexistent")), Peers)
    server = start_metrics(0, node, h.controller, host="127.0.0.1")
    try:
        epochs = await h.add_brokers(2)
        await h.run(h.controller.create_topics([NewTopic("t", assignments={0: (1, 2)})]))
        await h.heartbeat(1, epochs[1], want_fence=True)
        # Broker 2 leads now; broker 2 is fenced too, so the partition has no leader and an
        # unclean election of broker 1 (back and unfenced) is written but not yet committed.
        await h.heartbeat(2, epochs[2], want_fence=True)
        await h.heartbeat(1, epochs[1])
        idle = await scrape(server)
        assert value(idle, "raftmeta_controller_delayed_elect_leader_operations") == 0
        assert value(idle, "raftmeta_controller_purgatory_size") == 0
        # A stopped node reports no role and no Raft numbers.
        assert all(value(idle, "raftmeta_raft_role", role=r) == 0 for r in ("leader", "follower"))
        assert ("raftmeta_raft_epoch", ()) not in idle

        parked = await h.submit(
            h.controller.elect_leaders(ElectionType.UNCLEAN, [TopicPartition("t", 0)])
        )
        waiting = await scrape(server)
        assert value(waiting, "raftmeta_controller_delayed_elect_leader_operations") == 1
        assert value(waiting, "raftmeta_controller_purgatory_size") == 1
        h.log.commit()
        [results] = await parked
        assert results.partitions[0][1].error is ErrorCode.NONE
        done = await scrape(server)
        assert value(done, "raftmeta_controller_delayed_elect_leader_operations") == 0
        assert value(done, "raftmeta_controller_elections_total", type="UNCLEAN", outcome="NONE")
    finally:
        server.close()
        await h.stop()


def test_only_metrics_is_served(tmp_path: Path) -> None:
    @run_async
    async def body() -> None:
        node = RaftNode(NodeSettings(node_id=1, voters={}, data_dir=tmp_path), Peers)
        server = start_metrics(0, node, None, host="127.0.0.1")
        try:
            other = server.url.replace("/metrics", "/other")
            with pytest.raises(urllib.error.HTTPError) as raised:
                await asyncio.to_thread(urllib.request.urlopen, other, timeout=5)
            assert raised.value.code == 404
            samples = await scrape(server)
            assert ("raftmeta_controller_active", ()) not in samples
        finally:
            server.close()

    body()


def test_metrics_port_in_the_config_serves_metrics(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        member: ControllerNode = await cluster.wait_for_active()
        server = getattr(member, "_metrics", None)
        assert isinstance(server, MetricsServer)
        samples = await scrape(server)
        assert value(samples, "raftmeta_controller_active") == 1

    run_scenario(scenario, ControllerQuorum(tmp_path, {**STEADY, "metrics.port": 0}))


@run_async
async def test_periodic_rebalance_elections_are_counted() -> None:
    h = Harness(
        leader_imbalance_check_interval_seconds=1,
        leader_imbalance_catch_up_ms=0,
        broker_session_timeout_ms=10**9,
    )
    await h.start()
    node = RaftNode(NodeSettings(node_id=1, voters={}, data_dir=Path("/nonexistent")), Peers)
    server = start_metrics(0, node, h.controller, host="127.0.0.1")
    try:
        await moved_to_second_replica(h)
        name = "raftmeta_controller_elections_total"
        before = await scrape(server)
        assert (name, (("outcome", "NONE"), ("type", "PREFERRED"))) not in before
        h.clock.advance(1_000)
        await h.controller.tick()
        h.log.commit()
        after = await scrape(server)
        assert value(after, name, type="PREFERRED", outcome="NONE") == 1
        assert value(after, "raftmeta_partitions_not_led_by_preferred") == 0
    finally:
        server.close()
        await h.stop()
