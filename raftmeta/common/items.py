"""One item's outcome inside a reply: Kafka's error code with a message, or NONE.

A whole request fails with :class:`~raftmeta.errors.KafkaError`; one topic, resource or
partition of a request fails with an :class:`ItemError` value beside the others' results,
as Kafka answers per item.
"""

from __future__ import annotations

from dataclasses import dataclass

from raftmeta.errors import ErrorCode


@dataclass(frozen=True, slots=True)
class ItemError:
    """One item's outcome: NONE, or Kafka's code with a message."""

    code: ErrorCode = ErrorCode.NONE
    message: str | None = None

    @property
    def ok(self) -> bool:
        return self.code is ErrorCode.NONE


OK = ItemError()
