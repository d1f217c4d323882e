"""Building clusters on disk for the analytics tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from analytics.readers import plan, read_split
from analytics.sources import discover
from raftmeta.image import MetadataImage
from raftmeta.records import (
    BrokerRegistrationChangeRecord,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    TopicRecord,
)

TOPIC_ID = bytes(range(16))


def image_of(records: list[Record]) -> MetadataImage:
    image = MetadataImage()
    for offset, record in enumerate(records):
        image.apply(record, offset)
    return image


def read_batches(path: Path, kind: str, max_split_bytes: int = 16 << 20) -> list[pa.RecordBatch]:
    splits = plan(discover(path), kind, max_split_bytes)
    return [batch for split in splits for batch in read_split(split)]


def read_rows(path: Path, kind: str, max_split_bytes: int = 16 << 20) -> list[dict[str, Any]]:
    return [row for batch in read_batches(path, kind, max_split_bytes) for row in batch.to_pylist()]


def normalised(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows in a canonical order, with map columns as sorted pairs."""
    fixed = []
    for row in rows:
        copy = dict(row)
        if "configs" in copy:
            copy["configs"] = sorted(copy["configs"] or [])
        fixed.append(copy)
    return sorted(fixed, key=repr)


def failover_history() -> list[tuple[list[Record], int, int]]:
    """Batches (records, epoch, batch time ms) of a scripted story: broker 1 fails and comes
    back; its partition moves to broker 2, then back to 1 by a preferred election."""
    register: list[Record] = [
        RegisterBrokerRecord(
            broker_id=broker_id, incarnation_id=bytes(16), broker_epoch=broker_id, fenced=False
        )
        for broker_id in (1, 2, 3)
    ]
    create: list[Record] = [
        TopicRecord("orders", TOPIC_ID),
        PartitionRecord(0, TOPIC_ID, replicas=(1, 2, 3), isr=(1, 2, 3), leader=1),
        PartitionRecord(1, TOPIC_ID, replicas=(2, 3, 1), isr=(2, 3, 1), leader=2),
    ]
    fence: list[Record] = [
        BrokerRegistrationChangeRecord(1, 1, fenced=1),
        PartitionChangeRecord(0, TOPIC_ID, isr=(2, 3), leader=2),
        PartitionChangeRecord(1, TOPIC_ID, isr=(2, 3)),
    ]
    recover: list[Record] = [
        BrokerRegistrationChangeRecord(1, 1, fenced=-1),
        PartitionChangeRecord(0, TOPIC_ID, isr=(2, 3, 1)),
        PartitionChangeRecord(1, TOPIC_ID, isr=(2, 3, 1)),
    ]
    preferred: list[Record] = [PartitionChangeRecord(0, TOPIC_ID, leader=1)]
    unclean: list[Record] = [
        PartitionChangeRecord(1, TOPIC_ID, isr=(3,), leader=3),
        PartitionChangeRecord(1, TOPIC_ID, isr=(2,), leader=2, leader_recovery_state=1),
    ]
    return [
        (register, 1, 1_000),
        (create, 1, 2_000),
        (fence, 2, 61_000),
        (recover, 2, 125_000),
        (preferred, 2, 126_000),
        (unclean, 3, 200_000),
    ]
