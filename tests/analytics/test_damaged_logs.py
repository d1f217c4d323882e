"""A damaged log segment in an export is an error naming the file and the byte, on both
engines, not a smaller healthy-looking cluster; ``--allow-partial`` audits the whole prefix
and the report's first line says what is missing.

The plain engine runs the full matrix; the Spark engine is held to the same refusal, and one
Spark audit of a folder holding every kind of damage checks its partial report against the
plain one (Spark queries cost seconds each on two cores).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from analytics.integrity import DamagedInputError, check_sources
from analytics.manifest import MANIFEST_FILE
from analytics.plain_audit import audit_path
from analytics.sources import discover
from analytics.synthetic import write_node_directory
from raftmeta.cli.main import main
from raftmeta.storage.codec import encoded_size, scan_batches
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR
from tests.analytics.helpers import failover_history

HIGH_WATERMARK = 15


def _export(root: Path, name: str) -> Path:
    """The failover story exported as ``root/clusters/name``; returns its one log segment."""
    node = write_node_directory(
        root / "nodes" / name, cluster_id=name, batches=failover_history(), snapshot_at=6
    )
    clusters = root / "clusters"
    exported = ["log", "export", str(node), str(clusters), "--name", name]
    assert main([*exported, "--high-watermark", str(HIGH_WATERMARK)]) == 0
    (segment,) = (clusters / name / METADATA_PARTITION_DIR).glob("*.log")
    return segment


def _batch_starts(segment: Path) -> list[int]:
    starts, position = [], 0
    for batch in scan_batches(segment.read_bytes()).batches:
        starts.append(position)
        position += encoded_size(batch)
    return starts


def cut_short(segment: Path) -> int:
    """Cut in half; the damage starts at the batch the cut goes through."""
    data = segment.read_bytes()
    cut = len(data) // 2
    torn = max(start for start in _batch_starts(segment) if start <= cut)
    segment.write_bytes(data[:cut])
    return torn


def cut_mid_header(segment: Path) -> int:
    start = _batch_starts(segment)[2]
    segment.write_bytes(segment.read_bytes()[: start + 10])
    return start


def missing(segment: Path) -> int:
    segment.unlink()
    return 0


def zero_filled(segment: Path) -> int:
    """The tail reads as zeros, as blocks a crash left allocated but unwritten do."""
    start = _batch_starts(segment)[3]
    data = segment.read_bytes()
    segment.write_bytes(data[:start] + bytes(len(data) - start))
    return start


DAMAGE: dict[str, Callable[[Path], int]] = {
    "cut short": cut_short,
    "cut mid-header": cut_mid_header,
    "missing": missing,
    "zero-filled": zero_filled,
}


def test_an_exported_log_is_whole_and_its_manifest_says_so(tmp_path: Path) -> None:
    segment = _export(tmp_path, "story")
    manifest = json.loads((segment.parent / MANIFEST_FILE).read_text())
    assert manifest["segments"] == [
        {
            "file": segment.name,
            "bytes": segment.stat().st_size,
            "base_offset": 0,
            "next_offset": HIGH_WATERMARK,
        }
    ]
    checked = check_sources(discover(tmp_path / "clusters"))
    assert checked.damage == []
    report = audit_path(tmp_path / "clusters")
    assert report["clusters"]["story"]["events"]["records"] == HIGH_WATERMARK


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_damaged_segment_is_an_error_naming_the_file_and_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    segment = _export(tmp_path, "story")
    position = DAMAGE[kind](segment)
    out = tmp_path / "out"
    command = ["audit", str(tmp_path / "clusters"), "--out", str(out), "--engine", "plain"]
    capsys.readouterr()
    assert main(command) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1, error
    assert f"{segment}: " in error and f"at byte {position}" in error
    assert "--allow-partial" in error
    assert not out.exists()
    with pytest.raises(DamagedInputError, match=segment.name):
        audit_path(tmp_path / "clusters")


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_allow_partial_audits_the_whole_prefix_and_says_what_is_missing_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    segment = _export(tmp_path, "story")
    DAMAGE[kind](segment)
    out = tmp_path / "out"
    command = ["audit", str(tmp_path / "clusters"), "--out", str(out), "--engine", "plain"]
    capsys.readouterr()
    assert main([*command, "--allow-partial"]) == 0
    first_line = capsys.readouterr().out.splitlines()[0]
    assert first_line.startswith("PARTIAL cluster story: ") and str(segment) in first_line
    assert f"up to {HIGH_WATERMARK}" in first_line or f"of {HIGH_WATERMARK}" in first_line
    report = json.loads((out / "report.json").read_text())
    assert next(iter(report)) == "partial"
    assert report["partial"] == [first_line.removeprefix("PARTIAL ")]
    records = report["clusters"]["story"]["events"]["records"]
    assert 0 <= records < HIGH_WATERMARK
    if kind == "missing":
        # Nothing of the log is left: the state is the snapshot's, at offset 6.
        assert report["clusters"]["story"]["snapshot_offset"] == 6


def test_a_node_directory_with_a_gap_between_segments_is_damaged(tmp_path: Path) -> None:
    node = write_node_directory(
        tmp_path / "node", cluster_id="gap", batches=failover_history(), segment_bytes=1
    )
    segments = sorted((node / METADATA_PARTITION_DIR).glob("*.log"))
    assert len(segments) > 3
    segments[2].unlink()
    with pytest.raises(DamagedInputError, match=f"{segments[3].name}: starts at offset"):
        check_sources(discover(node))
    checked = check_sources(discover(node), allow_partial=True)
    (source,) = checked.sources
    assert source.segments == tuple(str(path) for path in segments[:2])
    report = audit_path(node, allow_partial=True)
    assert report["clusters"]["gap"]["events"]["records"] == source.log_end


def test_a_torn_tail_of_a_node_directory_is_damage_too(tmp_path: Path) -> None:
    node = write_node_directory(tmp_path / "node", cluster_id="torn", batches=failover_history())
    (segment,) = (node / METADATA_PARTITION_DIR).glob("*.log")
    position = cut_mid_header(segment)
    with pytest.raises(DamagedInputError, match=f"torn header .* at byte {position}"):
        check_sources(discover(node))


def test_the_spark_engine_refuses_damage_the_same_way(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folders = {}
    for kind, damage in DAMAGE.items():
        root = tmp_path / kind.replace(" ", "-")
        segment = _export(root, "story")
        folders[kind] = (root / "clusters", segment, damage(segment))
    capsys.readouterr()
    for kind, (clusters, segment, position) in folders.items():
        command = ["audit", str(clusters), "--out", str(tmp_path / "out"), "--engine", "spark"]
        assert main(command) == 1, kind
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and f"{segment}: " in error, error
        assert f"at byte {position}" in error
    # The data source itself refuses too, for a notebook that reads it directly.
    clusters, segment, _ = folders["zero-filled"]
    with pytest.raises(Exception, match=segment.name):
        spark.read.format("raftmeta").option("kind", "brokers").load(str(clusters)).collect()


def test_a_partial_spark_audit_equals_the_partial_plain_audit(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for kind, damage in DAMAGE.items():
        damage(_export(tmp_path, kind.replace(" ", "-")))
    clusters = str(tmp_path / "clusters")
    capsys.readouterr()
    reports = {}
    for engine in ("spark", "plain"):
        out = tmp_path / engine
        command = ["audit", clusters, "--out", str(out), "--engine", engine, "--allow-partial"]
        assert main([*command, "--format", "json"]) == 0
        printed = json.loads(capsys.readouterr().out)
        assert next(iter(printed)) == "partial"
        reports[engine] = json.loads((out / "report.json").read_text())
    assert reports["spark"] == reports["plain"]
    assert len(reports["spark"]["partial"]) == len(DAMAGE)
