"""One item's outcome inside a reply: Kafka's error code with a message, or NONE.

A whole request fails with :class:`~raftmeta.errors.KafkaError`; one topic, resource or
partition of a request fails with an :class:`ItemError` value beside the others' results,
as Kafka answers per item.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from raftmeta.errors import ErrorCode

_Key = TypeVar("_Key", bound=Hashable)


@dataclass(frozen=True, slots=True)
class ItemError:
    """One item's outcome: NONE, or Kafka's code with a message."""

    code: ErrorCode = ErrorCode.NONE
    message: str | None = None

    @property
    def ok(self) -> bool:
        return self.code is ErrorCode.NONE


OK = ItemError()


def duplicated(keys: Iterable[_Key]) -> set[_Key]:
    """The keys named more than once.

    A request naming an item twice is refused in every copy, as Kafka does: applying the first
    and refusing the second would make the outcome depend on the order of the items.
    """
    seen: set[_Key] = set()
    twice: set[_Key] = set()
    for key in keys:
        if key in seen:
            twice.add(key)
        seen.add(key)
    return twice


DUPLICATE_TOPIC = ItemError(ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
"""Every copy of a topic a CreateTopics, CreatePartitions or DeleteTopics request names twice."""
