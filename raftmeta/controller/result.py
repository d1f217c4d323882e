"""What a controller handler returns: the records to append and the reply they make true.

Kafka's ``QuorumController`` runs every write as "produce records and a response, then append
and reply at commit"; its handlers return a ``ControllerResult`` and the event queue does the
rest. raftmeta's handlers do the same, so a reader sees a handler's effects in its return value
rather than in state it leaves on the controller. The queue applies the records to the latest
image at the offsets they will take, appends them as one batch, and completes the reply once
they commit.

A request of several items (topics, config resources, partitions) may instead yield one result
per item; the queue applies each item's records before asking for the next, so a later item
sees the earlier ones, as two topics created in one request must for their placement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from raftmeta.records import Record

Response = TypeVar("Response", covariant=True)

MAX_RECORDS_PER_USER_OP = 10_000
"""Kafka's cap on the records one atomic user operation may write (``QuorumController``)."""


@dataclass(frozen=True, slots=True)
class ControllerResult(Generic[Response]):
    """Records to append, in order, and the response to give once they commit.

    ``atomic`` results are refused whole (POLICY_VIOLATION) when they hold more records than
    one user operation may write; non-atomic ones (elections, where every record is a whole
    change to its own partition) are written however many they are.
    """

    records: tuple[Record, ...]
    response: Response
    atomic: bool = True
