"""AdminClient and AsyncAdminClient: confluent-kafka's AdminClient shape over raftmeta's Admin
service.

Each operation returns at once with one future per item, keyed as confluent keys them (topic
name, :class:`ConfigResource`); the request runs in the background and settles every future
when the controller answers. An item's failure is a :class:`KafkaException` with Kafka's code;
a request-level failure (no controller before the timeout, authorization refused for the whole
request) fails every item's future with the same exception.

AdminClient is for ordinary threads: it runs one event loop in a daemon thread and hands out
``concurrent.futures.Future``\\ s. AsyncAdminClient hands out ``asyncio.Future``\\ s and must be
used from a single running event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import threading
import warnings
from collections.abc import Awaitable, Callable, Coroutine, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from raftmeta.admin.requests import AdminRequests
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
from raftmeta.config.errors import ConfigError
from raftmeta.controller_channel import (
    DEFAULT_REQUEST_TIMEOUT_MS,
    ControllerChannel,
    parse_bootstrap_servers,
)
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.security.listener import CLIENT_TLS_KEYS, client_tls
from raftmeta.security.tls import TlsSettings

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
F = TypeVar("F")

UNREACHABLE_TIMEOUT_KEY = "bootstrap.unreachable.timeout.ms"
"""raftmeta's own key: give up on a call after this long when no server has ever answered and
every bootstrap server is unreachable (refused, no such host), rather than retrying until
``request.timeout.ms``. Unset (the default), the client rides out a quorum that is down, as
Kafka's does; the command-line tools set it so that a wrong address fails in a second."""

CONFIG_KEYS = (
    "bootstrap.servers",
    "request.timeout.ms",
    "bearer.token",
    UNREACHABLE_TIMEOUT_KEY,
    *CLIENT_TLS_KEYS,
)
"""The keys an admin client's config dict may hold."""

_ONE = "result"
"""The key of an operation that has one result rather than one per item."""


@dataclass(frozen=True, slots=True)
class AdminSettings:
    bootstrap_servers: tuple[str, ...]
    request_timeout_ms: int = DEFAULT_REQUEST_TIMEOUT_MS
    bearer_token: str | None = None
    tls: TlsSettings | None = None
    """From ``security.protocol=SSL`` and the ``ssl.*`` keys; None speaks plaintext."""
    unreachable_timeout_ms: int | None = None
    """``bootstrap.unreachable.timeout.ms``; None retries unreachable servers to the deadline."""


def parse_admin_config(config: Mapping[str, object]) -> AdminSettings:
    """Check a confluent-style config dict; anything unknown or malformed is a ValueError."""
    if not isinstance(config, Mapping):
        raise ValueError(f"admin config must be a dict of settings, got {type(config).__name__}")
    unknown = sorted(str(key) for key in config if key not in CONFIG_KEYS)
    if unknown:
        raise ValueError(
            f"unknown admin config key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
            f"known keys: {', '.join(CONFIG_KEYS)}"
        )
    servers = config.get("bootstrap.servers")
    if servers is None:
        raise ValueError("admin config needs bootstrap.servers (host:port[,host:port...])")
    if not isinstance(servers, str) and not (
        isinstance(servers, Sequence) and all(isinstance(s, str) for s in servers)
    ):
        raise ValueError(f"bootstrap.servers must be host:port strings, got {servers!r}")
    timeout = config.get("request.timeout.ms", DEFAULT_REQUEST_TIMEOUT_MS)
    if isinstance(timeout, str) and timeout.strip().isdigit():
        timeout = int(timeout)
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0:
        raise ValueError(
            f"request.timeout.ms must be a whole number of ms above 0, got {timeout!r}"
        )
    token = config.get("bearer.token")
    if token is not None and (not isinstance(token, str) or not token or "\n" in token):
        raise ValueError("bearer.token must be a non-empty single-line string")
    try:
        tls = client_tls({key: str(config[key]) for key in CLIENT_TLS_KEYS if key in config})
    except ConfigError as error:
        raise ValueError(str(error)) from None
    unreachable = config.get(UNREACHABLE_TIMEOUT_KEY)
    if unreachable is not None and (
        isinstance(unreachable, bool) or not isinstance(unreachable, int) or unreachable < 0
    ):
        raise ValueError(
            f"{UNREACHABLE_TIMEOUT_KEY} must be a whole number of ms, 0 or more, "
            f"got {unreachable!r}"
        )
    return AdminSettings(parse_bootstrap_servers(servers), timeout, token, tls, unreachable)


