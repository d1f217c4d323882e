"""AdminClient: the admin client for ordinary (threaded) code, as confluent-kafka's is.

It holds an :class:`AsyncAdminClient` and runs it on a private event loop in a daemon thread.
Every method hands its call to that loop, waits only until the request is under way (the
arguments checked, the futures made), and returns the core's futures as
``concurrent.futures.Future``\\ s that settle when the core's do. So each operation is written
once, in the core; a method here only names it, with the same arguments (keyword options are
the core's, typed by the dicts below).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, TypedDict, TypeVar, Unpack, overload

from raftmeta.admin.async_client import (
    AsyncAdminClient,
    AsyncElectLeadersResult,
    warn_elect_preferred_leaders_deprecated,
)
from raftmeta.admin.quorum import QuorumInfo
from raftmeta.admin.scram import (
    UserScramCredentialDeletion,
    UserScramCredentialsDescription,
    UserScramCredentialUpsertion,
)
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
from raftmeta.common.acls import AclBinding, AclBindingFilter
from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.common.features import FeatureUpdate
from raftmeta.common.quotas import ClientQuotaAlteration, ClientQuotaEntity, ClientQuotaFilter
from raftmeta.common.reassignments import PartitionReassignment

K = TypeVar("K")
V = TypeVar("V")
R = TypeVar("R")
S = TypeVar("S")


class Timeout(TypedDict, total=False):
    """``request_timeout``: seconds for this call, instead of ``request.timeout.ms``."""

    request_timeout: float | None


class Write(Timeout, total=False):
    """``validate_only``: have the controller check the request without applying it."""

    validate_only: bool


class Describe(Timeout, total=False):
    """``include_image_digest``: ask for a digest of the controller's metadata image."""

    include_image_digest: bool


class Reassign(Timeout, total=False):
    """``allow_replication_factor_change``: False refuses a target of another length than
    the partition's replica count (KIP-860)."""

    allow_replication_factor_change: bool


class ElectLeadersResult:
    """ElectLeaders' answer: ``partitions()`` gives each partition's error (None on success);
    ``all()`` fails with the first error or gives None."""

    def __init__(
        self,
        partitions: Future[dict[TopicPartition, KafkaException | None]],
        every: Future[None],
    ) -> None:
        self._partitions = partitions
        self._every = every

    def partitions(self) -> Future[dict[TopicPartition, KafkaException | None]]:
        return self._partitions

    def all(self) -> Future[None]:
        return self._every


