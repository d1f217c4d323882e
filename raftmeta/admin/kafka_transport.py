"""The admin client's Kafka transport: Kafka's own protocol to the controllers' KAFKA listeners
(KIP-919's ``bootstrap.controllers``), instead of raftmeta's gRPC Admin service.

It answers as :class:`~raftmeta.admin.grpc_transport.GrpcTransport` does (one outcome per
item, a :class:`KafkaException` with the controller's code and message), so a caller, and the
``--bootstrap-controller`` commands, print the same whichever door they used.

Requests are written and read with :mod:`raftmeta.kafka_protocol.codec`, the same generated
message classes the listener serves with, rather than with a Kafka client library: there are
no client threads, logs or retries of another library to silence, and a failure reaches the
caller as one error. Admin requests go to the active controller, found with Metadata (its
ControllerId and the controllers' KAFKA endpoints), and follow it once when it has moved
(NOT_CONTROLLER). With ``security.protocol=SSL`` or SASL_SSL every connection is TLS, checked
against ``ssl.truststore.*`` and presenting ``ssl.keystore.*`` when set, exactly as the gRPC
transport uses the same keys. With SASL_PLAINTEXT or SASL_SSL every connection logs in before
its first request: SaslHandshake v1, then SaslAuthenticate v2 with PLAIN's one token or
SCRAM's two messages (:class:`~raftmeta.security.scram_exchange.ScramClient`, which also checks
the listener's signature, so a listener that does not hold the credential is not believed). A
refused login is SASL_AUTHENTICATION_FAILED with the listener's words, never retried on another
controller with the same password.

ACLs, client quotas, the unregistration of a broker and the voter changes go over Kafka's own
ACL, DescribeClientQuotas/AlterClientQuotas, UnregisterBroker and AddRaftVoter/RemoveRaftVoter
APIs. Cluster descriptions and features are not carried here (Kafka's DescribeCluster lacks
the broker states raftmeta's has): those operations fail with UNSUPPORTED_VERSION, naming
``bootstrap.servers``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import ssl
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from raftmeta.admin.quorum import QuorumInfo, Replica
from raftmeta.admin.scram import UserScramCredentialsDescription
from raftmeta.admin.transport import (
    Outcomes,
    config_entry,
    config_resource_of,
    not_offered,
    scram_descriptions,
    scram_outcome,
)
from raftmeta.admin.types import (
    ConfigEntry,
    ConfigResource,
    KafkaException,
    NewPartitions,
    NewTopic,
    PartitionDescription,
    TopicDescription,
)
from raftmeta.common.acls import AclBinding, AclBindingFilter
from raftmeta.common.elections import TopicPartition
from raftmeta.common.quotas import ClientQuotaAlteration, ClientQuotaEntity, ClientQuotaFilter
from raftmeta.common.reassignments import (
    PartitionReassignment,
    ReassignmentTarget,
    grouped_by_topic,
)
from raftmeta.common.scram import ScramDeletion, ScramUpsertion
from raftmeta.errors import ErrorCode
from raftmeta.kafka_protocol import codec
from raftmeta.records import uuid_from_str, uuid_to_str
from raftmeta.security.sasl_client import SaslLogin
from raftmeta.security.scram import ScramMechanism
from raftmeta.security.scram_exchange import ScramClient, ScramFailure
from raftmeta.security.ssl_contexts import client_ssl_context
from raftmeta.security.tls import TlsSettings

CLIENT_ID = "raftmeta-admin"
METADATA = (3, 12)
CREATE_TOPICS = (19, 7)
DELETE_TOPICS = (20, 5)
CREATE_PARTITIONS = (37, 3)
DESCRIBE_CONFIGS = (32, 4)
INCREMENTAL_ALTER_CONFIGS = (44, 1)
ELECT_LEADERS = (43, 2)
DESCRIBE_QUORUM = (55, 2)
ALTER_PARTITION_REASSIGNMENTS = (45, 1)
LIST_PARTITION_REASSIGNMENTS = (46, 0)
DESCRIBE_ACLS = (29, 3)
CREATE_ACLS = (30, 3)
DELETE_ACLS = (31, 3)
UNREGISTER_BROKER = (64, 0)
ADD_RAFT_VOTER = (80, 0)
REMOVE_RAFT_VOTER = (81, 0)

MOVED_BACKOFF_S = 0.05
MAX_MOVED_BACKOFF_S = 1.0
"""The pause before asking again after a node said it is not the controller (or the Raft
leader): doubled each time up to the maximum, within the call's timeout."""
NOT_THE_LEADER = frozenset({ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_CONTROLLER})
"""A voter change sent where no leader is known yet is answered with either."""
SASL_HANDSHAKE = (17, 1)
SASL_AUTHENTICATE = (36, 2)
LOGIN_REFUSALS = frozenset(
    (
        ErrorCode.SASL_AUTHENTICATION_FAILED,
        ErrorCode.UNSUPPORTED_SASL_MECHANISM,
        ErrorCode.ILLEGAL_SASL_STATE,
    )
)
"""A login refused: the same credentials would be refused by every controller."""
DESCRIBE_USER_SCRAM_CREDENTIALS = (50, 0)
ALTER_USER_SCRAM_CREDENTIALS = (51, 0)
DESCRIBE_CLIENT_QUOTAS = (48, 1)
ALTER_CLIENT_QUOTAS = (49, 1)
TOPIC_RESOURCE = 2
TOPIC_CONFIG_SOURCE = 1
NO_ID = bytes(16)
INSTEAD = "bootstrap.servers (gRPC)"

Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class KafkaTransport:
    """Admin operations over Kafka-protocol connections to the controllers, one per address,
    all on the event loop that first uses them."""

    def __init__(
        self,
        controllers: Sequence[str],
        request_timeout_ms: int,
        tls: TlsSettings | None,
        sasl: SaslLogin | None = None,
    ) -> None:
        self.bootstrap = list(controllers)
        self._sasl = sasl
        self.request_timeout_ms = request_timeout_ms
        self._ssl: ssl.SSLContext | None = None if tls is None else client_ssl_context(tls)
        self._connections: dict[str, Connection] = {}
        self._correlation = itertools.count(1)
        self._controller: str | None = None
        self.cluster_id = ""

    async def close(self) -> None:
        for _, writer in self._connections.values():
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        self._connections.clear()

    describe_cluster = not_offered("DescribeCluster", INSTEAD)
    describe_features = not_offered("DescribeFeatures", INSTEAD)
    update_features = not_offered("UpdateFeatures", INSTEAD)

    # ------------------------------------------------------------------------ the wire

    def _budget(self, timeout_ms: int | None) -> int:
        return self.request_timeout_ms if timeout_ms is None else timeout_ms

    async def call(
        self, address: str, api: tuple[int, int], values: Mapping[str, Any], timeout_ms: int
    ) -> Any:
        """One request to ``address`` and its decoded answer; BROKER_NOT_AVAILABLE when the
        listener cannot be reached (or the TLS handshake fails) or closes the connection,
        REQUEST_TIMED_OUT when it does not answer within ``timeout_ms``."""
        api_key, version = api
        try:
            async with asyncio.timeout(timeout_ms / 1000):
                return await self._exchange(address, api_key, version, values)
        except TimeoutError:
            self._forget(address)
            raise KafkaException(
                ErrorCode.REQUEST_TIMED_OUT,
                f"no answer from {address} within {timeout_ms / 1000:g} s",
            ) from None
        except (OSError, asyncio.IncompleteReadError) as error:
            self._forget(address)
            raise KafkaException(
                ErrorCode.BROKER_NOT_AVAILABLE, f"cannot reach {address} ({_reason(error)})"
            ) from None
        except codec.CodecError as error:
            self._forget(address)
            raise KafkaException(ErrorCode.UNKNOWN_SERVER_ERROR, str(error)) from None

    async def _exchange(
        self, address: str, api_key: int, version: int, values: Mapping[str, Any]
    ) -> Any:
        if address not in self._connections:
            self._connections[address] = await self._open(address)
        return await self._round_trip(self._connections[address], (api_key, version), values)

    async def _round_trip(
        self, connection: Connection, api: tuple[int, int], values: Mapping[str, Any]
    ) -> Any:
        reader, writer = connection
        api_key, version = api
        correlation_id = next(self._correlation)
        writer.write(codec.encode_request(api_key, version, correlation_id, CLIENT_ID, values))
        await writer.drain()
        size = int.from_bytes(await reader.readexactly(4), "big", signed=True)
        frame = await reader.readexactly(size)
        if codec.correlation_id_of(frame) != correlation_id:
            raise codec.CodecError("a response out of order")
        return codec.decode_response(frame, api_key, version)

    async def _open(self, address: str) -> Connection:
        """A connection to ``address``, logged in when the settings ask for SASL."""
        host, _, port = address.rpartition(":")
        connection = await asyncio.open_connection(host.strip("[]"), int(port), ssl=self._ssl)
        if self._sasl is not None:
            try:
                await self._login(connection, self._sasl)
            except BaseException:
                connection[1].close()
                raise
        return connection

    async def _login(self, connection: Connection, login: SaslLogin) -> None:
        handshake = await self._round_trip(
            connection, SASL_HANDSHAKE, {"mechanism": login.mechanism}
        )
        if handshake.error_code:
            offered = ", ".join(handshake.mechanisms) or "none"
            raise KafkaException(
                handshake.error_code,
                f"the listener does not offer SASL mechanism {login.mechanism} "
                f"(it offers {offered})",
            )
        mechanism = ScramMechanism.from_name(login.mechanism)
        if mechanism is ScramMechanism.UNKNOWN:  # PLAIN: one token
            await self._authenticate(
                connection, f"\x00{login.username}\x00{login.password}".encode()
            )
            return
        client = ScramClient(mechanism, login.username, login.password)
        try:
            server_first = await self._authenticate(connection, client.first())
            server_final = await self._authenticate(connection, client.final(server_first))
            client.verify(server_final)
        except ScramFailure as failure:
            raise KafkaException(
                ErrorCode.SASL_AUTHENTICATION_FAILED, f"{login.mechanism} login: {failure}"
            ) from None

    async def _authenticate(self, connection: Connection, token: bytes) -> bytes:
        answer = await self._round_trip(connection, SASL_AUTHENTICATE, {"auth_bytes": token})
        if answer.error_code:
            code = ErrorCode(answer.error_code)
            raise KafkaException(code, answer.error_message or code.name)
        return bytes(answer.auth_bytes or b"")

    def _forget(self, address: str) -> None:
        connection = self._connections.pop(address, None)
        if connection is not None:
            connection[1].close()
        if self._controller == address:
            self._controller = None

    # ------------------------------------------------------------------------ the controller

    async def _metadata(self, topics: Sequence[str] | None, timeout_ms: int) -> Any:
        """A Metadata answer from the first bootstrap controller that gives one."""
        problems: list[str] = []
        for address in self.bootstrap:
            try:
                return await self.call(address, METADATA, _metadata_request(topics), timeout_ms)
            except KafkaException as error:
                if error.code in LOGIN_REFUSALS:
                    raise
                problems.append(error.message)
        raise KafkaException(ErrorCode.BROKER_NOT_AVAILABLE, "; ".join(problems))

    async def _active_controller(self, timeout_ms: int) -> str:
        """The KAFKA address of the active controller, as a controller names it. Right after
        an election or a start no controller may be named yet: Metadata is asked again,
        backing off, until one is or ``timeout_ms`` has passed."""
        if self._controller is not None:
            return self._controller
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_ms / 1000
        backoff_s = MOVED_BACKOFF_S
        while True:
            left_ms = max(1, int((deadline - loop.time()) * 1000))
            answer = await self._metadata([], left_ms)
            self.cluster_id = answer.cluster_id or ""
            for node in answer.brokers:
                if node.node_id == answer.controller_id:
                    self._controller = f"{node.host}:{node.port}"
                    return self._controller
            if loop.time() + backoff_s >= deadline:
                raise KafkaException(
                    ErrorCode.NOT_CONTROLLER, "No controller appears to be active."
                )
            await asyncio.sleep(backoff_s)
            backoff_s = min(backoff_s * 2, MAX_MOVED_BACKOFF_S)

    async def _to_controller(
        self,
        api: tuple[int, int],
        values: Mapping[str, Any],
        timeout_ms: int,
        moved: Callable[[Any], bool],
    ) -> Any:
        """Send to the active controller; while ``moved(answer)`` says it is not (it moved, or
        no controller is active yet after a failover), ask Metadata again and send again,
        backing off, until ``timeout_ms`` has passed; the last answer is returned."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_ms / 1000
        backoff_s = MOVED_BACKOFF_S
        answer = await self.call(await self._active_controller(timeout_ms), api, values, timeout_ms)
        while moved(answer) and loop.time() + backoff_s < deadline:
            await asyncio.sleep(backoff_s)
            backoff_s = min(backoff_s * 2, MAX_MOVED_BACKOFF_S)
            self._controller = None
            left_ms = max(1, int((deadline - loop.time()) * 1000))
            controller = await self._active_controller(left_ms)
            answer = await self.call(controller, api, values, left_ms)
        return answer

    # ------------------------------------------------------------------------ topics

    async def create_topics(
        self, topics: Sequence[NewTopic], validate_only: bool, timeout_ms: int | None
    ) -> Outcomes[str, None]:
        budget = self._budget(timeout_ms)
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
            "timeout_ms": budget,
            "validate_only": validate_only,
        }
        answer = await self._to_controller(CREATE_TOPICS, values, budget, _moved("topics"))
        return _item_errors(answer.topics)

    async def delete_topics(
        self, topics: Sequence[str], timeout_ms: int | None
    ) -> Outcomes[str, None]:
        budget = self._budget(timeout_ms)
        values = {"topic_names": list(topics), "timeout_ms": budget}
        answer = await self._to_controller(DELETE_TOPICS, values, budget, _moved("responses"))
        return _item_errors(answer.responses)

    async def create_partitions(
        self, partitions: Sequence[NewPartitions], validate_only: bool, timeout_ms: int | None
    ) -> Outcomes[str, None]:
        budget = self._budget(timeout_ms)
        values = {
            "topics": [
                {
                    "name": change.topic,
                    "count": change.new_total_count,
                    "assignments": None
                    if change.replica_assignment is None
                    else [{"broker_ids": list(r)} for r in change.replica_assignment],
                }
                for change in partitions
            ],
            "timeout_ms": budget,
            "validate_only": validate_only,
        }
        answer = await self._to_controller(CREATE_PARTITIONS, values, budget, _moved("results"))
        return _item_errors(answer.results)

    async def describe_topics(
        self, topics: Sequence[str] | None, timeout_ms: int | None
    ) -> Outcomes[str, TopicDescription]:
        """Topics from the active controller's Metadata (which waits for its pending writes,
        as the gRPC DescribeTopics does), each with its own configs from DescribeConfigs."""
        budget = self._budget(timeout_ms)
        controller = await self._active_controller(budget)
        answer = await self.call(controller, METADATA, _metadata_request(topics), budget)
        found = sorted(topic.name for topic in answer.topics if topic.error_code == 0)
        configs = await self._topic_configs(controller, found, budget)
        outcomes: Outcomes[str, TopicDescription] = {}
        for topic in answer.topics:
            if topic.error_code:
                outcomes[topic.name] = KafkaException(
                    topic.error_code, ErrorCode(topic.error_code).name
                )
                continue
            outcomes[topic.name] = TopicDescription(
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
        return outcomes

    async def _topic_configs(
        self, controller: str, names: list[str], timeout_ms: int
    ) -> dict[str, dict[str, str]]:
        if not names:
            return {}
        values = {
            "resources": [
                {"resource_type": TOPIC_RESOURCE, "resource_name": n, "configuration_keys": None}
                for n in names
            ],
            "include_synonyms": False,
            "include_documentation": False,
        }
        answer = await self.call(controller, DESCRIBE_CONFIGS, values, timeout_ms)
        return {
            result.resource_name: {
                c.name: c.value
                for c in sorted(result.configs, key=lambda c: c.name)
                if c.config_source == TOPIC_CONFIG_SOURCE and c.value is not None
            }
            for result in answer.results
            if result.error_code == 0
        }

    # ------------------------------------------------------------------------ configs

    async def describe_configs(
        self, resources: Sequence[ConfigResource], timeout_ms: int | None
    ) -> Outcomes[ConfigResource, dict[str, ConfigEntry]]:
        """From the active controller, so that a caller reads its own writes."""
        budget = self._budget(timeout_ms)
        values = {
            "resources": [
                {
                    "resource_type": int(r.restype),
                    "resource_name": r.name,
                    "configuration_keys": None,
                }
                for r in resources
            ],
            "include_synonyms": True,
            "include_documentation": False,
        }
        answer = await self._to_controller(DESCRIBE_CONFIGS, values, budget, _moved("results"))
        return {
            key: _item_error(result)
            or {
                c.name: config_entry(
                    c.name,
                    c.value,
                    c.config_source,
                    is_read_only=c.read_only,
                    is_sensitive=c.is_sensitive,
                    synonyms=[(s.name, s.value, s.source) for s in c.synonyms],
                )
                for c in result.configs
            }
            for result in answer.results
            if (key := config_resource_of(result.resource_type, result.resource_name))
        }

    async def incremental_alter_configs(
        self, resources: Sequence[ConfigResource], validate_only: bool, timeout_ms: int | None
    ) -> Outcomes[ConfigResource, None]:
        budget = self._budget(timeout_ms)
        values = {
            "resources": [
                {
                    "resource_type": int(r.restype),
                    "resource_name": r.name,
                    "configs": [
                        {
                            "name": entry.name,
                            # Never None: the client checked every change has an operation.
                            "config_operation": int(entry.incremental_operation or 0),
                            "value": entry.value,
                        }
                        for entry in r.incremental_configs
                    ],
                }
                for r in resources
            ],
            "validate_only": validate_only,
        }
        answer = await self._to_controller(
            INCREMENTAL_ALTER_CONFIGS, values, budget, _moved("responses")
        )
        return {
            key: _item_error(result)
            for result in answer.responses
            if (key := config_resource_of(result.resource_type, result.resource_name))
        }

    # ------------------------------------------------------------------------ client quotas

    async def describe_client_quotas(
        self, quota_filter: ClientQuotaFilter, timeout_ms: int | None
    ) -> dict[ClientQuotaEntity, dict[str, float]]:
        """From the active controller, so that a caller reads its own writes."""
        budget = self._budget(timeout_ms)
        values = {
            "components": [
                {
                    "entity_type": component.entity_type,
                    "match_type": component.match_type,
                    "match": component.match,
                }
                for component in quota_filter.components
            ],
            "strict": quota_filter.strict,
        }
        answer = await self._to_controller(
            DESCRIBE_CLIENT_QUOTAS,
            values,
            budget,
            lambda answer: answer.error_code == ErrorCode.NOT_CONTROLLER,
        )
        error = _item_error(answer)
        if error is not None:
            raise error
        return {
            _quota_entity(entry.entity): {value.key: value.value for value in entry.values}
            for entry in answer.entries or ()
        }

    async def alter_client_quotas(
        self,
        alterations: Sequence[ClientQuotaAlteration],
        validate_only: bool,
        timeout_ms: int | None,
    ) -> Outcomes[ClientQuotaEntity, None]:
        budget = self._budget(timeout_ms)
        values = {
            "entries": [
                {
                    "entity": [
                        {"entity_type": kind, "entity_name": name}
                        for kind, name in alteration.entity.parts
                    ],
                    "ops": [
                        {"key": op.key, "value": op.value, "remove": op.remove}
                        for op in alteration.ops
                    ],
                }
                for alteration in alterations
            ],
            "validate_only": validate_only,
        }
        answer = await self._to_controller(ALTER_CLIENT_QUOTAS, values, budget, _moved("entries"))
        return {_quota_entity(entry.entity): _item_error(entry) for entry in answer.entries}

    # ------------------------------------------------------------------------ elections

    async def elect_leaders(
        self,
        election_type: int,
        partitions: Sequence[TopicPartition] | None,
        timeout_ms: int | None,
    ) -> dict[TopicPartition, KafkaException | None]:
        budget = self._budget(timeout_ms)
        by_topic: dict[str, list[int]] = {}
        for item in partitions or ():
            by_topic.setdefault(item.topic, []).append(item.partition)
        values = {
            "election_type": election_type,
            "topic_partitions": None
            if partitions is None
            else [{"topic": t, "partitions": p} for t, p in by_topic.items()],
            "timeout_ms": budget,
        }
        answer = await self._to_controller(
            ELECT_LEADERS, values, budget, lambda a: a.error_code == ErrorCode.NOT_CONTROLLER
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

    # ------------------------------------------------------------------------ reassignments

    async def alter_partition_reassignments(
        self,
        targets: Sequence[ReassignmentTarget],
        allow_replication_factor_change: bool,
        timeout_ms: int | None,
    ) -> Outcomes[TopicPartition, None]:
        budget = self._budget(timeout_ms)
        by_topic: dict[str, list[dict[str, Any]]] = {}
        for target in targets:
            by_topic.setdefault(target.partition.topic, []).append(
                {
                    "partition_index": target.partition.partition,
                    "replicas": None if target.replicas is None else list(target.replicas),
                }
            )
        values = {
            "timeout_ms": budget,
            "allow_replication_factor_change": allow_replication_factor_change,
            "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()],
        }
        answer = await self._to_controller(
            ALTER_PARTITION_REASSIGNMENTS,
            values,
            budget,
            lambda a: a.error_code == ErrorCode.NOT_CONTROLLER,
        )
        if answer.error_code:
            raise KafkaException(
                answer.error_code, answer.error_message or ErrorCode(answer.error_code).name
            )
        outcomes: Outcomes[TopicPartition, None] = {
            TopicPartition(topic.name, p.partition_index): None
            if p.error_code == 0
            else KafkaException(p.error_code, p.error_message or ErrorCode(p.error_code).name)
            for topic in answer.responses
            for p in topic.partitions
        }
        for target in targets:
            outcomes.setdefault(
                target.partition,
                KafkaException(
                    ErrorCode.UNKNOWN_SERVER_ERROR,
                    f"the controller sent no result for partition {target.partition}",
                ),
            )
        return outcomes

    async def list_partition_reassignments(
        self, partitions: Sequence[TopicPartition] | None, timeout_ms: int | None
    ) -> dict[TopicPartition, PartitionReassignment]:
        budget = self._budget(timeout_ms)
        values = {
            "timeout_ms": budget,
            "topics": None
            if partitions is None
            else [
                {"name": topic, "partition_indexes": numbers}
                for topic, numbers in grouped_by_topic(tuple(partitions)).items()
            ],
        }
        answer = await self._to_controller(
            LIST_PARTITION_REASSIGNMENTS,
            values,
            budget,
            lambda a: a.error_code == ErrorCode.NOT_CONTROLLER,
        )
        if answer.error_code:
            raise KafkaException(
                answer.error_code, answer.error_message or ErrorCode(answer.error_code).name
            )
        return {
            TopicPartition(topic.name, p.partition_index): PartitionReassignment(
                tuple(p.replicas), tuple(p.adding_replicas), tuple(p.removing_replicas)
            )
            for topic in answer.topics
            for p in topic.partitions
        }

    # ------------------------------------------------------------------------ the quorum

    async def describe_quorum(self, timeout_ms: int | None) -> QuorumInfo:
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

        answer = await self._to_controller(
            DESCRIBE_QUORUM,
            values,
            self._budget(timeout_ms),
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

    async def describe_cluster_id(self, timeout_ms: int | None) -> str:
        """The cluster id a controller's Metadata names."""
        answer = await self._metadata([], self._budget(timeout_ms))
        return str(answer.cluster_id or "")

    # ------------------------------------------------------------------------ ACLs

    async def create_acls(
        self, bindings: Sequence[AclBinding], timeout_ms: int | None
    ) -> Outcomes[AclBinding, None]:
        values = {"creations": [_creation(binding) for binding in bindings]}
        answer = await self._to_controller(
            CREATE_ACLS, values, self._budget(timeout_ms), _moved("results")
        )
        return {
            binding: _item_error(result)
            for binding, result in zip(bindings, answer.results, strict=False)
        }

    async def describe_acls(
        self, acl_filter: AclBindingFilter, timeout_ms: int | None
    ) -> list[AclBinding]:
        """From the active controller, so that a caller reads its own writes."""
        answer = await self._to_controller(
            DESCRIBE_ACLS,
            _acl_filter(acl_filter),
            self._budget(timeout_ms),
            lambda a: a.error_code == ErrorCode.NOT_CONTROLLER,
        )
        failure = _item_error(answer)
        if failure is not None:
            raise failure
        return [
            AclBinding(
                resource.resource_type,
                resource.resource_name,
                resource.pattern_type,
                acl.principal,
                acl.host,
                acl.operation,
                acl.permission_type,
            )
            for resource in answer.resources
            for acl in resource.acls
        ]

    async def delete_acls(
        self, filters: Sequence[AclBindingFilter], timeout_ms: int | None
    ) -> Outcomes[AclBindingFilter, list[AclBinding]]:
        values = {"filters": [_acl_filter(item) for item in filters]}
        answer = await self._to_controller(
            DELETE_ACLS, values, self._budget(timeout_ms), _moved("filter_results")
        )
        outcomes: Outcomes[AclBindingFilter, list[AclBinding]] = {}
        for acl_filter, result in zip(filters, answer.filter_results, strict=False):
            outcomes[acl_filter] = _item_error(result) or [
                AclBinding.of(acl) for acl in result.matching_acls
            ]
        return outcomes

    # ------------------------------------------------------------------------ brokers, voters

    async def unregister_broker(self, broker_id: int, timeout_ms: int | None) -> None:
        answer = await self._to_controller(
            UNREGISTER_BROKER,
            {"broker_id": broker_id},
            self._budget(timeout_ms),
            lambda a: a.error_code == ErrorCode.NOT_CONTROLLER,
        )
        failure = _item_error(answer)
        if failure is not None:
            raise failure

    async def add_raft_voter(
        self,
        voter_id: int,
        directory_id: str,
        endpoints: Sequence[tuple[str, str, int]],
        timeout_ms: int | None,
    ) -> None:
        """Answered once the change commits; the leader (the active controller) decides."""
        budget = self._budget(timeout_ms)
        values = {
            "cluster_id": None,
            "timeout_ms": budget,
            "voter_id": voter_id,
            "voter_directory_id": _directory(directory_id),
            "listeners": [{"name": n, "host": h, "port": p} for n, h, p in endpoints],
        }
        await self._voter_change(ADD_RAFT_VOTER, values, budget)

    async def remove_raft_voter(
        self, voter_id: int, directory_id: str, timeout_ms: int | None
    ) -> None:
        values = {
            "cluster_id": None,
            "voter_id": voter_id,
            "voter_directory_id": _directory(directory_id),
        }
        await self._voter_change(REMOVE_RAFT_VOTER, values, self._budget(timeout_ms))

    async def _voter_change(self, api: tuple[int, int], values: Any, timeout_ms: int) -> None:
        answer = await self._to_controller(
            api, values, timeout_ms, lambda a: a.error_code in NOT_THE_LEADER
        )
        failure = _item_error(answer)
        if failure is not None:
            raise failure

    # ------------------------------------------------------------------------ SCRAM

    async def describe_user_scram_credentials(
        self, users: Sequence[str] | None, timeout_ms: int | None
    ) -> Outcomes[str, UserScramCredentialsDescription]:
        """From the active controller, so that a caller reads its own writes."""
        budget = self._budget(timeout_ms)
        values = {"users": None if users is None else [{"name": user} for user in users]}
        answer = await self._to_controller(
            DESCRIBE_USER_SCRAM_CREDENTIALS,
            values,
            budget,
            lambda a: a.error_code == ErrorCode.NOT_CONTROLLER,
        )
        if answer.error_code:
            code = ErrorCode(answer.error_code)
            raise KafkaException(code, answer.error_message or code.name)
        return scram_descriptions(answer.results)

    async def alter_user_scram_credentials(
        self,
        deletions: Sequence[ScramDeletion],
        upsertions: Sequence[ScramUpsertion],
        timeout_ms: int | None,
    ) -> Outcomes[str, None]:
        budget = self._budget(timeout_ms)
        values = {
            "deletions": [{"name": d.name, "mechanism": d.mechanism} for d in deletions],
            "upsertions": [
                {
                    "name": u.name,
                    "mechanism": u.mechanism,
                    "iterations": u.iterations,
                    "salt": u.salt,
                    "salted_password": u.salted_password,
                }
                for u in upsertions
            ],
        }
        answer = await self._to_controller(
            ALTER_USER_SCRAM_CREDENTIALS, values, budget, _moved("results")
        )
        return {
            result.user: scram_outcome(result.error_code, result.error_message)
            for result in answer.results
        }


