"""The seam between the admin client and the wire: one coroutine per admin operation.

The client (:mod:`raftmeta.admin.async_client`) checks its caller's arguments, hands out the
futures and settles them; a transport only sends the request and turns the answer into one
outcome per item. An outcome is the item's value or a :class:`KafkaException`; a request-level
failure (no controller in time, authorization refused at the top, a malformed request) raises
instead, and the client fails every item's future with it.

Two transports implement it: :mod:`raftmeta.admin.grpc_transport` (raftmeta's Admin service,
``bootstrap.servers``) and :mod:`raftmeta.admin.kafka_transport` (Kafka's protocol to the
controllers' KAFKA listeners, ``bootstrap.controllers``). A transport that cannot carry an
operation raises UNSUPPORTED_VERSION for it, naming the other one.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from raftmeta.admin.quorum import QuorumInfo
from raftmeta.admin.scram import (
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialsDescription,
)
from raftmeta.admin.types import (
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    FeatureMetadata,
    KafkaException,
    NewPartitions,
    NewTopic,
    TopicDescription,
)
from raftmeta.common.acls import AclBinding, AclBindingFilter
from raftmeta.common.elections import TopicPartition
from raftmeta.common.features import FeatureUpdate
from raftmeta.common.quotas import ClientQuotaAlteration, ClientQuotaEntity, ClientQuotaFilter
from raftmeta.common.reassignments import PartitionReassignment, ReassignmentTarget
from raftmeta.common.scram import ScramDeletion, ScramUpsertion
from raftmeta.errors import ErrorCode

K = TypeVar("K")
V = TypeVar("V")

Outcomes = dict[K, V | KafkaException]
"""Each item's value, or the error the controller answered for it."""


class AdminTransport(Protocol):
    """What the admin client asks of a wire. ``timeout_ms`` None means ``request.timeout.ms``;
    ``election_type`` is the wire value. Every write is answered once it commits."""

    async def create_topics(
        self, topics: Sequence[NewTopic], validate_only: bool, timeout_ms: int | None
    ) -> Outcomes[str, None]: ...

    async def delete_topics(
        self, topics: Sequence[str], timeout_ms: int | None
    ) -> Outcomes[str, None]: ...

    async def create_partitions(
        self, partitions: Sequence[NewPartitions], validate_only: bool, timeout_ms: int | None
    ) -> Outcomes[str, None]: ...

    async def describe_topics(
        self, topics: Sequence[str] | None, timeout_ms: int | None
    ) -> Outcomes[str, TopicDescription]: ...

    async def describe_cluster(
        self, include_image_digest: bool, timeout_ms: int | None
    ) -> ClusterDescription: ...

    async def describe_features(self, timeout_ms: int | None) -> FeatureMetadata: ...

    async def update_features(
        self, updates: Sequence[FeatureUpdate], validate_only: bool, timeout_ms: int | None
    ) -> None: ...

    async def describe_configs(
        self, resources: Sequence[ConfigResource], timeout_ms: int | None
    ) -> Outcomes[ConfigResource, dict[str, ConfigEntry]]: ...

    async def incremental_alter_configs(
        self, resources: Sequence[ConfigResource], validate_only: bool, timeout_ms: int | None
    ) -> Outcomes[ConfigResource, None]: ...

    async def elect_leaders(
        self,
        election_type: int,
        partitions: Sequence[TopicPartition] | None,
        timeout_ms: int | None,
    ) -> dict[TopicPartition, KafkaException | None]: ...

    async def create_acls(
        self, bindings: Sequence[AclBinding], timeout_ms: int | None
    ) -> Outcomes[AclBinding, None]: ...

    async def describe_acls(
        self, acl_filter: AclBindingFilter, timeout_ms: int | None
    ) -> list[AclBinding]: ...

    async def delete_acls(
        self, filters: Sequence[AclBindingFilter], timeout_ms: int | None
    ) -> Outcomes[AclBindingFilter, list[AclBinding]]: ...

    async def describe_quorum(self, timeout_ms: int | None) -> QuorumInfo: ...

    async def alter_partition_reassignments(
        self,
        targets: Sequence[ReassignmentTarget],
        allow_replication_factor_change: bool,
        timeout_ms: int | None,
    ) -> Outcomes[TopicPartition, None]: ...

    async def list_partition_reassignments(
        self, partitions: Sequence[TopicPartition] | None, timeout_ms: int | None
    ) -> dict[TopicPartition, PartitionReassignment]: ...

    async def describe_cluster_id(self, timeout_ms: int | None) -> str: ...

    async def unregister_broker(self, broker_id: int, timeout_ms: int | None) -> None: ...

    async def add_raft_voter(
        self,
        voter_id: int,
        directory_id: str,
        endpoints: Sequence[tuple[str, str, int]],
        timeout_ms: int | None,
    ) -> None: ...

    async def remove_raft_voter(
        self, voter_id: int, directory_id: str, timeout_ms: int | None
    ) -> None: ...
    async def describe_client_quotas(
        self, quota_filter: ClientQuotaFilter, timeout_ms: int | None
    ) -> dict[ClientQuotaEntity, dict[str, float]]: ...

    async def alter_client_quotas(
        self,
        alterations: Sequence[ClientQuotaAlteration],
        validate_only: bool,
        timeout_ms: int | None,
    ) -> Outcomes[ClientQuotaEntity, None]: ...

    async def describe_user_scram_credentials(
        self, users: Sequence[str] | None, timeout_ms: int | None
    ) -> Outcomes[str, UserScramCredentialsDescription]: ...

    async def alter_user_scram_credentials(
        self,
        deletions: Sequence[ScramDeletion],
        upsertions: Sequence[ScramUpsertion],
        timeout_ms: int | None,
    ) -> Outcomes[str, None]: ...

    async def close(self) -> None: ...