class AdminClient:
    """The admin client for ordinary (threaded) code, shaped like confluent-kafka's; its
    config is :class:`AsyncAdminClient`'s.

    Every method returns at once with ``concurrent.futures.Future``\\ s and takes the
    arguments of the :class:`AsyncAdminClient` method of the same name. Call :meth:`close`
    (or use ``with``) when done.
    """

    def __init__(self, config: Mapping[str, object]) -> None:
        self._core = AsyncAdminClient(config)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="raftmeta-admin-client", daemon=True
        )
        self._thread.start()
        self._lock = threading.Lock()
        self._closed = False

    def _run(self, call: Callable[[AsyncAdminClient], R], threaded: Callable[[R], S]) -> S:
        """``call(core)`` on the loop thread, its answer made ``threaded`` (concurrent futures
        for the core's); what it raises (a ValueError for a bad argument) is raised here."""
        if threading.current_thread() is self._thread:  # from a future's done-callback
            return threaded(call(self._core))

        async def on_loop() -> S:
            return threaded(call(self._core))

        with self._lock:
            if self._closed:
                raise RuntimeError("the admin client is closed")
            started = asyncio.run_coroutine_threadsafe(on_loop(), self._loop)
        return started.result()

    def _each(
        self, call: Callable[[AsyncAdminClient], Mapping[K, asyncio.Future[V]]]
    ) -> dict[K, Future[V]]:
        """An operation with one future per item."""
        return self._run(call, _each_concurrent)

    def _one(self, call: Callable[[AsyncAdminClient], asyncio.Future[V]]) -> Future[V]:
        """An operation with one result."""
        return self._run(call, _concurrent)

    def create_topics(
        self, new_topics: Sequence[NewTopic], **options: Unpack[Write]
    ) -> dict[str, Future[None]]:
        """One future per topic name, resolved with None once the topic's records commit."""
        return self._each(lambda core: core.create_topics(new_topics, **options))

    def delete_topics(
        self, topics: Sequence[str], **options: Unpack[Timeout]
    ) -> dict[str, Future[None]]:
        return self._each(lambda core: core.delete_topics(topics, **options))

    def create_partitions(
        self, new_partitions: Sequence[NewPartitions], **options: Unpack[Write]
    ) -> dict[str, Future[None]]:
        return self._each(lambda core: core.create_partitions(new_partitions, **options))

    @overload
    def describe_topics(
        self, topics: Sequence[str], **options: Unpack[Timeout]
    ) -> dict[str, Future[TopicDescription]]: ...

    @overload
    def describe_topics(
        self, topics: None = None, **options: Unpack[Timeout]
    ) -> Future[dict[str, TopicDescription]]: ...

    def describe_topics(
        self, topics: Sequence[str] | None = None, **options: Unpack[Timeout]
    ) -> Any:
        """Named topics: one future per name. ``None``: one future of every topic by name."""
        if topics is None:
            return self._one(lambda core: core.describe_topics(None, **options))
        return self._each(lambda core: core.describe_topics(topics, **options))

    def describe_cluster(self, **options: Unpack[Describe]) -> Future[ClusterDescription]:
        return self._one(lambda core: core.describe_cluster(**options))

    def describe_features(self, **options: Unpack[Timeout]) -> Future[FeatureMetadata]:
        return self._one(lambda core: core.describe_features(**options))

    def update_features(
        self, updates: Sequence[FeatureUpdate], **options: Unpack[Write]
    ) -> Future[None]:
        return self._one(lambda core: core.update_features(updates, **options))

    def describe_configs(
        self, resources: Sequence[ConfigResource], **options: Unpack[Timeout]
    ) -> dict[ConfigResource, Future[dict[str, ConfigEntry]]]:
        return self._each(lambda core: core.describe_configs(resources, **options))

    def incremental_alter_configs(
        self, resources: Sequence[ConfigResource], **options: Unpack[Write]
    ) -> dict[ConfigResource, Future[None]]:
        return self._each(lambda core: core.incremental_alter_configs(resources, **options))

    def elect_leaders(
        self,
        election_type: ElectionType | int,
        partitions: Sequence[TopicPartition] | None,
        **options: Unpack[Timeout],
    ) -> ElectLeadersResult:
        return self._run(
            lambda core: core.elect_leaders(election_type, partitions, **options), _elect_result
        )

    def elect_preferred_leaders(
        self, partitions: Sequence[TopicPartition] | None, **options: Unpack[Timeout]
    ) -> ElectLeadersResult:
        """Deprecated (KIP-183's name): use ``elect_leaders(ElectionType.PREFERRED, ...)``."""
        warn_elect_preferred_leaders_deprecated(stacklevel=2)
        return self.elect_leaders(ElectionType.PREFERRED, partitions, **options)

    def create_acls(
        self, acls: Sequence[AclBinding], **options: Unpack[Timeout]
    ) -> dict[AclBinding, Future[None]]:
        return self._each(lambda core: core.create_acls(acls, **options))

    def describe_acls(
        self, acl_binding_filter: AclBindingFilter, **options: Unpack[Timeout]
    ) -> Future[list[AclBinding]]:
        return self._one(lambda core: core.describe_acls(acl_binding_filter, **options))

    def delete_acls(
        self, acl_binding_filters: Sequence[AclBindingFilter], **options: Unpack[Timeout]
    ) -> dict[AclBindingFilter, Future[list[AclBinding]]]:
        return self._each(lambda core: core.delete_acls(acl_binding_filters, **options))

    def describe_client_quotas(
        self, quota_filter: ClientQuotaFilter, **options: Unpack[Timeout]
    ) -> Future[dict[ClientQuotaEntity, dict[str, float]]]:
        return self._one(lambda core: core.describe_client_quotas(quota_filter, **options))

    def alter_client_quotas(
        self, alterations: Sequence[ClientQuotaAlteration], **options: Unpack[Write]
    ) -> dict[ClientQuotaEntity, Future[None]]:
        return self._each(lambda core: core.alter_client_quotas(alterations, **options))

    def describe_quorum(self, **options: Unpack[Timeout]) -> Future[QuorumInfo]:
        return self._one(lambda core: core.describe_quorum(**options))

    def alter_partition_reassignments(
        self,
        reassignments: Mapping[TopicPartition, Sequence[int] | None],
        **options: Unpack[Reassign],
    ) -> dict[TopicPartition, Future[None]]:
        """One future per partition: None once the move (or, for a None target, its
        cancellation) is committed, or the partition's KafkaException."""
        return self._each(lambda core: core.alter_partition_reassignments(reassignments, **options))

    def list_partition_reassignments(
        self,
        topic_partitions: Sequence[TopicPartition] | Mapping[str, Sequence[int]] | None = None,
        **options: Unpack[Timeout],
    ) -> Future[dict[TopicPartition, PartitionReassignment]]:
        """One future of the partitions being moved (all of them for ``None``)."""
        return self._one(
            lambda core: core.list_partition_reassignments(topic_partitions, **options)
        )

    def describe_cluster_id(self, **options: Unpack[Timeout]) -> Future[str]:
        return self._one(lambda core: core.describe_cluster_id(**options))

    def unregister_broker(self, broker_id: int, **options: Unpack[Timeout]) -> Future[None]:
        return self._one(lambda core: core.unregister_broker(broker_id, **options))

    def add_raft_voter(
        self,
        voter_id: int,
        directory_id: str,
        endpoints: Sequence[tuple[str, str, int]],
        **options: Unpack[Timeout],
    ) -> Future[None]:
        return self._one(
            lambda core: core.add_raft_voter(voter_id, directory_id, endpoints, **options)
        )

    def remove_raft_voter(
        self, voter_id: int, directory_id: str, **options: Unpack[Timeout]
    ) -> Future[None]:
        return self._one(lambda core: core.remove_raft_voter(voter_id, directory_id, **options))

    @overload
    def describe_user_scram_credentials(
        self, users: None = None, **options: Unpack[Timeout]
    ) -> Future[dict[str, UserScramCredentialsDescription]]: ...

    @overload
    def describe_user_scram_credentials(
        self, users: Sequence[str], **options: Unpack[Timeout]
    ) -> dict[str, Future[UserScramCredentialsDescription]]: ...

    def describe_user_scram_credentials(
        self, users: Sequence[str] | None = None, **options: Unpack[Timeout]
    ) -> (
        Future[dict[str, UserScramCredentialsDescription]]
        | dict[str, Future[UserScramCredentialsDescription]]
    ):
        """As confluent-kafka's: one future of every user's description with ``users`` None,
        else one future per user."""
        if users is None:
            return self._one(lambda core: core.describe_user_scram_credentials(None, **options))
        named = users
        return self._each(lambda core: core.describe_user_scram_credentials(named, **options))

    def alter_user_scram_credentials(
        self,
        alterations: Sequence[UserScramCredentialUpsertion | UserScramCredentialDeletion],
        **options: Unpack[Timeout],
    ) -> dict[str, Future[None]]:
        return self._each(lambda core: core.alter_user_scram_credentials(alterations, **options))

    def close(self, timeout: float = 5.0) -> None:
        """Cancel requests under way (their futures are cancelled), close the connections and
        stop the loop thread. Calling it again does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            asyncio.run_coroutine_threadsafe(self._core.close(), self._loop).result(timeout)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)
            if not self._thread.is_alive():
                self._loop.close()

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _each_concurrent(futures: Mapping[K, asyncio.Future[V]]) -> dict[K, Future[V]]:
    return {key: _concurrent(future) for key, future in futures.items()}


def _elect_result(result: AsyncElectLeadersResult) -> ElectLeadersResult:
    return ElectLeadersResult(_concurrent(result.partitions()), _concurrent(result.all()))


def _concurrent(source: asyncio.Future[V]) -> Future[V]:
    """A concurrent future that settles as ``source`` does (run on the loop thread, where
    ``source`` lives). Cancelling it stops no request, only the wait."""
    target: Future[V] = Future()

    def copy(done: asyncio.Future[V]) -> None:
        if done.cancelled():
            target.cancel()
        elif not target.set_running_or_notify_cancel():
            return  # the caller cancelled its wait
        elif (error := done.exception()) is not None:
            target.set_exception(error)
        else:
            target.set_result(done.result())

    source.add_done_callback(copy)
    return target
