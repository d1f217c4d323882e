"""What an ElectLeaders request produces: the replies and the records, cut into batches.

The request's own values (the election type, the partitions, each partition's result) live in
:mod:`raftmeta.common.elections`, shared with the clients; this outcome is the policy's own,
since it carries the records only the controller appends. It is frozen so a controller can hold
it while its records wait for commit and hand the same object to the reply.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from raftmeta.common.elections import PartitionResult, TopicPartition, TopicResults
from raftmeta.records import PartitionChangeRecord


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