def config_resource_of(resource_type: int, resource_name: str) -> ConfigResource | None:
    """An answered resource as a result key, or None for a type this client does not know
    (and so cannot have asked about)."""
    try:
        return ConfigResource(resource_type, resource_name)
    except ValueError:
        return None


def _known_source(source: int) -> ConfigSource | None:
    try:
        return ConfigSource(source)
    except ValueError:
        return None


def config_entry(
    name: str,
    value: str | None,
    source: int,
    *,
    is_read_only: bool = False,
    is_sensitive: bool = False,
    synonyms: Iterable[tuple[str, str | None, int]] = (),
) -> ConfigEntry:
    """A described config, its synonyms given as (name, value, source) in the answer's
    order; a source id this client does not know is left None."""
    listed: dict[str, ConfigEntry] = {}
    for synonym_name, synonym_value, synonym_source in synonyms:
        # Kafka lists the level in effect first; a name set at two levels keeps that one.
        listed.setdefault(
            synonym_name,
            ConfigEntry(
                synonym_name,
                synonym_value,
                _known_source(synonym_source),
                is_sensitive=is_sensitive,
                is_synonym=True,
            ),
        )
    return ConfigEntry(
        name,
        value,
        _known_source(source),
        is_read_only=is_read_only,
        is_sensitive=is_sensitive,
        synonyms=listed,
    )


def not_offered(operation: str, instead: str) -> Callable[..., Coroutine[Any, Any, Any]]:
    """A transport method for an operation this transport cannot carry: it fails the request
    with UNSUPPORTED_VERSION and names the config key whose transport can."""

    async def refuse(*_args: Any) -> Any:
        raise KafkaException(
            ErrorCode.UNSUPPORTED_VERSION, f"{operation} is not offered here; use {instead}"
        )

    return refuse


def scram_descriptions(results: Iterable[Any]) -> Outcomes[str, UserScramCredentialsDescription]:
    """Each user's description or error, from DescribeUserScramCredentials results as either
    wire decodes them (``user``, ``error_code``, ``error_message``, ``credential_infos`` of
    ``mechanism`` and ``iterations``: gRPC and Kafka name the fields alike)."""
    return {
        result.user: scram_outcome(result.error_code, result.error_message)
        or UserScramCredentialsDescription(
            result.user,
            tuple(
                ScramCredentialInfo(ScramMechanism.of(info.mechanism), info.iterations)
                for info in result.credential_infos
            ),
        )
        for result in results
    }


def scram_outcome(code: int, message: str | None) -> KafkaException | None:
    """One user's answer: None, or its error."""
    if not code:
        return None
    return KafkaException(code, message or ErrorCode(code).name)
