"""Prometheus metrics of one node, served over HTTP at ``/metrics`` on ``metrics.port``.

Most values are read when Prometheus scrapes, not pushed as they change: a collector looks at
the Raft core (role, epoch, high watermark), the controller's purgatory and election counts,
and the committed image's indexes (offline partitions, partitions not led by their preferred
replica, fenced brokers). Only the three latencies need hooks, because a histogram must see every
sample: ``RaftClient.commit_latency_observer``, ``QuorumController.queue_time_observer`` and
``QuorumController.holds.observer``.

The endpoint runs on the node's own asyncio loop rather than in prometheus_client's HTTP
thread, so a scrape reads the image and the purgatory between two event-loop steps and never
while a handler is half-way through changing them. Each node has its own ``CollectorRegistry``,
so several nodes can run (and be scraped) in one process.

The gauges every node reports are read from its committed image, so standbys report the same
partition and broker counts as the active controller (Kafka reports them on the active
controller only); ``raftmeta_controller_active`` tells which node is active.

Kafka's names for the same measurements are in each metric's help text.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from elections import elr_exposure
from raftmeta.raft.roles import Role

if TYPE_CHECKING:
    from raftmeta.controller import QuorumController
    from raftmeta.quorum.client import RaftClient
    from raftmeta.quorum.node import RaftNode

log = logging.getLogger(__name__)

LATENCY_BUCKETS = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
"""Seconds; a commit on loopback takes about a millisecond, a slow disk or a failover seconds."""

ELECT_LEADERS_EVENT = "electLeaders"
"""The controller's name for an ElectLeaders request waiting in its purgatory."""


