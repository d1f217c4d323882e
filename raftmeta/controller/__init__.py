"""The active controller: requests → validation → policy → records → commit → reply.

:class:`QuorumController` is the Raft ``Listener`` of a controller node and the one place
requests become metadata records. It owns no sockets: the gRPC services call its coroutine
methods, and it reaches Raft through the two-method :class:`MetadataLog`
(:class:`RaftClientLog` in production).
"""

from raftmeta.controller.brokers import BrokerSession, BrokerState
from raftmeta.controller.controller import (
    MAX_RECORDS_PER_USER_OP,
    ControllerSettings,
    NotControllerError,
    QuorumController,
    not_controller,
)
from raftmeta.controller.log import MetadataLog, RaftClientLog

__all__ = [
    "MAX_RECORDS_PER_USER_OP",
    "BrokerSession",
    "BrokerState",
    "ControllerSettings",
    "MetadataLog",
    "NotControllerError",
    "QuorumController",
    "RaftClientLog",
    "not_controller",
]
