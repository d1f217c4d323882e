"""The active controller: requests → validation → policy → records → commit → reply.

:class:`QuorumController` is the Raft ``Listener`` of a controller node and the one place
requests become metadata records. It owns no sockets: the gRPC services call its coroutine
methods, and it reaches Raft through the two-method :class:`MetadataLog`
(:class:`RaftClientLog` in production).

Where things are:

- the queue (events, group commit and linger, append, Raft callbacks, image fork, waiters,
  tick): ``event_queue.py``, with ``pending.py`` (the images and pending records),
  ``purgatory.py`` (replies parked until commit) and ``write_concurrency.py`` (the adaptive
  wait's estimate);
- :class:`QuorumController`, the request methods over the queue: ``controller.py``;
- one manager per domain, each returning :class:`ControllerResult` values against the image
  the queue hands it: ``replication.py`` (topics, partitions, ISR changes, elections; record
  builders in ``topics.py`` and ``alter_partition.py``), ``cluster.py`` (brokers, sessions,
  fencing, controller registrations; built on ``brokers.py`` and ``registration.py``),
  ``configs.py``, ``acls.py``, ``scram.py``, ``quotas.py``, ``features.py``; request ids and
  kept outcomes in ``requests_seen.py``.

Holds the controller's logic only; the values its requests and replies carry are in
:mod:`raftmeta.common`. May import ``common/``, the policy packages (``elections/``,
``placement/``), records, the image, storage and the Raft core; never ``quorum/``,
``server/`` or the clients.
"""

from raftmeta.controller.acls import AclControlManager
from raftmeta.controller.brokers import BrokerSession, BrokerState
from raftmeta.controller.cluster import ClusterControlManager
from raftmeta.controller.configs import ConfigurationControlManager
from raftmeta.controller.controller import NotControllerError, QuorumController, not_controller
from raftmeta.controller.features import FeatureControlManager
from raftmeta.controller.log import MetadataLog, RaftClientLog
from raftmeta.controller.quotas import ClientQuotaControlManager
from raftmeta.controller.registration import ControllerRegistrationRequest
from raftmeta.controller.replication import ReplicationControlManager
from raftmeta.controller.requests_seen import AnsweredBefore, RequestTag, check_request_id
from raftmeta.controller.result import MAX_RECORDS_PER_USER_OP, ControllerResult
from raftmeta.controller.scram import ScramControlManager
from raftmeta.controller.settings import ControllerSettings

__all__ = [
    "MAX_RECORDS_PER_USER_OP",
    "AclControlManager",
    "AnsweredBefore",
    "BrokerSession",
    "BrokerState",
    "ClientQuotaControlManager",
    "ClusterControlManager",
    "ConfigurationControlManager",
    "ControllerRegistrationRequest",
    "ControllerResult",
    "ControllerSettings",
    "FeatureControlManager",
    "MetadataLog",
    "NotControllerError",
    "QuorumController",
    "RaftClientLog",
    "ReplicationControlManager",
    "RequestTag",
    "ScramControlManager",
    "check_request_id",
    "not_controller",
]
