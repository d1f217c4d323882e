"""``CombinedNode``: a controller and a broker in one process under one ``node.id``, as Kafka
runs a node with ``process.roles=broker,controller``.

The controller half is a :class:`~raftmeta.server.controller_node.ControllerNode`, unchanged: a
voter of the quorum with its controller and services. The broker half is a
:class:`~raftmeta.broker.Broker` built from the same file (``broker.rack``, ``log.dirs``,
``broker.heartbeat.interval.ms``, ``broker.session.timeout.ms``) that registers, heartbeats and
is fenced and unfenced like any broker, under the node's own id.

Why the broker runs no observer of its own. A separate broker fetches the metadata log from the
leader under its id, and the leader tracks each fetching replica by that id: a second fetcher
under a voter's id would be taken for the voter, its fetch offsets for the voter's progress,
and could move the high watermark past records the real voter does not hold. So the broker half
fetches nothing. The node's own voter already holds the committed log, and its Raft client hands
every committed batch (and every snapshot it loads) to one listener; here that listener hands
each to the controller and then to the broker's replica, in the same call, on the event loop.
The broker thus sees exactly the committed log its controller replays, at the same offsets,
with no second copy on disk and no second connection to the leader; the leader sees one replica
per node id. The broker keeps its own in-memory image rather than reading the controller's: the
controller replaces its image when it loads a snapshot and owns it, while the broker needs the
per-batch partition and leadership changes its replica works out, and an image that is exactly
at the offset its heartbeats report.

Registration says ``combined``, the one case in which the controller accepts a broker whose id
is a voter's (a separate broker with a voter's id is still refused, by its own settings and by
the controller). On a graceful stop the broker half shuts down under control first, so its
partitions move away while the controller half can still vote for that, then the controller
half stops as a controller node does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from raftmeta.broker import Broker, BrokerSettings, BrokerState, MetadataReplica
from raftmeta.broker.status import STATUS_FILE
from raftmeta.config.node import RaftmetaConfig
from raftmeta.quorum.client import PreparingListener
from raftmeta.quorum.settings import NodeSettings
from raftmeta.raft.batch import Batch
from raftmeta.server.controller_node import ControllerNode
from raftmeta.storage.snapshots import SnapshotReader

log = logging.getLogger(__name__)

COMBINED_LISTENER = "PLAINTEXT"
"""The listener name the broker half registers when ``listeners`` names only the controller's:
the node's gRPC port, where it serves the Raft, Admin and BrokerLifecycle services."""


class _ControllerThenBroker:
    """The node's one Raft client listener: every committed batch, snapshot and leader change
    goes to the controller first and then to the broker's replica. A ``PreparingListener``, so
    a large snapshot is still built off the event loop, both halves' images in the one worker
    call, and swapped in together."""

    def __init__(self, controller: PreparingListener, broker: MetadataReplica) -> None:
        self.controller = controller
        self.broker = broker

    def handle_commit(self, batches: Sequence[Batch]) -> None:
        self.controller.handle_commit(batches)
        self.broker.handle_commit(batches)

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        self.prepare_snapshot(reader)()

    def prepare_snapshot(self, reader: SnapshotReader) -> Callable[[], None]:
        install_controller = self.controller.prepare_snapshot(reader)
        install_broker = self.broker.prepare_snapshot(reader)

        def install() -> None:
            install_controller()
            install_broker()

        return install

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        self.controller.handle_leader_change(leader_id, epoch)
        self.broker.handle_leader_change(leader_id, epoch)


def combined_broker_settings(config: RaftmetaConfig, port: int) -> BrokerSettings:
    """The broker half's settings from the node's file; ``port`` is the node's gRPC port, which
    it registers unless ``listeners`` names a listener of its own (KAFKA, PLAINTEXT, ...)."""
    settings = BrokerSettings.from_config(config, combined=True)
    settings = replace(settings, status_file=settings.data_dir / STATUS_FILE)
    if settings.listener_port is None:
        settings = replace(settings, listener_name=COMBINED_LISTENER, listener_port=port)
    return settings


class CombinedNode(ControllerNode):
    """A controller node that also runs its broker (see the module).

    Built and served as a :class:`ControllerNode` is (``start``, or ``bind``/``listen`` then
    ``run``); :attr:`broker` exists once :meth:`run` has started it.
    """

    def __init__(
        self,
        config: RaftmetaConfig,
        settings: NodeSettings | None = None,
        **options: int,
    ) -> None:
        if not (config.is_broker and config.is_controller):
            raise ValueError("a combined node needs process.roles=broker,controller")
        super().__init__(config, settings, **options)
        # The broker's keys are checked now, with the controller's, before any port is opened.
        combined_broker_settings(config, self.settings.listen_port)
        self._broker: Broker | None = None

    @property
    def broker(self) -> Broker:
        if self._broker is None:
            raise RuntimeError("the broker half exists once the node runs")
        return self._broker

    async def run(self, voters: Mapping[int, str] | None = None) -> None:
        """Join the quorum as a controller node does, with the broker's replica fed from the
        start (so it misses no batch), then start the broker's registration and heartbeats."""
        await self.listen()
        if self._broker is None:
            port = self.port
            assert port is not None  # listening
            broker = Broker(combined_broker_settings(self.config, port), shared_node=self.node)
            controller_listener = self.client.listener
            assert isinstance(controller_listener, PreparingListener)
            self.client.listener = _ControllerThenBroker(
                controller_listener, broker.metadata_listener
            )
            broker.on_state_change(self._broker_state_changed)
            self._broker = broker
        await super().run(voters)
        await self._broker.start()

    def _broker_state_changed(self, old: BrokerState, new: BrokerState) -> None:
        self.changes.notify()

    async def stop(self, *, graceful: bool = True) -> None:
        """A graceful stop shuts the broker down under control first (the controller moves its
        leaderships away), then stops it and the controller node."""
        broker = self._broker
        if broker is not None:
            if graceful:
                timeout_s = broker.settings.session_timeout_ms / 1000
                if not await broker.controlled_shutdown(timeout_s):
                    log.warning(
                        "node %d: the controller did not confirm the broker's shutdown",
                        self.node_id,
                    )
            await broker.stop()
        await super().stop(graceful=graceful)
