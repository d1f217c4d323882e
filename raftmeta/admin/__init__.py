"""The admin API: create, describe and delete topics, read and change configs, describe the
cluster, elect leaders and manage ACLs, against whichever node is the active controller.

``AdminClient`` (threads, ``concurrent.futures``) and ``AsyncAdminClient`` (asyncio) are shaped
like confluent-kafka's AdminClient: a config dict (``bootstrap.servers``,
``request.timeout.ms``, ``bearer.token``), methods that return one future per item, and failed
futures that raise :class:`KafkaException` carrying Kafka's code, its name and a message.

A client: may import ``raftmeta.common``, ``raftmeta.errors``, ``raftmeta.records``, the
generated stubs and ``controller_channel``; never the controller, policy or server.
"""

from raftmeta.admin.clients import (
    CONFIG_KEYS,
    AdminClient,
    AdminSettings,
    AsyncAdminClient,
    AsyncElectLeadersResult,
    ElectLeadersResult,
    parse_admin_config,
)
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
    "ResourceType",
    "TopicDescription",
    "TopicPartition",
    "parse_admin_config",
]
