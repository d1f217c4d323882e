"""ControllerApis: every operation a controller serves, once, for both wires.

The gRPC services and the Kafka listener are adapters over this one object: each decodes its
wire's request into :mod:`raftmeta.common` values, computes the caller's principal once (from
the bearer token or the SASL login), calls the operation here, and encodes the ``common``
result (or the raised :class:`~raftmeta.errors.KafkaError`) as its wire's response. Here each
operation finds the active controller, authorizes the caller, validates what the wire could
not, handles retries by request id, and calls the :class:`~raftmeta.controller.QuorumController`.
"""

from __future__ import annotations

from raftmeta.apis.acls import AclApis
from raftmeta.apis.brokers import BrokerApis
from raftmeta.apis.cluster import ClusterApis
from raftmeta.apis.configs import ConfigApis
from raftmeta.apis.elections import ElectionApis
from raftmeta.apis.features import FeatureApis
from raftmeta.apis.quotas import QuotaApis
from raftmeta.apis.reassignments import ReassignmentApis
from raftmeta.apis.scram import ScramApis
from raftmeta.apis.topics import TopicApis
from raftmeta.apis.voters import VoterApis


class ControllerApis(
    TopicApis,
    ConfigApis,
    ElectionApis,
    FeatureApis,
    AclApis,
    BrokerApis,
    ClusterApis,
    VoterApis,
    ReassignmentApis,
    ScramApis,
    QuotaApis,
):
    """Every controller operation, by domain (see each base's module)."""
