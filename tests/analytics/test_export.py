"""``raftmeta log export``: committed history (snapshots + log, never past the high
watermark) copied where the audit reads it, and audited with the history kept below the
latest snapshot."""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from analytics.plain_audit import audit_path
from analytics.synthetic import write_node_directory, write_snapshot
from raftmeta.cli.main import main
from raftmeta.devkit.ports import free_ports
from raftmeta.storage.codec import scan_batches
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR
from raftmeta.storage.log import FileLog
from raftmeta.storage.snapshots import list_snapshots
from tests.analytics.helpers import failover_history, image_of
from tests.support.waiting import wait_until


def _trimmed_node(directory: Path) -> Path:
    """The failover story with snapshots at 6 and 12 and the log below 6 deleted, as a
    controller keeping history (``metadata.max.retention.*``) leaves it."""
    batches = failover_history()
    root = write_node_directory(
        directory, cluster_id="story", batches=batches, snapshot_at=6, segment_bytes=1
    )
    folder = root / METADATA_PARTITION_DIR
    records = [record for batch_records, _, _ in batches for record in batch_records]
    write_snapshot(image_of(records[:12]), folder, cluster_id="story", epoch=2)
    log = FileLog.open(folder, segment_bytes=1)
    log.advance_start(6)
    log.close()
    return root


def test_export_stops_at_the_high_watermark_and_keeps_the_history_snapshot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    node = _trimmed_node(tmp_path / "node")
    exported = tmp_path / "exported"
    assert main(["log", "export", str(node), str(exported), "--high-watermark", "13"]) == 0
    line = capsys.readouterr().out
    assert "log offsets 6..13" in line and "high watermark 13" in line
    folder = exported / "story" / METADATA_PARTITION_DIR
    assert [s.end_offset for s in list_snapshots(folder)] == [6, 12]
    (segment,) = folder.glob("*.log")
    assert len(list((node / METADATA_PARTITION_DIR).glob("*.log"))) == 4  # from 6: 4 segments
    batches = scan_batches(segment.read_bytes()).batches
    assert (batches[0].base_offset, batches[-1].next_offset) == (6, 13)  # 13, 14 uncommitted
    assert (exported / "story" / "meta.properties").is_file()

    report = audit_path(exported, threshold_percent=10)
    events = report["clusters"]["story"]["events"]
    # The history from the snapshot at 6: broker 1 fenced, its leadership moves to 2 and a
    # preferred election brings it back; the unclean election past the watermark is not there.
    assert events["records"] == 7
    assert events["elections_by_type"] == {"non_preferred": 1, "preferred": 1}
    assert events["fencing_events"] == 2


def test_the_history_below_the_latest_snapshot_is_audited(tmp_path: Path) -> None:
    node = _trimmed_node(tmp_path / "node")
    events = audit_path(node, threshold_percent=10)["clusters"]["story"]["events"]
    # Without the snapshot at 6 only the records after 12 (the latest snapshot) would count.
    assert events["records"] == 9
    assert events["elections_by_type"] == {"non_preferred": 2, "preferred": 1, "unclean": 1}


def test_export_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    node = _trimmed_node(tmp_path / "node")
    out = tmp_path / "out"
    assert main(["log", "export", str(node), str(out)]) == 2
    assert "--high-watermark" in capsys.readouterr().err
    assert (
        main(["log", "export", str(tmp_path / "nowhere"), str(out), "--high-watermark", "3"]) == 1
    )
    assert capsys.readouterr().err.count("\n") == 1
    assert main(["log", "export", str(node), str(out), "--high-watermark", "-3"]) == 2
    capsys.readouterr()
    assert main(["log", "export", str(node), str(out), "--high-watermark", "15"]) == 0
    assert main(["log", "export", str(node), str(out), "--high-watermark", "15"]) == 1
    error = capsys.readouterr().err
    assert "already exists" in error and error.count("\n") == 1
    (node / METADATA_PARTITION_DIR / "00000000000000000000.log").write_bytes(b"\x00" * 64)
    assert (
        main(["log", "export", str(node), str(out), "--name", "x", "--high-watermark", "15"]) == 1
    )
    error = capsys.readouterr().err
    assert "below the high watermark" in error and error.count("\n") == 1
    assert not (out / "x").exists()


def test_the_leadership_series_starts_before_the_first_change() -> None:
    from analytics.plots import leadership_series

    cluster = {
        "broker_table": [{"broker_id": 1, "leaders": 25}, {"broker_id": 2, "leaders": 25}],
        "events": {
            "leadership_changes": [
                {"time_ms": 60_000, "broker_id": 1, "change": -25},
                {"time_ms": 60_000, "broker_id": 2, "change": 25},
                {"time_ms": 120_000, "broker_id": 1, "change": 25},
                {"time_ms": 120_000, "broker_id": 2, "change": -25},
            ]
        },
    }
    # Broker 1 led 25 before the failure, none after it, 25 again after the election.
    assert leadership_series(cluster, 1000)[1] == [(59_000, 25), (60_000, 0), (120_000, 25)]
    assert leadership_series(cluster)[1] == [(60_000, 0), (120_000, 25)]


@pytest.fixture
def s3_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """An S3-compatible server (moto's server mode) on loopback, reached through AWS_*."""
    (port,) = free_ports(1)
    endpoint = f"http://127.0.0.1:{port}"
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }.items():
        monkeypatch.setenv(key, value)
    moto = str(Path(sys.executable).parent / "moto_server")
    with open(tmp_path / "moto.log", "wb") as log:
        server = subprocess.Popen(
            [moto, "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT
        )
    try:

        def answers() -> bool:
            try:
                with urllib.request.urlopen(f"{endpoint}/moto-api/data.json", timeout=2):
                    return True
            except OSError:
                return False

        wait_until(answers, "the S3 server to answer", 30.0)
        yield endpoint
    finally:
        server.terminate()
        server.wait(timeout=20)


def test_export_to_a_missing_bucket_says_it_must_exist_or_creates_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], s3_server: str
) -> None:
    node = _trimmed_node(tmp_path / "node")
    command = ["log", "export", str(node), "s3://exports/clusters", "--high-watermark", "13"]
    assert main(command) == 1
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "s3://exports: the bucket does not exist" in error
    assert "--create-bucket" in error
    assert main([*command, "--create-bucket"]) == 0
    capsys.readouterr()
    report = audit_path("s3://exports/clusters", threshold_percent=10)
    assert report["clusters"]["story"]["events"]["records"] == 7