class NodeCollector(Collector):
    """Reads one node's state at scrape time; must be called on the node's event loop."""

    def __init__(self, node: RaftNode, controller: QuorumController | None) -> None:
        self._node = node
        self._controller = controller

    def collect(self) -> Iterable[Metric]:
        yield from self._raft()
        if self._controller is not None:
            yield from self._controller_metrics(self._controller)

    def _raft(self) -> Iterator[Metric]:
        node = self._node
        role = GaugeMetricFamily(
            "raftmeta_raft_role",
            "1 for this node's current Raft role, 0 for the others (Kafka: raft-metrics "
            "current-state). All 0 while the node is stopped.",
            labels=["role"],
        )
        current = node.core.role if node.running else None
        for each in Role:
            role.add_metric([each.value.lower()], 1.0 if each is current else 0.0)
        yield role
        if not node.running:
            return
        core = node.core
        yield GaugeMetricFamily(
            "raftmeta_raft_epoch",
            "The current Raft epoch (Kafka: raft-metrics current-epoch).",
            value=core.epoch,
        )
        yield GaugeMetricFamily(
            "raftmeta_raft_leader_id",
            "The leader this node follows, -1 if none (Kafka: raft-metrics current-leader).",
            value=-1 if core.leader_id is None else core.leader_id,
        )
        yield GaugeMetricFamily(
            "raftmeta_raft_high_watermark",
            "The committed offset: every record below it is held by a majority "
            "(Kafka: raft-metrics high-watermark).",
            value=core.high_watermark,
        )
        round_trip_ms = node.fetch_round_trips.smoothed_ms
        if round_trip_ms is not None:
            yield GaugeMetricFamily(
                "raftmeta_raft_fetch_round_trip_ms",
                "Smoothed round trip of this node's fetches to its leader, the leader's "
                "long-poll wait excluded. Past half of controller.quorum.fetch.timeout.ms every "
                "fetch is lost and the quorum elects again and again; a WARNING is logged past "
                "30 % of it.",
                value=round_trip_ms,
            )
        yield GaugeMetricFamily(
            "raftmeta_raft_log_end_offset",
            "The offset after this node's last log record (Kafka: raft-metrics log-end-offset).",
            value=core.log.end_offset,
        )

    def _controller_metrics(self, controller: QuorumController) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "raftmeta_controller_active",
            "1 on the active controller, 0 elsewhere (Kafka: KafkaController "
            "ActiveControllerCount).",
            value=1.0 if controller.is_active else 0.0,
        )
        parked = controller.parked_replies()
        yield GaugeMetricFamily(
            "raftmeta_controller_delayed_elect_leader_operations",
            "ElectLeaders requests whose elections were written and wait for them to commit "
            "(KIP-460: DelayedOperationPurgatory NumDelayedOperations, delayedOperation="
            "ElectLeader).",
            value=parked.get(ELECT_LEADERS_EVENT, 0),
        )
        yield GaugeMetricFamily(
            "raftmeta_controller_purgatory_size",
            "Replies of every kind parked until their records commit (KIP-460: "
            "DelayedOperationPurgatory PurgatorySize; raftmeta keeps one purgatory for all "
            "operations).",
            value=sum(parked.values()),
        )
        elections = CounterMetricFamily(
            "raftmeta_controller_elections",
            "Leader elections this node wrote as active controller, by type and outcome: one "
            "per partition of an ElectLeaders request (outcome: its Kafka error code name, NONE "
            "when elected) and one per election of the periodic preferred rebalance (PREFERRED) "
            "and unclean election (UNCLEAN) runs.",
            labels=["type", "outcome"],
        )
        for (election_type, outcome), count in sorted(controller.election_counts.items()):
            elections.add_metric([election_type, outcome], count)
        yield elections
        image = controller.committed_image
        yield GaugeMetricFamily(
            "raftmeta_controller_last_applied_offset",
            "The last committed offset replayed into the image (Kafka: LastAppliedRecordOffset).",
            value=image.offset,
        )
        yield GaugeMetricFamily(
            "raftmeta_partitions",
            "Partitions in the committed image (Kafka: GlobalPartitionCount).",
            value=image.partition_count,
        )
        yield GaugeMetricFamily(
            "raftmeta_topics",
            "Topics in the committed image (Kafka: GlobalTopicCount).",
            value=len(image.topics),
        )
        yield GaugeMetricFamily(
            "raftmeta_partitions_offline",
            "Partitions without a leader (Kafka: OfflinePartitionsCount).",
            value=len(image.leaderless_partitions),
        )
        yield GaugeMetricFamily(
            "raftmeta_partitions_not_led_by_preferred",
            "Partitions whose leader is not their first replica, leaderless ones included "
            "(Kafka: PreferredReplicaImbalanceCount).",
            value=len(image.partitions_not_led_by_preferred),
        )
        exposure = elr_exposure(image, controller.settings.min_insync_replicas)
        yield GaugeMetricFamily(
            "raftmeta_partitions_led_from_elr",
            "Partitions led while the ISR is below min.insync.replicas and eligible leader "
            "replicas (KIP-966) hold the other complete copies, as after a clean election from "
            "the ELR; 0 while eligible.leader.replicas.version is 0.",
            value=exposure.led_from_elr,
        )
        yield GaugeMetricFamily(
            "raftmeta_partitions_unclean_only",
            "Leaderless partitions with an empty ISR and ELR: only an unclean election (the "
            "last known leader, or UNCLEAN) can bring them back.",
            value=exposure.unclean_only,
        )
        brokers = GaugeMetricFamily(
            "raftmeta_brokers",
            "Registered brokers by state (Kafka: FencedBrokerCount and ActiveBrokerCount).",
            labels=["state"],
        )
        longest = GaugeMetricFamily(
            "raftmeta_controller_event_max_hold_seconds",
            "The longest one event (or one committed batch's replay, handleCommit) held the "
            "controller's queue since the node started, labelled with that event: how long "
            "every other request, heartbeats included, could have waited behind it.",
            labels=["event"],
        )
        longest.add_metric([controller.holds.longest_name], controller.holds.longest_s)
        yield longest
        longest_cpu = GaugeMetricFamily(
            "raftmeta_controller_event_max_hold_cpu_seconds",
            "The same in the event loop thread's CPU time: what the longest event cost itself, "
            "however busy the machine was with other work.",
            labels=["event"],
        )
        longest_cpu.add_metric([controller.holds.longest_cpu_name], controller.holds.longest_cpu_s)
        yield longest_cpu
        fenced = sum(1 for registration in image.brokers.values() if registration.fenced)
        brokers.add_metric(["fenced"], fenced)
        brokers.add_metric(["unfenced"], len(image.brokers) - fenced)
        yield brokers


