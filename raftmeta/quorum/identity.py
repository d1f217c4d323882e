"""Who may send which Raft or BrokerLifecycle call: the per-RPC identity rule.

With mutual TLS (``ssl.client.auth=required``) every caller presents a certificate, and its
principal (``User:controller-3000``, ``User:broker-7``, see
:mod:`raftmeta.security.principal`) must be the node the message speaks for:

* Vote, BeginQuorumEpoch and EndQuorumEpoch only from ``controller-<id>`` where ``<id>`` is
  the candidate or leader the message names, and only if that id is a voter;
* Fetch and FetchSnapshot only from a voter controller or from ``broker-<id>``, and the
  replica id must be the principal's id: a broker may not fetch as a voter (its fetches would
  count toward the high watermark), nor one controller as another;
* BrokerLifecycle calls only from ``broker-<id>`` of the broker id the request names, or from
  ``controller-<id>`` of that id: a combined node's broker runs in its controller's process,
  under its id and with its certificate.

A refused call gets Kafka's CLUSTER_AUTHORIZATION_FAILED in its response (the Raft responses
and the BrokerLifecycle header both carry an error code), never a gRPC error, and one WARNING
line naming the principal, the call and why. Without client certificates the rule is off:
every caller is ``User:ANONYMOUS``, so the Raft port must not be reachable by untrusted hosts.

The voter changes (AddRaftVoter, RemoveRaftVoter, UpdateRaftVoter, UpdateKRaftVersion) are
authorized, not identity-checked here: who may make them is the node's authentication and
authorizer, which decide from certificates, tokens, ``super.users`` and the ACLs in the
metadata image (with no authorizer but authentication on, only a controller or a super user).
The runtime keeps no image and names no authorizer, so it asks through
:class:`VoterChangeAccess`, a protocol the composition root fills
(``raftmeta.auth.AccessControl`` is one); without one every caller may (:data:`ANY_CALLER`),
as with no authorizer configured.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol

from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.raft.messages import (
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchSnapshotRequest,
    Request,
    VoteRequest,
)
from raftmeta.security.principal import (
    ANONYMOUS,
    DEFAULT_RULES,
    HasAuthContext,
    KafkaPrincipal,
    NodeRole,
    PeerAuthenticationError,
    PrincipalMapper,
    context_principal,
    node_identity,
    peer_principal,
)
from raftmeta.security.tls import ClientAuth, TlsSettings

log = logging.getLogger(__name__)

_VOTER_CALLS = (VoteRequest, BeginQuorumEpochRequest, EndQuorumEpochRequest)
_FETCH_CALLS = (FetchRequest, FetchSnapshotRequest)


class VoterChangeOperation(enum.StrEnum):
    """What a voter change needs on the CLUSTER resource, by Kafka's operation names: ALTER to
    add or remove a voter or to raise kraft.version, CLUSTER_ACTION for a voter reporting its
    own endpoints (UpdateRaftVoter)."""

    ALTER = "Alter"
    CLUSTER_ACTION = "ClusterAction"


class VoterChangeAccess(Protocol):
    """Who may change the voters, answered above the runtime (see the module docstring)."""

    def caller_principal(self, context: object, mapper: PrincipalMapper | None) -> str:
        """The principal of the gRPC call ``context``: its bearer token's, else its client
        certificate's under ``mapper`` (given where certificates are required), else
        ``User:ANONYMOUS``. Raises ``KafkaError`` (SASL_AUTHENTICATION_FAILED) for a token
        or a certificate that does not authenticate."""
        ...

    def may_change_voters(self, principal: str, operation: VoterChangeOperation) -> bool:
        """Whether ``principal`` may perform ``operation`` on the CLUSTER."""
        ...

    def may_describe_quorum(self, principal: str) -> bool:
        """Whether ``principal``, named by no node certificate, may describe the quorum
        (DESCRIBE on the CLUSTER, as the Admin service's DescribeQuorum needs)."""
        ...


class _AnyCaller:
    """No authentication and no authorizer: the caller is its certificate or anonymous, and
    may change the voters."""

    def caller_principal(self, context: object, mapper: PrincipalMapper | None) -> str:
        auth_context = getattr(context, "auth_context", None)
        if mapper is None or not callable(auth_context):
            return str(ANONYMOUS)
        try:
            return str(peer_principal(auth_context(), mapper))
        except PeerAuthenticationError as error:
            raise KafkaError(
                ErrorCode.SASL_AUTHENTICATION_FAILED, f"Authentication failed: {error}"
            ) from None

    def may_change_voters(self, principal: str, operation: VoterChangeOperation) -> bool:
        return True

    def may_describe_quorum(self, principal: str) -> bool:
        return True


ANY_CALLER: VoterChangeAccess = _AnyCaller()
"""The access of a node with no authorizer configured: every caller may change the voters."""


@dataclass(frozen=True, slots=True)
class IdentityRule:
    """The rule of the module, on when ``enforced`` (a server requiring client certificates)."""

    enforced: bool = False
    mapper: PrincipalMapper = DEFAULT_RULES

    @classmethod
    def for_listener(cls, tls: TlsSettings | None) -> IdentityRule:
        """On for a listener with ``ssl.client.auth=required``, off otherwise."""
        if tls is None or tls.client_auth is not ClientAuth.REQUIRED:
            return cls()
        return cls(True, tls.principal_mapper)

    def raft_refusal(
        self,
        context: HasAuthContext | None,
        sender: int,
        request: Request,
        voters: Collection[int],
    ) -> str | None:
        """Why ``request``, sent as node ``sender``, is refused from this caller (a line for
        the log, already logged as a WARNING), or None when it is allowed."""
        if not self.enforced:
            return None
        name = type(request).__name__.removesuffix("Request")
        principal, reason = self._caller(context)
        if reason is None:
            reason = _raft_reason(principal, sender, request, voters)
        if reason is None:
            return None
        line = f"{name} as node {sender} refused from {principal or 'an unnamed peer'}: {reason}"
        log.warning("%s", line)
        return line

    def broker_refusal(
        self, context: HasAuthContext | None, call: str, broker_id: int
    ) -> str | None:
        """Why a BrokerLifecycle ``call`` for ``broker_id`` is refused from this caller (logged
        as a WARNING), or None when it is allowed."""
        if not self.enforced:
            return None
        principal, reason = self._caller(context)
        if reason is None:
            identity = node_identity(principal) if principal is not None else None
            if identity is not None and identity.role is NodeRole.CONTROLLER:
                if identity.node_id == broker_id:
                    return None  # the broker half of a combined node
                reason = f"the certificate is controller {identity.node_id}'s"
            elif identity is None or identity.role is not NodeRole.BROKER:
                reason = "only a broker's own certificate may make broker calls"
            elif identity.node_id != broker_id:
                reason = f"the certificate is broker {identity.node_id}'s"
            else:
                return None
        line = (
            f"{call} for broker {broker_id} refused from {principal or 'an unnamed peer'}: {reason}"
        )
        log.warning("%s", line)
        return line

    def node_refusal(self, context: HasAuthContext | None, call: str, node_id: int) -> str | None:
        """Why ``call`` (one any cluster node may make, such as DescribeEndpoints) is refused
        from this caller (logged as a WARNING), or None when its certificate names a
        controller or a broker."""
        if not self.enforced:
            return None
        principal, reason = self._caller(context)
        if reason is None:
            if principal is not None and node_identity(principal) is not None:
                return None
            reason = "the certificate names no cluster node"
        line = f"{call} from node {node_id} refused from {principal or 'an unnamed peer'}: {reason}"
        log.warning("%s", line)
        return line

    def _caller(self, context: HasAuthContext | None) -> tuple[KafkaPrincipal | None, str | None]:
        if context is None:
            return None, "no caller to authenticate"
        try:
            return context_principal(context, self.mapper), None
        except PeerAuthenticationError as error:
            return None, str(error)


def _raft_reason(
    principal: KafkaPrincipal | None, sender: int, request: Request, voters: Collection[int]
) -> str | None:
    identity = node_identity(principal) if principal is not None else None
    if identity is None:
        return "the certificate names no cluster node"
    if isinstance(request, _VOTER_CALLS):
        if identity.role is not NodeRole.CONTROLLER:
            return "only controllers may send voter calls"
        if identity.node_id != sender:
            return f"the certificate is controller {identity.node_id}'s"
        if sender not in voters:
            return f"node {sender} is not a voter"
        return None
    if isinstance(request, _FETCH_CALLS):
        if identity.node_id != sender:
            return f"the certificate is {identity.role} {identity.node_id}'s"
        if identity.role is NodeRole.CONTROLLER and sender not in voters:
            return f"controller {sender} is not a voter"
        if identity.role is NodeRole.BROKER and sender in voters:
            return f"node {sender} is a voter; a broker may not fetch as one"
        return None
    return "not a Raft request"