def _timeout_ms(request_timeout: float | None) -> int | None:
    """confluent's per-call ``request_timeout`` is in seconds; None keeps request.timeout.ms."""
    if request_timeout is None:
        return None
    if isinstance(request_timeout, bool) or not isinstance(request_timeout, int | float):
        raise ValueError(f"request_timeout is in seconds, got {request_timeout!r}")
    if not request_timeout > 0 or math.isinf(request_timeout):
        raise ValueError(
            f"request_timeout must be a finite number of seconds above 0, got {request_timeout}"
        )
    return max(1, math.ceil(request_timeout * 1000))


def _unique(keys: Iterable[K], what: str) -> list[K]:
    seen: list[K] = []
    found: set[K] = set()
    for key in keys:
        if key in found:
            raise ValueError(f"duplicate {what} {key!r} in the request")
        found.add(key)
        seen.append(key)
    if not seen:
        raise ValueError(f"expected at least one {what}")
    return seen


def _checked(items: Sequence[Any] | Any, kind: type, what: str) -> list[Any]:
    if isinstance(items, (kind, str, bytes)) or not isinstance(items, Iterable):
        raise ValueError(f"expected a list of {what}, got {type(items).__name__}")
    listed = list(items)
    for item in listed:
        if not isinstance(item, kind):
            raise ValueError(f"expected a list of {what}, found {item!r}")
    return listed


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_replicas(owner: str, assignment: Sequence[Sequence[int]] | None) -> None:
    if assignment is None:
        return
    if isinstance(assignment, str) or not all(
        isinstance(replicas, Sequence) and all(_is_int(b) for b in replicas)
        for replicas in assignment
    ):
        raise ValueError(f"{owner}: replica_assignment must be lists of broker ids")


def _check_new_topic(topic: NewTopic) -> None:
    """Shapes the wire cannot carry fail here, as ValueError, rather than in the background;
    what the controller judges (counts, names, config values) it answers per topic."""
    if not isinstance(topic.topic, str):
        raise ValueError(f"NewTopic: the topic name must be a string, got {topic.topic!r}")
    if not _is_int(topic.num_partitions) or not _is_int(topic.replication_factor):
        raise ValueError(f"NewTopic {topic.topic!r}: counts must be ints (-1: the default)")
    _check_replicas(f"NewTopic {topic.topic!r}", topic.replica_assignment)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in topic.config.items()):
        raise ValueError(f"NewTopic {topic.topic!r}: config keys and values must be strings")


def _check_new_partitions(partitions: NewPartitions) -> None:
    if not isinstance(partitions.topic, str) or not _is_int(partitions.new_total_count):
        raise ValueError(
            f"NewPartitions {partitions.topic!r}: needs a topic name and an int new_total_count"
        )
    _check_replicas(f"NewPartitions {partitions.topic!r}", partitions.replica_assignment)


def _check_alterations(resources: Sequence[ConfigResource]) -> None:
    for resource in resources:
        if not resource.incremental_configs:
            raise ValueError(f"{resource} has no incremental_configs to apply")
        for entry in resource.incremental_configs:
            if entry.incremental_operation is None:
                raise ValueError(
                    f"{resource}: config {entry.name!r} needs an incremental_operation "
                    "(SET, DELETE, APPEND or SUBTRACT)"
                )


