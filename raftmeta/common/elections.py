"""ElectLeaders as values: the election type, the partitions named, each partition's result.

The gRPC service turns the wire's int into an :class:`ElectionType` once, with
:meth:`ElectionType.from_request`; below that edge only the enum travels, so neither the
controller nor the election policy checks it again.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from raftmeta.errors import ErrorCode, KafkaError


class ElectionType(enum.IntEnum):
    """How a new leader may be chosen.

    PREFERRED and UNCLEAN are ElectLeaders' wire values (KIP-460). ONLINE is the controller's
    own election after a broker is fenced, shut down or unregistered: it only replaces a leader
    that can no longer lead, and only with an ISR member. It has no wire value in Kafka; -1 is
    used so it cannot collide with a type Kafka adds later, and :meth:`from_request` refuses it.
    """

    ONLINE = -1
    PREFERRED = 0
    UNCLEAN = 1

    @classmethod
    def from_request(cls, value: int) -> ElectionType:
        """The type an ElectLeaders request asked for; anything else is INVALID_REQUEST.

        Kafka answers an unknown type with a top-level INVALID_REQUEST, so this raises rather
        than giving each partition an error.
        """
        if isinstance(value, cls):
            if value is not cls.ONLINE:
                return value
        elif type(value) is int and value in (cls.PREFERRED.value, cls.UNCLEAN.value):
            return cls(value)
        shown = value.value if isinstance(value, enum.Enum) else value
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown election type {shown}")


@dataclass(frozen=True, slots=True, order=True)
class TopicPartition:
    """A partition named the way requests name it: by topic name, not topic id."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True, slots=True)
class PartitionResult:
    """One partition's answer: Kafka's code and message (``None`` on success, as on the wire)."""

    error: ErrorCode
    message: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.error is ErrorCode.NONE


SUCCESS = PartitionResult(ErrorCode.NONE)


@dataclass(frozen=True, slots=True)
class TopicResults:
    """The results for one topic, in the order the request named its partitions."""

    topic: str
    partitions: tuple[tuple[int, PartitionResult], ...]


@dataclass(frozen=True, slots=True)
class ElectLeadersRequest:
    """``election_type`` is the wire's int, read once by :meth:`ElectionType.from_request`;
    ``partitions`` ``None`` asks for every partition."""

    election_type: int
    partitions: tuple[TopicPartition, ...] | None
    timeout_ms: int = 0
    request_id: bytes = b""


def failed_election(
    partitions: tuple[TopicPartition, ...] | None, code: ErrorCode, message: str
) -> list[TopicResults]:
    """Kafka's ElectLeaders error response: the same error on every requested partition,
    grouped by topic in request order; no results for an all-partitions request."""
    if partitions is None:
        return []
    by_topic: dict[str, list[int]] = {}
    for partition in partitions:
        by_topic.setdefault(partition.topic, []).append(partition.partition)
    failure = PartitionResult(code, message)
    return [
        TopicResults(topic, tuple((number, failure) for number in numbers))
        for topic, numbers in by_topic.items()
    ]
