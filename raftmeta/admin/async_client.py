"""AsyncAdminClient: confluent-kafka's AdminClient shape on asyncio, and the one place the
admin operations are written.

Each operation checks its arguments (a ValueError at once), returns one future per item,
keyed as confluent keys them (topic name, :class:`ConfigResource`), and runs the request in
the background over the transport its config chose (:mod:`raftmeta.admin.settings`); every
future settles when the answer comes. An item's failure is a :class:`KafkaException` with
Kafka's code; a request-level failure (no controller before the timeout, authorization refused
for the whole request) fails every item's future with the same exception.

:class:`raftmeta.admin.AdminClient` runs this client on a thread of its own for code that is
not asyncio.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable, Coroutine, Hashable, Mapping, Sequence
from typing import Any, TypeVar, overload

from raftmeta.admin import arguments
from raftmeta.admin.grpc_transport import GrpcTransport
from raftmeta.admin.kafka_transport import KafkaTransport
from raftmeta.admin.quorum import QuorumInfo
from raftmeta.admin.scram import (
    UserScramCredentialDeletion,
    UserScramCredentialsDescription,
    UserScramCredentialUpsertion,
    salted_upsertion,
)
from raftmeta.admin.settings import AdminSettings, parse_admin_config
from raftmeta.admin.transport import AdminTransport
from raftmeta.admin.types import (
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    FeatureMetadata,
    KafkaException,
    NewPartitions,
    NewTopic,
    TopicDescription,
)
from raftmeta.channel import ControllerChannel
from raftmeta.common.acls import AclBinding, AclBindingFilter
from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.common.features import FeatureUpdate
from raftmeta.common.quotas import ClientQuotaAlteration, ClientQuotaEntity, ClientQuotaFilter
from raftmeta.common.reassignments import PartitionReassignment
from raftmeta.common.scram import ScramDeletion
from raftmeta.errors import ErrorCode, KafkaError

T = TypeVar("T")
Work = Callable[[AdminTransport], Coroutine[Any, Any, Mapping[Any, Any]]]
"""A request over the transport, answering one outcome per key."""

_ONE = "result"
"""The key of an operation that has one result rather than one per item."""


def open_transport(settings: AdminSettings) -> AdminTransport:
    """The transport the settings chose; its connections belong to the running event loop."""
    if settings.over_kafka:
        return KafkaTransport(
            settings.bootstrap_servers, settings.request_timeout_ms, settings.tls, settings.sasl
        )
    return GrpcTransport(
        ControllerChannel(
            settings.bootstrap_servers,
            bearer_token=settings.bearer_token,
            request_timeout_ms=settings.request_timeout_ms,
            tls=settings.tls,
            unreachable_timeout_ms=settings.unreachable_timeout_ms,
        )
    )


def warn_elect_preferred_leaders_deprecated(stacklevel: int) -> None:
    """``elect_preferred_leaders`` is KIP-183's name, kept for old callers; ``stacklevel``
    points the warning at the caller's line, so that it is shown by default there."""
    warnings.warn(
        "elect_preferred_leaders is deprecated; use "
        "elect_leaders(ElectionType.PREFERRED, partitions)",
        DeprecationWarning,
        stacklevel=stacklevel + 1,
    )


class AsyncElectLeadersResult:
    """ElectLeaders' answer: ``partitions()`` gives each partition's error (None on success);
    ``all()`` fails with the first error or gives None."""

    def __init__(self, partitions: asyncio.Future[dict[TopicPartition, KafkaException | None]]):
        self._partitions = partitions

    def partitions(self) -> asyncio.Future[dict[TopicPartition, KafkaException | None]]:
        return self._partitions

    def all(self) -> asyncio.Future[None]:
        every: asyncio.Future[None] = self._partitions.get_loop().create_future()

        def settle(done: asyncio.Future[dict[TopicPartition, KafkaException | None]]) -> None:
            if every.done():
                return
            if done.cancelled():
                every.cancel()
            elif (exception := done.exception()) is not None:
                every.set_exception(exception)
            elif (error := _first_error(done.result())) is not None:
                every.set_exception(error)
            else:
                every.set_result(None)

        self._partitions.add_done_callback(settle)
        return every


