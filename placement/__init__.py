"""Replica placement (KIP-660): pluggable placers, pure functions of the usable brokers.

The controller loads one placer from ``replica.placer.class.name`` with :func:`load_placer`,
calls ``place`` for every CreateTopics and CreatePartitions, checks the answer with
:func:`check_assignment`, and maps a :class:`PlacementError` to the error code it carries.

Built-in placers, every one seedable with ``replica.placer.random.seed``:

* :class:`StripedReplicaPlacer`, the default: Kafka's rack stripe with leaders balanced per
  broker and CreatePartitions continuing the topic's layout.
* :class:`KafkaStripedReplicaPlacer`: Kafka's algorithm unchanged, for comparison.
* :class:`CordonedBrokerPlacer`: no new replicas on brokers being decommissioned.
* :class:`EmptiestBrokerPlacer`: new replicas to the emptiest brokers, such as new ones.
* :class:`CapacityAwarePlacer`: no new replicas on brokers near a replica capacity.

:mod:`placement.reassignment` plans replica moves with the same purity: proposals from a placer
(``raftmeta reassign-partitions --generate``), draining a broker, and the balance plan the audit
writes; the reassignment tool and the audit are its callers.

May import ``raftmeta.common``, ``raftmeta.records``, ``raftmeta.image`` and
``raftmeta.errors``; the controller calls the placers, and a user's placer is loaded by name.
"""

from placement.api import (
    CloseablePlacer,
    ClusterCounts,
    ClusterDescriber,
    ClusterView,
    ConfigurablePlacer,
    InvalidReplicationFactorError,
    PlacementError,
    PlacementSpec,
    PlacerConfigError,
    PlacerLoadError,
    ReplicaPlacer,
    StaticClusterView,
    UsableBroker,
    close_placer,
)
from placement.capacity import CapacityAwarePlacer
from placement.checks import check_assignment, check_replication_factor
from placement.cordon import CordonedBrokerPlacer
from placement.emptiest import EmptiestBrokerPlacer
from placement.loader import DEFAULT_PLACER_CLASS, PLACER_CLASS_KEY, load_placer
from placement.striped import KafkaStripedReplicaPlacer, StripedReplicaPlacer

__all__ = [
    "DEFAULT_PLACER_CLASS",
    "PLACER_CLASS_KEY",
    "CapacityAwarePlacer",
    "CloseablePlacer",
    "ClusterCounts",
    "ClusterDescriber",
    "ClusterView",
    "ConfigurablePlacer",
    "CordonedBrokerPlacer",
    "EmptiestBrokerPlacer",
    "InvalidReplicationFactorError",
    "KafkaStripedReplicaPlacer",
    "PlacementError",
    "PlacementSpec",
    "PlacerConfigError",
    "PlacerLoadError",
    "ReplicaPlacer",
    "StaticClusterView",
    "StripedReplicaPlacer",
    "UsableBroker",
    "check_assignment",
    "check_replication_factor",
    "close_placer",
    "load_placer",
]
