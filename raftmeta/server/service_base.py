"""What every controller-backed gRPC service shares: its API layer and its caller.

The Admin and BrokerLifecycle services are adapters over :class:`~raftmeta.apis.ControllerApis`:
each method decodes its protobuf request into :mod:`raftmeta.common` values, names the caller
(:meth:`ServiceBase.principal`, from the call's bearer token or client certificate), calls
the API layer, and encodes the result, or the :class:`~raftmeta.errors.KafkaError` it
raised, as a header with Kafka's code (NOT_CONTROLLER naming the controller's id and
endpoint). No Kafka-level failure ever surfaces as a raw gRPC status.

The services see their node through :class:`~raftmeta.apis.ControllerHost`, a protocol the API
layer owns: the controller node satisfies it and builds the services, and the services never
import it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.descriptor import ServiceDescriptor  # type: ignore[import-untyped]
from google.protobuf.message_factory import GetMessageClass  # type: ignore[import-untyped]

from raftmeta.apis import ControllerApis
from raftmeta.apis import ControllerHost as ControllerHost  # the node and the listener name it
from raftmeta.auth import call_metadata as call_metadata  # the Raft service reads it too
from raftmeta.server.kept_replies import KEPT_REPLIES

log = logging.getLogger(__name__)


class ServiceBase:
    """The node, its API layer (keeping retries' outcomes as protobuf), and the caller."""

    def __init__(self, owner: ControllerHost) -> None:
        self._owner = owner
        self.apis = ControllerApis(owner, KEPT_REPLIES)

    def principal(self, context: Any) -> str:
        """The caller, named once per call from its bearer token, else its client certificate
        where the listener requires one (SASL_AUTHENTICATION_FAILED for a token the node does
        not know, or a certificate no mapping rule names)."""
        identity = self._owner.identity
        return self._owner.access.call_principal(
            context, identity.mapper if identity.enforced else None
        )


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
