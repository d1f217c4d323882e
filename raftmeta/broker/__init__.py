"""The embedded broker: follow the metadata log as an observer, keep a local image, and keep a
session with the active controller (register, heartbeat, controlled shutdown, AlterPartition).

``from raftmeta.broker import Broker, BrokerSettings`` is the public face.

A client: may import the quorum runtime (it runs an observer node), ``raftmeta.common``,
records, the image, storage and ``channel``; never the controller, policy or
server.
"""

from raftmeta.broker.broker import Broker, BrokerFailure, BrokerState, ControllerCaller
from raftmeta.broker.dynamic_config import ConfigChange
from raftmeta.broker.replica import LeadershipChange, MetadataReplica, PartitionChange
from raftmeta.broker.settings import BrokerSettings
from raftmeta.broker.status import StatusFile, read_status

__all__ = [
    "Broker",
    "BrokerFailure",
    "BrokerSettings",
    "BrokerState",
    "ConfigChange",
    "ControllerCaller",
    "LeadershipChange",
    "MetadataReplica",
    "PartitionChange",
    "StatusFile",
    "read_status",
]
