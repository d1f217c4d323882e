"""What every operation of the API layer does around its body.

Find the active controller (NOT_CONTROLLER naming the one believed active, and its endpoint,
from any other node; while an election runs, after waiting a moment for its outcome),
authorize the caller against the node's authorizer, and turn any failure into a
:class:`~raftmeta.errors.KafkaError` carrying Kafka's code: the wire adapters answer a raised
error as their wire's error response, and nothing else escapes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Concatenate, ParamSpec, TypeVar

from raftmeta.apis.host import ControllerHost, NotActiveController
from raftmeta.apis.retries import KeptReplies
from raftmeta.auth import CLUSTER_NAME, Operation, ResourceType
from raftmeta.common.items import ItemError
from raftmeta.controller import NotControllerError, QuorumController
from raftmeta.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)

_Result = TypeVar("_Result")
_Item = TypeVar("_Item")
_Answer = TypeVar("_Answer")
_Args = ParamSpec("_Args")

LEADER_WAIT_S = 0.4
"""How long an operation that needs the active controller waits, on a node that knows of no
leader (an election under way, or this node elected and still committing its epoch's start), for
one to be named before it is answered NOT_CONTROLLER. Answered at once, NOT_CONTROLLER names
nobody: the client can only pause and ask again, its pause growing to 250 ms, and a thousand
brokers' heartbeats retried that way load the very voters holding the election. Waiting, the
operation runs here if this node became the active controller, or is answered naming the new
one, which the client follows at once. Under the channel's 0.5 s leader check
(``raftmeta.channel.LEADER_CHECK_AFTER_S``), so a waiting call never sets that off."""

AUTHORIZATION_FAILED = "Authorization failed."
CLUSTER_DENIED = "Cluster authorization failed."
TOPIC_DENIED = ItemError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, AUTHORIZATION_FAILED)
CLUSTER_DENIED_ITEM = ItemError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_DENIED)


async def for_permitted(
    items: Sequence[_Item],
    permitted: Callable[[_Item], bool],
    refused: Callable[[_Item], _Answer],
    run: Callable[[list[_Item]], Awaitable[Sequence[_Answer]]],
) -> list[_Answer]:
    """Send the permitted items to the controller in one call and answer the others with
    their authorization error, in the request's order (Kafka answers per item)."""
    allowed = [permitted(item) for item in items]
    chosen = [item for item, ok in zip(items, allowed, strict=True) if ok]
    results = iter(await run(chosen) if chosen else [])
    return [next(results) if ok else refused(item) for item, ok in zip(items, allowed, strict=True)]


class ApisBase:
    """The host, the kept-reply codec, and the guard every operation runs in."""

    def __init__(self, host: ControllerHost, kept: KeptReplies | None = None) -> None:
        self.host = host
        self.kept = kept

    async def on_active(
        self,
        body: Callable[Concatenate[QuorumController, _Args], Awaitable[_Result]],
        *args: _Args.args,
        **kwargs: _Args.kwargs,
    ) -> _Result:
        """``body(controller, *args)`` on the active controller; every failure raised as a
        :class:`KafkaError` (NOT_CONTROLLER as :class:`NotActiveController`). A busy
        operation passes a method and its arguments, so a call makes no closure."""
        controller = self.host.maybe_controller
        try:
            if controller is not None and not controller.is_active and controller.leader_id is None:
                await controller.await_leader(LEADER_WAIT_S)
            if controller is None or not controller.is_active:
                raise self.inactive(controller)
            return await body(controller, *args, **kwargs)
        except Exception as error:
            raise self.failure(error) from error

    def inactive(self, controller: QuorumController | None) -> NotActiveController:
        """NOT_CONTROLLER from a node whose controller is not active (or not yet made)."""
        leader = None if controller is None else controller.leader_id
        return self.not_controller(leader)

    def not_controller(self, leader_id: int | None) -> NotActiveController:
        if leader_id == self.host.node_id:
            leader_id = None
        return NotActiveController(leader_id, self.host.endpoint_of(leader_id))

    def failure(self, error: Exception) -> KafkaError:
        """The error a request that raised ``error`` is answered with."""
        if isinstance(error, NotActiveController):
            return error
        if isinstance(error, NotControllerError):
            return self.not_controller(error.leader_id)
        if isinstance(error, KafkaError):
            return error
        log.error("node %d: request failed", self.host.node_id, exc_info=error)
        return KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"{type(error).__name__}: {error}")

    def allowed(self, principal: str, operation: Operation, kind: ResourceType, name: str) -> bool:
        return self.host.access.allowed(principal, operation, kind, name)

    def require_cluster(self, principal: str, operation: Operation) -> None:
        if not self.allowed(principal, operation, ResourceType.CLUSTER, CLUSTER_NAME):
            raise KafkaError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_DENIED)
