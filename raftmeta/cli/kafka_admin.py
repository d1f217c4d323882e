"""The admin commands' client for ``--bootstrap-controller``: Kafka's own protocol to the
controllers' KAFKA listeners (KIP-919), instead of gRPC.

It offers the few calls ``topics``, ``leader-election`` and ``quorum describe`` make, with
the shapes and errors of :class:`raftmeta.admin.AsyncAdminClient` (per-item futures that raise
:class:`~raftmeta.errors.KafkaError` with the controller's code and message), so each command
prints the same lines and exits with the same status whichever door it used.

Requests are written and read with :mod:`raftmeta.kafka_protocol.codec`, the same generated
message classes the listener serves with, rather than with a Kafka client library: the tool
then has no client threads, logs or retries of its own to silence, and a failure reaches the
user as one line. Admin requests go to the active controller, found with Metadata (its
ControllerId and the controllers' KAFKA endpoints), and follow it once when it has moved
(NOT_CONTROLLER). PLAINTEXT only.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import Any

from raftmeta.admin import (
    KafkaException,
    NewPartitions,
    NewTopic,
    PartitionDescription,
    TopicDescription,
)
from raftmeta.admin.quorum import QuorumInfo, Replica
from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.kafka_protocol import codec
from raftmeta.records import uuid_to_str

CLIENT_ID = "raftmeta-cli"
METADATA = (3, 12)
CREATE_TOPICS = (19, 7)
DELETE_TOPICS = (20, 5)
CREATE_PARTITIONS = (37, 3)
DESCRIBE_CONFIGS = (32, 4)
ELECT_LEADERS = (43, 2)
DESCRIBE_QUORUM = (55, 2)
TOPIC_RESOURCE = 2
TOPIC_CONFIG_SOURCE = 1
NO_ID = bytes(16)


class KafkaAdmin:
    """One command's session with the quorum's KAFKA listeners; ``async with`` closes it."""

    def __init__(self, bootstrap: Sequence[str], request_timeout_s: float) -> None:
        self.bootstrap = list(bootstrap)
        self.request_timeout_s = request_timeout_s
        self._connections: dict[str, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = {}
        self._correlation = itertools.count(1)
        self._controller: str | None = None
        self.cluster_id = ""

    async def __aenter__(self) -> KafkaAdmin:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        for _, writer in self._connections.values():
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        self._connections.clear()

    # ------------------------------------------------------------------------ the wire

    async def call(self, address: str, api: tuple[int, int], values: Mapping[str, Any]) -> Any:
        """One request to ``address`` and its decoded answer; KafkaError NETWORK_EXCEPTION
        when the listener cannot be reached or closes the connection."""
        api_key, version = api
        try:
            async with asyncio.timeout(self.request_timeout_s):
                return await self._exchange(address, api_key, version, values)
        except TimeoutError:
            self._forget(address)
            raise KafkaError(
                ErrorCode.REQUEST_TIMED_OUT,
                f"no answer from {address} within {self.request_timeout_s:g} s",
            ) from None
        except (OSError, asyncio.IncompleteReadError) as error:
            self._forget(address)
            reason = getattr(error, "strerror", None) or "connection closed"
            raise KafkaError(
                ErrorCode.BROKER_NOT_AVAILABLE, f"cannot reach {address} ({reason.lower()})"
            ) from None
        except codec.CodecError as error:
            self._forget(address)
            raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, str(error)) from None

    async def _exchange(
        self, address: str, api_key: int, version: int, values: Mapping[str, Any]
    ) -> Any:
        if address not in self._connections:
            host, _, port = address.rpartition(":")
            self._connections[address] = await asyncio.open_connection(host.strip("[]"), int(port))
        reader, writer = self._connections[address]
        correlation_id = next(self._correlation)
        writer.write(codec.encode_request(api_key, version, correlation_id, CLIENT_ID, values))
        await writer.drain()
        size = int.from_bytes(await reader.readexactly(4), "big", signed=True)
        frame = await reader.readexactly(size)
        if codec.correlation_id_of(frame) != correlation_id:
            raise codec.CodecError("a response out of order")
        return codec.decode_response(frame, api_key, version)

    def _forget(self, address: str) -> None:
        connection = self._connections.pop(address, None)
        if connection is not None:
            connection[1].close()
        if self._controller == address:
            self._controller = None

    # ------------------------------------------------------------------------ the controller

    async def metadata(self, topics: Sequence[str] | None) -> tuple[Any, str]:
        """A Metadata answer from the first bootstrap controller that gives one, and that
        controller's address."""
        problems: list[str] = []
        asked = None if topics is None else [{"name": name, "topic_id": None} for name in topics]
        values = {
            "topics": asked,
            "allow_auto_topic_creation": False,
            "include_topic_authorized_operations": False,
        }
        for address in self.bootstrap:
            try:
                return await self.call(address, METADATA, values), address
            except KafkaError as error:
                problems.append(error.message)
        raise KafkaError(ErrorCode.BROKER_NOT_AVAILABLE, "; ".join(problems))

    async def controller(self) -> str:
        """The KAFKA address of the active controller, as a controller names it."""
        if self._controller is not None:
            return self._controller
        answer, _ = await self.metadata([])
        self.cluster_id = answer.cluster_id or ""
        for node in answer.brokers:
            if node.node_id == answer.controller_id:
                self._controller = f"{node.host}:{node.port}"
                return self._controller
        raise KafkaError(ErrorCode.NOT_CONTROLLER, "No controller appears to be active.")

    async def to_controller(
        self, api: tuple[int, int], values: Mapping[str, Any], moved: Any
    ) -> Any:
        """Send to the active controller; when ``moved(answer)`` says it no longer is, ask
        Metadata again and send once more."""
        answer = await self.call(await self.controller(), api, values)
        if moved(answer):
            self._controller = None
            answer = await self.call(await self.controller(), api, values)
        return answer

    # ------------------------------------------------------------------------ topics

    def create_topics(self, topics: Sequence[NewTopic]) -> dict[str, Awaitable[None]]:
        values = {
            "topics": [
                {
                    "name": topic.topic,
                    "num_partitions": topic.num_partitions,
                    "replication_factor": topic.replication_factor,
                    "assignments": [
                        {"partition_index": index, "broker_ids": list(replicas)}
                        for index, replicas in enumerate(topic.replica_assignment or ())
                    ],
                    "configs": [
                        {"name": key, "value": value} for key, value in topic.config.items()
                    ],
                }
                for topic in topics
            ],
            "timeout_ms": int(self.request_timeout_s * 1000),
            "validate_only": False,
        }
        answer = self._spawn(self.to_controller(CREATE_TOPICS, values, lambda a: _moved(a.topics)))
        return {topic.topic: self._item(answer, "topics", "name", topic.topic) for topic in topics}

    def delete_topics(self, names: Sequence[str]) -> dict[str, Awaitable[None]]:
        values = {"topic_names": list(names), "timeout_ms": int(self.request_timeout_s * 1000)}
        answer = self._spawn(
            self.to_controller(DELETE_TOPICS, values, lambda a: _moved(a.responses))
        )
        return {name: self._item(answer, "responses", "name", name) for name in names}

    def create_partitions(self, changes: Sequence[NewPartitions]) -> dict[str, Awaitable[None]]:
        values = {
            "topics": [
                {
                    "name": change.topic,
                    "count": change.new_total_count,
                    "assignments": None
                    if change.replica_assignment is None
                    else [{"broker_ids": list(r)} for r in change.replica_assignment],
                }
                for change in changes
            ],
            "timeout_ms": int(self.request_timeout_s * 1000),
            "validate_only": False,
        }
        answer = self._spawn(
            self.to_controller(CREATE_PARTITIONS, values, lambda a: _moved(a.results))
        )
        return {
            change.topic: self._item(answer, "results", "name", change.topic) for change in changes
        }

    def describe_topics(self, names: Sequence[str] | None = None) -> Any:
        """Every topic (awaitable mapping) or the named ones (a mapping of awaitables)."""
        if names is None:
            return self._spawn(self._describe(None))
        described = self._spawn(self._describe(list(names)))

        async def one(name: str) -> TopicDescription:
            found = (await described)[name]
            if isinstance(found, KafkaError):
                raise found
            assert isinstance(found, TopicDescription)
            return found

        return {name: self._spawn(one(name)) for name in names}

    async def _describe(self, names: list[str] | None) -> dict[str, Any]:
        """Topics from the active controller's Metadata (which waits for its pending writes,
        as the gRPC DescribeTopics does), each with its own configs from DescribeConfigs."""
        controller = await self.controller()
        asked = None if names is None else [{"name": name, "topic_id": None} for name in names]
        answer = await self.call(
            controller,
            METADATA,
            {
                "topics": asked,
                "allow_auto_topic_creation": False,
                "include_topic_authorized_operations": False,
            },
        )
        found = {topic.name: topic for topic in answer.topics if topic.error_code == 0}
        configs = await self._topic_configs(controller, sorted(found))
        result: dict[str, Any] = {}
        for topic in answer.topics:
            if topic.error_code:
                result[topic.name] = KafkaException(
                    topic.error_code, ErrorCode(topic.error_code).name
                )
                continue
            result[topic.name] = TopicDescription(
                name=topic.name,
                topic_id=uuid_to_str(topic.topic_id.bytes) if topic.topic_id.bytes != NO_ID else "",
                partitions=tuple(
                    PartitionDescription(
                        id=p.partition_index,
                        leader=p.leader_id,
                        replicas=tuple(p.replica_nodes),
                        isr=tuple(p.isr_nodes),
                        leader_epoch=p.leader_epoch,
                    )
                    for p in sorted(topic.partitions, key=lambda p: p.partition_index)
                ),
                configs=configs.get(topic.name, {}),
            )
        return result

    async def _topic_configs(self, controller: str, names: list[str]) -> dict[str, dict[str, str]]:
        if not names:
            return {}
        answer = await self.call(
            controller,
            DESCRIBE_CONFIGS,
            {
                "resources": [
                    {
                        "resource_type": TOPIC_RESOURCE,
                        "resource_name": n,
                        "configuration_keys": None,
                    }
                    for n in names
                ],
                "include_synonyms": False,
                "include_documentation": False,
            },
        )
        return {
            result.resource_name: {
                c.name: c.value
                for c in sorted(result.configs, key=lambda c: c.name)
                if c.config_source == TOPIC_CONFIG_SOURCE and c.value is not None
            }
            for result in answer.results
            if result.error_code == 0
        }

    # ------------------------------------------------------------------------ elections

    async def elect_leaders(
        self, election_type: ElectionType, partitions: Iterable[TopicPartition] | None
    ) -> dict[TopicPartition, KafkaException | None]:
        by_topic: dict[str, list[int]] = {}
        for item in partitions or ():
            by_topic.setdefault(item.topic, []).append(item.partition)
        values = {
            "election_type": int(election_type),
            "topic_partitions": None
            if partitions is None
            else [{"topic": t, "partitions": p} for t, p in by_topic.items()],
            "timeout_ms": int(self.request_timeout_s * 1000),
        }
        answer = await self.to_controller(
            ELECT_LEADERS, values, lambda a: a.error_code == ErrorCode.NOT_CONTROLLER
        )
        if answer.error_code:
            message = _first_message(answer) or ErrorCode(answer.error_code).name
            raise KafkaException(answer.error_code, message)
        return {
            TopicPartition(result.topic, p.partition_id): None
            if p.error_code == 0
            else KafkaException(p.error_code, p.error_message or ErrorCode(p.error_code).name)
            for result in answer.replica_election_results
            for p in result.partition_result
        }

    # ------------------------------------------------------------------------ the quorum

    async def describe_quorum(self) -> QuorumInfo:
        """The leader's view of the metadata quorum, from the active controller (which leads
        the Raft quorum); asked again once if leadership moved in between."""
        values = {
            "topics": [{"topic_name": "__cluster_metadata", "partitions": [{"partition_index": 0}]}]
        }

        def partition_of(answer: Any) -> Any:
            if answer.error_code:
                raise KafkaException(
                    answer.error_code, answer.error_message or ErrorCode(answer.error_code).name
                )
            return answer.topics[0].partitions[0]

        answer = await self.to_controller(
            DESCRIBE_QUORUM,
            values,
            lambda a: partition_of(a).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER,
        )
        partition = partition_of(answer)
        if partition.error_code:
            code = ErrorCode(partition.error_code)
            raise KafkaException(code, partition.error_message or code.name)

        def replicas(states: Any) -> tuple[Replica, ...]:
            return tuple(
                Replica(
                    s.replica_id,
                    s.log_end_offset,
                    s.last_fetch_timestamp,
                    s.last_caught_up_timestamp,
                )
                for s in states
            )

        return QuorumInfo(
            self.cluster_id,
            partition.leader_id,
            partition.leader_epoch,
            partition.high_watermark,
            replicas(partition.current_voters),
            replicas(partition.observers),
        )

    # ------------------------------------------------------------------------ helpers

    def _spawn(self, work: Awaitable[Any]) -> asyncio.Future[Any]:
        future = asyncio.ensure_future(work)
        future.add_done_callback(lambda done: done.cancelled() or done.exception())
        return future

    def _item(
        self, answer: asyncio.Future[Any], field: str, key: str, name: str
    ) -> asyncio.Future[None]:
        async def outcome() -> None:
            for item in getattr(await answer, field):
                if getattr(item, key) == name:
                    if item.error_code:
                        message = item.error_message or ErrorCode(item.error_code).name
                        raise KafkaException(item.error_code, message)
                    return
            raise KafkaException(ErrorCode.UNKNOWN_SERVER_ERROR, f"no answer for {name}")

        return self._spawn(outcome())


def _moved(items: Iterable[Any]) -> bool:
    return any(item.error_code == ErrorCode.NOT_CONTROLLER for item in items)


def _first_message(answer: Any) -> str | None:
    for result in answer.replica_election_results:
        for partition in result.partition_result:
            if partition.error_message:
                return str(partition.error_message)
    return None
