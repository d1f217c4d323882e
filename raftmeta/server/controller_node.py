"""``ControllerNode``: one controller process's parts, wired together and served on one port.

A controller node is a ``RaftNode`` whose ``RaftClient`` feeds a ``QuorumController``: the
controller's committed image is the node's state machine, so snapshots are that image written
as records and a restarted node rebuilds it from its latest snapshot plus the log after it. The
Raft, Admin and BrokerLifecycle services share one gRPC server, which this class owns: the
node itself owns no socket.

Tests and the demo run several of these in one event loop; ``raftmeta serve`` runs one. Ports
chosen by the OS cannot be named in a ``.properties`` file in advance, so a node can be bound
first (:meth:`ControllerNode.bind`, which learns its port) and started later with the voters'
real addresses (:meth:`ControllerNode.run`); :meth:`ControllerNode.start` does both.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any

from placement import PlacerLoadError, ReplicaPlacer, close_placer, load_placer
from raftmeta.auth import AccessControl
from raftmeta.config.errors import ConfigError
from raftmeta.config.node import RaftmetaConfig
from raftmeta.controller import ControllerSettings, QuorumController, RaftClientLog
from raftmeta.quorum.client import RaftClient
from raftmeta.quorum.grpc_server import RaftServer, serve_raft
from raftmeta.quorum.identity import IdentityRule
from raftmeta.quorum.node import RaftNode, monotonic_ms
from raftmeta.quorum.settings import NodeSettings
from raftmeta.quorum.transport_choice import node_connect, stream_server_ssl
from raftmeta.raft.batch import Batch
from raftmeta.records import BrokerEndpoint, SecurityProtocol
from raftmeta.security.credentials import channel_credentials, server_credentials
from raftmeta.security.listener import controller_listener_tls
from raftmeta.security.tls import TlsSettings
from raftmeta.server.kafka import KAFKA_LISTENER
from raftmeta.storage.bootstrap_scram import read_bootstrap_scram
from raftmeta.storage.markers import read_bootstrap_features
from raftmeta.storage.snapshots import SnapshotReader

if TYPE_CHECKING:
    from raftmeta.server.controller_registration import ControllerRegistrar
    from raftmeta.server.kafka.listener import KafkaListener
    from raftmeta.server.metrics import MetricsServer

log = logging.getLogger(__name__)

CONTROLLER_LISTENER = "CONTROLLER"
"""The name a controller registers its gRPC listener under (Kafka's controller listener)."""

TICK_INTERVAL_MS = 100
"""How often the controller runs its periodic work: request deadlines, broker session
expiry, NoOps when idle, periodic elections. Well under every interval it serves."""


class Changes:
    """Wakes every waiter whenever the node's state may have moved (role, epoch, commits)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        event, self._event = self._event, asyncio.Event()
        event.set()

    async def wait(self) -> None:
        await self._event.wait()


class _Listener:
    """Hands the log to the controller, logs leadership changes and wakes waiters."""

    def __init__(self, node_id: int, changes: Changes) -> None:
        self.node_id = node_id
        self.changes = changes
        self.controller: QuorumController | None = None
        self.leader: tuple[int | None, int] = (None, -1)

    def _target(self) -> QuorumController:
        if self.controller is None:
            raise RuntimeError("the controller is created before the node starts")
        return self.controller

    def handle_commit(self, batches: Sequence[Batch]) -> None:
        self._target().handle_commit(batches)
        self.changes.notify()

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        self._target().handle_load_snapshot(reader)
        self.changes.notify()

    def prepare_snapshot(self, reader: SnapshotReader) -> Callable[[], None]:
        """The controller's build, on the Raft client's worker thread; waiters wake at the
        install, on the loop."""
        install_image = self._target().prepare_snapshot(reader)

        def install() -> None:
            install_image()
            self.changes.notify()

        return install

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        self._target().handle_leader_change(leader_id, epoch)
        if (leader_id, epoch) != self.leader:
            self.leader = (leader_id, epoch)
            if leader_id is None:
                log.info("epoch %d: no leader known", epoch)
            elif leader_id == self.node_id:
                log.info("epoch %d: this node (%d) leads", epoch, leader_id)
            else:
                log.info("epoch %d: node %d leads", epoch, leader_id)
        self.changes.notify()


NodeState = tuple[bool, bool, object, int, int | None]
"""What waiters on :class:`Changes` read of the Raft node itself: running, failed, role,
epoch and leader."""


def node_state(node: RaftNode) -> NodeState:
    if not node.running:
        return (False, node.failure is not None, None, -1, None)
    core = node.core
    return (True, node.failure is not None, core.role, core.epoch, core.leader_id)


class _NotifyingClient(RaftClient):
    """A ``RaftClient`` that also wakes waiters whenever the node's state moves.

    The node calls ``state_changed`` after every input (each fetch, vote or answer stepped
    into the core), several times per write; waking every waiter each time cost the leader
    a task switch per waiter per input. Waiters read the node's running state, role, epoch
    and leader (woken here when those move) and the controller's committed image and
    leadership (woken by :class:`_Listener` at each commit, snapshot and leader change), so
    an input that moved none of these wakes no one.
    """

    def __init__(self, node: RaftNode, listener: _Listener, changes: Changes) -> None:
        self.changes = changes
        self._notified: NodeState | None = None
        super().__init__(node, listener)

    def state_changed(self) -> None:
        super().state_changed()
        state = node_state(self.node)
        if state != self._notified:
            self._notified = state
            self.changes.notify()


def load_configured_placer(config: RaftmetaConfig) -> ReplicaPlacer:
    """The placer ``replica.placer.class.name`` names, or a one-line ``ConfigError``."""
    try:
        return load_placer(
            config.replica_placer_class_name,
            config.originals_with_prefix("replica.placer.", strip=False),
        )
    except PlacerLoadError as error:
        raise ConfigError(str(error)) from None


class ControllerNode:
    """A controller node: Raft, the controller state machine and the gRPC services.

    Build with :meth:`start` (or :meth:`bind` then :meth:`run`); :attr:`controller`,
    :attr:`node` and :attr:`address` are then usable until :meth:`stop`.
    """

    def __init__(
        self,
        config: RaftmetaConfig,
        settings: NodeSettings | None = None,
        *,
        tick_interval_ms: int = TICK_INTERVAL_MS,
    ) -> None:
        """Checks the plug-in and TLS settings (placer, authorizer, listener protocols and
        certificates) at once, before any port or directory is touched; raises
        ``ConfigError`` with one line if one is unusable."""
        self.config = config
        self.settings = settings if settings is not None else NodeSettings.from_config(config)
        self.tick_interval_ms = tick_interval_ms
        self.tls: TlsSettings | None = controller_listener_tls(config)
        """The controller listener's TLS settings; None when it is PLAINTEXT."""
        self.identity = IdentityRule.for_listener(self.tls)
        """Who may send Raft and BrokerLifecycle calls (off without client certificates)."""
        self._server_credentials = None if self.tls is None else server_credentials(self.tls)
        peer_credentials = None if self.tls is None else channel_credentials(self.tls)
        self._peer_credentials = peer_credentials
        self.placer = load_configured_placer(config)
        self.access = AccessControl.from_config(config, client_certificates=self.identity.enforced)
        self.changes = Changes()
        self._stream_ssl = (
            None if self.settings.stream_listen is None else stream_server_ssl(self.tls)
        )
        self.node = RaftNode(self.settings, node_connect(self.settings.transport, self.tls))
        self._listener = _Listener(self.settings.node_id, self.changes)
        self.client = _NotifyingClient(self.node, self._listener, self.changes)
        self._controller: QuorumController | None = None
        self._metrics: MetricsServer | None = None
        self._server: RaftServer | None = None
        self.kafka: KafkaListener | None = None
        """The Kafka-protocol listener, when ``listeners`` names a KAFKA one."""
        self.registrar: ControllerRegistrar | None = None
        """Keeps this controller's registration (KIP-919) in the log, with a KAFKA listener."""

    # ------------------------------------------------------------------------ life cycle

    @classmethod
    async def start(
        cls,
        config: RaftmetaConfig,
        *,
        settings: NodeSettings | None = None,
        voters: Mapping[int, str] | None = None,
    ) -> ControllerNode:
        """Open the directory, serve, join the quorum and start the controller."""
        node = await cls.bind(config, settings=settings)
        await node.run(voters)
        return node

    @classmethod
    async def bind(
        cls, config: RaftmetaConfig, *, settings: NodeSettings | None = None
    ) -> ControllerNode:
        """Open the directory and serve on the configured port (0: one the OS chooses).

        Until :meth:`run`, Raft calls are answered UNAVAILABLE and Admin calls NOT_CONTROLLER.
        Raises ``StorageError`` for a bad directory and ``RuntimeError`` for a port in use.
        """
        self = cls(config, settings)
        await self.listen()
        return self

    async def listen(self) -> None:
        """Open the directory and serve Raft, Admin and BrokerLifecycle on the configured
        port (see :meth:`bind`); does nothing once listening."""
        if self._server is None:
            self._server = await serve_raft(
                self.node,
                [self._register_services],
                credentials=self._server_credentials,
                identity=self.identity,
                stream_ssl=self._stream_ssl,
                access=self.access,
                broker_ids=self._registered_broker_ids,
            )
        if self.kafka is None:
            from raftmeta.server.kafka.listener import start_kafka_listener

            self.kafka = await start_kafka_listener(self, self.config, self.changes.wait)

    @property
    def stream_port(self) -> int | None:
        """The Raft stream listener's port, while one is served."""
        stream = None if self._server is None else self._server.stream
        return None if stream is None else stream.port

    async def run(self, voters: Mapping[int, str] | None = None) -> None:
        """Join the quorum (``voters`` overrides the configured addresses) and start the
        controller's queue and timer."""
        node = self.node
        await self.listen()
        controller = QuorumController(
            ControllerSettings.from_config(
                self.config,
                node.cluster_id,
                read_bootstrap_features(self.config.metadata_log_dir),
                read_bootstrap_scram(self.config.metadata_log_dir),
            ),
            RaftClientLog(self.client),
            clock=monotonic_ms,
            placer=self.placer,
            voter_ids=self._voter_ids,
        )
        self._controller = controller
        self._listener.controller = controller
        # An authorizer deciding from ACL records reads what this node has committed.
        self.access.attach_image(lambda: controller.committed_image)
        self.client.snapshot_source = lambda: controller.committed_image.snapshot_work()
        controller.start(tick_interval_ms=self.tick_interval_ms)
        await node.start(voters)
        self._start_registration()
        self._start_metrics()

    def _voter_ids(self) -> Set[int]:
        """The voters as this node's Raft log has them now (the configured ones while the
        node is not running): registrations are checked against them."""
        if not self.node.running:
            return frozenset(self.config.controller_quorum_voters)
        return self.node.core.voter_set.ids

    def _start_registration(self) -> None:
        """Register this controller's listeners (KIP-919) when it serves Kafka's protocol,
        so that every controller can name every controller's KAFKA endpoint to clients."""
        if self.kafka is None or self.registrar is not None:
            return
        from raftmeta.server.controller_registration import ControllerRegistrar

        self.registrar = ControllerRegistrar(
            self, self.registered_endpoints, self._peer_credentials
        )
        self.registrar.start()

    def registered_endpoints(self) -> tuple[BrokerEndpoint, ...]:
        """The listeners this controller registers: its controller listener (Raft, Admin
        and BrokerLifecycle over gRPC) and its KAFKA listener, if any."""
        host, _, port = self.address.rpartition(":")
        protocol = SecurityProtocol.PLAINTEXT if self.tls is None else SecurityProtocol.SSL
        endpoints = [BrokerEndpoint(CONTROLLER_LISTENER, host, int(port), int(protocol))]
        if self.kafka is not None:
            kafka_host, _, kafka_port = self.kafka.address.rpartition(":")
            endpoints.append(
                BrokerEndpoint(
                    KAFKA_LISTENER,
                    kafka_host,
                    int(kafka_port),
                    int(SecurityProtocol[self.kafka.protocol.value]),
                )
            )
        return tuple(endpoints)

    def _start_metrics(self) -> None:
        """Serve Prometheus metrics when ``metrics.port`` asks for them (-1: none).

        Raises ``OSError`` when the port is taken.
        """
        if self.config.metrics_port < 0:
            return
        from raftmeta.server.metrics import start_metrics

        self._metrics = start_metrics(
            self.config.metrics_port, self.node, self.controller, client=self.client
        )

    async def stop(self, *, graceful: bool = True) -> None:
        """Stop the controller (failing its parked requests with NOT_CONTROLLER), then leave
        the quorum; a graceful stop of the leader hands leadership over first."""
        if self.registrar is not None:
            await self.registrar.stop()
            self.registrar = None
        if self._controller is not None:
            await self._controller.stop()
        await self.node.stop(graceful=graceful)
        if self.kafka is not None:
            await self.kafka.stop()
        if self._server is not None:
            await self._server.stop()  # after the node, which answers UNAVAILABLE till then
        if self._metrics is not None:
            self._metrics.close()
            self._metrics = None
        close_placer(self.placer)

    # ------------------------------------------------------------------------ reading

    @property
    def controller(self) -> QuorumController:
        if self._controller is None:
            raise RuntimeError("the controller exists once the node runs")
        return self._controller

    @property
    def maybe_controller(self) -> QuorumController | None:
        """The controller, or ``None`` before :meth:`run`: what services answer through."""
        return self._controller

    @property
    def node_id(self) -> int:
        return self.settings.node_id

    @property
    def port(self) -> int | None:
        """The port this node serves on, once it listens (still known after :meth:`stop`)."""
        return None if self._server is None else self._server.port

    @property
    def address(self) -> str:
        """``host:port`` clients reach this node's services on."""
        port = self.port if self.port is not None else self.settings.listen_port
        host = self.settings.listen_host
        if host in ("", "0.0.0.0", "::"):
            host = "127.0.0.1"
        return f"{host}:{port}"

    def endpoint_of(self, node_id: int | None) -> str:
        """Where voter ``node_id`` serves, as this node dials it ("" if not known)."""
        if node_id is None:
            return ""
        if node_id == self.node_id:
            return self.address
        return self.node.voter_addresses.get(node_id, "")

    # ------------------------------------------------------------------------ services

    def _registered_broker_ids(self) -> Collection[int]:
        """The brokers registered in the committed metadata: AddRaftVoter refuses their ids."""
        controller = self._controller
        return () if controller is None else controller.committed_image.brokers.keys()

    def _register_services(self, server: Any) -> None:
        from raftmeta.rpc import admin_pb2, broker_pb2
        from raftmeta.server.admin_service import AdminService
        from raftmeta.server.broker_service import BrokerLifecycleService
        from raftmeta.server.service_base import add_service

        add_service(server, AdminService(self), admin_pb2.DESCRIPTOR.services_by_name["Admin"])
        add_service(
            server,
            BrokerLifecycleService(self),
            broker_pb2.DESCRIPTOR.services_by_name["BrokerLifecycle"],
        )
