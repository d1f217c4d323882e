"""Values that go into and come out of an election: the type, the partitions, the results.

They are frozen values so a controller can hold an outcome while its records wait for commit
and hand the same object to the reply, knowing nothing changed it in between.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.records import PartitionChangeRecord


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
class ElectionOutcome:
    """What an ElectLeaders request produced: the answer and the records that make it true.

    ``records`` hold at most one PartitionChangeRecord per partition, in the order the results
    list the partitions. The controller appends them in :attr:`batches` (each at most
    ``batch_size`` records), then replies with ``results`` once the last batch commits.
    """

    results: tuple[TopicResults, ...]
    records: tuple[PartitionChangeRecord, ...]
    batch_size: int = 10_000

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {self.batch_size}")

    @property
    def batches(self) -> tuple[tuple[PartitionChangeRecord, ...], ...]:
        """The records cut into appends of at most ``batch_size``, none of them empty."""
        return split_into_batches(self.records, self.batch_size)

    def items(self) -> Iterator[tuple[TopicPartition, PartitionResult]]:
        """Every reported partition with its result, flattened, in reply order."""
        for topic_results in self.results:
            for partition, result in topic_results.partitions:
                yield TopicPartition(topic_results.topic, partition), result

    def by_partition(self) -> dict[TopicPartition, PartitionResult]:
        """The results keyed by partition; a partition listed twice had one result anyway."""
        return dict(self.items())


def split_into_batches(
    records: tuple[PartitionChangeRecord, ...], batch_size: int
) -> tuple[tuple[PartitionChangeRecord, ...], ...]:
    """Cuts records into consecutive runs of at most ``batch_size`` for separate appends.

    Safe for election records because each one is a whole change to its own partition: a
    failover after some batches commit leaves every partition in a state the rules allow.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    return tuple(
        records[start : start + batch_size] for start in range(0, len(records), batch_size)
    )
