"""Exactly once per request id: a retried write is answered with its first outcome.

The controller keeps a write's outcome as bytes beside its effects
(:mod:`raftmeta.controller.requests_seen`); which bytes is the caller's choice. This layer
does not pick an encoding: it is handed a :class:`KeptReplies`, so the kept bytes stay in the
form every node of the cluster has always written and read.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

from raftmeta.controller import AnsweredBefore, RequestTag, check_request_id
from raftmeta.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)

_Item = TypeVar("_Item")


class KeptReplies(Protocol):
    """How an operation's results become the bytes kept for its retries, and back."""

    def encode(self, operation: str, results: Sequence[Any]) -> bytes: ...

    def decode(self, operation: str, data: bytes) -> list[Any]: ...


def timeout_of(timeout_ms: int) -> int | None:
    """``timeout_ms <= 0`` asks for the server's default."""
    return timeout_ms if timeout_ms > 0 else None


async def remembered(
    request_id: bytes,
    operation: str,
    call: Callable[[RequestTag | None], Awaitable[Sequence[_Item]]],
    kept: KeptReplies | None,
) -> list[_Item]:
    """The controller's results for a mutating request, exactly once per request id.

    ``call`` runs the request with its tag; the controller keeps ``kept.encode`` of the
    results beside the request's effects. A retry of a request that already wrote is answered
    with the kept results, decoded, and writes nothing. An empty ``request_id`` runs the
    request as it comes; a request id where nothing can keep outcomes is INVALID_REQUEST.
    """
    known_id = check_request_id(request_id)
    if known_id is None:  # nothing to keep, and nothing kept to answer with
        return list(await call(None))
    if kept is None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Request ids are not served here.")
    codec = kept

    def keep(results: Any) -> bytes:
        return codec.encode(operation, results)

    try:
        return list(await call(RequestTag(known_id, operation, keep)))
    except AnsweredBefore as seen:
        log.info("%s request %s answered again from its first outcome", operation, known_id)
        decoded: list[_Item] = codec.decode(operation, seen.outcome)
        return decoded