class AsyncAdminClient:
    """The admin client for asyncio code. Construct it anywhere; call it from one running
    event loop (its connections belong to the first loop that uses it).

    The config dict takes ``bootstrap.servers`` (nodes of the quorum: raftmeta's gRPC Admin
    service) or ``bootstrap.controllers`` (the controllers' KAFKA listeners: Kafka's protocol,
    for the topic, config, client quota, election, reassignment and quorum calls; the others
    fail with
    UNSUPPORTED_VERSION), ``request.timeout.ms``, ``bearer.token`` (gRPC only),
    ``security.protocol=SSL`` with the ``ssl.*`` keys for either, and
    ``bootstrap.unreachable.timeout.ms``.
    """

    def __init__(self, config: Mapping[str, object]) -> None:
        self._settings = parse_admin_config(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._transport: AdminTransport | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    def _session(self) -> tuple[asyncio.AbstractEventLoop, AdminTransport]:
        if self._closed:
            raise RuntimeError("the admin client is closed")
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "AsyncAdminClient must be called from a running event loop; use AdminClient "
                "from ordinary threads"
            ) from None
        if self._transport is None:
            self._loop, self._transport = loop, open_transport(self._settings)
        elif loop is not self._loop:
            raise RuntimeError("AsyncAdminClient is bound to the event loop that first used it")
        return loop, self._transport

    def _submit(self, keys: Sequence[Hashable], work: Work) -> dict[Any, Any]:
        loop, transport = self._session()
        futures: dict[Any, asyncio.Future[Any]] = {key: loop.create_future() for key in keys}
        task = loop.create_task(work(transport))
        self._tasks.add(task)

        def settle(done: asyncio.Task[Mapping[Any, Any]]) -> None:
            self._tasks.discard(done)
            _settle(futures, done)

        task.add_done_callback(settle)
        return futures

    def _submit_one(
        self, request: Callable[[AdminTransport], Coroutine[Any, Any, T]]
    ) -> asyncio.Future[T]:
        """One future for an operation with one result."""

        async def work(transport: AdminTransport) -> Mapping[str, T]:
            return {_ONE: await request(transport)}

        future: asyncio.Future[T] = self._submit([_ONE], work)[_ONE]
        return future

    def create_topics(
        self,
        new_topics: Sequence[NewTopic],
        *,
        validate_only: bool = False,
        request_timeout: float | None = None,
    ) -> dict[str, asyncio.Future[None]]:
        """One future per topic name, resolved with None once the topic's records commit (or,
        with ``validate_only``, once the controller checked it)."""
        topics = arguments.checked(new_topics, NewTopic, "NewTopic")
        for topic in topics:
            arguments.check_new_topic(topic)
        names = arguments.unique((t.topic for t in topics), "topic")
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit(names, lambda t: t.create_topics(topics, bool(validate_only), timeout))

    def delete_topics(
        self, topics: Sequence[str], *, request_timeout: float | None = None
    ) -> dict[str, asyncio.Future[None]]:
        names = arguments.unique(arguments.checked(topics, str, "topic names"), "topic")
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit(names, lambda t: t.delete_topics(names, timeout))

    def create_partitions(
        self,
        new_partitions: Sequence[NewPartitions],
        *,
        validate_only: bool = False,
        request_timeout: float | None = None,
    ) -> dict[str, asyncio.Future[None]]:
        partitions = arguments.checked(new_partitions, NewPartitions, "NewPartitions")
        for grow in partitions:
            arguments.check_new_partitions(grow)
        names = arguments.unique((p.topic for p in partitions), "topic")
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit(
            names, lambda t: t.create_partitions(partitions, bool(validate_only), timeout)
        )

    @overload
    def describe_topics(
        self, topics: Sequence[str], *, request_timeout: float | None = None
    ) -> dict[str, asyncio.Future[TopicDescription]]: ...

    @overload
    def describe_topics(
        self, topics: None = None, *, request_timeout: float | None = None
    ) -> asyncio.Future[dict[str, TopicDescription]]: ...

    def describe_topics(
        self, topics: Sequence[str] | None = None, *, request_timeout: float | None = None
    ) -> Any:
        """Named topics: one future per name. ``None``: one future of every topic by name."""
        timeout = arguments.timeout_ms(request_timeout)
        if topics is None:

            async def every(transport: AdminTransport) -> dict[str, TopicDescription]:
                outcomes = await transport.describe_topics(None, timeout)
                described: dict[str, TopicDescription] = {}
                for name, outcome in outcomes.items():
                    if isinstance(outcome, KafkaException):
                        raise KafkaException(
                            outcome.code, f"describing topic {name}: {outcome.message}"
                        )
                    described[name] = outcome
                return described

            return self._submit_one(every)
        names = arguments.unique(arguments.checked(topics, str, "topic names"), "topic")
        return self._submit(names, lambda t: t.describe_topics(names, timeout))

    def describe_cluster(
        self, *, include_image_digest: bool = False, request_timeout: float | None = None
    ) -> asyncio.Future[ClusterDescription]:
        timeout = arguments.timeout_ms(request_timeout)
        digest = bool(include_image_digest)
        return self._submit_one(lambda t: t.describe_cluster(digest, timeout))

    def describe_features(
        self, *, request_timeout: float | None = None
    ) -> asyncio.Future[FeatureMetadata]:
        """The finalized feature levels and the ranges the cluster supports."""
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit_one(lambda t: t.describe_features(timeout))

    def update_features(
        self,
        updates: Sequence[FeatureUpdate],
        *,
        validate_only: bool = False,
        request_timeout: float | None = None,
    ) -> asyncio.Future[None]:
        """UpdateFeatures, all or none: resolves once the levels are committed, or raises the
        first refused update's KafkaError (INVALID_UPDATE_VERSION and Kafka's message)."""
        listed = list(updates)
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit_one(lambda t: t.update_features(listed, bool(validate_only), timeout))

    def describe_configs(
        self, resources: Sequence[ConfigResource], *, request_timeout: float | None = None
    ) -> dict[ConfigResource, asyncio.Future[dict[str, ConfigEntry]]]:
        listed = arguments.unique(
            arguments.checked(resources, ConfigResource, "ConfigResource"), "resource"
        )
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit(listed, lambda t: t.describe_configs(listed, timeout))

    def incremental_alter_configs(
        self,
        resources: Sequence[ConfigResource],
        *,
        validate_only: bool = False,
        request_timeout: float | None = None,
    ) -> dict[ConfigResource, asyncio.Future[None]]:
        listed = arguments.unique(
            arguments.checked(resources, ConfigResource, "ConfigResource"), "resource"
        )
        arguments.check_alterations(listed)
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit(
            listed, lambda t: t.incremental_alter_configs(listed, bool(validate_only), timeout)
        )

    def elect_leaders(
        self,
        election_type: ElectionType | int,
        partitions: Sequence[TopicPartition] | None,
        *,
        request_timeout: float | None = None,
    ) -> AsyncElectLeadersResult:
        """Elect leaders (KIP-460); ``partitions=None`` means every partition, and then only
        partitions where an election happened or failed are reported."""
        wire_type = arguments.wire_election_type(election_type)
        listed = (
            None
            if partitions is None
            else arguments.checked(partitions, TopicPartition, "TopicPartition")
        )
        if listed is not None and not listed:
            raise ValueError("expected at least one TopicPartition, or None for every partition")
        timeout = arguments.timeout_ms(request_timeout)
        return AsyncElectLeadersResult(
            self._submit_one(lambda t: t.elect_leaders(wire_type, listed, timeout))
        )

    def elect_preferred_leaders(
        self,
        partitions: Sequence[TopicPartition] | None,
        *,
        request_timeout: float | None = None,
    ) -> AsyncElectLeadersResult:
        """KIP-183's name, kept for old callers: use ``elect_leaders(ElectionType.PREFERRED,
        partitions)``."""
        warn_elect_preferred_leaders_deprecated(stacklevel=2)
        return self.elect_leaders(
            ElectionType.PREFERRED, partitions, request_timeout=request_timeout
        )

    def create_acls(
        self, acls: Sequence[AclBinding], *, request_timeout: float | None = None
    ) -> dict[AclBinding, asyncio.Future[None]]:
        """One future per ACL, resolved with None once it is committed (an ACL that already
        exists succeeds too)."""
        bindings = arguments.unique(arguments.checked(acls, AclBinding, "AclBinding"), "AclBinding")
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit(bindings, lambda t: t.create_acls(bindings, timeout))

    def describe_acls(
        self, acl_binding_filter: AclBindingFilter, *, request_timeout: float | None = None
    ) -> asyncio.Future[list[AclBinding]]:
        """One future of the ACLs the filter matches."""
        if not isinstance(acl_binding_filter, AclBindingFilter):
            raise ValueError(
                f"expected an AclBindingFilter, got {type(acl_binding_filter).__name__}"
            )
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit_one(lambda t: t.describe_acls(acl_binding_filter, timeout))

    def delete_acls(
        self,
        acl_binding_filters: Sequence[AclBindingFilter],
        *,
        request_timeout: float | None = None,
    ) -> dict[AclBindingFilter, asyncio.Future[list[AclBinding]]]:
        """One future per filter, resolved with the ACLs it removed once the removal commits."""
        listed = arguments.unique(
            arguments.checked(acl_binding_filters, AclBindingFilter, "AclBindingFilter"), "filter"
        )
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit(listed, lambda t: t.delete_acls(listed, timeout))

    def describe_client_quotas(
        self, quota_filter: ClientQuotaFilter, *, request_timeout: float | None = None
    ) -> asyncio.Future[dict[ClientQuotaEntity, dict[str, float]]]:
        """One future of every entity the filter matches, with its quota values (Kafka's
        ``describeClientQuotas``)."""
        if not isinstance(quota_filter, ClientQuotaFilter):
            raise ValueError(f"expected a ClientQuotaFilter, got {type(quota_filter).__name__}")
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit_one(lambda t: t.describe_client_quotas(quota_filter, timeout))

    def alter_client_quotas(
        self,
        alterations: Sequence[ClientQuotaAlteration],
        *,
        validate_only: bool = False,
        request_timeout: float | None = None,
    ) -> dict[ClientQuotaEntity, asyncio.Future[None]]:
        """One future per entity, resolved with None once its quotas are committed (Kafka's
        ``alterClientQuotas``)."""
        listed = arguments.checked(alterations, ClientQuotaAlteration, "ClientQuotaAlteration")
        entities = arguments.unique([alteration.entity for alteration in listed], "entity")
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit(
            entities, lambda t: t.alter_client_quotas(listed, bool(validate_only), timeout)
        )

    def describe_quorum(
        self, *, request_timeout: float | None = None
    ) -> asyncio.Future[QuorumInfo]:
        """The metadata quorum as its leader sees it (Kafka's describeMetadataQuorum); over
        ``bootstrap.controllers`` only."""
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit_one(lambda t: t.describe_quorum(timeout))

    def alter_partition_reassignments(
        self,
        reassignments: Mapping[TopicPartition, Sequence[int] | None],
        *,
        allow_replication_factor_change: bool = True,
        request_timeout: float | None = None,
    ) -> dict[TopicPartition, asyncio.Future[None]]:
        """Move partitions' replicas (KIP-455): ``{TopicPartition: [broker ids]}`` starts (or
        redirects) a move to that replica list, ``{TopicPartition: None}`` cancels the move in
        progress. One future per partition, resolved with None once the controller has
        committed the change (the move itself completes later, as the new replicas join the
        ISR; :meth:`list_partition_reassignments` shows what is still moving), or failed with
        the partition's KafkaException (kafka-python's method gives the same code per
        partition as an error class). ``allow_replication_factor_change=False`` refuses a
        target whose length differs from the partition's replica count (KIP-860)."""
        targets = arguments.reassignment_targets(reassignments)
        keys = [target.partition for target in targets]
        allow = bool(allow_replication_factor_change)
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit(
            keys, lambda t: t.alter_partition_reassignments(targets, allow, timeout)
        )

    def list_partition_reassignments(
        self,
        topic_partitions: Sequence[TopicPartition] | Mapping[str, Sequence[int]] | None = None,
        *,
        request_timeout: float | None = None,
    ) -> asyncio.Future[dict[TopicPartition, PartitionReassignment]]:
        """The partitions being moved, each with its replicas, adding and removing replicas
        (kafka-python's keys; :meth:`PartitionReassignment.as_dict` gives its dict).
        ``topic_partitions`` (a list of TopicPartition, or kafka-python's ``{topic:
        [partitions]}``) narrows the answer; a named partition that is unknown or not moving
        is left out. ``None`` lists every move in progress."""
        named = arguments.named_partitions(topic_partitions)
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit_one(lambda t: t.list_partition_reassignments(named, timeout))

    def describe_cluster_id(self, *, request_timeout: float | None = None) -> asyncio.Future[str]:
        """The cluster's id (Kafka's ``describeCluster().clusterId()``), over either door."""
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit_one(lambda t: t.describe_cluster_id(timeout))

    def unregister_broker(
        self, broker_id: int, *, request_timeout: float | None = None
    ) -> asyncio.Future[None]:
        """Remove broker ``broker_id``'s registration, as Kafka's ``Admin.unregisterBroker``
        does for a broker that is gone for good; over ``bootstrap.controllers`` only."""
        if isinstance(broker_id, bool) or not isinstance(broker_id, int) or broker_id < 0:
            raise ValueError(f"expected a broker id (an int >= 0), got {broker_id!r}")
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit_one(lambda t: t.unregister_broker(broker_id, timeout))

    def add_raft_voter(
        self,
        voter_id: int,
        directory_id: str,
        endpoints: Sequence[tuple[str, str, int]],
        *,
        request_timeout: float | None = None,
    ) -> asyncio.Future[None]:
        """Make a caught-up controller a voter (Kafka's ``Admin.addRaftVoter``): ``endpoints``
        are its (listener name, host, port); over ``bootstrap.controllers`` only."""
        timeout = arguments.timeout_ms(request_timeout)
        listed = tuple(endpoints)
        return self._submit_one(lambda t: t.add_raft_voter(voter_id, directory_id, listed, timeout))

    def remove_raft_voter(
        self, voter_id: int, directory_id: str, *, request_timeout: float | None = None
    ) -> asyncio.Future[None]:
        """Remove a voter (Kafka's ``Admin.removeRaftVoter``); over ``bootstrap.controllers``
        only."""
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit_one(lambda t: t.remove_raft_voter(voter_id, directory_id, timeout))

    @overload
    def describe_user_scram_credentials(
        self, users: None = None, *, request_timeout: float | None = None
    ) -> asyncio.Future[dict[str, UserScramCredentialsDescription]]: ...

    @overload
    def describe_user_scram_credentials(
        self, users: Sequence[str], *, request_timeout: float | None = None
    ) -> dict[str, asyncio.Future[UserScramCredentialsDescription]]: ...

    def describe_user_scram_credentials(
        self, users: Sequence[str] | None = None, *, request_timeout: float | None = None
    ) -> (
        asyncio.Future[dict[str, UserScramCredentialsDescription]]
        | dict[str, asyncio.Future[UserScramCredentialsDescription]]
    ):
        """As confluent-kafka's: with ``users`` None, one future of every user's description;
        else one future per user named (RESOURCE_NOT_FOUND for a user with no credential)."""
        timeout = arguments.timeout_ms(request_timeout)
        if users is None:
            return self._submit_one(lambda t: _all_described(t, timeout))
        named = arguments.unique(arguments.checked(users, str, "user name"), "user")
        return self._submit(named, lambda t: t.describe_user_scram_credentials(named, timeout))

    def alter_user_scram_credentials(
        self,
        alterations: Sequence[UserScramCredentialUpsertion | UserScramCredentialDeletion],
        *,
        request_timeout: float | None = None,
    ) -> dict[str, asyncio.Future[None]]:
        """One future per user, resolved with None once the user's changes commit. The
        passwords are salted and iterated here; only that crosses the wire."""
        kinds = (UserScramCredentialUpsertion, UserScramCredentialDeletion)
        if isinstance(alterations, str | bytes) or not all(
            isinstance(item, kinds) for item in alterations
        ):
            raise ValueError(
                "expected a list of UserScramCredentialUpsertion and UserScramCredentialDeletion"
            )
        if not alterations:
            raise ValueError("expected at least one alteration")
        deletions = [
            ScramDeletion(a.user, int(a.mechanism))
            for a in alterations
            if isinstance(a, UserScramCredentialDeletion)
        ]
        upsertions = [
            salted_upsertion(a) for a in alterations if isinstance(a, UserScramCredentialUpsertion)
        ]
        users = list(dict.fromkeys(a.user for a in alterations))
        timeout = arguments.timeout_ms(request_timeout)
        return self._submit(
            users, lambda t: t.alter_user_scram_credentials(deletions, upsertions, timeout)
        )

    async def close(self) -> None:
        """Cancel requests still under way (their futures are cancelled) and close the
        connections."""
        self._closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._transport is not None:
            await self._transport.close()

    async def __aenter__(self) -> AsyncAdminClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()


