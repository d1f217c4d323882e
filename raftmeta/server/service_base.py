"""What every controller-backed gRPC service does around its handlers.

The Admin and BrokerLifecycle services both find the active controller, authenticate the
caller, and turn every failure into a header with Kafka's code: NOT_CONTROLLER naming the
controller's id and endpoint, a :class:`KafkaError`'s code and message, or
UNKNOWN_SERVER_ERROR. That shared part lives here, on its own, so neither service borrows it
from the other.

The services see their node through :class:`ControllerHost`, a protocol this module owns:
the controller node satisfies it and builds the services, and the services never import it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import grpc
from google.protobuf.descriptor import ServiceDescriptor  # type: ignore[import-untyped]
from google.protobuf.message_factory import GetMessageClass  # type: ignore[import-untyped]

from raftmeta.auth import CLUSTER_NAME, AccessControl, Operation, ResourceType
from raftmeta.auth import call_metadata as call_metadata  # the Raft service reads it too
from raftmeta.controller import (
    AnsweredBefore,
    NotControllerError,
    QuorumController,
    RequestTag,
    check_request_id,
)
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.quorum.identity import IdentityRule
from raftmeta.quorum.node import RaftNode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server import convert

log = logging.getLogger(__name__)

_Reply = TypeVar("_Reply")
_Result = TypeVar("_Result")
_Message = TypeVar("_Message")
_Request = TypeVar("_Request")

AUTHORIZATION_FAILED = "Authorization failed."
CLUSTER_DENIED = "Cluster authorization failed."


class ControllerHost(Protocol):
    """The node a service answers for, as the service needs to see it."""

    @property
    def node_id(self) -> int: ...

    @property
    def node(self) -> RaftNode:
        """The Raft node, for DescribeQuorum, which any voter answers."""
        ...

    @property
    def access(self) -> AccessControl: ...

    @property
    def identity(self) -> IdentityRule:
        """Which certificate may make which call (off without client certificates)."""
        ...

    @property
    def maybe_controller(self) -> QuorumController | None:
        """The controller, once the node has one (``None`` while it starts)."""
        ...

    def endpoint_of(self, node_id: int | None) -> str:
        """Where voter ``node_id`` serves ("" if not known)."""
        ...


def timeout_of(timeout_ms: int) -> int | None:
    """``timeout_ms <= 0`` asks for the server's default."""
    return timeout_ms if timeout_ms > 0 else None


async def remembered(
    request_id: bytes,
    operation: str,
    call: Callable[[RequestTag | None], Awaitable[_Result]],
    reply: Callable[[_Result], _Message],
    parse: Callable[[bytes], _Message],
) -> _Message:
    """The controller's part of a mutating request's reply, exactly once per request id.

    ``call`` runs the request on the controller with the request's tag; ``reply`` turns its
    result into the protobuf reply, which the controller keeps (as bytes) beside the request's
    effects when ``request_id`` is set. A retry of a request that already wrote is answered
    with the kept reply, ``parse``\\ d, and writes nothing (raftmeta.controller.requests_seen).
    An empty ``request_id`` runs the request as it comes.
    """
    known_id = check_request_id(request_id)
    if known_id is None:  # nothing to keep, and nothing kept to answer with
        return reply(await call(None))
    kept: list[tuple[object, _Message]] = []

    def keep(result: Any) -> bytes:
        message = reply(result)
        kept.append((result, message))
        data: bytes = message.SerializeToString()  # type: ignore[attr-defined]
        return data

    try:
        result = await call(RequestTag(known_id, operation, keep))
    except AnsweredBefore as seen:
        log.info("%s request %s answered again from its first outcome", operation, known_id)
        return parse(seen.outcome)
    # The reply kept for retries was built from this very result: answer with it.
    for kept_result, message in kept:
        if kept_result is result:
            return message
    return reply(result)