class MetricsServer:
    """The running endpoint; :meth:`close` stops it and detaches the latency hooks."""

    def __init__(
        self,
        registry: CollectorRegistry,
        sock: socket.socket,
        client: RaftClient | None,
        controller: QuorumController | None,
    ) -> None:
        self.registry = registry
        self._socket = sock
        self._client = client
        self._controller = controller
        self.host, self.port = sock.getsockname()[:2]
        self._server: asyncio.Server | None = None
        self._task = asyncio.get_running_loop().create_task(self._serve())

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        return f"http://{host}:{self.port}/metrics"

    async def _serve(self) -> None:
        self._server = await asyncio.start_server(self._handle, sock=self._socket)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = request_line.split(" ")
        method = parts[0] if parts else ""
        path = parts[1].split("?", 1)[0] if len(parts) > 1 else ""
        if method not in ("GET", "HEAD"):
            status, content_type, body = "405 Method Not Allowed", "text/plain", b"GET only\n"
        elif path != "/metrics":
            status, content_type, body = "404 Not Found", "text/plain", b"see /metrics\n"
        else:
            status, content_type, body = (
                "200 OK",
                CONTENT_TYPE_LATEST,
                generate_latest(self.registry),
            )
        header = (
            f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode("latin-1")
        with contextlib.suppress(ConnectionError):
            writer.write(header if method == "HEAD" else header + body)
            await writer.drain()
        writer.close()

    def close(self) -> None:
        if self._client is not None:
            self._client.commit_latency_observer = None
        if self._controller is not None:
            self._controller.queue_time_observer = None
            self._controller.holds.observer = None
        if self._server is not None:
            self._server.close()
        self._task.cancel()
        self._socket.close()


def start_metrics(
    port: int,
    node: RaftNode,
    controller: QuorumController | None,
    *,
    client: RaftClient | None = None,
    host: str | None = None,
) -> MetricsServer:
    """Serve ``node``'s metrics at ``http://host:port/metrics``; call on the node's loop.

    ``port`` 0 takes any free port (see :attr:`MetricsServer.port`). ``host`` defaults to the
    node's own listener host. ``client`` feeds the commit-latency histogram; ``controller`` the
    controller metrics and the queue-time histogram. Raises ``OSError`` if the port is taken.
    """
    registry = CollectorRegistry(auto_describe=False)
    registry.register(NodeCollector(node, controller))
    if client is not None:
        commit_latency = Histogram(
            "raftmeta_raft_commit_latency_seconds",
            "Time from an append on the leader to its commit (Kafka: raft-metrics "
            "commit-latency-avg and -max).",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        client.commit_latency_observer = commit_latency.observe
    if controller is not None:
        queue_time = Histogram(
            "raftmeta_controller_event_queue_time_seconds",
            "Time a controller event waited in the queue before it ran (Kafka: "
            "ControllerEventManager EventQueueTimeMs).",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        controller.queue_time_observer = queue_time.observe
        processing_time = Histogram(
            "raftmeta_controller_event_processing_time_seconds",
            "Time one controller event held the queue, committed batches' replay included "
            "(Kafka: ControllerEventManager EventQueueProcessingTimeMs).",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        controller.holds.observer = processing_time.observe
    bind_host = node.settings.listen_host if host is None else host
    sock = socket.create_server((bind_host, port), reuse_port=False)
    sock.setblocking(False)
    server = MetricsServer(registry, sock, client, controller)
    log.info("serving metrics on %s", server.url)
    return server