async def _all_described(
    transport: AdminTransport, timeout_ms: int | None
) -> dict[str, UserScramCredentialsDescription]:
    """Every user's description, as the one result of a describe-all."""
    outcomes = await transport.describe_user_scram_credentials(None, timeout_ms)
    described: dict[str, UserScramCredentialsDescription] = {}
    for user, outcome in outcomes.items():
        if isinstance(outcome, KafkaException):
            raise outcome
        described[user] = outcome
    return described


def _first_error(outcomes: Mapping[TopicPartition, KafkaException | None]) -> KafkaException | None:
    return next((error for error in outcomes.values() if error is not None), None)


def _settle(futures: Mapping[Any, asyncio.Future[Any]], done: asyncio.Task[Any]) -> None:
    """Settle each item's future from the finished request ``done``."""
    if done.cancelled():
        for future in futures.values():
            future.cancel()
        return
    failure = done.exception()
    if failure is not None:
        if isinstance(failure, KafkaError):
            failure = KafkaException.of(failure)
        for future in futures.values():
            if not future.done():
                future.set_exception(failure)
        return
    outcomes: Mapping[Any, Any] = done.result()
    for key, future in futures.items():
        if future.done():
            continue
        outcome = outcomes.get(
            key, KafkaException(ErrorCode.UNKNOWN_SERVER_ERROR, f"no result for {key}")
        )
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)
