"""The audit's replica-balance section: its figures on a cluster small enough to count by hand,
the reassignment plan it writes in the tool's format, and its plot at 6 and 100 brokers."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from analytics.plain_audit import audit_path
from analytics.replica_plots import replicas_figure
from analytics.report import REASSIGNMENT_PLAN_FILE, reassignment_document, write_outputs
from analytics.synthetic import cluster_records, write_snapshot
from raftmeta.cli.reassignment_files import read_reassignment
from raftmeta.common.elections import TopicPartition
from raftmeta.image import MetadataImage
from raftmeta.records import (
    BrokerEndpoint,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    TopicRecord,
)


def broker(broker_id: int, rack: str | None, fenced: bool = False) -> RegisterBrokerRecord:
    return RegisterBrokerRecord(
        broker_id=broker_id,
        incarnation_id=random.Random(broker_id).randbytes(16),
        broker_epoch=broker_id + 1,
        endpoints=(BrokerEndpoint("PLAINTEXT", f"broker-{broker_id}", 9092, 0),),
        rack=rack,
        fenced=fenced,
    )


def topic(name: str, assignment: Iterable[tuple[int, ...]]) -> list[Record]:
    topic_id = random.Random(name).randbytes(16)
    records: list[Record] = [TopicRecord(name, topic_id)]
    for partition, replicas in enumerate(assignment):
        records.append(
            PartitionRecord(
                partition_id=partition,
                topic_id=topic_id,
                replicas=replicas,
                isr=replicas,
                leader=replicas[0],
            )
        )
    return records


def image_of(records: list[Record]) -> MetadataImage:
    return MetadataImage.from_records(records, len(records) - 1)


def hand_counted() -> MetadataImage:
    """Brokers 1 and 3 on r1, 2 and the fenced 4 on r2. Partition 0 keeps both replicas on r1
    although two racks exist; partition 3 has one replica where the topic has two."""
    return image_of(
        [
            broker(1, "r1"),
            broker(2, "r2"),
            broker(3, "r1"),
            broker(4, "r2", fenced=True),
            *topic("t", [(1, 3), (1, 2), (2, 1), (4,), (1, 2)]),
        ]
    )


def skewed(brokers: int, racks: int, empty: int, partitions_per_topic: int = 6) -> MetadataImage:
    """A cluster of ``brokers`` on ``racks`` racks with replicas striped over all but the last
    ``empty`` brokers, which joined after the topics were made."""
    full = brokers - empty
    records = list(
        cluster_records(
            brokers=full, racks=racks, topics=20, partitions_per_topic=partitions_per_topic
        )
    )
    records += [broker(b, f"rack-{b % racks}" if racks else None) for b in range(full, brokers)]
    return image_of(records)


def section_of(tmp_path: Path, image: MetadataImage, **options: Any) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    report = audit_path(write_snapshot(image, tmp_path, cluster_id="c"), **options)
    cluster: dict[str, Any] = report["clusters"]["c"]
    return cluster


def test_the_figures_match_a_hand_count(tmp_path: Path) -> None:
    section = section_of(tmp_path, hand_counted())["replica_balance"]
    # Active brokers 1-3 hold 4 + 3 + 1 = 8: ideal 8/3, and at 10% counts 2 to 3 are within.
    assert section["ideal_replicas"] == 8 / 3
    assert section["bounds"] == [2, 3]
    table = {row["broker_id"]: row for row in section["broker_table"]}
    assert {b: row["replicas"] for b, row in table.items()} == {1: 4, 2: 3, 3: 1, 4: 1}
    assert {b: row["within_threshold"] for b, row in table.items()} == {
        1: False,
        2: True,
        3: False,
        4: None,  # fenced: listed, not judged, left alone
    }
    assert table[4]["ideal_replicas"] == 0.0 and table[4]["replicas_after"] == 1
    assert section["brokers_outside_threshold"] == [1, 3]
    assert section["rack_shared"] == {"count": 1, "examples": [{"topic": "t", "partition": 0}]}
    assert section["below_replication_factor"] == {
        "count": 1,
        "examples": [{"topic": "t", "partition": 3}],
    }
    # One move fixes both: broker 1's replica of partition 1 goes to broker 3 (same rack).
    # Partition 0 already holds broker 3; partition 1 is the first that does not.
    plan = section["plan"]
    assert plan["partitions"] == [{"topic": "t", "partition": 1, "replicas": [3, 2]}]
    assert (plan["replicas_moved"], plan["partitions_moved"], plan["stopped"]) == (1, 1, None)
    assert {b: row["replicas_after"] for b, row in table.items()} == {1: 3, 2: 3, 3: 2, 4: 1}
    assert plan["brokers_outside_threshold_after"] == []


def test_the_plan_is_written_in_the_format_reassign_partitions_reads(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    snapshot = write_snapshot(hand_counted(), tmp_path / "in", cluster_id="c")
    report = audit_path(snapshot)
    written = write_outputs(report, tmp_path / "out")
    plan_path = tmp_path / "out" / REASSIGNMENT_PLAN_FILE
    assert plan_path in written and tmp_path / "out" / "replicas.png" in written
    assert json.loads(plan_path.read_text()) == {
        "version": 1,
        "partitions": [{"topic": "t", "partition": 1, "replicas": [3, 2], "log_dirs": ["any"] * 2}],
    }
    assert read_reassignment(plan_path) == {TopicPartition("t", 1): (3, 2)}
    # report.json keeps the first partitions of the plan, as it does for the election plan.
    document = json.loads((tmp_path / "out" / "report.json").read_text())
    kept = document["clusters"]["c"]["replica_balance"]["plan"]
    assert "partitions" not in kept and kept["examples"] == [
        {"topic": "t", "partition": 1, "replicas": [3, 2]}
    ]


def test_a_balanced_cluster_gets_an_empty_plan(tmp_path: Path) -> None:
    cluster = section_of(tmp_path, skewed(6, 3, empty=0))
    section = cluster["replica_balance"]
    assert section["brokers_outside_threshold"] == []
    assert section["plan"]["partitions"] == []
    assert reassignment_document(cluster) == {"version": 1, "partitions": []}


def test_a_new_empty_broker_is_filled_within_the_bound_on_moves(tmp_path: Path) -> None:
    section = section_of(tmp_path / "free", skewed(7, 0, empty=1))["replica_balance"]
    assert section["brokers_outside_threshold"] == [0, 1, 2, 3, 4, 5, 6]
    plan = section["plan"]
    assert plan["brokers_outside_threshold_after"] == [] and plan["stopped"] is None
    bounded = section_of(tmp_path / "bounded", skewed(7, 0, empty=1), max_moves=5)
    assert bounded["replica_balance"]["plan"]["replicas_moved"] == 5
    assert bounded["replica_balance"]["plan"]["stopped"] == "max_moves"


def test_racks_can_forbid_balance_and_the_plan_says_so(tmp_path: Path) -> None:
    """Every partition spans the three racks, so each rack holds a third of the replicas: a
    seventh broker on rack-0 leaves its three brokers 40 each and the others 60, far from
    the ideal 51.4 at 10% (46 to 57). The plan moves what it can inside rack-0, down to the
    lower bound of brokers 0 and 3, and says why it stops there."""
    section = section_of(tmp_path, skewed(7, 3, empty=1))["replica_balance"]
    plan = section["plan"]
    assert plan["stopped"] == "rack_spread"
    after = {row["broker_id"]: row["replicas_after"] for row in section["broker_table"]}
    assert after == {0: 46, 1: 60, 2: 60, 3: 46, 4: 60, 5: 60, 6: 28}
    assert section["rack_shared"]["count"] == 0
    # A wider threshold admits the split the racks impose.
    wide = section_of(tmp_path / "wide", skewed(7, 3, empty=1), threshold_percent=25)
    assert wide["replica_balance"]["plan"]["brokers_outside_threshold_after"] == []


def test_the_plot_draws_six_and_a_hundred_brokers(tmp_path: Path) -> None:
    small = section_of(tmp_path / "small", skewed(6, 3, empty=1))
    figure = replicas_figure("c", small, 10)
    found: list[Any] = figure.findobj(lambda artist: hasattr(artist, "get_text"))
    texts = [artist.get_text() for artist in found]
    assert any("outside 10% now, 0 after" in text for text in texts)
    assert [label.get_text() for label in figure.axes[0].get_xticklabels()] == [
        str(b) for b in range(6)
    ]
    large = section_of(tmp_path / "large", skewed(100, 6, empty=10, partitions_per_topic=10))
    figure = replicas_figure("c", large, 10)
    assert "all 100 brokers" in figure.axes[0].get_xlabel()
    figure.savefig(tmp_path / "large.png")
