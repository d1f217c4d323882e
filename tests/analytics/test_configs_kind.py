"""The ``configs`` kind of the raftmeta data source: every dynamic topic and broker config and
every client quota the metadata holds, one row each, the same from the plain reader and from
Spark, from a snapshot and from the log after it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from analytics.synthetic import write_node_directory
from raftmeta.records import (
    ClientQuotaRecord,
    ConfigRecord,
    ConfigResourceType,
    QuotaEntityData,
    Record,
    TopicRecord,
)
from tests.analytics.helpers import TOPIC_ID, read_rows

TOPIC = int(ConfigResourceType.TOPIC)
BROKER = int(ConfigResourceType.BROKER)


def _history() -> list[tuple[list[Record], int, int]]:
    """Configs and quotas, half before the snapshot (at offset 4) and half in the log after it,
    with one of each deleted again in the log."""
    alice_c1 = (QuotaEntityData("client-id", None), QuotaEntityData("user", "alice"))
    in_snapshot: list[Record] = [
        TopicRecord("orders", TOPIC_ID),
        ConfigRecord(TOPIC, "orders", "retention.ms", "1000"),
        ConfigRecord(BROKER, "", "log.cleaner.threads", "2"),
        ClientQuotaRecord(alice_c1, "producer_byte_rate", 1024.0),
    ]
    in_log: list[Record] = [
        ConfigRecord(BROKER, "1", "log.cleaner.threads", "3"),
        ConfigRecord(TOPIC, "orders", "retention.ms", None),
        ConfigRecord(TOPIC, "orders", "cleanup.policy", "compact"),
        ClientQuotaRecord((QuotaEntityData("ip", None),), "connection_creation_rate", 5.0),
        ClientQuotaRecord(alice_c1, "request_percentage", 12.5),
        ClientQuotaRecord(alice_c1, "producer_byte_rate", 0.0, remove=True),
    ]
    return [(in_snapshot, 1, 1_000), (in_log, 1, 2_000)]


def _row(resource_type: str, resource_name: str, entity: Any, name: str, value: str) -> Any:
    return {
        "cluster": "c1",
        "snapshot_offset": 10,
        "resource_type": resource_type,
        "resource_name": resource_name,
        "entity": entity,
        "name": name,
        "value": value,
    }


EXPECTED = [
    _row("topic", "orders", None, "cleanup.policy", "compact"),
    _row("broker", "", None, "log.cleaner.threads", "2"),
    _row("broker", "1", None, "log.cleaner.threads", "3"),
    _row(
        "client_quota",
        "client-id=<default>,user=alice",
        [("client-id", None), ("user", "alice")],
        "request_percentage",
        "12.5",
    ),
    _row("client_quota", "ip=<default>", [("ip", None)], "connection_creation_rate", "5.0"),
]


def test_the_plain_reader_gives_one_row_per_config_and_quota(tmp_path: Path) -> None:
    directory = write_node_directory(
        tmp_path / "node", cluster_id="c1", batches=_history(), snapshot_at=4
    )
    assert read_rows(directory, "configs") == EXPECTED


def test_spark_reads_the_same_rows(spark: SparkSession, tmp_path: Path) -> None:
    directory = write_node_directory(
        tmp_path / "node", cluster_id="c1", batches=_history(), snapshot_at=4
    )
    frame = spark.read.format("raftmeta").option("kind", "configs").load(str(directory))
    rows = [row.asDict() for row in frame.collect()]
    for row in rows:
        if row["entity"] is not None:
            row["entity"] = sorted(row["entity"].items())
    assert sorted(rows, key=repr) == sorted(EXPECTED, key=repr)
