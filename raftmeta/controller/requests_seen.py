"""Exactly-once admin writes: answer a retried request with the outcome of its first run.

A client that loses the answer to a write (the leader died after the records committed, the
connection broke) must send it again, and the second run would fail on the first run's
effects: TOPIC_ALREADY_EXISTS for the topic it created itself. So a mutating admin request may
carry a client-chosen request id, the same on every retry of one logical call. When such a
request writes records, the controller appends a :class:`RequestOutcomeRecord` (the id and the
answer) in the same batch as the effects: the outcome commits exactly when the effects do, and
every node's image, a new leader's included, knows it (:class:`raftmeta.image.RequestsSeen`).
A request whose id the latest image knows writes nothing and is answered with the stored
outcome, once any pending records of this controller have committed (the first run may still
be in flight).

A request that wrote nothing (every item failed, or validate-only) is not remembered: running
it again gives the same answer. An outcome larger than :data:`MAX_OUTCOME_BYTES` (an election
over every partition, say) is not kept either, and a retry of it runs again, as without an id.

The controller keeps the answer as bytes its caller chose (the servicer keeps the protobuf
reply), and hands them back in :class:`AnsweredBefore`; it never reads them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.records import RequestOutcomeRecord

log = logging.getLogger(__name__)

REQUEST_ID_BYTES = 16

MAX_OUTCOME_BYTES = 256 * 1024
"""The largest outcome kept; every node holds the kept outcomes in memory."""


class AnsweredBefore(Exception):
    """A request with a known id: ``outcome`` is what its first run answered.

    Raised by the controller's request methods in place of their usual result. Not a
    :class:`KafkaError`: a caller that passed a request id must handle it, and one that forgot
    fails loudly rather than answering a header error.
    """

    def __init__(self, operation: str, outcome: bytes) -> None:
        super().__init__(f"{operation} answered before")
        self.operation = operation
        self.outcome = outcome


@dataclass(frozen=True, slots=True)
class RequestTag:
    """A request's id and how to keep its answer."""

    request_id: bytes
    operation: str
    """The admin operation's name ("CreateTopics"); an id reused for another is refused."""
    keep: Callable[[Any], bytes]
    """The controller's response to this request, as the bytes to hand back to a retry."""


def check_request_id(request_id: bytes) -> bytes | None:
    """A request's id as the wire carried it: None when absent (empty), else 16 bytes."""
    if not request_id:
        return None
    if len(request_id) != REQUEST_ID_BYTES:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST,
            f"request_id has {len(request_id)} bytes; it must be a 16-byte id (a UUID) or empty",
        )
    return request_id


def answered_before(image: MetadataImage, tag: RequestTag) -> AnsweredBefore | None:
    """The stored answer to ``tag``'s request if ``image`` knows its id, else None.

    Raises INVALID_REQUEST when the id belongs to another operation: a client that reuses ids
    across calls would otherwise be answered for the wrong request.
    """
    seen = image.requests_seen.get(tag.request_id)
    if seen is None:
        return None
    if seen.operation != tag.operation:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST,
            f"request id already used by a {seen.operation} request; "
            f"use a new id for each {tag.operation} call",
        )
    return AnsweredBefore(seen.operation, seen.outcome)


def outcome_record(
    image: MetadataImage, tag: RequestTag, response: object, now_ms: int
) -> RequestOutcomeRecord | None:
    """The record that keeps ``response`` for retries of ``tag``'s request; None when the
    outcome is too large to keep.

    Its time never goes back (see :class:`raftmeta.image.RequestsSeen`): a new leader whose
    wall clock is behind the previous one's writes the newest time the image holds.
    """
    outcome = tag.keep(response)
    if len(outcome) > MAX_OUTCOME_BYTES:
        log.info(
            "%s outcome of %d bytes is too large to keep for retries (limit %d)",
            tag.operation,
            len(outcome),
            MAX_OUTCOME_BYTES,
        )
        return None
    written_at_ms = max(now_ms, image.requests_seen.newest_ms)
    return RequestOutcomeRecord(tag.request_id, tag.operation, written_at_ms, outcome)


def wall_clock_ms() -> int:
    """Milliseconds since the epoch: the times outcome records carry."""
    return time.time_ns() // 1_000_000
