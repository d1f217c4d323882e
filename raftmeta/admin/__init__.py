"""The admin API: create, describe and delete topics, read and change configs, describe the
cluster, elect leaders, move partitions' replicas, and manage ACLs, SCRAM credentials and client
quotas, against whichever node is the active controller.

``AdminClient`` (threads, ``concurrent.futures``) and ``AsyncAdminClient`` (asyncio) are shaped
like confluent-kafka's AdminClient: a config dict (``bootstrap.servers``,
``request.timeout.ms``, ``bearer.token``), methods that return one future per item, and failed
futures that raise :class:`KafkaException` carrying Kafka's code, its name and a message.

``AsyncAdminClient`` is the one implementation (:mod:`.async_client`); ``AdminClient``
(:mod:`.sync_client`) runs it on a thread of its own. It reaches the quorum through a transport
(:mod:`.transport`): raftmeta's gRPC Admin service with ``bootstrap.servers``
(:mod:`.grpc_transport`), or Kafka's protocol to the controllers' KAFKA listeners with
``bootstrap.controllers`` (:mod:`.kafka_transport`); either over TLS with
``security.protocol=SSL``.

A client: may import ``raftmeta.common``, ``raftmeta.errors``, ``raftmeta.records``, the
generated stubs, ``raftmeta.kafka_protocol`` and ``channel``; never the controller,
policy or server.
"""

from raftmeta.admin.async_client import AsyncAdminClient, AsyncElectLeadersResult
from raftmeta.admin.quorum import QuorumInfo, Replica
from raftmeta.admin.scram import (
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialsDescription,
    UserScramCredentialUpsertion,
)
from raftmeta.admin.settings import CONFIG_KEYS, AdminSettings, parse_admin_config
from raftmeta.admin.sync_client import AdminClient, ElectLeadersResult
from raftmeta.admin.types import (
    AlterConfigOp,
    AlterConfigOpType,
    BrokerDescription,
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    FeatureMetadata,
    KafkaException,
    NewPartitions,
    NewTopic,
    PartitionDescription,
    ResourceType,
    TopicDescription,
)
from raftmeta.common.acls import AclBinding, AclBindingFilter
from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.common.features import FeatureUpdate
from raftmeta.common.quotas import (
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilter,
    QuotaFilterComponent,
    QuotaMatchType,
    QuotaOp,
)
from raftmeta.common.reassignments import PartitionReassignment
from raftmeta.errors import ErrorCode
from raftmeta.records import AclOperation, AclPatternType, AclPermissionType, AclResourceType

__all__ = [
    "CONFIG_KEYS",
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPatternType",
    "AclPermissionType",
    "AclResourceType",
    "AdminClient",
    "AdminSettings",
    "AlterConfigOp",
    "AlterConfigOpType",
    "AsyncAdminClient",
    "AsyncElectLeadersResult",
    "BrokerDescription",
    "ClientQuotaAlteration",
    "ClientQuotaEntity",
    "ClientQuotaFilter",
    "ClusterDescription",
    "ConfigEntry",
    "ConfigResource",
    "ConfigSource",
    "ElectLeadersResult",
    "ElectionType",
    "ErrorCode",
    "FeatureMetadata",
    "FeatureUpdate",
    "KafkaException",
    "NewPartitions",
    "NewTopic",
    "PartitionDescription",
    "PartitionReassignment",
    "QuorumInfo",
    "QuotaFilterComponent",
    "QuotaMatchType",
    "QuotaOp",
    "Replica",
    "ResourceType",
    "ScramCredentialInfo",
    "ScramMechanism",
    "TopicDescription",
    "TopicPartition",
    "UserScramCredentialDeletion",
    "UserScramCredentialUpsertion",
    "UserScramCredentialsDescription",
    "parse_admin_config",
]
