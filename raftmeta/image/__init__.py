"""The metadata image: what the committed records say the cluster looks like.

Every voter and observer builds its image by replaying the same records in the same order, so
replay must be deterministic and must refuse what it cannot apply: a record that names a topic,
partition or broker registration that does not exist, or that would give a topic name a second
id, raises :class:`ReplayError` and leaves the node to stop rather than diverge.

:class:`MetadataImage` composes one part per domain and replays each record into the part that
owns it, as Kafka's image does:

* :class:`TopicsImage`: topics, their partitions, and the indexes the controller
  asks for on every fence, election and rebalance (ISR membership, leadership counts);
* :class:`ClusterImage`: broker and controller registrations;
* :class:`ConfigurationsImage`: dynamic configuration by resource;
* :class:`AclIndex`: the ACLs, indexed for the authorizer;
* :class:`ClientQuotasImage`: client quotas by entity (user, client id, ip);
* :class:`FeaturesImage`: finalized feature levels;
* :class:`ScramImage`: SCRAM credentials by user and mechanism;
* :class:`RequestsSeen`: outcomes of recent admin requests by request id.

:func:`load_snapshot_image` builds an image from a snapshot file in bulk, as every node does at
start-up and on installing a snapshot.

Every name is importable from this package; the modules are where each part lives.
"""

from raftmeta.image.acls import (
    WILDCARD_RESOURCE,
    AclBindingKey,
    AclIndex,
    AclResourceKey,
    acl_binding_key,
    acl_problem,
)
from raftmeta.image.cluster import BrokerRegistration, ClusterImage
from raftmeta.image.configs import ConfigResource, ConfigurationsImage
from raftmeta.image.errors import ReplayError
from raftmeta.image.features import FeaturesImage
from raftmeta.image.metadata import MetadataImage
from raftmeta.image.partitions import (
    PartitionKey,
    PartitionRegistration,
    TopicImage,
    topic_collision_key,
)
from raftmeta.image.quotas import (
    ClientQuotasImage,
    QuotaEntity,
    client_precedence,
    entity_order,
    ip_precedence,
    quota_entity,
)
from raftmeta.image.requests_seen import (
    REQUEST_ID_RETENTION_MS,
    REQUEST_IDS_KEPT,
    REQUEST_OUTCOME_BYTES_KEPT,
    RequestsSeen,
)
from raftmeta.image.scram import ScramImage, ScramKey
from raftmeta.image.snapshot_load import load_snapshot_image
from raftmeta.image.topics import TopicsImage

__all__ = [
    "REQUEST_IDS_KEPT",
    "REQUEST_ID_RETENTION_MS",
    "REQUEST_OUTCOME_BYTES_KEPT",
    "WILDCARD_RESOURCE",
    "AclBindingKey",
    "AclIndex",
    "AclResourceKey",
    "BrokerRegistration",
    "ClientQuotasImage",
    "ClusterImage",
    "ConfigResource",
    "ConfigurationsImage",
    "FeaturesImage",
    "MetadataImage",
    "PartitionKey",
    "PartitionRegistration",
    "QuotaEntity",
    "ReplayError",
    "RequestsSeen",
    "ScramImage",
    "ScramKey",
    "TopicImage",
    "TopicsImage",
    "acl_binding_key",
    "acl_problem",
    "client_precedence",
    "entity_order",
    "ip_precedence",
    "load_snapshot_image",
    "quota_entity",
    "topic_collision_key",
]
