"""The pure readers: files to rows, the same rows the image holds, whatever the split size."""

from __future__ import annotations

import tempfile
from pathlib import Path

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings

from analytics.readers import image_rows, plan
from analytics.schemas import SCHEMAS, spark_ddl
from analytics.sources import AnalyticsInputError, discover
from analytics.synthetic import build_image, write_node_directory, write_snapshot
from raftmeta.raft.batch import SnapshotId
from raftmeta.records import ConfigRecord, PartitionRecord, Record, TopicRecord, encode_record
from raftmeta.storage.snapshots import SnapshotWriter
from tests.analytics.helpers import (
    TOPIC_ID,
    failover_history,
    image_of,
    normalised,
    read_batches,
    read_rows,
)
from tests.metadata.strategies import histories


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(max_steps=30))
def test_snapshot_rows_equal_the_image_rows_whatever_the_split(history: list[Record]) -> None:
    image = image_of(history)
    with tempfile.TemporaryDirectory() as directory:
        path = write_snapshot(image, directory, cluster_id="c1")
        for kind in ("partitions", "brokers", "topics", "configs"):
            expected = normalised(image_rows(image, "c1", kind))
            assert normalised(read_rows(path, kind, max_split_bytes=64)) == expected
            assert normalised(read_rows(path, kind)) == expected


def test_a_large_snapshot_is_split_at_batch_boundaries(tmp_path: Path) -> None:
    image = build_image(brokers=6, racks=2, topics=20, partitions_per_topic=200, skew=0.2)
    path = write_snapshot(image, tmp_path, cluster_id="c1")
    splits = plan(discover(path), "partitions", max_split_bytes=20_000)
    assert len(splits) >= 3
    assert [split.byte_start for split in splits[1:]] == [split.byte_end for split in splits[:-1]]
    rows = read_rows(path, "partitions", max_split_bytes=20_000)
    assert len(rows) == 4000
    assert normalised(rows) == normalised(image_rows(image, "c1", "partitions"))


def test_arrow_batches_carry_the_declared_schema_and_the_spark_ddl_names_every_column(
    tmp_path: Path,
) -> None:
    # The story plus a topic config, so that every kind has rows.
    configured: list[Record] = [ConfigRecord(2, "orders", "retention.ms", "1000")]
    directory = write_node_directory(
        tmp_path / "node",
        cluster_id="c1",
        batches=[*failover_history(), (configured, 3, 300_000)],
        snapshot_at=6,
    )
    for kind, schema in SCHEMAS.items():
        batches = read_batches(directory, kind)
        assert batches, kind
        assert all(batch.schema == schema for batch in batches)
        assert [part.split()[0].strip("`") for part in spark_ddl(kind).split(", ")] == (
            schema.names
        )


def test_a_directory_is_its_latest_snapshot_plus_the_log_after_it(tmp_path: Path) -> None:
    history = failover_history()
    directory = write_node_directory(
        tmp_path / "node", cluster_id="c1", batches=history, snapshot_at=6
    )
    records = [record for batch, _, _ in history for record in batch]
    image = image_of(records)
    (source,) = discover(directory)
    assert source.cluster == "c1"
    assert source.snapshot is not None and source.segments
    for kind in ("partitions", "brokers", "topics", "configs"):
        assert normalised(read_rows(directory, kind)) == normalised(image_rows(image, "c1", kind))


