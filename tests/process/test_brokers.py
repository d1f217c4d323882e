"""The acceptance test of the embedded broker: a real three-node quorum of ``raftmeta serve``
processes and six ``raftmeta broker`` processes on three racks.

Topics are created over gRPC; every broker's replica of the image must equal the controller's
at the same offset (each broker publishes ``<offset> <digest>`` in ``broker.status``, the
controller answers DescribeCluster with both); a broker killed with ``kill -9`` must be fenced
once its session times out, leave every ISR and lose its leaderships; restarted, it must
register again and be unfenced.
"""

from __future__ import annotations

import time
from pathlib import Path

from raftmeta.admin.quorum import wait_for_leader
from raftmeta.broker import read_status
from raftmeta.channel import ControllerChannel
from raftmeta.devkit.cluster import DevCluster, stop_all
from raftmeta.rpc import admin_pb2
from tests.process.helpers import DEADLINE_S, SCENARIO_TIMEOUT_S, free_base_port
from tests.support.scenario import run_with_deadline
from tests.support.waiting import wait_until_async

HEARTBEAT_MS = 250
SESSION_TIMEOUT_MS = 2000
BROKERS = 6
RACKS = 3
PROBE_PAUSE_S = 0.05
"""Each probe asks the controllers over gRPC: often enough to time fencing, no more."""
OVERRIDES = {
    "broker.heartbeat.interval.ms": str(HEARTBEAT_MS),
    "broker.session.timeout.ms": str(SESSION_TIMEOUT_MS),
}


class Probe:
    def __init__(self, cluster: DevCluster, channel: ControllerChannel) -> None:
        self.cluster = cluster
        self.channel = channel

    def check_alive(self) -> None:
        for process in [*self.cluster.nodes.values(), *self.cluster.brokers.values()]:
            status = process.exit_status
            if status is not None and status != -9:
                raise AssertionError(
                    f"{process.config.stem} exited with {status}: {process.log_tail()}"
                )

    async def cluster_view(self) -> admin_pb2.DescribeClusterResponse:
        self.check_alive()
        response = await self.channel.call(
            "Admin/DescribeCluster", admin_pb2.DescribeClusterRequest(include_image_digest=True)
        )
        assert isinstance(response, admin_pb2.DescribeClusterResponse)
        assert response.header.error_code == 0, response.header
        return response

    async def brokers(self) -> dict[int, admin_pb2.BrokerDescription]:
        return {b.broker_id: b for b in (await self.cluster_view()).brokers}

    async def partitions(self) -> list[admin_pb2.PartitionDescription]:
        response = await self.channel.call(
            "Admin/DescribeTopics", admin_pb2.DescribeTopicsRequest(all_topics=True)
        )
        assert response.header.error_code == 0, response.header
        return [p for topic in response.topics for p in topic.partitions]

    async def image_matches(self, broker_id: int) -> bool:
        """Whether the broker last published exactly the controller's offset and digest."""
        view = await self.cluster_view()
        status = read_status(self.cluster.broker_dir(broker_id) / "broker.status")
        return status == (view.metadata_offset, view.image_digest)

    async def all_images_match(self) -> None:
        for broker_id in self.cluster.brokers:
            await wait_until_async(
                lambda b=broker_id: self.image_matches(b),  # type: ignore[misc]
                f"broker {broker_id}'s image to equal the controller's at the same offset",
                DEADLINE_S,
                pause_s=PROBE_PAUSE_S,
            )

    async def create_topic(self, name: str, partitions: int) -> None:
        request = admin_pb2.CreateTopicsRequest(
            topics=[admin_pb2.NewTopic(name=name, num_partitions=partitions, replication_factor=3)]
        )
        response = await self.channel.call("Admin/CreateTopics", request)
        assert response.header.error_code == 0, response.header
        assert [t.error_code for t in response.topics] == [0], response.topics


