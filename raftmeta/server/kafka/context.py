"""What a Kafka API handler sees: the node, its API layer, its listener and its caller."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from raftmeta.apis import ControllerApis, ControllerHost
from raftmeta.auth import ANONYMOUS
from raftmeta.errors import ErrorCode, KafkaError

T = TypeVar("T")

Fields = dict[str, Any]
"""A response body as plain values, for :func:`raftmeta.kafka_protocol.codec.encode_response`."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    host: str
    port: int


@dataclass(slots=True)
class KafkaContext:
    """One node's Kafka listener as its handlers need it, for one connection's caller.

    ``apis`` is the node's API layer, the one the gRPC services call: every operation goes
    through the same authorization, validation, records and error codes either way.
    """

    owner: ControllerHost
    apis: ControllerApis
    endpoint: Endpoint
    """Where this listener is reached, as clients are told (Metadata, DescribeCluster)."""
    principal: str = ANONYMOUS
    """Who the connection authenticated as, named once when it logged in."""
    registrations_seen: dict[int, tuple[bytes, int]] = field(default_factory=dict)
    """Each controller's registration incarnation and when (monotonic ms) this listener first
    saw it, shared by the listener's connections (see ``cluster.metadata_nodes``)."""


def error_fields(error: KafkaError) -> tuple[int, str]:
    """A failed request's code and message, as Kafka's error fields."""
    return int(error.code), error.message


async def active_or_here(
    active: Callable[[], Awaitable[T]], here: Callable[[], Awaitable[T | None]]
) -> T:
    """A describe answered as Kafka's controllers answer it: by the active controller after its
    pending records commit, or, on a standby (NOT_CONTROLLER), from the standby's own committed
    image when it has one; any other refusal stands."""
    try:
        return await active()
    except KafkaError as error:
        if error.code == ErrorCode.NOT_CONTROLLER:
            answer = await here()
            if answer is not None:
                return answer
        raise
