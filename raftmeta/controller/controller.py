"""The active controller: the event queue plus one manager per metadata domain.

:class:`QuorumController` is what the server, the tests and the benchmarks call. Each request
method is one short call that queues the matching manager method on the
:class:`~raftmeta.controller.event_queue.EventQueue` it builds on, which hands that method the
image to read and turns the :class:`~raftmeta.controller.result.ControllerResult` it returns
into appended records and a reply at commit. The managers, as Kafka divides them:

===============================  =================================================================
``replication.py``               topics, partitions, AlterPartition, elections, rebalance
``reassignment.py``              AlterPartitionReassignments, ListPartitionReassignments
``cluster.py``                   brokers, sessions and fencing, controller registrations
``configs.py``                   IncrementalAlterConfigs, DescribeConfigs
``acls.py``                      CreateAcls, DeleteAcls, DescribeAcls
``scram.py``                     AlterUserScramCredentials, DescribeUserScramCredentials
``quotas.py``                    AlterClientQuotas, DescribeClientQuotas
``features.py``                  UpdateFeatures, DescribeFeatures, bootstrap levels
``requests_seen.py``             request ids and the outcomes kept for retries (run by the queue)
===============================  =================================================================

Managers are policy and records only: no event loop, no clock (the time comes in as
``now_ms``), no I/O. This class adds what ties them to the queue: when the periodic duties run
(fencing, the preferred-leader rebalance, unclean elections, the bootstrap feature levels) and
the brokers' soft state kept across leadership.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence, Set

from placement import ReplicaPlacer
from raftmeta.common.acls import AclBinding, AclBindingFilter, AclDeleteResult
from raftmeta.common.brokers import (
    AlterPartitionRequest,
    AlterPartitionResult,
    BrokerHeartbeatReply,
    BrokerHeartbeatRequest,
    BrokerRegistrationRequest,
)
from raftmeta.common.configs import (
    AlterConfig,
    AlterConfigsResult,
    ConfigResourceRef,
    DescribeConfigsResult,
)
from raftmeta.common.elections import ElectionType, TopicPartition, TopicResults
from raftmeta.common.features import FeatureUpdate
from raftmeta.common.items import ItemError
from raftmeta.common.quotas import ClientQuotaAlteration, ClientQuotaFilter, DescribedQuotas
from raftmeta.common.reassignments import (
    PartitionReassignment,
    ReassignmentResult,
    ReassignmentTarget,
)
from raftmeta.common.scram import AlterScramRequest, ScramUserDescription, ScramUserResult
from raftmeta.common.topics import CreateTopicResult, NewPartitions, NewTopic, TopicResult
from raftmeta.controller.acls import AclControlManager
from raftmeta.controller.brokers import BrokerSession
from raftmeta.controller.cluster import ClusterControlManager
from raftmeta.controller.configs import ConfigurationControlManager
from raftmeta.controller.event_holds import LEADER_CHANGE
from raftmeta.controller.event_queue import (
    CallLater,
    EventQueue,
    NotControllerError,
    not_controller,
)
from raftmeta.controller.features import FeatureControlManager, SupportedRange
from raftmeta.controller.log import MetadataLog
from raftmeta.controller.pending import fork
from raftmeta.controller.quotas import ClientQuotaControlManager
from raftmeta.controller.reassignment import ReassignmentControlManager
from raftmeta.controller.registration import ControllerRegistrationRequest
from raftmeta.controller.replication import ReplicationControlManager
from raftmeta.controller.requests_seen import RequestTag, wall_clock_ms
from raftmeta.controller.result import ControllerResult
from raftmeta.controller.scram import ScramControlManager
from raftmeta.controller.settings import ControllerSettings
from raftmeta.controller.slices import MAX_ELECTIONS_PER_SLICE
from raftmeta.image import MetadataImage

__all__ = ["ControllerSettings", "NotControllerError", "QuorumController", "fork", "not_controller"]

RERUN_CAPPED_MS = 10
"""How soon a periodic election run that stopped at its cap runs again, as in Kafka."""


class QuorumController(EventQueue):
    """The controller state machine of one node: the queue, and the domains' managers.

    The managers are public attributes (``replication``, ``reassignment``, ``cluster``,
    ``configs``, ``acls``, ``quotas``, ``features``) so that tests and tools can read their
    state; requests go through the methods below, never to a manager directly, so that they
    run in the queue's order.
    """

    def __init__(
        self,
        settings: ControllerSettings,
        metadata_log: MetadataLog,
        *,
        clock: Callable[[], int],
        placer: ReplicaPlacer | None = None,
        new_topic_id: Callable[[], bytes] | None = None,
        wall_clock: Callable[[], int] = wall_clock_ms,
        call_later: CallLater | None = None,
        voter_ids: Callable[[], Set[int]] | None = None,
    ) -> None:
        """``wall_clock`` (ms since the epoch) only dates request outcome records;
        ``call_later(seconds, callback)`` runs the adaptive wait's timer (the event loop's
        ``call_later`` unless a test steps it); ``voter_ids`` names the Raft quorum's voters
        now (a dynamic quorum's change while it runs; without it, the configured ones)."""
        super().__init__(
            settings, metadata_log, clock=clock, wall_clock=wall_clock, call_later=call_later
        )
        self.replication = ReplicationControlManager(
            settings, placer=placer, new_topic_id=new_topic_id
        )
        self.reassignment = ReassignmentControlManager(settings)
        self.cluster = ClusterControlManager(settings, voter_ids)
        self.configs = ConfigurationControlManager(settings)
        self.acls = AclControlManager()
        self.scram = ScramControlManager()
        self.quotas = ClientQuotaControlManager()
        self.features = FeatureControlManager(settings)
        self._bootstrap_due = False
        self._next_rebalance_ms = 0
        self._next_unclean_ms = 0
        # A metric (raftmeta.server.metrics reads it; nothing here depends on it).
        self.election_counts = self.replication.election_counts
        """Elections written, by (election type, outcome code name): requested ones per
        partition result, periodic ones per record."""

    def broker_session(self, broker_id: int) -> BrokerSession | None:
        return self.cluster.sessions.get(broker_id)

    # --- leadership and periodic duties -----------------------------------------------

    def _on_activate(self, committed: MetadataImage, now_ms: int) -> None:
        bootstrapping = self.settings.bootstrap_features or self.settings.bootstrap_scram
        self._bootstrap_due = bool(bootstrapping) and not (
            committed.features or committed.brokers or committed.topics
        )
        self._next_rebalance_ms = (
            now_ms + self.settings.leader_imbalance_check_interval_seconds * 1000
        )
        self._next_unclean_ms = now_ms + self.settings.unclean_leader_election_interval_ms
        self.cluster.reset_sessions(committed, now_ms)

    def _on_resign(self) -> None:
        self.cluster.clear_sessions()

    async def _periodic_duties(self) -> None:
        """The bootstrap feature levels once, then: fence stale brokers one by one, move
        what is left of controlled shutdowns, and run the preferred-leader rebalance and
        unclean elections when due."""
        if self._bootstrap_due:
            self._bootstrap_due = False
            await self._submit_periodic(
                "bootstrapFeatures",
                lambda: self._bootstrap(self.latest_image),
            )
        # Both run slice by slice (raftmeta.controller.slices): each slice is its own event,
        # queued behind what arrived meanwhile.
        await self._run_slices(
            "fenceStaleBroker",
            lambda: self.cluster.fence_one_stale_broker(self.latest_image, self._clock()),
        )
        await self._run_slices(
            "controlledShutdownSlice",
            lambda: self.cluster.controlled_shutdown_slice(
                self.latest_image, next_offset=self._next_write_offset()
            ),
        )
        now = self._clock()
        if self.settings.auto_leader_rebalance_enable and now >= self._next_rebalance_ms:
            capped = await self._submit_periodic(
                "preferredRebalance",
                lambda: self.replication.rebalance(
                    self.latest_image, self._clock(), self.cluster.sessions
                ),
            )
            interval = self.settings.leader_imbalance_check_interval_seconds * 1000
            self._next_rebalance_ms = now + (RERUN_CAPPED_MS if capped else interval)
        if now >= self._next_unclean_ms:
            capped = await self._submit_periodic(
                "uncleanElections",
                lambda: self.replication.unclean_elections(self.latest_image),
            )
            interval = self.settings.unclean_leader_election_interval_ms
            self._next_unclean_ms = now + (RERUN_CAPPED_MS if capped else interval)

    def _bootstrap(self, image: MetadataImage) -> ControllerResult[None]:
        """What ``format`` chose for a new cluster, in one batch: the feature levels (into a
        log that holds no features, brokers or topics yet), then the SCRAM credentials (into
        a log that holds none). Runs only when the log was empty as this controller took
        over, so a broker registering before this runs does not cost the cluster the
        credentials it needs to be reached."""
        levels = self.features.bootstrap_features(image)
        credentials = self.scram.bootstrap_credentials(image, self.settings.bootstrap_scram)
        return ControllerResult(levels.records + credentials, None)

    async def _run_slices(self, name: str, handler: Callable[[], ControllerResult[bool]]) -> None:
        """Queues ``handler`` again and again, one event each, until it answers False.

        Once a slice's worth of this controller's records awaits its commit, the next slice
        waits for it. That paces the slices at the quorum's speed: otherwise they would pile
        up staged behind the append in flight and go to Raft as one batch of thousands of
        records, whose replay at commit, on every controller and broker, would be the very
        stall slicing avoids.
        """
        while await self._submit_periodic(name, handler):
            if len(self._images.records) >= MAX_ELECTIONS_PER_SLICE:
                await self.sync()

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        """Counted as a hold (:mod:`raftmeta.controller.event_holds`): becoming active runs
        here, on the loop, and must cost nothing that grows with the image."""
        began = self.holds.begin()
        super().handle_leader_change(leader_id, epoch)
        self.holds.record(LEADER_CHANGE, began)

    # --- requests: each submits its manager's handler to the queue --------------------
    #
    # With ``request``, a retry of an earlier call raises :class:`AnsweredBefore`.

    async def create_topics(
        self,
        topics: Sequence[NewTopic],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[CreateTopicResult]:
        """CreateTopics: one result per requested topic, in request order; atomic append."""
        topics = list(topics)
        return await self._submit_each(
            "createTopics",
            lambda: self.replication.create_topics(self.latest_image, topics, validate_only),
            timeout_ms=timeout_ms,
            request=request,
        )

    async def create_partitions(
        self,
        requests: Sequence[NewPartitions],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[TopicResult]:
        requests = list(requests)
        return await self._submit_each(
            "createPartitions",
            lambda: self.replication.create_partitions(self.latest_image, requests, validate_only),
            timeout_ms=timeout_ms,
            request=request,
        )

    async def delete_topics(
        self,
        names: Sequence[str],
        *,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[TopicResult]:
        names = list(names)
        return await self._submit_each(
            "deleteTopics",
            lambda: self.replication.delete_topics(self.latest_image, names),
            timeout_ms=timeout_ms,
            request=request,
        )

    async def elect_leaders(
        self,
        election_type: ElectionType,
        partitions: Sequence[TopicPartition] | None,
        *,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> tuple[TopicResults, ...]:
        """ElectLeaders (KIP-460): per-partition results once the elections commit; ``None``
        means every partition. Not atomic, so an outcome over the user-operation cap is
        still written."""
        requested = None if partitions is None else list(partitions)
        return await self._submit(
            "electLeaders",
            lambda: self.replication.elect_leaders(self.latest_image, election_type, requested),
            timeout_ms=timeout_ms,
            request=request,
        )

    async def alter_partition(
        self, request: AlterPartitionRequest, *, timeout_ms: int | None = None
    ) -> list[AlterPartitionResult]:
        return await self._submit_each(
            "alterPartition",
            lambda: self.replication.alter_partition(self.latest_image, request),
            timeout_ms=timeout_ms,
        )

    async def alter_partition_reassignments(
        self,
        targets: Sequence[ReassignmentTarget],
        *,
        allow_replication_factor_change: bool = True,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[ReassignmentResult]:
        """AlterPartitionReassignments (KIP-455): one result per partition, in request order,
        once the changes commit (the moves complete later, through AlterPartition)."""
        targets = list(targets)
        return await self._submit_each(
            "alterPartitionReassignments",
            lambda: self.reassignment.alter_partition_reassignments(
                self.latest_image, targets, allow_replication_factor_change
            ),
            timeout_ms=timeout_ms,
            request=request,
        )

    async def list_partition_reassignments(
        self, partitions: Sequence[TopicPartition] | None, *, timeout_ms: int | None = None
    ) -> dict[TopicPartition, PartitionReassignment]:
        """ListPartitionReassignments from the committed image: the moves under way among
        ``partitions`` (every one for None)."""
        named = None if partitions is None else list(partitions)
        return await self._submit(
            "listPartitionReassignments",
            lambda: self.reassignment.list_partition_reassignments(self.committed_image, named),
            timeout_ms=timeout_ms,
            needs_leadership=False,
            wait_for_commit=False,
        )

    async def describe_configs(
        self, resources: Sequence[ConfigResourceRef], *, timeout_ms: int | None = None
    ) -> list[DescribeConfigsResult]:
        """Reads the committed image, so any controller (active or not) can answer."""
        return await self._submit(
            "describeConfigs",
            lambda: self.configs.describe_configs(self.committed_image, resources),
            timeout_ms=timeout_ms,
            needs_leadership=False,
            wait_for_commit=False,
        )

    async def incremental_alter_configs(
        self,
        changes: Mapping[ConfigResourceRef, Sequence[AlterConfig]],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[AlterConfigsResult]:
        return await self._submit_each(
            "incrementalAlterConfigs",
            lambda: (
                self.configs.alter_configs(self.latest_image, resource, list(ops), validate_only)
                for resource, ops in changes.items()
            ),
            timeout_ms=timeout_ms,
            request=request,
        )

    async def alter_configs(
        self,
        changes: Mapping[ConfigResourceRef, Mapping[str, str]],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[AlterConfigsResult]:
        """Legacy AlterConfigs: each resource's configs become exactly the ones given (a
        stored name left out is deleted), checked as IncrementalAlterConfigs checks them."""
        return await self._submit_each(
            "alterConfigs",
            lambda: (
                self.configs.replace_configs(self.latest_image, resource, configs, validate_only)
                for resource, configs in changes.items()
            ),
            timeout_ms=timeout_ms,
            request=request,
        )

    async def create_acls(
        self,
        bindings: Sequence[AclBinding],
        *,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[ItemError]:
        """CreateAcls: one outcome per binding, once the new ACLs commit."""
        bindings = list(bindings)
        return await self._submit_each(
            "createAcls",
            lambda: self.acls.create_acls(self.latest_image, bindings),
            timeout_ms=timeout_ms,
            request=request,
        )

    async def delete_acls(
        self,
        filters: Sequence[AclBindingFilter],
        *,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[AclDeleteResult]:
        """DeleteAcls: per filter, the ACLs it removed, once the removals commit."""
        filters = list(filters)
        return await self._submit(
            "deleteAcls",
            lambda: self.acls.delete_acls(self.latest_image, filters),
            timeout_ms=timeout_ms,
            request=request,
        )

    async def describe_acls(
        self, acl_filter: AclBindingFilter, *, timeout_ms: int | None = None
    ) -> tuple[AclBinding, ...]:
        """DescribeAcls from the committed image (any controller answers)."""
        return await self._submit(
            "describeAcls",
            lambda: ControllerResult((), self.acls.describe_acls(self.committed_image, acl_filter)),
            timeout_ms=timeout_ms,
            needs_leadership=False,
            wait_for_commit=False,
        )

    async def alter_user_scram_credentials(
        self, request: AlterScramRequest, *, timeout_ms: int | None = None
    ) -> list[ScramUserResult]:
        """AlterUserScramCredentials: one result per user, once the changes commit."""
        return await self._submit(
            "alterUserScramCredentials",
            lambda: self.scram.alter_credentials(self.latest_image, request),
            timeout_ms=timeout_ms,
        )

    async def describe_user_scram_credentials(
        self, users: Sequence[str] | None, *, timeout_ms: int | None = None
    ) -> list[ScramUserDescription]:
        """DescribeUserScramCredentials from the committed image (any controller answers)."""
        named = None if users is None else list(users)
        return await self._submit(
            "describeUserScramCredentials",
            lambda: ControllerResult(
                (), self.scram.describe_credentials(self.committed_image, named)
            ),
            timeout_ms=timeout_ms,
            needs_leadership=False,
            wait_for_commit=False,
        )

    async def alter_client_quotas(
        self,
        alterations: Sequence[ClientQuotaAlteration],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
        request: RequestTag | None = None,
    ) -> list[ItemError]:
        """AlterClientQuotas: one outcome per alteration, once its records commit."""
        alterations = list(alterations)
        return await self._submit_each(
            "alterClientQuotas",
            lambda: self.quotas.alter_client_quotas(self.latest_image, alterations, validate_only),
            timeout_ms=timeout_ms,
            request=request,
        )

    async def describe_client_quotas(
        self, quota_filter: ClientQuotaFilter, *, timeout_ms: int | None = None
    ) -> DescribedQuotas:
        """DescribeClientQuotas from the committed image (any controller answers)."""
        return await self._submit(
            "describeClientQuotas",
            lambda: ControllerResult(
                (), self.quotas.describe_client_quotas(self.committed_image, quota_filter)
            ),
            timeout_ms=timeout_ms,
            needs_leadership=False,
            wait_for_commit=False,
        )

    async def update_features(
        self,
        updates: Sequence[FeatureUpdate],
        *,
        validate_only: bool = False,
        timeout_ms: int | None = None,
    ) -> None:
        """UpdateFeatures: every update or none, answered once the records commit."""
        updates = list(updates)
        return await self._submit(
            "updateFeatures",
            lambda: self.features.update_features(self.latest_image, updates, validate_only),
            timeout_ms=timeout_ms,
        )

    async def describe_features(
        self, *, timeout_ms: int | None = None
    ) -> tuple[dict[str, int], dict[str, SupportedRange], int]:
        """Finalized levels, supported ranges and the offset read, from the committed image."""
        return await self._submit(
            "describeFeatures",
            lambda: self.features.describe_features(self.committed_image),
            timeout_ms=timeout_ms,
            needs_leadership=False,
            wait_for_commit=False,
        )

    async def register_controller(
        self, request: ControllerRegistrationRequest, *, timeout_ms: int | None = None
    ) -> None:
        """ControllerRegistration (KIP-919); returns once the registration is committed."""
        await self._submit(
            "registerController",
            lambda: self.cluster.register_controller(self.latest_image, request),
            timeout_ms=timeout_ms,
        )

    async def register_broker(
        self, request: BrokerRegistrationRequest, *, timeout_ms: int | None = None
    ) -> int:
        """BrokerRegistration; returns the broker epoch once the registration commits."""
        return await self._submit(
            "registerBroker",
            lambda: self.cluster.register_broker(
                self.latest_image,
                request,
                now_ms=self._clock(),
                next_offset=self._next_write_offset(),
            ),
            timeout_ms=timeout_ms,
        )

    async def broker_heartbeat(
        self, request: BrokerHeartbeatRequest, *, timeout_ms: int | None = None
    ) -> BrokerHeartbeatReply:
        """BrokerHeartbeat. The default deadline is half the heartbeat interval, as in Kafka;
        a heartbeat that waited longer in the queue still counts as contact."""
        if timeout_ms is None:
            timeout_ms = self.settings.broker_heartbeat_interval_ms // 2
        return await self._submit(
            "brokerHeartbeat",
            lambda: self.cluster.heartbeat(
                self.latest_image,
                request,
                now_ms=self._clock(),
                next_offset=self._next_write_offset(),
            ),
            timeout_ms=timeout_ms,
            on_expired=lambda: self.cluster.touch_session(
                self.latest_image, request.broker_id, request.broker_epoch, self._clock()
            ),
        )

    async def unregister_broker(self, broker_id: int, *, timeout_ms: int | None = None) -> None:
        await self._submit(
            "unregisterBroker",
            lambda: self.cluster.unregister_broker(self.latest_image, broker_id),
            timeout_ms=timeout_ms,
        )