def _election_type(value: ElectionType | int) -> int:
    """The wire value; an unknown one is sent as it is and the controller answers
    INVALID_REQUEST, as Kafka's does."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"election_type must be an ElectionType, got {value!r}")
    return int(value)


def _first_error(outcomes: Mapping[TopicPartition, KafkaException | None]) -> KafkaException | None:
    return next((error for error in outcomes.values() if error is not None), None)


Work = Callable[[AdminRequests], Coroutine[Any, Any, Mapping[K, Any]]]


class _Operations(Generic[F]):
    """The admin operations, written once over ``_submit``; the subclasses choose the future.

    ``F`` is only a marker for readers: each subclass narrows the return types to its own
    future kind.
    """

    def _submit(self, keys: Sequence[Hashable], work: Work[Any]) -> dict[Any, Any]:
        raise NotImplementedError

    def _create_topics(
        self, new_topics: Sequence[NewTopic], validate_only: bool, request_timeout: float | None
    ) -> dict[Any, Any]:
        topics = _checked(new_topics, NewTopic, "NewTopic")
        for topic in topics:
            _check_new_topic(topic)
        names = _unique((t.topic for t in topics), "topic")
        timeout = _timeout_ms(request_timeout)
        return self._submit(names, lambda r: r.create_topics(topics, bool(validate_only), timeout))

    def _delete_topics(
        self, topics: Sequence[str], request_timeout: float | None
    ) -> dict[Any, Any]:
        names = _unique(_checked(topics, str, "topic names"), "topic")
        timeout = _timeout_ms(request_timeout)
        return self._submit(names, lambda r: r.delete_topics(names, timeout))

    def _create_partitions(
        self,
        new_partitions: Sequence[NewPartitions],
        validate_only: bool,
        request_timeout: float | None,
    ) -> dict[Any, Any]:
        partitions = _checked(new_partitions, NewPartitions, "NewPartitions")
        for grow in partitions:
            _check_new_partitions(grow)
        names = _unique((p.topic for p in partitions), "topic")
        timeout = _timeout_ms(request_timeout)
        return self._submit(
            names, lambda r: r.create_partitions(partitions, bool(validate_only), timeout)
        )

    def _describe_topics(
        self, topics: Sequence[str] | None, request_timeout: float | None
    ) -> dict[Any, Any]:
        timeout = _timeout_ms(request_timeout)
        if topics is None:

            async def every(r: AdminRequests) -> Mapping[str, Any]:
                outcomes = await r.describe_topics(None, timeout)
                for name, outcome in outcomes.items():
                    if isinstance(outcome, KafkaException):
                        raise KafkaException(
                            outcome.code, f"describing topic {name}: {outcome.message}"
                        )
                return {_ONE: outcomes}

            return self._submit([_ONE], every)
        names = _unique(_checked(topics, str, "topic names"), "topic")
        return self._submit(names, lambda r: r.describe_topics(names, timeout))

    def _describe_cluster(
        self, include_image_digest: bool, request_timeout: float | None
    ) -> dict[Any, Any]:
        timeout = _timeout_ms(request_timeout)

        async def describe(r: AdminRequests) -> Mapping[str, ClusterDescription]:
            return {_ONE: await r.describe_cluster(bool(include_image_digest), timeout)}

        return self._submit([_ONE], describe)

    def _describe_features(self, request_timeout: float | None) -> dict[Any, Any]:
        timeout = _timeout_ms(request_timeout)

        async def describe(r: AdminRequests) -> Mapping[str, FeatureMetadata]:
            return {_ONE: await r.describe_features(timeout)}

        return self._submit([_ONE], describe)

    def _update_features(
        self, updates: Sequence[FeatureUpdate], validate_only: bool, request_timeout: float | None
    ) -> dict[Any, Any]:
        listed = list(updates)
        timeout = _timeout_ms(request_timeout)

        async def update(r: AdminRequests) -> Mapping[str, None]:
            await r.update_features(listed, bool(validate_only), timeout)
            return {_ONE: None}

        return self._submit([_ONE], update)

    def _describe_configs(
        self, resources: Sequence[ConfigResource], request_timeout: float | None
    ) -> dict[Any, Any]:
        listed = _unique(_checked(resources, ConfigResource, "ConfigResource"), "resource")
        timeout = _timeout_ms(request_timeout)
        return self._submit(listed, lambda r: r.describe_configs(listed, timeout))

    def _incremental_alter_configs(
        self,
        resources: Sequence[ConfigResource],
        validate_only: bool,
        request_timeout: float | None,
    ) -> dict[Any, Any]:
        listed = _unique(_checked(resources, ConfigResource, "ConfigResource"), "resource")
        _check_alterations(listed)
        timeout = _timeout_ms(request_timeout)
        return self._submit(
            listed, lambda r: r.incremental_alter_configs(listed, bool(validate_only), timeout)
        )

    def _elect_leaders(
        self,
        election_type: ElectionType | int,
        partitions: Sequence[TopicPartition] | None,
        request_timeout: float | None,
    ) -> Any:
        wire_type = _election_type(election_type)
        listed = (
            None if partitions is None else _checked(partitions, TopicPartition, "TopicPartition")
        )
        if listed is not None and not listed:
            raise ValueError("expected at least one TopicPartition, or None for every partition")
        timeout = _timeout_ms(request_timeout)

        async def elect(r: AdminRequests) -> Mapping[str, Any]:
            return {_ONE: await r.elect_leaders(wire_type, listed, timeout)}

        return self._submit([_ONE], elect)[_ONE]

    def _create_acls(
        self, acls: Sequence[AclBinding], request_timeout: float | None
    ) -> dict[Any, Any]:
        bindings = _unique(_checked(acls, AclBinding, "AclBinding"), "AclBinding")
        timeout = _timeout_ms(request_timeout)
        return self._submit(bindings, lambda r: r.create_acls(bindings, timeout))

    def _describe_acls(self, acl_filter: AclBindingFilter, request_timeout: float | None) -> Any:
        if not isinstance(acl_filter, AclBindingFilter):
            raise ValueError(f"expected an AclBindingFilter, got {type(acl_filter).__name__}")
        timeout = _timeout_ms(request_timeout)

        async def describe(r: AdminRequests) -> Mapping[str, Any]:
            return {_ONE: await r.describe_acls(acl_filter, timeout)}

        return self._submit([_ONE], describe)[_ONE]

    def _delete_acls(
        self, filters: Sequence[AclBindingFilter], request_timeout: float | None
    ) -> dict[Any, Any]:
        listed = _unique(_checked(filters, AclBindingFilter, "AclBindingFilter"), "filter")
        timeout = _timeout_ms(request_timeout)
        return self._submit(listed, lambda r: r.delete_acls(listed, timeout))


# --- the asyncio client -----------------------------------------------------------------------


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


class AsyncAdminClient(_Operations[asyncio.Future[Any]]):
    """The admin client for asyncio code. Construct it anywhere; call it from one running
    event loop (its gRPC channels belong to the first loop that uses it)."""

    def __init__(self, config: Mapping[str, object]) -> None:
        self._settings = parse_admin_config(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._requests: AdminRequests | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False

    def _session(self) -> tuple[asyncio.AbstractEventLoop, AdminRequests]:
        if self._closed:
            raise RuntimeError("the admin client is closed")
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                "AsyncAdminClient must be called from a running event loop; use AdminClient "
                "from ordinary threads"
            ) from None
        if self._requests is None:
            settings = self._settings
            channel = ControllerChannel(
                settings.bootstrap_servers,
                bearer_token=settings.bearer_token,
                request_timeout_ms=settings.request_timeout_ms,
                tls=settings.tls,
                unreachable_timeout_ms=settings.unreachable_timeout_ms,
            )
            self._loop, self._requests = loop, AdminRequests(channel)
        elif loop is not self._loop:
            raise RuntimeError("AsyncAdminClient is bound to the event loop that first used it")
        return loop, self._requests

    def _submit(self, keys: Sequence[Hashable], work: Work[Any]) -> dict[Any, Any]:
        loop, requests = self._session()
        futures: dict[Any, asyncio.Future[Any]] = {key: loop.create_future() for key in keys}
        task = loop.create_task(work(requests))
        self._tasks.add(task)

        def settle(done: asyncio.Task[Mapping[Any, Any]]) -> None:
            self._tasks.discard(done)
            _settle(futures, done)

        task.add_done_callback(settle)
        return futures

    def create_topics(
        self,
        new_topics: Sequence[NewTopic],
        *,
        validate_only: bool = False,
        request_timeout: float | None = None,
    ) -> dict[str, asyncio.Future[None]]:
        """One future per topic name, resolved with None once the topic's records commit (or,
        with ``validate_only``, once the controller checked it)."""
        return self._create_topics(new_topics, validate_only, request_timeout)

    def delete_topics(
        self, topics: Sequence[str], *, request_timeout: float | None = None
    ) -> dict[str, asyncio.Future[None]]:
        return self._delete_topics(topics, request_timeout)

    def create_partitions(
        self,
        new_partitions: Sequence[NewPartitions],
        *,
        validate_only: bool = False,
        request_timeout: float | None = None,
    ) -> dict[str, asyncio.Future[None]]:
        return self._create_partitions(new_partitions, validate_only, request_timeout)

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
        futures = self._describe_topics(topics, request_timeout)
        return futures[_ONE] if topics is None else futures

    def describe_cluster(
        self, *, include_image_digest: bool = False, request_timeout: float | None = None
    ) -> asyncio.Future[ClusterDescription]:
        future: asyncio.Future[ClusterDescription] = self._describe_cluster(
            include_image_digest, request_timeout
        )[_ONE]
        return future

    def describe_features(
        self, *, request_timeout: float | None = None
    ) -> asyncio.Future[FeatureMetadata]:
        """The finalized feature levels and the ranges the cluster supports."""
        future: asyncio.Future[FeatureMetadata] = self._describe_features(request_timeout)[_ONE]
        return future

    def update_features(
        self,
        updates: Sequence[FeatureUpdate],
        *,
        validate_only: bool = False,
        request_timeout: float | None = None,
    ) -> asyncio.Future[None]:
        """UpdateFeatures, all or none: resolves once the levels are committed, or raises the
        first refused update's KafkaError (INVALID_UPDATE_VERSION and Kafka's message)."""
        future: asyncio.Future[None] = self._update_features(
            updates, validate_only, request_timeout
        )[_ONE]
        return future

    def describe_configs(
        self, resources: Sequence[ConfigResource], *, request_timeout: float | None = None
    ) -> dict[ConfigResource, asyncio.Future[dict[str, ConfigEntry]]]:
        return self._describe_configs(resources, request_timeout)

    def incremental_alter_configs(
        self,
        resources: Sequence[ConfigResource],
        *,
        validate_only: bool = False,
        request_timeout: float | None = None,
    ) -> dict[ConfigResource, asyncio.Future[None]]:
        return self._incremental_alter_configs(resources, validate_only, request_timeout)

    def elect_leaders(
        self,
        election_type: ElectionType | int,
        partitions: Sequence[TopicPartition] | None,
        *,
        request_timeout: float | None = None,
    ) -> AsyncElectLeadersResult:
        """Elect leaders (KIP-460); ``partitions=None`` means every partition, and then only
        partitions where an election happened or failed are reported."""
        return AsyncElectLeadersResult(
            self._elect_leaders(election_type, partitions, request_timeout)
        )

    def create_acls(
        self, acls: Sequence[AclBinding], *, request_timeout: float | None = None
    ) -> dict[AclBinding, asyncio.Future[None]]:
        """One future per ACL, resolved with None once it is committed (an ACL that already
        exists succeeds too)."""
        return self._create_acls(acls, request_timeout)

    def describe_acls(
        self, acl_binding_filter: AclBindingFilter, *, request_timeout: float | None = None
    ) -> asyncio.Future[list[AclBinding]]:
        """One future of the ACLs the filter matches."""
        future: asyncio.Future[list[AclBinding]] = self._describe_acls(
            acl_binding_filter, request_timeout
        )
        return future

    def delete_acls(
        self,
        acl_binding_filters: Sequence[AclBindingFilter],
        *,
        request_timeout: float | None = None,
    ) -> dict[AclBindingFilter, asyncio.Future[list[AclBinding]]]:
        """One future per filter, resolved with the ACLs it removed once the removal commits."""
        return self._delete_acls(acl_binding_filters, request_timeout)

    def elect_preferred_leaders(
        self,
        partitions: Sequence[TopicPartition] | None,
        *,
        request_timeout: float | None = None,
    ) -> AsyncElectLeadersResult:
        """KIP-183's name, kept for old callers: use ``elect_leaders(ElectionType.PREFERRED,
        partitions)``."""
        warnings.warn(
            "elect_preferred_leaders is deprecated; use "
            "elect_leaders(ElectionType.PREFERRED, partitions)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.elect_leaders(
            ElectionType.PREFERRED, partitions, request_timeout=request_timeout
        )

    async def close(self) -> None:
        """Cancel requests still under way (their futures are cancelled) and close the
        channels."""
        self._closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._requests is not None:
            await self._requests.channel.close()

    async def __aenter__(self) -> AsyncAdminClient:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()


def _settle(futures: Mapping[Any, Any], done: Any) -> None:
    """Settle each item's future from the finished request ``done`` (an asyncio or a
    concurrent future of the outcomes)."""
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


# --- the thread-friendly client ---------------------------------------------------------------


class ElectLeadersResult:
    """ElectLeaders' answer: ``partitions()`` gives each partition's error (None on success);
    ``all()`` fails with the first error or gives None."""

    def __init__(
        self, partitions: concurrent.futures.Future[dict[TopicPartition, KafkaException | None]]
    ) -> None:
        self._partitions = partitions

    def partitions(self) -> concurrent.futures.Future[dict[TopicPartition, KafkaException | None]]:
        return self._partitions

    def all(self) -> concurrent.futures.Future[None]:
        every: concurrent.futures.Future[None] = concurrent.futures.Future()

        def settle(
            done: concurrent.futures.Future[dict[TopicPartition, KafkaException | None]],
        ) -> None:
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


class AdminClient(_Operations[concurrent.futures.Future[Any]]):
    """The admin client for ordinary (threaded) code, shaped like confluent-kafka's.

    It runs an event loop in a daemon thread; every method returns at once with
    ``concurrent.futures.Future``\\ s. Call :meth:`close` (or use ``with``) when done.
    """

    def __init__(self, config: Mapping[str, object]) -> None:
        self._client = AsyncAdminClient(config)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="raftmeta-admin-client", daemon=True
        )
        self._thread.start()
        self._lock = threading.Lock()
        self._closed = False

    def _submit(self, keys: Sequence[Hashable], work: Work[Any]) -> dict[Any, Any]:
        futures: dict[Any, concurrent.futures.Future[Any]] = {
            key: concurrent.futures.Future() for key in keys
        }

        async def perform() -> Mapping[Any, Any]:
            _loop, requests = self._client._session()
            return await work(requests)

        with self._lock:
            if self._closed:
                raise RuntimeError("the admin client is closed")
            done = asyncio.run_coroutine_threadsafe(self._tracked(perform()), self._loop)
        done.add_done_callback(lambda finished: _settle(futures, finished))
        return futures

    async def _tracked(self, work: Awaitable[Mapping[Any, Any]]) -> Mapping[Any, Any]:
        """Run ``work`` as a task close() can cancel."""
        task = asyncio.ensure_future(work)
        self._client._tasks.add(task)
        try:
            return await task
        finally:
            self._client._tasks.discard(task)

    def create_topics(
        self,
        new_topics: Sequence[NewTopic],
        *,
        validate_only: bool = False,
        request_timeout: float | None = None,
    ) -> dict[str, concurrent.futures.Future[None]]:
        """One future per topic name, resolved with None once the topic's records commit (or,
        with ``validate_only``, once the controller checked it)."""
        return self._create_topics(new_topics, validate_only, request_timeout)

    def delete_topics(
        self, topics: Sequence[str], *, request_timeout: float | None = None
    ) -> dict[str, concurrent.futures.Future[None]]:
        return self._delete_topics(topics, request_timeout)

    def create_partitions(
        self,
        new_partitions: Sequence[NewPartitions],
        *,
        validate_only: bool = False,
        request_timeout: float | None = None,
    ) -> dict[str, concurrent.futures.Future[None]]:
        return self._create_partitions(new_partitions, validate_only, request_timeout)

    @overload
    def describe_topics(
        self, topics: Sequence[str], *, request_timeout: float | None = None
    ) -> dict[str, concurrent.futures.Future[TopicDescription]]: ...

    @overload
    def describe_topics(
        self, topics: None = None, *, request_timeout: float | None = None
    ) -> concurrent.futures.Future[dict[str, TopicDescription]]: ...

    def describe_topics(
        self, topics: Sequence[str] | None = None, *, request_timeout: float | None = None
    ) -> Any:
        """Named topics: one future per name. ``None``: one future of every topic by name."""
        futures = self._describe_topics(topics, request_timeout)
        return futures[_ONE] if topics is None else futures

    def describe_cluster(
        self, *, include_image_digest: bool = False, request_timeout: float | None = None
    ) -> concurrent.futures.Future[ClusterDescription]:
        future: concurrent.futures.Future[ClusterDescription] = self._describe_cluster(
            include_image_digest, request_timeout
        )[_ONE]
        return future

    def describe_configs(
        self, resources: Sequence[ConfigResource], *, request_timeout: float | None = None
    ) -> dict[ConfigResource, concurrent.futures.Future[dict[str, ConfigEntry]]]:
        return self._describe_configs(resources, request_timeout)

    def incremental_alter_configs(
        self,
        resources: Sequence[ConfigResource],
        *,
        validate_only: bool = False,
        request_timeout: float | None = None,
    ) -> dict[ConfigResource, concurrent.futures.Future[None]]:
        return self._incremental_alter_configs(resources, validate_only, request_timeout)

    def elect_leaders(
        self,
        election_type: ElectionType | int,
        partitions: Sequence[TopicPartition] | None,
        *,
        request_timeout: float | None = None,
    ) -> ElectLeadersResult:
        """Elect leaders (KIP-460); ``partitions=None`` means every partition, and then only
        partitions where an election happened or failed are reported."""
        return ElectLeadersResult(self._elect_leaders(election_type, partitions, request_timeout))

    def create_acls(
        self, acls: Sequence[AclBinding], *, request_timeout: float | None = None
    ) -> dict[AclBinding, concurrent.futures.Future[None]]:
        """One future per ACL, resolved with None once it is committed (an ACL that already
        exists succeeds too)."""
        return self._create_acls(acls, request_timeout)

    def describe_acls(
        self, acl_binding_filter: AclBindingFilter, *, request_timeout: float | None = None
    ) -> concurrent.futures.Future[list[AclBinding]]:
        """One future of the ACLs the filter matches."""
        future: concurrent.futures.Future[list[AclBinding]] = self._describe_acls(
            acl_binding_filter, request_timeout
        )
        return future

    def delete_acls(
        self,
        acl_binding_filters: Sequence[AclBindingFilter],
        *,
        request_timeout: float | None = None,
    ) -> dict[AclBindingFilter, concurrent.futures.Future[list[AclBinding]]]:
        """One future per filter, resolved with the ACLs it removed once the removal commits."""
        return self._delete_acls(acl_binding_filters, request_timeout)

    def elect_preferred_leaders(
        self,
        partitions: Sequence[TopicPartition] | None,
        *,
        request_timeout: float | None = None,
    ) -> ElectLeadersResult:
        """KIP-183's name, kept for old callers: use ``elect_leaders(ElectionType.PREFERRED,
        partitions)``."""
        warnings.warn(
            "elect_preferred_leaders is deprecated; use "
            "elect_leaders(ElectionType.PREFERRED, partitions)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.elect_leaders(
            ElectionType.PREFERRED, partitions, request_timeout=request_timeout
        )

    def close(self, timeout: float = 5.0) -> None:
        """Cancel requests under way (their futures are cancelled), close the channels and
        stop the loop thread. Calling it again does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            asyncio.run_coroutine_threadsafe(self._client.close(), self._loop).result(timeout)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)
            if not self._thread.is_alive():
                self._loop.close()

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
