"""A broker quorum: three in-process ``ControllerNode``s on loopback gRPC and embedded
``Broker``s beside them, for the broker and the end-to-end scenario tests.

Controllers take ids 3000..3002 and brokers 1..N, as in ``raftmeta dev``: a broker fetches the
log under its own id, which must never be a voter's. Everything waits on conditions with a
deadline, never on sleeps.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from pathlib import Path
from typing import Any

from raftmeta.broker import Broker, BrokerSettings, ControllerCaller
from raftmeta.channel import ControllerChannel
from raftmeta.config.node import parse_config
from raftmeta.controller import QuorumController
from raftmeta.image import MetadataImage
from raftmeta.quorum.settings import NodeSettings
from raftmeta.raft.config import RaftConfig
from raftmeta.rpc import admin_pb2
from raftmeta.server.controller_node import ControllerNode
from raftmeta.storage import MetadataDir
from tests.support.waiting import wait_until_async

CLUSTER_ID = "raftmeta-broker-test"
CONTROLLER_IDS = (3000, 3001, 3002)
DEADLINE_S = 15.0
HEARTBEAT_MS = 200
SESSION_TIMEOUT_MS = 2000
RAFT = RaftConfig(election_timeout_ms=150, fetch_timeout_ms=300, fetch_max_wait_ms=100)


@dataclasses.dataclass(frozen=True)
class Timings:
    """The quorum's and brokers' timeouts: fast ones here; suites that must ride out a busy
    machine without a leader change pass slower ones."""

    raft: RaftConfig = RAFT
    heartbeat_ms: int = HEARTBEAT_MS
    session_timeout_ms: int = SESSION_TIMEOUT_MS


class BrokerQuorum:
    """Controllers started together; brokers started one by one as a test asks."""

    scenario_timeout_s = 60.0

    def __init__(
        self,
        root: Path,
        *,
        snapshot_bytes: int | None = None,
        timings: Timings = Timings(),
        controller_config: dict[str, Any] | None = None,
    ) -> None:
        self.root = root
        self.snapshot_bytes = snapshot_bytes
        """Controllers snapshot (and trim their logs) every this many committed bytes."""
        self.timings = timings
        self.controller_config = dict(controller_config or {})
        """Extra settings for every controller, on top of the harness's own."""
        self.controllers: dict[int, ControllerNode] = {}
        self.brokers: dict[int, Broker] = {}
        self.addresses: dict[int, str] = {}
        self._channel: ControllerChannel | None = None

    def _config(self, node_id: int) -> Any:
        voters = ",".join(f"{n}@127.0.0.1:{i + 1}" for i, n in enumerate(CONTROLLER_IDS))
        return parse_config(
            {
                "node.id": node_id,
                "controller.quorum.voters": voters,
                "metadata.log.dir": str(self.root / f"node-{node_id}"),
                "broker.heartbeat.interval.ms": self.timings.heartbeat_ms,
                "broker.session.timeout.ms": self.timings.session_timeout_ms,
                "metadata.max.idle.interval.ms": 200,
                **self.controller_config,
            }
        )

    async def start(self) -> None:
        for node_id in CONTROLLER_IDS:
            data_dir = self.root / f"node-{node_id}"
            MetadataDir.format(data_dir, node_id, CLUSTER_ID, ignore_formatted=True)
            settings = NodeSettings(
                node_id=node_id,
                voters={},
                data_dir=data_dir,
                cluster_id=CLUSTER_ID,
                raft=self.timings.raft,
            )
            if self.snapshot_bytes is not None:
                settings = replace(settings, max_bytes_between_snapshots=self.snapshot_bytes)
            node = await ControllerNode.bind(self._config(node_id), settings=settings)
            self.controllers[node_id] = node
            self.addresses[node_id] = node.address
        for node in self.controllers.values():
            await node.run(self.addresses)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(self.addresses.values())

    @property
    def channel(self) -> ControllerChannel:
        if self._channel is None:
            self._channel = ControllerChannel(self.bootstrap_servers, request_timeout_ms=10_000)
        return self._channel

    def broker_settings(self, broker_id: int, rack: str | None = None) -> BrokerSettings:
        return BrokerSettings(
            broker_id=broker_id,
            voters=self.addresses,
            data_dir=self.root / f"broker-{broker_id}",
            cluster_id=CLUSTER_ID,
            rack=rack,
            heartbeat_interval_ms=self.timings.heartbeat_ms,
            session_timeout_ms=self.timings.session_timeout_ms,
            raft=self.timings.raft,
            status_file=self.root / f"broker-{broker_id}.status",
            # The tests steer ISRs themselves; tests/broker/test_isr_expansion.py turns it on.
            expand_isr=False,
        )

    async def start_broker(
        self,
        broker_id: int,
        rack: str | None = None,
        channel: ControllerCaller | None = None,
        *,
        expand_isr: bool = False,
    ) -> Broker:
        settings = dataclasses.replace(self.broker_settings(broker_id, rack), expand_isr=expand_isr)
        MetadataDir.format(settings.data_dir, broker_id, CLUSTER_ID, ignore_formatted=True)
        broker = Broker(settings, channel=channel)
        await broker.start()
        self.brokers[broker_id] = broker
        return broker

    def active_controller(self) -> QuorumController:
        """The active controller (the first one while none is)."""
        controllers = [node.controller for node in self.controllers.values()]
        return next((c for c in controllers if c.is_active), controllers[0])

    def controllers_image(self) -> MetadataImage:
        """The committed image of the active controller: what every node will replay."""
        return self.active_controller().committed_image

    async def describe_cluster(self) -> admin_pb2.DescribeClusterResponse:
        response = await self.channel.call(
            "Admin/DescribeCluster", admin_pb2.DescribeClusterRequest(include_image_digest=True)
        )
        assert isinstance(response, admin_pb2.DescribeClusterResponse)
        assert response.header.error_code == 0, response.header
        return response

    async def create_topic(self, name: str, partitions: int, replication_factor: int) -> bytes:
        request = admin_pb2.CreateTopicsRequest(
            topics=[
                admin_pb2.NewTopic(
                    name=name, num_partitions=partitions, replication_factor=replication_factor
                )
            ]
        )
        response = await self.channel.call("Admin/CreateTopics", request)
        assert response.header.error_code == 0, response.header
        (result,) = response.topics
        assert result.error_code == 0, result
        topic_id = result.topic_id
        assert isinstance(topic_id, bytes)
        return topic_id

    async def image_matches(self, broker: Broker) -> bool:
        """Whether the broker's image equals the controller's: same digest, and the broker
        has replayed at least as far as the controller had when it answered (the content can
        only differ by NoOps past that point, which do not change the digest)."""
        described = await self.describe_cluster()
        return (
            broker.image.offset >= described.metadata_offset
            and broker.image_digest() == described.image_digest
        )

    async def wait_for_image(self, broker: Broker) -> None:
        """Wait until the broker's image matches the controller's (see ``image_matches``)."""
        await wait_until_async(
            lambda: self.image_matches(broker),
            f"broker {broker.broker_id}'s image to match the controller's",
            DEADLINE_S,
            pause_s=0.02,
        )

    async def close(self) -> None:
        for broker in self.brokers.values():
            await broker.stop()
        if self._channel is not None:
            await self._channel.close()
        for node in self.controllers.values():
            await node.stop(graceful=False)