class ServiceBase:
    """What every controller-backed service does around its handlers."""

    def __init__(self, owner: ControllerHost) -> None:
        self._owner = owner

    def not_controller(self, leader_id: int | None) -> apb.ResponseHeader:
        owner = self._owner
        if leader_id is None:
            message = "No controller appears to be active."
        else:
            message = f"The active controller appears to be node {leader_id}."
        return convert.header(
            ErrorCode.NOT_CONTROLLER,
            message,
            controller_id=leader_id,
            controller_endpoint=owner.endpoint_of(leader_id),
        )

    async def serve(
        self,
        context: Any,
        fail: Callable[[Any], _Reply],
        body: Callable[[QuorumController, str], Awaitable[_Reply]],
    ) -> _Reply:
        """Run ``body(controller, principal)`` on the active controller; every failure becomes
        ``fail(header)``."""
        return await self.serve_request(
            context, None, fail, lambda controller, principal, _: body(controller, principal)
        )

    async def serve_request(
        self,
        context: Any,
        request: _Request,
        fail: Callable[[Any], _Reply],
        body: Callable[[QuorumController, str, _Request], Awaitable[_Reply]],
    ) -> _Reply:
        """:meth:`serve` for a ``body(controller, principal, request)`` that needs nothing
        else, such as a method of the service: a busy call then makes no closures."""
        owner = self._owner
        controller = owner.maybe_controller
        try:
            principal = owner.access.call_principal(context)
            if controller is None or not controller.is_active:
                return fail(self._inactive(controller))
            return await body(controller, principal, request)
        except Exception as error:
            return fail(self._failure(error))

    def _inactive(self, controller: QuorumController | None) -> apb.ResponseHeader:
        """NOT_CONTROLLER from a node whose controller is not active (or not yet made)."""
        leader = None if controller is None else controller.leader_id
        if leader == self._owner.node_id:
            leader = None
        return self.not_controller(leader)

    def _failure(self, error: Exception) -> apb.ResponseHeader:
        """The header a request that raised ``error`` is answered with."""
        if isinstance(error, NotControllerError):
            leader = error.leader_id if error.leader_id != self._owner.node_id else None
            return self.not_controller(leader)
        if isinstance(error, KafkaError):
            return convert.header(error.code, error.message)
        log.error("node %d: request failed", self._owner.node_id, exc_info=error)
        return convert.header(ErrorCode.UNKNOWN_SERVER_ERROR, f"{type(error).__name__}: {error}")

    def allowed(self, principal: str, operation: Operation, kind: ResourceType, name: str) -> bool:
        return self._owner.access.allowed(principal, operation, kind, name)

    def require_broker(self, context: Any, call: str, broker_id: int) -> None:
        """Refuse a BrokerLifecycle call not made with ``broker_id``'s own certificate."""
        if self._owner.identity.broker_refusal(context, call, broker_id):
            raise KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_DENIED)

    def require_cluster(self, principal: str, operation: Operation) -> None:
        if not self.allowed(principal, operation, ResourceType.CLUSTER, CLUSTER_NAME):
            raise KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_DENIED)


class _Undecodable:
    """What a request body that protobuf cannot parse becomes, so the handler can refuse it."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _lenient(parse: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def decode(data: bytes) -> Any:
        try:
            return parse(data)
        except Exception as error:
            return _Undecodable(f"{type(error).__name__}: {str(error).splitlines()[0][:200]}")

    return decode


def _refusing_undecodable(
    name: str, behavior: Callable[[Any, Any], Awaitable[Any]]
) -> Callable[[Any, Any], Awaitable[Any]]:
    async def run(request: Any, context: Any) -> Any:
        if isinstance(request, _Undecodable):
            log.warning("refused an undecodable %s request (%s)", name, request.reason)
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"The {name} request could not be decoded ({request.reason}).",
            )
        return await behavior(request, context)

    return run


def add_service(
    server: Any,
    servicer: object,
    service: ServiceDescriptor,
) -> None:
    """Serves ``servicer``'s unary methods of ``service`` on ``server``.

    What the generated ``add_*Servicer_to_server`` does, except that a body protobuf cannot
    decode is answered INVALID_ARGUMENT with a one-line reason, where gRPC would answer
    UNKNOWN with the parser's exception text, and that the methods are served through the
    generic handler only, not also registered one by one: ``grpc.aio`` runs a request-call
    task per registered method and waits on all of them (``asyncio.wait``) for every call it
    serves, so the Admin and BrokerLifecycle methods made each call cost 20 callbacks set and
    removed. Serving them generically took about 7 % off the leader's CPU per CreateTopics
    under 16 clients (three controller processes, as ``benchmarks/peers_bench.py`` runs them).
    """
    handlers = {}
    for method in service.methods:
        request_class = GetMessageClass(method.input_type)
        response_class = GetMessageClass(method.output_type)
        behavior = getattr(servicer, method.name)
        handlers[method.name] = grpc.unary_unary_rpc_method_handler(
            _refusing_undecodable(method.name, behavior),
            request_deserializer=_lenient(request_class.FromString),
            response_serializer=response_class.SerializeToString,
        )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(service.full_name, handlers),)
    )