async def scenario(cluster: DevCluster) -> None:
    async with ControllerChannel(cluster.bootstrap_servers, request_timeout_ms=5000) as channel:
        probe = Probe(cluster, channel)

        async def all_unfenced() -> bool:
            brokers = await probe.brokers()
            return set(brokers) == set(cluster.brokers) and not any(
                b.fenced for b in brokers.values()
            )

        await wait_until_async(
            all_unfenced, "six registered, unfenced brokers", DEADLINE_S, pause_s=PROBE_PAUSE_S
        )
        racks = {b.broker_id: b.rack for b in (await probe.brokers()).values()}
        assert racks == {i: f"rack-{(i - 1) % RACKS + 1}" for i in range(1, BROKERS + 1)}

        await probe.create_topic("orders", 12)
        await probe.create_topic("payments", 6)
        partitions = await probe.partitions()
        assert len(partitions) == 18
        for partition in partitions:
            # Rack-aware placement: three replicas on three racks.
            assert len({racks[r] for r in partition.replicas}) == RACKS
            assert partition.leader_id in partition.isr and set(partition.isr) == set(
                partition.replicas
            )
        await probe.all_images_match()

        leaders = [p.leader_id for p in partitions]
        victim = max(cluster.brokers, key=leaders.count)
        assert leaders.count(victim) > 0
        old_epoch = (await probe.brokers())[victim].broker_epoch
        killed_at = time.monotonic()
        cluster.brokers[victim].kill()

        async def victim_fenced() -> bool:
            return (await probe.brokers())[victim].fenced

        await wait_until_async(
            victim_fenced, f"broker {victim} to be fenced", DEADLINE_S, pause_s=PROBE_PAUSE_S
        )
        fenced_after_s = time.monotonic() - killed_at
        # Not before its session ran out: the last heartbeat was at most one interval earlier.
        assert fenced_after_s >= (SESSION_TIMEOUT_MS - HEARTBEAT_MS - 100) / 1000, fenced_after_s

        partitions = await probe.partitions()
        assert all(p.leader_id != victim for p in partitions)
        assert all(victim not in p.isr for p in partitions)
        assert all(p.leader_id >= 0 and p.leader_id in p.isr for p in partitions)
        for broker_id in cluster.brokers:
            if broker_id != victim:
                await wait_until_async(
                    lambda b=broker_id: probe.image_matches(b),  # type: ignore[misc]
                    f"broker {broker_id}'s image to show the fencing",
                    DEADLINE_S,
                    pause_s=PROBE_PAUSE_S,
                )

        cluster.brokers[victim].start()

        async def victim_back() -> bool:
            broker = (await probe.brokers())[victim]
            return not broker.fenced and broker.broker_epoch > old_epoch

        restarted_at = time.monotonic()
        await wait_until_async(
            victim_back,
            f"broker {victim} to register again and be unfenced",
            DEADLINE_S,
            pause_s=PROBE_PAUSE_S,
        )
        back_after_s = time.monotonic() - restarted_at
        await probe.all_images_match()
        print(
            f"\nbroker {victim} kill -9: fenced after {fenced_after_s:.2f} s "
            f"(session {SESSION_TIMEOUT_MS} ms); restarted, unfenced after {back_after_s:.2f} s"
        )


def test_six_brokers_on_three_racks_follow_the_quorum_and_a_killed_broker_is_fenced(
    tmp_path: Path,
) -> None:
    cluster = DevCluster(
        tmp_path / "cluster", free_base_port(), OVERRIDES, brokers=BROKERS, racks=RACKS
    )
    cluster.prepare()
    try:
        cluster.start()
        wait_for_leader(cluster.bootstrap_servers, cluster.cluster_id, DEADLINE_S)
        # One broker is told a single controller's host:port and must find the rest itself.
        for broker_id, broker in cluster.brokers.items():
            if broker_id == BROKERS:
                broker.start(["--bootstrap-server", cluster.bootstrap_servers.split(",")[1]])
            else:
                broker.start()
        run_with_deadline(scenario(cluster), SCENARIO_TIMEOUT_S)
        # Every broker shuts down under control and exits 0; then the controllers.
        brokers = list(cluster.brokers.values())
        stop_all(brokers)
        assert [b.exit_status for b in brokers] == [0] * BROKERS, [b.log_tail() for b in brokers]
    finally:
        cluster.stop()
