"""The Spark audit against the plain Python one, on random clusters and on a scripted story.

Spark queries cost most of a second each, so each Hypothesis example writes several clusters
(snapshot files and node directories with logs) into one folder and audits them in one job.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from analytics.audit import audit_frames, collect_report
from analytics.plain_audit import plain_audit
from analytics.readers import EventRecorder, image_rows
from analytics.schemas import EVENTS, SCHEMAS
from analytics.synthetic import build_image, write_node_directory, write_snapshot
from raftmeta.image import MetadataImage
from raftmeta.records import Record
from tests.analytics.helpers import failover_history, image_of
from tests.metadata.strategies import histories


def _batch(kind: str, rows: list[dict[str, Any]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(rows, SCHEMAS[kind])


def _expected(
    clusters: dict[str, tuple[MetadataImage, list[dict[str, Any]]]], threshold: float
) -> dict[str, Any]:
    """The plain audit, fed straight from the images and records, not from the files."""
    tables: dict[str, list[pa.RecordBatch]] = {"partitions": [], "brokers": [], "topics": []}
    events = []
    for name, (image, event_rows) in clusters.items():
        for kind, batches in tables.items():
            batches.append(_batch(kind, image_rows(image, name, kind)))
        events.append(pa.RecordBatch.from_pylist(event_rows, EVENTS))
    return plain_audit(
        partitions=tables["partitions"],
        brokers=tables["brokers"],
        topics=tables["topics"],
        events=events,
        threshold_percent=threshold,
    )


def _log_batches(history: list[Record], size: int) -> list[tuple[list[Record], int, int]]:
    return [
        (history[start : start + size], 1 + start // 7, 1_000 + start * 20_000)
        for start in range(0, len(history), size)
    ]


def _events(name: str, history: list[Record], size: int) -> list[dict[str, Any]]:
    recorder = EventRecorder(name, MetadataImage())
    rows: list[dict[str, Any]] = []
    for records, epoch, batch_time_ms in _log_batches(history, size):
        for record in records:
            rows.append(recorder.apply(record, len(rows), epoch, batch_time_ms))
    return rows


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(histories(max_steps=25), min_size=3, max_size=6),
    st.integers(1, 4),
    st.sampled_from((0, 10, 25, 50)),
)
def test_spark_audit_equals_the_plain_audit_on_random_clusters(
    spark: SparkSession, cluster_histories: list[list[Record]], batch_size: int, threshold: int
) -> None:
    expected_input: dict[str, tuple[MetadataImage, list[dict[str, Any]]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        for index, history in enumerate(cluster_histories):
            image = image_of(history)
            if index % 2 == 0:
                name = f"snapshot-{index}"
                write_snapshot(image, folder, cluster_id="c", name=f"{name}.checkpoint")
                expected_input[name] = (image, [])
            elif history:
                name = f"node-{index}"
                write_node_directory(
                    Path(folder) / name,
                    cluster_id="c",
                    batches=_log_batches(history, batch_size),
                    snapshot_at=len(history) // 2,
                )
                expected_input[name] = (image, _events(name, history, batch_size))
        if not expected_input:
            return
        frames = audit_frames(spark, folder, threshold_percent=threshold)
        assert collect_report(frames) == _expected(expected_input, threshold)


def test_skewed_cluster_and_failover_story(spark: SparkSession, tmp_path: Path) -> None:
    skewed = build_image(brokers=6, racks=3, topics=8, partitions_per_topic=25, skew=0.4, seed=3)
    write_snapshot(skewed, tmp_path, cluster_id="c", name="skewed.checkpoint")
    history = failover_history()
    write_node_directory(tmp_path / "story", cluster_id="c", batches=history, snapshot_at=6)
    records = [record for batch, _, _ in history for record in batch]
    recorder = EventRecorder("story", MetadataImage())
    events = []
    offset = 0
    for batch, epoch, batch_time_ms in history:
        for record in batch:
            events.append(recorder.apply(record, offset, epoch, batch_time_ms))
            offset += 1
    report = collect_report(audit_frames(spark, str(tmp_path), threshold_percent=10))
    assert report == _expected({"skewed": (skewed, []), "story": (image_of(records), events)}, 10)
    skewed_report = report["clusters"]["skewed"]
    assert skewed_report["brokers_above_threshold"] == [0, 1, 2, 3, 4, 5]
    plan = skewed_report["election_plan"]
    assert plan["count"] == 200 - round(skewed_report["preferred_leader_ratio"] * 200)
    assert plan["brokers_above_threshold_after"] == []
    story = report["clusters"]["story"]["events"]
    assert story["elections_by_type"] == {"non_preferred": 2, "preferred": 1, "unclean": 1}
    assert story["isr_shrinks"] == [
        {"broker_id": 1, "count": 3},
        {"broker_id": 2, "count": 1},
        {"broker_id": 3, "count": 1},
    ]
    assert story["fencing"][0] == {
        "broker_id": 1,
        "fenced": 1,
        "unfenced": 1,
        "controlled_shutdowns": 0,
        "registrations": 1,
        "unregistrations": 0,
    }