def test_events_show_fencing_leader_moves_and_elections_in_log_order(tmp_path: Path) -> None:
    directory = write_node_directory(
        tmp_path / "node", cluster_id="c1", batches=failover_history(), snapshot_at=6
    )
    events = read_rows(directory, "events", max_split_bytes=100)
    assert [row["offset"] for row in events] == list(range(15))
    summary = [
        (row["record_type"], row["broker_id"], row["partition"], row["election"], row["fencing"])
        for row in events
        if row["election"] or row["fencing"]
    ]
    assert summary == [
        ("BrokerRegistrationChangeRecord", 1, None, None, "fenced"),
        ("PartitionChangeRecord", None, 0, "non_preferred", None),
        ("BrokerRegistrationChangeRecord", 1, None, None, "unfenced"),
        ("PartitionChangeRecord", None, 0, "preferred", None),
        ("PartitionChangeRecord", None, 1, "non_preferred", None),
        ("PartitionChangeRecord", None, 1, "unclean", None),
    ]
    shrink = events[7]
    assert (shrink["previous_isr"], shrink["isr"]) == ([1, 2, 3], [2, 3])
    assert shrink["isr_removed"] == [1]
    assert events[10]["isr_added"] == [1]
    assert [row["batch_time_ms"] for row in events[6:9]] == [61_000] * 3
    assert events[6]["epoch"] == 2


def test_clusters_in_a_folder_are_named_after_their_entries(tmp_path: Path) -> None:
    image = build_image(brokers=3, racks=1, topics=1, partitions_per_topic=2)
    write_snapshot(image, tmp_path, cluster_id="same", name="east.checkpoint")
    write_snapshot(image, tmp_path, cluster_id="same", name="west.checkpoint")
    write_node_directory(tmp_path / "north", cluster_id="same", batches=failover_history())
    (tmp_path / "notes.txt").write_text("not a cluster")
    assert [source.cluster for source in discover(tmp_path)] == ["east", "north", "west"]
    rows = read_rows(tmp_path, "partitions")
    assert sorted({row["cluster"] for row in rows}) == ["east", "north", "west"]


def test_unreadable_input_is_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(AnalyticsInputError, match="no such file"):
        discover(tmp_path / "missing")
    bogus = tmp_path / "bogus.checkpoint"
    bogus.write_bytes(b"not a snapshot at all, but long enough to have a footer" * 2)
    with pytest.raises(AnalyticsInputError, match="not a raftmeta snapshot") as caught:
        discover(bogus)
    assert "\n" not in str(caught.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(AnalyticsInputError, match="not a raftmeta snapshot, metadata directory"):
        discover(tmp_path / "empty")
    with pytest.raises(AnalyticsInputError, match="unknown kind"):
        plan([], "leaders")


def _v0(record: Record) -> bytes:
    """``record`` encoded as a build before KIP-966 wrote it: version 0, no ELR lists."""
    array = msgpack.unpackb(encode_record(record))
    if array[0] == 3:
        packed: bytes = msgpack.packb([3, 0, *array[2:-2]])
        return packed
    return encode_record(record)


def test_a_snapshot_written_before_elr_reads_with_empty_elr_columns(tmp_path: Path) -> None:
    records: list[Record] = [
        TopicRecord("t", TOPIC_ID),
        *(PartitionRecord(p, TOPIC_ID, (1, 2, 3), (1, 2), leader=1) for p in range(3)),
    ]
    image = image_of(records)
    with SnapshotWriter(tmp_path, SnapshotId(image.offset + 1, 1), cluster_id="c1") as writer:
        writer.append([_v0(record) for record in records])
        path = writer.freeze()
    rows = read_rows(path, "partitions")
    assert [(row["isr"], row["elr"], row["last_known_elr"]) for row in rows] == [
        ([1, 2], [], [])
    ] * 3
    assert normalised(rows) == normalised(image_rows(image, "c1", "partitions"))


def test_snapshot_rows_carry_the_elr_columns(tmp_path: Path) -> None:
    records: list[Record] = [
        TopicRecord("t", TOPIC_ID),
        PartitionRecord(
            0,
            TOPIC_ID,
            (1, 2, 3),
            (),
            leader=-1,
            eligible_leader_replicas=(2, 3),
            last_known_elr=(1,),
        ),
    ]
    image = image_of(records)
    path = write_snapshot(image, tmp_path, cluster_id="c1")
    (row,) = read_rows(path, "partitions")
    assert (row["isr"], row["elr"], row["last_known_elr"]) == ([], [2, 3], [1])
