"""The checks every inbound Raft request passes before the node sees it, whatever carried it.

Both transports' servers (the gRPC ``Raft`` service and the stream listener) decode a request
into its protobuf message and hand it here with whatever names the caller (a TLS peer's
certificate). The rule is written once, so a peer cannot get past a check on one transport
that the other makes:

* a request naming another cluster: INCONSISTENT_CLUSTER_ID;
* with mutual TLS, a request speaking for a node the certificate does not name:
  CLUSTER_AUTHORIZATION_FAILED (:mod:`raftmeta.quorum.identity`, which logs it);
* a value no node may act on (an epoch at the int32 limit, a negative offset, node id -5):
  INVALID_REQUEST, the range rule of ``raft.validation.message_problem``;
* otherwise the core's own answer, once it emits one.

Each refusal is logged once within the sender's budget (:mod:`raftmeta.quorum.refusals`) and
returned with its one-line reason, which the gRPC service puts in trailing metadata. When no
answer will come (the node is not running, a newer request superseded this one, or the core
did not answer in time) :class:`NoAnswer` is raised; callers resend on their own timers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from raftmeta.errors import ErrorCode
from raftmeta.quorum import wire
from raftmeta.quorum.identity import IdentityRule
from raftmeta.quorum.refusals import RefusalLog
from raftmeta.quorum.transport import RaftEndpoint
from raftmeta.raft.limits import MAX_NODE_ID, node_id_in_range
from raftmeta.raft.messages import Request, Response
from raftmeta.raft.validation import message_problem
from raftmeta.security.principal import HasAuthContext

log = logging.getLogger("raftmeta.quorum.raft_service")
"""Refusals are logged under the service's name, whichever transport carried them."""


class NoAnswer(ConnectionError):
    """The node will not answer this request; the reason is one line."""


@dataclass(frozen=True, slots=True)
class EdgeAnswer:
    response: wire.PbResponse
    refusal: str | None = None
    """Why the request was refused at the edge (the response then carries only an error
    code), for the caller; None when the core answered."""


class RaftEdge:
    """The checks of the module, for one node, under one identity rule."""

    def __init__(self, node: RaftEndpoint, identity: IdentityRule | None = None) -> None:
        self.node = node
        self.identity = identity or IdentityRule()
        self._refusals = RefusalLog(log, node.node_id)

    def refused(self, sender: object, what: str, reason: str) -> None:
        """Log a refusal once, within the sender's budget."""
        self._refusals.refused(sender, what, reason)

    async def answer(self, message: wire.PbRequest, caller: HasAuthContext | None) -> EdgeAnswer:
        """The answer to ``message`` from ``caller``; raises :class:`NoAnswer`."""
        checked = self._check(message, caller)
        if isinstance(checked, EdgeAnswer):
            return checked
        sender, request = checked
        try:
            response = await self.node.handle_request(sender, request)
        except (TimeoutError, ConnectionError) as error:
            raise NoAnswer(f"no answer: {error}") from None
        return EdgeAnswer(wire.response_to_pb(response))

    def answer_soon(
        self,
        message: wire.PbRequest,
        caller: HasAuthContext | None,
        reply: Callable[[EdgeAnswer | NoAnswer], None],
    ) -> None:
        """Like :meth:`answer`, without a task: ``reply`` is called once, on the event loop,
        with the answer or the :class:`NoAnswer`; for the core's answer, from the node's
        driver as it sends it (see ``RaftNode.submit_request``). Not for FetchSnapshot,
        whose chunk is read from disk after the core answers."""
        try:
            checked = self._check(message, caller)
        except NoAnswer as error:
            reply(error)
            return
        if isinstance(checked, EdgeAnswer):
            reply(checked)
            return
        sender, request = checked

        def answered(outcome: Response | BaseException) -> None:
            if isinstance(outcome, BaseException):
                reply(NoAnswer(f"no answer: {outcome}"))
            else:
                reply(EdgeAnswer(wire.response_to_pb(outcome)))

        try:
            self.node.submit_request(sender, request, answered)
        except ConnectionError as error:
            reply(NoAnswer(f"no answer: {error}"))

    def _check(
        self, message: wire.PbRequest, caller: HasAuthContext | None
    ) -> tuple[int, Request] | EdgeAnswer:
        """The sender and request to hand the node, or the refusal to answer with."""
        # Every follower fetch passes here, twice per replicated batch on the leader, so the
        # common path does only what it must: the names for a refusal's log line are built
        # only for a refusal, and the voters are asked for only when the identity rule is on.
        node = self.node
        sender, request = wire.request_from_pb(message)
        try:
            cluster_id = node.cluster_id
        except RuntimeError as error:  # the directory is not open yet
            raise NoAnswer(f"node {node.node_id} is not running: {error}") from None
        if message.cluster_id != cluster_id:
            foreign = f"cluster {message.cluster_id!r} is not {cluster_id!r}"
            self.refused(sender, type(request).__name__, foreign)
            return EdgeAnswer(
                wire.error_response(type(request), ErrorCode.INCONSISTENT_CLUSTER_ID), foreign
            )
        identity = self.identity
        if identity.enforced:
            refusal = identity.raft_refusal(caller, sender, request, node.voter_addresses)
            if refusal is not None:
                return EdgeAnswer(
                    wire.error_response(type(request), ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                    refusal,
                )
        reason = range_problem(sender, request)
        if reason is not None:
            self.refused(sender, type(request).__name__, reason)
            return EdgeAnswer(wire.error_response(type(request), ErrorCode.INVALID_REQUEST), reason)
        return sender, request


def range_problem(sender: int, request: Request) -> str | None:
    """Why ``request`` from ``sender`` carries a value no node may act on, or None."""
    problem = message_problem(request)
    if problem is not None:
        return problem.reason
    if not node_id_in_range(sender):
        return f"sender {sender} is not a node id (0..{MAX_NODE_ID})"
    return None