def _directory(directory_id: str) -> uuid.UUID:
    """A directory id as Kafka prints it, as the wire's UUID (zeros for none)."""
    if not directory_id:
        return uuid.UUID(int=0)
    try:
        return uuid.UUID(bytes=uuid_from_str(directory_id))
    except ValueError as error:
        raise KafkaException(ErrorCode.INVALID_REQUEST, str(error)) from None


def _creation(binding: AclBinding) -> dict[str, Any]:
    return {
        "resource_type": binding.resource_type,
        "resource_name": binding.resource_name,
        "resource_pattern_type": binding.pattern_type,
        "principal": binding.principal,
        "host": binding.host,
        "operation": binding.operation,
        "permission_type": binding.permission_type,
    }


def _acl_filter(acl_filter: AclBindingFilter) -> dict[str, Any]:
    return {
        "resource_type_filter": acl_filter.resource_type,
        "resource_name_filter": acl_filter.resource_name,
        "pattern_type_filter": acl_filter.pattern_type,
        "principal_filter": acl_filter.principal,
        "host_filter": acl_filter.host,
        "operation": acl_filter.operation,
        "permission_type": acl_filter.permission_type,
    }


def _metadata_request(topics: Sequence[str] | None) -> dict[str, Any]:
    """Metadata for the named topics; ``None`` asks for every topic, ``[]`` for none."""
    return {
        "topics": None if topics is None else [{"name": n, "topic_id": None} for n in topics],
        "allow_auto_topic_creation": False,
        "include_topic_authorized_operations": False,
    }


