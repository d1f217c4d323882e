"""A controller quorum: real ``ControllerNode``s on loopback gRPC, in one event loop, with stubs.

Nodes bind ports the OS chooses, then start with each other's real addresses. Waits poll a
condition against a deadline; nothing sleeps to let something happen. Used by the server,
admin-client and command-line tests.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from pathlib import Path

import grpc

from raftmeta.config.node import ConfigValue, RaftmetaConfig, parse_config
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import admin_pb2_grpc as apb_grpc
from raftmeta.rpc import broker_pb2 as bpb
from raftmeta.rpc import broker_pb2_grpc as bpb_grpc
from raftmeta.server.controller_node import ControllerNode
from raftmeta.storage import MetadataDir
from tests.support.waiting import wait_until_async

CLUSTER_ID = "raftmeta-controller-test"
DEADLINE_S = 10.0
STEADY_RAFT: Mapping[str, ConfigValue] = {
    "controller.quorum.fetch.timeout.ms": 2000,
    "broker.session.timeout.ms": 600_000,
}
"""A leader stays put through a second-long stall of a loaded test machine (elections at
start-up stay as fast as the defaults make them), and the tests' brokers, which heartbeat
only when a test says so, are never fenced behind a test's back."""


class ControllerQuorum:
    """Voters as ``ControllerNode``s, each serving Admin and BrokerLifecycle, with stubs to
    call them as a client or a broker would."""

    scenario_timeout_s = 30.0

    def __init__(
        self, root: Path, overrides: Mapping[str, ConfigValue] | None = None, size: int = 3
    ) -> None:
        self.root = root
        # Controllers take ids 3000.. and brokers 1..N, as in ``raftmeta dev``: a broker may
        # not take a voter's id.
        self.ids = list(range(3000, 3000 + size))
        self.overrides: dict[str, ConfigValue] = {**STEADY_RAFT, **(overrides or {})}
        self.ports: dict[int, int] = {}
        self.members: dict[int, ControllerNode] = {}
        self._channels: dict[int, grpc.aio.Channel] = {}

    def data_dir(self, node_id: int) -> Path:
        return self.root / f"node-{node_id}"

    @property
    def addresses(self) -> dict[int, str]:
        return {node_id: f"127.0.0.1:{port}" for node_id, port in self.ports.items()}

    def config(self, node_id: int, **extra: ConfigValue) -> RaftmetaConfig:
        voters = ",".join(f"{n}@127.0.0.1:{self.ports.get(n, n)}" for n in self.ids)
        return parse_config(
            {
                "node.id": node_id,
                "controller.quorum.voters": voters,
                "listeners": f"CONTROLLER://127.0.0.1:{self.ports.get(node_id, 0)}",
                "metadata.log.dir": str(self.data_dir(node_id)),
                "cluster.id": CLUSTER_ID,
                **self.overrides,
                **extra,
            }
        )

    async def start(self) -> None:
        for node_id in self.ids:
            MetadataDir.format(self.data_dir(node_id), node_id, CLUSTER_ID)
            member = await ControllerNode.bind(self.config(node_id))
            assert member.port is not None
            self.ports[node_id] = member.port
            self.members[node_id] = member
        for member in self.members.values():
            await member.run(self.addresses)

    async def stop(self, node_id: int, *, graceful: bool = True) -> None:
        member = self.members.pop(node_id)
        await member.stop(graceful=graceful)

    async def restart(self, node_id: int) -> ControllerNode:
        member = await ControllerNode.start(self.config(node_id), voters=self.addresses)
        self.members[node_id] = member
        return member

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()
        for node_id in list(self.members):
            await self.stop(node_id, graceful=False)

    def active(self) -> ControllerNode | None:
        for member in self.members.values():
            controller = member.maybe_controller
            if controller is not None and controller.is_active:
                return member
        return None

    async def wait_for_active(self, *, not_node: int | None = None) -> ControllerNode:
        def found() -> bool:
            member = self.active()
            return member is not None and member.node_id != not_node

        await wait_until_async(found, "an active controller", DEADLINE_S)
        member = self.active()
        assert member is not None
        return member

    async def follower(self) -> ControllerNode:
        """A running node that is not the active controller but knows which node is."""
        active = await self.wait_for_active()

        def knows() -> bool:
            return any(
                m is not active and m.controller.leader_id == active.node_id
                for m in self.members.values()
            )

        await wait_until_async(knows, "a follower that knows the leader", DEADLINE_S)
        return next(
            m
            for m in self.members.values()
            if m is not active and m.controller.leader_id == active.node_id
        )

    def channel(self, node_id: int) -> grpc.aio.Channel:
        channel = self._channels.get(node_id)
        if channel is None:
            channel = grpc.aio.insecure_channel(self.addresses[node_id])
            self._channels[node_id] = channel
        return channel

    def admin(self, node_id: int) -> apb_grpc.AdminStub:
        return apb_grpc.AdminStub(self.channel(node_id))

    def lifecycle(self, node_id: int) -> bpb_grpc.BrokerLifecycleStub:
        return bpb_grpc.BrokerLifecycleStub(self.channel(node_id))

    async def active_admin(self) -> apb_grpc.AdminStub:
        return self.admin((await self.wait_for_active()).node_id)

    async def active_lifecycle(self) -> bpb_grpc.BrokerLifecycleStub:
        return self.lifecycle((await self.wait_for_active()).node_id)

    # ------------------------------------------------------------------------ brokers

    async def register(self, broker_id: int, rack: str | None = None) -> int:
        """Register a broker and unfence it; returns its epoch."""
        stub = await self.active_lifecycle()
        reply = await stub.RegisterBroker(
            bpb.RegisterBrokerRequest(
                broker_id=broker_id,
                cluster_id=CLUSTER_ID,
                incarnation_id=uuid.uuid4().bytes,
                listeners=[bpb.Listener(name="PLAINTEXT", host="127.0.0.1", port=9092 + broker_id)],
                rack=rack,
            )
        )
        assert reply.header.error_code == 0, reply.header
        epoch = reply.broker_epoch
        heartbeat = await stub.BrokerHeartbeat(
            bpb.BrokerHeartbeatRequest(
                broker_id=broker_id,
                broker_epoch=epoch,
                current_metadata_offset=epoch + 1_000_000,
                want_fence=False,
            )
        )
        assert heartbeat.header.error_code == 0, heartbeat.header
        return epoch

    async def create_topic(
        self, name: str, partitions: int = 1, replication_factor: int = 1
    ) -> apb.CreatableTopicResult:
        stub = await self.active_admin()
        reply = await stub.CreateTopics(
            apb.CreateTopicsRequest(
                topics=[
                    apb.NewTopic(
                        name=name,
                        num_partitions=partitions,
                        replication_factor=replication_factor,
                    )
                ]
            )
        )
        assert reply.header.error_code == 0, reply.header
        result: apb.CreatableTopicResult = reply.topics[0]
        return result
