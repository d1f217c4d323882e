"""The active controller: requests → validation → policy → records → commit → reply.

:class:`QuorumController` is the Raft ``Listener`` of a controller node and the one place
requests become metadata records. It owns no sockets: the gRPC services call its coroutine
methods, and it reaches Raft through the two-method :class:`MetadataLog`
(:class:`RaftClientLog` in production). Its handlers return their records and reply as a
:class:`ControllerResult`, which the event queue appends and answers at commit.

Holds the controller's logic only; the values its requests and replies carry are in
:mod:`raftmeta.common`. May import ``common/``, the policy packages (``elections/``,
``placement/``), records, the image, storage and the Raft core; never ``quorum/``,
``server/`` or the clients.
"""

from raftmeta.controller.brokers import BrokerSession, BrokerState
from raftmeta.controller.controller import NotControllerError, QuorumController, not_controller
from raftmeta.controller.log import MetadataLog, RaftClientLog
from raftmeta.controller.registration import ControllerRegistrationRequest
from raftmeta.controller.requests_seen import AnsweredBefore, RequestTag, check_request_id
from raftmeta.controller.result import MAX_RECORDS_PER_USER_OP, ControllerResult
from raftmeta.controller.settings import ControllerSettings

__all__ = [
    "MAX_RECORDS_PER_USER_OP",
    "AnsweredBefore",
    "BrokerSession",
    "BrokerState",
    "ControllerRegistrationRequest",
    "ControllerResult",
    "ControllerSettings",
    "MetadataLog",
    "NotControllerError",
    "QuorumController",
    "RaftClientLog",
    "RequestTag",
    "check_request_id",
    "not_controller",
]