def _reason(error: BaseException) -> str:
    """Why a connection failed, in a few lower-case words."""
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"TLS certificate verify failed: {error.verify_message}"
    if isinstance(error, ssl.SSLError):
        return f"TLS: {(error.reason or str(error)).lower().replace('_', ' ')}"
    reason = getattr(error, "strerror", None) or "connection closed"
    return str(reason).lower()


def _moved(field: str) -> Callable[[Any], bool]:
    """Whether an answer's items under ``field`` say the node is no longer the controller."""
    return lambda answer: any(
        item.error_code == ErrorCode.NOT_CONTROLLER for item in getattr(answer, field)
    )


def _item_error(item: Any) -> KafkaException | None:
    """An answered item's error (its message, else the code's name), or None."""
    if not item.error_code:
        return None
    return KafkaException(item.error_code, item.error_message or ErrorCode(item.error_code).name)


def _quota_entity(parts: Any) -> ClientQuotaEntity:
    return ClientQuotaEntity.of((part.entity_type, part.entity_name) for part in parts or ())


def _item_errors(items: Iterable[Any]) -> Outcomes[str, None]:
    """Each named item's error, or None where it succeeded."""
    return {item.name: _item_error(item) for item in items}


def _first_message(answer: Any) -> str | None:
    for result in answer.replica_election_results:
        for partition in result.partition_result:
            if partition.error_message:
                return str(partition.error_message)
    return None
