"""The per-partition results of ElectLeaders, with the messages users and scripts see.

The two UNKNOWN_TOPIC_OR_PARTITION texts are Kafka's own, word for word, because tools match
on them. Kafka's controller sends no text of its own for 80, 83 and 84, so clients show the
exception's standard description; raftmeta names the partition and the election type instead,
worded after the messages Kafka's older ZooKeeper controller used for the same outcomes, so
``raftmeta leader-election`` can print one self-explanatory line per failed partition:

* 80 PREFERRED_LEADER_NOT_AVAILABLE: ``Failed to elect leader for partition t-0 under strategy
  PREFERRED``
* 83 ELIGIBLE_LEADERS_NOT_AVAILABLE: ``Failed to elect leader for partition t-0 under strategy
  UNCLEAN``
* 84 ELECTION_NOT_NEEDED: ``Leader election not needed for topic partition t-0``
"""

from __future__ import annotations

from raftmeta.common.elections import ElectionType, PartitionResult
from raftmeta.errors import ErrorCode

EXCESSIVE_BATCH_MESSAGE = "Unable to perform excessively large batch operation."
"""Kafka's POLICY_VIOLATION text for an operation of more records than one may write."""


def no_such_topic(topic: str) -> PartitionResult:
    return PartitionResult(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic}")


def no_such_partition(topic: str, partition: int) -> PartitionResult:
    return PartitionResult(
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic}-{partition}"
    )


def election_not_needed(topic: str, partition: int) -> PartitionResult:
    return PartitionResult(
        ErrorCode.ELECTION_NOT_NEEDED,
        f"Leader election not needed for topic partition {topic}-{partition}",
    )


def no_leader_elected(topic: str, partition: int, election_type: ElectionType) -> PartitionResult:
    """80 for a PREFERRED election, 83 for an UNCLEAN one: nobody could (or needed to) move."""
    code = (
        ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
        if election_type is ElectionType.PREFERRED
        else ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
    )
    return PartitionResult(
        code,
        f"Failed to elect leader for partition {topic}-{partition} "
        f"under strategy {election_type.name}",
    )
