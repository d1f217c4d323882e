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

from analytics.audit import audit_frames, collect_report, plan_reads
from analytics.plain_audit import audit_path, plain_audit
from analytics.readers import EventRecorder, image_rows
from analytics.schemas import EVENTS, SCHEMAS
from analytics.synthetic import build_image, write_node_directory, write_snapshot
from raftmeta.image import MetadataImage
from raftmeta.records import Record
from tests.analytics.helpers import image_of
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
    max_examples=2,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(histories(max_steps=25), min_size=3, max_size=7),
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


def test_spark_and_plain_agree_on_replica_balance_and_its_plan(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Skewed clusters, one per snapshot: a hand-counted one (a needless shared rack, a
    partition below its topic's factor, a fenced broker), one whose racks forbid balance, one
    whose plan stops at its bound on moves, and a larger one a plan balances."""
    from tests.analytics.test_replica_balance import hand_counted, skewed

    images = {
        "hand": hand_counted(),
        "racks": skewed(7, 3, empty=1),
        "free": skewed(7, 0, empty=1),
        "large": skewed(30, 5, empty=3, partitions_per_topic=4),
    }
    for name, image in images.items():
        write_snapshot(image, tmp_path, cluster_id="c", name=f"{name}.checkpoint")
    frames = audit_frames(spark, str(tmp_path), threshold_percent=10, max_moves=40)
    report = collect_report(frames)
    assert report == audit_path(tmp_path, threshold_percent=10, max_moves=40)
    plans = {
        name: cluster["replica_balance"]["plan"] for name, cluster in report["clusters"].items()
    }
    assert {name: plan["stopped"] for name, plan in plans.items()} == {
        "hand": None,
        "racks": "rack_spread",
        "free": "max_moves",
        "large": None,
    }
    assert all(plan["partitions"] for plan in plans.values())


def test_figures_counted_split_by_split_add_up_to_the_plain_audit(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Snapshots cut into many small splits: each split's counts and first examples, added up
    in Spark, give the report the plain audit gives reading each snapshot whole. The shared
    cluster's findings (needlessly shared racks, partitions below their topic's factor) have
    far more examples than a report lists, spread over its splits."""
    from tests.analytics.test_replica_balance import broker, hand_counted, image_of, topic

    images = {
        "hand": hand_counted(),
        "shared": image_of(
            [
                *(broker(b, f"r{b % 3}") for b in range(1, 7)),
                *topic("a", [(1, 4) if p % 7 else (2,) for p in range(3000)]),
                *topic("b", [(2, 3, 5)] * 500),
            ]
        ),
        "synthetic": build_image(
            brokers=12, racks=3, topics=30, partitions_per_topic=40, skew=0.3, seed=7
        ),
    }
    for name, image in images.items():
        write_snapshot(image, tmp_path, cluster_id="c", name=f"{name}.checkpoint")
    planned = plan_reads(tmp_path, max_split_bytes=2048)
    clusters = [figure_split.split.source.cluster for figure_split in planned.figures.splits]
    assert clusters.count("shared") > 2
    frames = audit_frames(spark, str(tmp_path), threshold_percent=10, planned=planned)
    assert collect_report(frames) == audit_path(tmp_path, threshold_percent=10)
