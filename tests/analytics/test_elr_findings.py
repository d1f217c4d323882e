"""The audit's two KIP-966 findings on a hand-made cluster: partitions led from the ELR and
partitions whose only hope is an unclean election."""

from __future__ import annotations

from typing import Any

from analytics.plain_audit import plain_audit
from analytics.readers import image_rows
from raftmeta.records import ConfigRecord, ConfigResourceType, PartitionRecord, Record, TopicRecord
from tests.analytics.helpers import TOPIC_ID, image_of


def _columns(rows: list[dict[str, Any]], kind: str) -> dict[str, list[Any]]:
    from analytics.readers import COLUMNS

    return {name: [row[name] for row in rows] for name in COLUMNS[kind]}


def test_led_from_elr_and_unclean_only_are_reported() -> None:
    history: list[Record] = [
        TopicRecord("t", TOPIC_ID),
        ConfigRecord(ConfigResourceType.TOPIC, "t", "min.insync.replicas", "2"),
        # 0: healthy. 1: led by the one ISR member, the others eligible. 2: ISR and ELR
        # empty, only the last known leader left. 3: leaderless, but its ELR can still lead.
        PartitionRecord(0, TOPIC_ID, (1, 2, 3), (1, 2, 3), leader=1),
        PartitionRecord(1, TOPIC_ID, (1, 2, 3), (2,), leader=2, eligible_leader_replicas=(1, 3)),
        PartitionRecord(2, TOPIC_ID, (1, 2, 3), (), leader=-1, last_known_elr=(3,)),
        PartitionRecord(3, TOPIC_ID, (1, 2, 3), (), leader=-1, eligible_leader_replicas=(2,)),
    ]
    image = image_of(history)
    report = plain_audit(
        partitions=[_columns(image_rows(image, "c", "partitions"), "partitions")],
        brokers=[_columns(image_rows(image, "c", "brokers"), "brokers")],
        topics=[_columns(image_rows(image, "c", "topics"), "topics")],
        events=[],
        threshold_percent=10,
    )
    cluster = report["clusters"]["c"]
    assert cluster["led_from_elr"]["count"] == 1
    assert [e["partition"] for e in cluster["led_from_elr"]["examples"]] == [1]
    assert cluster["unclean_only"]["count"] == 1
    assert [e["partition"] for e in cluster["unclean_only"]["examples"]] == [2]
