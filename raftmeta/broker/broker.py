"""``Broker``: an embedded broker that follows the metadata log and keeps its session alive.

A broker is two loops that share one image:

* an observer ``RaftNode`` fetches the committed log from the quorum's leader under the
  broker's own id (never a voter's: the leader would count its fetches as a voter's progress)
  and replays it into a local ``MetadataImage`` through ``MetadataReplica``;
* a lifecycle task talks to the active controller over ``BrokerLifecycle``: it registers (the
  broker epoch is the offset of its registration record), then heartbeats every
  ``broker.heartbeat.interval.ms`` with the offset it has replayed. It asks to be unfenced
  once its image holds its own registration, registers again when the controller calls its
  epoch stale, and on a controlled shutdown asks to shut down until the controller, having
  moved its leaderships away, agrees.

The broker half of a combined node (``BrokerSettings.combined``) has no observer: it is handed
the node's own voter (``shared_node``), and the process that owns that node passes the committed
log to :attr:`Broker.metadata_listener` as it passes it to its controller (see
:mod:`raftmeta.server.combined_node`). It fetches nothing, so its id, the voter's, is never seen
by a leader as a second replica.

The states are Kafka's (``BrokerLifecycleManager``): STARTING until registered, RECOVERY while
fenced, RUNNING once unfenced, PENDING_CONTROLLED_SHUTDOWN, SHUTTING_DOWN.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from raftmeta.broker.catch_up import CatchUp
from raftmeta.broker.dynamic_config import ConfigListener, DynamicBrokerConfig
from raftmeta.broker.isr import WAIT_FOR_NEW_METADATA, RefusedAsStale, isr_expansions
from raftmeta.broker.replica import (
    LeadershipChange,
    LeadershipListener,
    MetadataReplica,
    PartitionListener,
)
from raftmeta.broker.settings import BrokerSettings
from raftmeta.broker.status import StatusFile
from raftmeta.common.brokers import AlterPartitionResult, PartitionIsrChange
from raftmeta.common.items import ItemError
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.quorum.client import RaftClient
from raftmeta.quorum.grpc_server import RaftServer, serve_raft
from raftmeta.quorum.identity import IdentityRule
from raftmeta.quorum.node import RaftNode
from raftmeta.quorum.settings import STREAM, NodeSettings
from raftmeta.quorum.transport_choice import node_connect
from raftmeta.records import TopicId, uuid_to_str
from raftmeta.rpc import broker_pb2
from raftmeta.security.credentials import server_credentials
from raftmeta.storage.markers import take_clean_shutdown, write_clean_shutdown

log = logging.getLogger("raftmeta.broker")

RETRY_BACKOFF_S = 0.1
"""First pause before registering again after a failed attempt; it doubles up to the
heartbeat interval, so a broker waiting out its previous session does not load the queue."""
MAX_PARTITIONS_LOGGED = 8


class BrokerState(enum.Enum):
    NOT_RUNNING = "not running"
    STARTING = "starting"
    """Not registered yet."""
    RECOVERY = "recovery"
    """Registered and fenced: catching up with the log, or fenced by the controller."""
    RUNNING = "running"
    """Unfenced: may lead partitions and be in ISRs."""
    PENDING_CONTROLLED_SHUTDOWN = "pending controlled shutdown"
    SHUTTING_DOWN = "shutting down"
    """The controller agreed to the shutdown; no more heartbeats."""


class BrokerFailure(Exception):
    """The broker cannot go on (another cluster, a failed replay); the message is one line."""


class ControllerCaller(Protocol):
    """What the broker needs of ``ControllerChannel``; tests may hand in their own."""

    async def call(self, method: str, request: Any, *, timeout_ms: int | None = None) -> Any: ...

    async def close(self) -> None: ...


StateListener = Callable[["BrokerState", "BrokerState"], None]


class Broker:
    """One embedded broker. Use from one event loop: ``await start()`` ... ``await stop()``."""

    def __init__(
        self,
        settings: BrokerSettings,
        *,
        channel: ControllerCaller | None = None,
        shared_node: RaftNode | None = None,
    ):
        """``shared_node``: a combined node's voter, which this broker reads instead of running
        an observer; required exactly when ``settings.combined``. Its owner starts and stops
        it, and hands its committed log to :attr:`metadata_listener`."""
        if (shared_node is not None) != settings.combined:
            raise ValueError("a combined node's broker, and only one, shares its node")
        if shared_node is not None and settings.listener_port is None:
            raise ValueError("a combined node's broker registers its process's port: give it")
        self.settings = settings
        self._shared_node = shared_node
        self.broker_id = settings.broker_id
        self.incarnation_id = uuid.uuid4().bytes
        """New per ``Broker`` object, as Kafka's is per process start."""
        self._channel = channel
        self._replica = MetadataReplica(settings.broker_id, self._on_replica_update)
        self._config = DynamicBrokerConfig(settings.broker_id, dict(settings.static_configs))
        self._node: RaftNode | None = None
        self._server: RaftServer | None = None
        """The observer node's gRPC server; it outlives the node by the time stop takes."""
        self._client: RaftClient | None = None
        self._status: StatusFile | None = None
        self._lifecycle: asyncio.Task[None] | None = None
        self._state = BrokerState.NOT_RUNNING
        self._broker_epoch: int | None = None
        self._previous_broker_epoch = -1
        self._want_shut_down = False
        self._wake = asyncio.Event()
        self._changed = asyncio.Event()
        self._state_listeners: list[StateListener] = []
        self._digest: tuple[int, str] | None = None
        self._fenced_in_log = False
        self._heartbeat_problem = ""
        self._voters = dict(settings.voters)
        # Only a voter whose address was guessed can be unconfirmed: a dynamic quorum's
        # observer starts with no voters and takes their addresses from the log.
        self._unconfirmed = set(settings.unconfirmed_voters) & set(self._voters)
        self._relocating: asyncio.Task[None] | None = None
        self._failure: BaseException | None = None
        self._isr_keeper: asyncio.Task[None] | None = None
        self._isr_wake = asyncio.Event()
        self._catch_up = CatchUp(settings.replica_catch_up_delay_ms)
        self._catch_up_timer: asyncio.TimerHandle | None = None
        self._replica.on_leadership_change(self._log_leadership)

    # --- reading -------------------------------------------------------------------------

    @property
    def metadata_listener(self) -> MetadataReplica:
        """The Raft client listener that replays the committed log into :attr:`image`: the
        broker's own observer feeds it, or in a combined node the shared node's client."""
        return self._replica

    @property
    def image(self) -> MetadataImage:
        """The committed image as replayed so far: updated in place by each committed batch
        and replaced by a snapshot load, so read it on the event loop and never change it."""
        return self._replica.image

    @property
    def metadata_offset(self) -> int:
        """The offset of the last committed record replayed (-1: none yet)."""
        return self._replica.metadata_offset

    @property
    def state(self) -> BrokerState:
        return self._state

    @property
    def broker_epoch(self) -> int | None:
        return self._broker_epoch

    @property
    def cluster_id(self) -> str:
        if self._node is None:
            raise RuntimeError("the broker has not started")
        return self._node.cluster_id

    @property
    def controller_addresses(self) -> Mapping[int, str]:
        """Where the observer dials each controller (guesses corrected as leaders are met)."""
        return dict(self._voters)

    @property
    def failure(self) -> BaseException | None:
        """Why the broker stopped working on its own, if it did."""
        if self._failure is None and self._node is not None:
            return self._node.failure
        return self._failure

    def image_digest(self) -> str:
        """The image's digest (cached until a batch changes the content)."""
        version = self._replica.content_version
        if self._digest is None or self._digest[0] != version:
            self._digest = (version, self._replica.image.digest())
        return self._digest[1]

    @property
    def effective_config(self) -> Mapping[str, str]:
        """Every broker config with a value, in Kafka's precedence: this broker's dynamic
        configs, the cluster-wide dynamic defaults, its static ones, the defaults."""
        return self._config.effective

    def topic_config(self, topic_name: str) -> dict[str, str]:
        """A topic's effective configs on this broker: its own values over the defaults this
        broker's effective config gives every topic (``log.retention.hours`` as
        ``retention.ms``, ...)."""
        return self._config.topic_config(self._replica.image, topic_name)

    def client_quotas(self, user: str, client_id: str) -> dict[str, float]:
        """The quotas this broker enforces on ``user`` connecting as ``client_id``, each key
        from the most specific level that sets it, in Kafka's order: the user with this client
        id, the user with the default client id, the user, the default user with this client
        id, the default user with the default client id, the default user, this client id,
        the default client id. A key no level sets is absent: no limit."""
        return self._replica.image.effective_client_quotas(user, client_id)

    def ip_quotas(self, ip: str) -> dict[str, float]:
        """The quotas of connections from ``ip``: its own, else the default ip's."""
        return self._replica.image.effective_ip_quotas(ip)

    # --- partition moves -----------------------------------------------------------------

    def adding_partitions(self) -> list[tuple[str, int]]:
        """The partitions (topic name, partition) a reassignment is adding this broker to
        and whose ISR it has not joined yet: the replicas this broker must fetch until it has
        caught up."""
        image = self.image
        found: list[tuple[str, int]] = []
        for (topic_id, partition_id), partition in image.partitions():
            if self.broker_id in partition.adding_replicas and self.broker_id not in partition.isr:
                topic = image.topic(topic_id)
                if topic is not None:
                    found.append((topic.name, partition_id))
        return sorted(found)

    def mark_replica_caught_up(self, topic: str, partition: int, replica: int) -> bool:
        """Say that ``replica`` (a broker id), which a reassignment is adding to the partition,
        has caught up with the leader's log. When this broker leads the partition it then
        asks the controller to add the replica to the ISR (AlterPartition); the expansion that
        brings the last target replica in completes the move. False, and nothing marked, when
        this broker's image does not show the replica being added (yet): wait for it
        (:meth:`wait_for`). A mark is forgotten if the replica's broker is fenced or gone."""
        image = self.image
        found = image.topic_by_name(topic)
        state = None if found is None else found.partitions.get(partition)
        if found is None or state is None or replica not in state.adding_replicas:
            return False
        self._catch_up.mark((found.topic_id, partition), replica)
        self._isr_wake.set()
        return True

    # --- subscriptions -------------------------------------------------------------------

    def on_partition_change(self, callback: PartitionListener) -> Callable[[], None]:
        """``callback(offset, changes)`` after each committed batch (or snapshot load) that
        changed partitions; returns a function that unsubscribes."""
        return self._replica.on_partition_change(callback)

    def on_leadership_change(self, callback: LeadershipListener) -> Callable[[], None]:
        """``callback(change)`` when this broker gains or loses the leadership of partitions."""
        return self._replica.on_leadership_change(callback)

    def on_config_change(self, callback: ConfigListener) -> Callable[[], None]:
        """``callback(change)`` when this broker's effective config changes: a dynamic config
        for it or for every broker was set or deleted in a replayed batch. Returns a function
        that unsubscribes."""
        return self._config.on_change(callback)

    def on_state_change(self, callback: StateListener) -> Callable[[], None]:
        """``callback(old, new)`` on every lifecycle state change."""
        self._state_listeners.append(callback)
        return lambda: self._state_listeners.remove(callback)

    async def wait_for(self, predicate: Callable[[], bool], timeout_s: float | None) -> None:
        """Wait until ``predicate()`` holds; checked after every commit and state change.
        Raises ``TimeoutError`` at the deadline and ``BrokerFailure`` if the broker fails."""

        async def until() -> None:
            while True:
                event = self._changed
                if predicate():
                    return
                failure = self.failure
                if failure is not None:
                    raise BrokerFailure(str(failure))
                await event.wait()

        async with asyncio.timeout(timeout_s):
            await until()

    # --- life cycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Open the directory, start following the log, and start registering.

        Raises the storage layer's error for an unformatted or foreign directory."""
        if self._node is not None:
            raise RuntimeError("the broker is already running")
        settings = self.settings
        if self._shared_node is not None:
            settings.data_dir.mkdir(parents=True, exist_ok=True)
            self._node = self._shared_node
        else:
            self._node = await self._new_node()
        # Read (and removed) at every start, so a crash in this run leaves no stale proof.
        self._previous_broker_epoch = take_clean_shutdown(settings.data_dir)
        if settings.status_file is not None:
            self._status = StatusFile(
                settings.status_file,
                lambda: self._replica.image.offset,
                self.image_digest,
                interval_ms=settings.status_interval_ms,
            )
        if self._shared_node is None:
            await self._node.start(self._voters)
        if self._channel is None:
            from raftmeta.channel import ControllerChannel

            self._channel = ControllerChannel(
                settings.controller_servers,
                request_timeout_ms=settings.session_timeout_ms,
                tls=settings.tls,
            )
        self._set_state(BrokerState.STARTING)
        self._lifecycle = asyncio.create_task(
            self._run_lifecycle(), name=f"broker-{settings.broker_id}-lifecycle"
        )
        if settings.expand_isr:
            self._isr_keeper = asyncio.create_task(
                self._keep_isrs(), name=f"broker-{settings.broker_id}-isr"
            )

    async def _new_node(self) -> RaftNode:
        """An observer node on the broker's directory, served on 127.0.0.1 at
        ``raftmeta.broker.observer.port`` (0: a port the OS chooses)."""
        settings = self.settings
        node = RaftNode(
            NodeSettings(
                node_id=settings.broker_id,
                voters=dict(self._voters),
                # Without voters the quorum is dynamic: the node asks these for its voters.
                bootstrap_servers=() if self._voters else settings.quorum_bootstrap_servers,
                bootstrap_tls=settings.tls,
                data_dir=settings.data_dir,
                cluster_id=settings.cluster_id,
                raft=settings.raft,
                max_bytes_between_snapshots=settings.max_bytes_between_snapshots,
                max_snapshot_interval_ms=settings.max_snapshot_interval_ms,
                listen_port=settings.observer_port,
            ),
            # The stream where a voter serves one, gRPC where it does not (it asks each).
            node_connect(STREAM, settings.tls),
        )
        replica = self._replica
        self._client = RaftClient(
            node, replica, snapshot_source=lambda: replica.image.snapshot_work()
        )
        tls = settings.tls
        if tls is not None and tls.keystore is not None:
            # With credentials the observer's own port speaks TLS too, under the same rule.
            self._server = await serve_raft(
                node, credentials=server_credentials(tls), identity=IdentityRule.for_listener(tls)
            )
        else:
            self._server = await serve_raft(node)
        return node

    async def _stop_node(self, node: RaftNode) -> None:
        """Stop the observer, then its server (so late calls are answered UNAVAILABLE)."""
        await node.stop(graceful=False)
        if self._server is not None:
            await self._server.stop()

    def _check_leader_address(self) -> None:
        """When a voter whose address was guessed leads, ask the quorum where it is."""
        leader_id = self._replica.leader[0]
        if leader_id not in self._unconfirmed or self._relocating is not None:
            return
        self._relocating = asyncio.create_task(self._relocate(leader_id))

    async def _relocate(self, leader_id: int) -> None:
        from raftmeta.broker.discovery import leader_endpoint

        try:
            given = [a.strip() for a in self.settings.controller_servers.split(",") if a.strip()]
            servers = [s.partition("@")[2] or s for s in given]
            servers = list(dict.fromkeys([*servers, *self._voters.values()]))
            while True:
                found = await leader_endpoint(servers, tls=self.settings.tls)
                if found is not None and found[0] == leader_id:
                    break
                if found is not None or self._replica.leader[0] != leader_id:
                    return  # Leadership moved on; the next leader change checks again.
                # Nobody names a leader yet (an election is under way): ask again shortly.
                await asyncio.sleep(RETRY_BACKOFF_S)
            endpoint = found[1]
            self._unconfirmed.discard(leader_id)
            if self._voters[leader_id] == endpoint:
                return
            # A guess that took the address the leader really has gets the leader's old guess.
            other = next(
                (n for n, a in self._voters.items() if a == endpoint and n in self._unconfirmed),
                None,
            )
            if other is not None:
                self._voters[other] = self._voters[leader_id]
            self._voters[leader_id] = endpoint
            log.info(
                "broker %d: controller %d is at %s; following it there",
                self.broker_id,
                leader_id,
                endpoint,
            )
            old = self._node
            if old is None:
                return
            await self._stop_node(old)
            node = await self._new_node()
            self._node = node
            await node.start(self._voters)
        finally:
            self._relocating = None

    async def controlled_shutdown(self, timeout_s: float = 30.0) -> bool:
        """Ask the controller to move this broker's leaderships away and let it go; returns
        whether it agreed within ``timeout_s``. Heartbeats stop once it has."""
        if self._lifecycle is None or self._lifecycle.done():
            return False
        if self._state is BrokerState.SHUTTING_DOWN:
            return True
        self._want_shut_down = True
        if self._broker_epoch is not None:
            self._set_state(BrokerState.PENDING_CONTROLLED_SHUTDOWN)
        self._wake.set()
        try:
            await self.wait_for(
                lambda: (
                    self._state is BrokerState.SHUTTING_DOWN
                    or self._lifecycle is None
                    or self._lifecycle.done()
                ),
                timeout_s,
            )
        except (TimeoutError, BrokerFailure):
            return False
        return self._shutdown_agreed()

    def _shutdown_agreed(self) -> bool:
        agreed = self._state is BrokerState.SHUTTING_DOWN
        if agreed and self._broker_epoch is not None:
            # The controller let this incarnation go with nothing left to lead: proof, for
            # the next start, that it stopped cleanly (KIP-966 keeps it eligible).
            write_clean_shutdown(self.settings.data_dir, self._broker_epoch)
        return agreed

    async def stop(self) -> None:
        """Stop heartbeating and following the log (no controlled shutdown: call it first)."""
        relocating = self._relocating
        if relocating is not None:
            relocating.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await relocating
        for task in (self._isr_keeper, self._lifecycle):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._isr_keeper = self._lifecycle = None
        self._schedule_catch_up(None)
        if self._status is not None:
            self._status.close()
            self._status = None
        node, self._node = self._node, None
        if node is not None and node is not self._shared_node:
            await self._stop_node(node)
        channel, self._channel = self._channel, None
        if channel is not None:
            await channel.close()
        self._set_state(BrokerState.NOT_RUNNING)

    # --- AlterPartition ------------------------------------------------------------------

    async def alter_partition(
        self,
        topic_id: TopicId,
        changes: Sequence[PartitionIsrChange],
        *,
        timeout_ms: int | None = None,
    ) -> list[AlterPartitionResult]:
        """Propose new ISRs for partitions this broker leads; one result per partition.

        Raises ``KafkaError`` for a request-level failure (STALE_BROKER_EPOCH when not
        registered, REQUEST_TIMED_OUT, ...)."""
        epoch = self._broker_epoch
        if epoch is None or self._channel is None:
            raise KafkaError(ErrorCode.STALE_BROKER_EPOCH, "the broker is not registered")
        request = broker_pb2.AlterPartitionRequest(
            broker_id=self.broker_id,
            broker_epoch=epoch,
            topic_id=topic_id,
            partitions=[
                broker_pb2.PartitionIsrChange(
                    partition_index=change.partition_id,
                    leader_epoch=change.leader_epoch,
                    new_isr=[
                        broker_pb2.IsrMember(broker_id=m.broker_id, broker_epoch=m.broker_epoch)
                        for m in change.new_isr
                    ],
                    leader_recovery_state=change.leader_recovery_state,
                    partition_epoch=change.partition_epoch,
                )
                for change in changes
            ],
            timeout_ms=timeout_ms or 0,
        )
        response = await self._channel.call(
            "BrokerLifecycle/AlterPartition", request, timeout_ms=timeout_ms
        )
        _raise_for_header(response.header)
        return [
            AlterPartitionResult(
                partition_id=result.partition_index,
                error=ItemError(ErrorCode(result.error_code), result.error_message or None),
                leader=result.leader_id,
                leader_epoch=result.leader_epoch,
                isr=tuple(result.isr),
                partition_epoch=result.partition_epoch,
                leader_recovery_state=result.leader_recovery_state,
            )
            for result in response.partitions
        ]

    # --- ISR expansion -------------------------------------------------------------------

    async def _keep_isrs(self) -> None:
        """As a partition leader, put live replicas back into the ISR and finish recoveries
        (see :mod:`raftmeta.broker.isr`). Each change is proposed once; a refused one is
        proposed again only when something it depends on changes, and one refused as made
        from old metadata only once the image holds newer epochs for its partition."""
        proposed: set[tuple[TopicId, int, int, tuple[tuple[int, int], ...]]] = set()
        stale = RefusedAsStale()
        seen_version: tuple[int, int] | None = None
        while True:
            await self._isr_wake.wait()
            self._isr_wake.clear()
            if self._state is not BrokerState.RUNNING:
                continue
            image = self.image
            self._schedule_catch_up(self._catch_up.observe(image, self.broker_id, _now_ms()))
            version = (self._replica.content_version, self._catch_up.version)
            if version == seen_version:
                continue
            seen_version = version
            stale.forget_moved(image)
            expansions = isr_expansions(image, self.broker_id, self._catch_up.is_caught_up)
            for topic_id, changes in expansions.items():
                keys = {
                    change.partition_id: (
                        topic_id,
                        change.partition_id,
                        change.partition_epoch,
                        tuple((m.broker_id, m.broker_epoch) for m in change.new_isr),
                    )
                    for change in changes
                }
                fresh = [
                    change
                    for change in changes
                    if keys[change.partition_id] not in proposed
                    and not stale.holds(topic_id, change)
                ]
                if not fresh:
                    continue
                proposed.update(keys[change.partition_id] for change in fresh)
                try:
                    results = await self.alter_partition(topic_id, fresh)
                except KafkaError as error:
                    if error.code in WAIT_FOR_NEW_METADATA:  # the topic as a whole
                        for change in fresh:
                            stale.note(topic_id, change)
                        log.info(
                            "broker %d: ISR expansion refused until newer metadata: %s",
                            self.broker_id,
                            error,
                        )
                        continue
                    # Retried at the next change of the image (a NoOp commits every 500 ms).
                    proposed.difference_update(keys[change.partition_id] for change in fresh)
                    seen_version = None
                    log.info("broker %d: ISR expansion not accepted yet: %s", self.broker_id, error)
                    continue
                by_partition = {change.partition_id: change for change in fresh}
                # NEW_LEADER_ELECTED: written, and it completed a move that removed this broker.
                refused = [
                    r
                    for r in results
                    if not r.error.ok and r.error.code is not ErrorCode.NEW_LEADER_ELECTED
                ]
                for result in refused:
                    sent = by_partition.get(result.partition_id)
                    if sent is not None and result.error.code in WAIT_FOR_NEW_METADATA:
                        stale.note(topic_id, sent)
                if refused:
                    log.info(
                        "broker %d: ISR expansion refused for %d partitions: %s",
                        self.broker_id,
                        len(refused),
                        refused[0].error.message or refused[0].error.code.name,
                    )

    def _schedule_catch_up(self, due_in_ms: int | None) -> None:
        """Wake the ISR keeper when the next adding replica's catch-up delay has passed."""
        if self._catch_up_timer is not None:
            self._catch_up_timer.cancel()
            self._catch_up_timer = None
        if due_in_ms is not None:
            self._catch_up_timer = asyncio.get_running_loop().call_later(
                due_in_ms / 1000, self._isr_wake.set
            )

    # --- the lifecycle task --------------------------------------------------------------

    async def _run_lifecycle(self) -> None:
        interval_s = self.settings.heartbeat_interval_ms / 1000
        try:
            while True:
                if self._broker_epoch is None:
                    await self._register()
                if await self._heartbeat():
                    return
                await self._pause(interval_s)
        except BrokerFailure as failure:
            log.error("broker %d: %s", self.broker_id, failure)
            self._failure = failure
            self._notify()
        except Exception as error:
            # A bug, not a condition to retry: stop visibly rather than go quiet.
            log.exception("broker %d: the lifecycle stopped", self.broker_id)
            self._failure = BrokerFailure(f"the lifecycle stopped: {error!r}")
            self._notify()

    async def _pause(self, seconds: float) -> None:
        # asyncio.timeout, not wait_for: the lifecycle loop pauses here, and on Python 3.11
        # wait_for can swallow the stop's cancel when a wake-up lands that moment.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()
        self._wake.clear()

    async def _register(self) -> None:
        settings = self.settings
        assert self._channel is not None and self._node is not None
        port = settings.listener_port
        if port is None:
            assert self._server is not None  # a combined node's broker is given its port
            port = self._server.port
        request = broker_pb2.RegisterBrokerRequest(
            broker_id=self.broker_id,
            cluster_id=self.cluster_id,
            incarnation_id=self.incarnation_id,
            listeners=[
                broker_pb2.Listener(
                    name=settings.listener_name, host=settings.listener_host, port=port or 0
                )
            ],
            timeout_ms=settings.session_timeout_ms,
            combined=settings.combined,
        )
        if settings.rack is not None:
            request.rack = settings.rack
        request.features.extend(
            broker_pb2.Feature(
                name=feature.name,
                min_supported_version=feature.min_supported_version,
                max_supported_version=feature.max_supported_version,
            )
            for feature in settings.supported_features
        )
        if self._previous_broker_epoch >= 0:
            request.previous_broker_epoch = self._previous_broker_epoch
        last_problem = ""
        backoff_s = RETRY_BACKOFF_S
        max_backoff_s = max(RETRY_BACKOFF_S, settings.heartbeat_interval_ms / 1000)
        while True:
            try:
                response = await self._channel.call("BrokerLifecycle/RegisterBroker", request)
                _raise_for_header(response.header)
            except KafkaError as error:
                if error.code is ErrorCode.INCONSISTENT_CLUSTER_ID:
                    raise BrokerFailure(f"cannot register: {error.message}") from None
                if error.message != last_problem:
                    # Once per streak: a previous incarnation's session can take a whole
                    # session timeout to expire, and the reason stays the same throughout.
                    last_problem = error.message
                    hint = (
                        "; retrying until the previous incarnation's session expires"
                        if error.code is ErrorCode.DUPLICATE_BROKER_REGISTRATION
                        else "; retrying"
                    )
                    log.warning(
                        "broker %d: registration failed: %s%s",
                        self.broker_id,
                        error.message,
                        hint,
                    )
                await asyncio.sleep(backoff_s)
                backoff_s = min(backoff_s * 2, max_backoff_s)
                continue
            self._broker_epoch = int(response.broker_epoch)
            log.info(
                "broker %d registered with broker epoch %d (incarnation %s)",
                self.broker_id,
                self._broker_epoch,
                uuid_to_str(self.incarnation_id),
            )
            self._set_state(
                BrokerState.PENDING_CONTROLLED_SHUTDOWN
                if self._want_shut_down
                else BrokerState.RECOVERY
            )
            return

    async def _heartbeat(self) -> bool:
        """One heartbeat; returns True once the controller let the broker shut down."""
        epoch = self._broker_epoch
        assert self._channel is not None and epoch is not None
        ready = self.metadata_offset >= epoch
        request = broker_pb2.BrokerHeartbeatRequest(
            broker_id=self.broker_id,
            broker_epoch=epoch,
            current_metadata_offset=self.metadata_offset,
            want_fence=not ready,
            want_shut_down=self._want_shut_down,
        )
        try:
            response = await self._channel.call(
                "BrokerLifecycle/BrokerHeartbeat",
                request,
                timeout_ms=self.settings.session_timeout_ms,
            )
            _raise_for_header(response.header)
        except KafkaError as error:
            if error.code is ErrorCode.STALE_BROKER_EPOCH:
                log.warning(
                    "broker %d: broker epoch %d is stale; registering again", self.broker_id, epoch
                )
                self._broker_epoch = None
                self._set_state(BrokerState.STARTING)
            elif error.message != self._heartbeat_problem:
                # Once per streak: a controller failover fails several beats the same way.
                log.warning("broker %d: heartbeat failed: %s", self.broker_id, error.message)
            self._heartbeat_problem = error.message
            return False
        if self._heartbeat_problem:
            log.info("broker %d: heartbeats are answered again", self.broker_id)
            self._heartbeat_problem = ""
        if response.should_shut_down:
            self._set_state(BrokerState.SHUTTING_DOWN)
            return True
        if self._want_shut_down:
            self._set_state(BrokerState.PENDING_CONTROLLED_SHUTDOWN)
        elif response.is_fenced:
            self._set_state(BrokerState.RECOVERY)
        else:
            self._set_state(BrokerState.RUNNING)
        return False

    # --- notifications -------------------------------------------------------------------

    def _set_state(self, state: BrokerState) -> None:
        old = self._state
        if state is old:
            return
        self._state = state
        if old is BrokerState.RECOVERY and state is BrokerState.RUNNING:
            log.info(
                "broker %d unfenced at metadata offset %d", self.broker_id, self.metadata_offset
            )
        elif old is BrokerState.RUNNING and state is BrokerState.RECOVERY:
            log.warning("broker %d was fenced by the controller", self.broker_id)
        elif state is BrokerState.PENDING_CONTROLLED_SHUTDOWN:
            log.info("broker %d asked for a controlled shutdown", self.broker_id)
        elif state is BrokerState.SHUTTING_DOWN:
            log.info("broker %d: the controller agreed to the shutdown", self.broker_id)
        self._isr_wake.set()
        for listener in list(self._state_listeners):
            try:
                listener(old, state)
            except Exception:
                log.exception("a broker state subscriber failed")
        self._notify()

    def _on_replica_update(self) -> None:
        self._config.update(self._replica.image)
        if self._unconfirmed:
            self._check_leader_address()
        epoch = self._broker_epoch
        registration = self._replica.image.broker(self.broker_id)
        fenced_in_log = registration is not None and registration.fenced
        newly_fenced = fenced_in_log and not self._fenced_in_log
        self._fenced_in_log = fenced_in_log
        if (
            newly_fenced
            and registration is not None
            and registration.broker_epoch == epoch
            and self._state is BrokerState.RUNNING
        ):
            # The log says the controller fenced this broker (its session expired while
            # heartbeats were lost): ask to be unfenced again at once.
            self._set_state(BrokerState.RECOVERY)
        if (
            self._state is BrokerState.RECOVERY
            and epoch is not None
            and self.metadata_offset >= epoch
        ):
            # Caught up with its own registration: ask to be unfenced now, not a beat later.
            self._wake.set()
        if self._status is not None:
            self._status.changed()
        self._isr_wake.set()
        self._notify()

    def _notify(self) -> None:
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    def _log_leadership(self, change: LeadershipChange) -> None:
        # While it replays history to catch up, a broker is told of every leadership the log
        # ever gave it: one INFO line per batch was tens of thousands of lines after a restart
        # on a busy cluster. Those go to DEBUG; once running, every change is news.
        level = logging.INFO if self._state is BrokerState.RUNNING else logging.DEBUG
        if not log.isEnabledFor(level):
            return
        for verb, items in (("now leads", change.gained), ("no longer leads", change.lost)):
            if not items:
                continue
            names = [f"{c.topic_name or uuid_to_str(c.topic_id)}-{c.partition_id}" for c in items]
            shown = ", ".join(names[:MAX_PARTITIONS_LOGGED])
            if len(names) > MAX_PARTITIONS_LOGGED:
                shown += f" and {len(names) - MAX_PARTITIONS_LOGGED} more"
            log.log(
                level,
                "broker %d %s %d partitions at offset %d: %s",
                self.broker_id,
                verb,
                len(names),
                change.offset,
                shown,
            )


def _now_ms() -> int:
    return int(asyncio.get_running_loop().time() * 1000)


def _raise_for_header(header: Any) -> None:
    if header.error_code != 0:
        try:
            code = ErrorCode(header.error_code)
        except ValueError:
            code = ErrorCode.UNKNOWN_SERVER_ERROR
        raise KafkaError(code, header.error_message or code.name)
