"""The storage-facing commands, run as a user runs them: a real process, real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from raftmeta.raft.batch import SnapshotId, make_batch
from raftmeta.raft.control import leader_change_batch
from raftmeta.records import TopicRecord, encode_record, uuid_from_str
from raftmeta.storage import FileLog, SnapshotWriter


def raftmeta(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "raftmeta", *args], capture_output=True, text=True, timeout=60
    )


def write_config(tmp_path: Path) -> Path:
    config = tmp_path / "node.properties"
    config.write_text(
        "node.id=1\nprocess.roles=controller\n"
        "controller.quorum.voters=1@127.0.0.1:9093\n"
        f"metadata.log.dir={tmp_path / 'data'}\n"
    )
    return config


def test_random_uuid_prints_a_fresh_kafka_style_id() -> None:
    first, second = raftmeta("random-uuid"), raftmeta("random-uuid")
    assert first.returncode == 0
    assert len(first.stdout.strip()) == 22
    assert first.stdout != second.stdout


def test_format_refuses_an_already_formatted_directory(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert raftmeta("format", "--config", str(config), "--cluster-id", "abc").returncode == 0
    again = raftmeta("format", "--config", str(config), "--cluster-id", "abc")
    assert again.returncode == 1
    assert "already formatted" in again.stderr and "--ignore-formatted" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    ignored = raftmeta(
        "format", "--config", str(config), "--cluster-id", "abc", "--ignore-formatted"
    )
    assert ignored.returncode == 0


def test_bad_input_gives_one_line_and_a_nonzero_exit(tmp_path: Path) -> None:
    cases = [
        (("format", "--config", str(tmp_path / "missing"), "--cluster-id", "x"), 2),
        (("--no-such-flag",), 2),
        (("log", "dump"), 2),
        (("snapshot", "dump", str(tmp_path / "missing.checkpoint")), 1),
        (("log", "dump", str(tmp_path / "nowhere")), 1),
        (("log", "dump", "/dev/null"), 1),
        (("log", "dump", str(tmp_path)), 1),
    ]
    bad_config = tmp_path / "bad.properties"
    bad_config.write_text("node.id=abc\n")
    cases.append((("format", "--config", str(bad_config), "--cluster-id", "x"), 2))
    for args, status in cases:
        result = raftmeta(*args)
        assert result.returncode == status, (args, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, (args, result.stderr)
        assert "Traceback" not in result.stderr


def test_log_dump_shows_batches_records_and_a_torn_tail(tmp_path: Path) -> None:
    topic = TopicRecord("orders", uuid_from_str("AAAAAAAAAAAAAAAAAAAAAA"))
    log = FileLog.open(tmp_path)
    log.append([leader_change_batch(0, 1, 1, [1, 2, 3], [1, 2])])
    log.append([make_batch(1, 1, [encode_record(topic)], timestamp_ms=5)])
    log.flush()
    log.close()
    segment = next(tmp_path.glob("*.log"))
    with segment.open("ab") as file:
        file.write(b"\x01\x02\x03")
    result = raftmeta("log", "dump", str(tmp_path), "--json")
    assert result.returncode == 1, "a damaged log is not a clean dump"
    assert result.stderr.count("\n") == 1
    assert segment.name in result.stderr and "torn" in result.stderr
    position = segment.stat().st_size - 3
    assert f"byte {position}" in result.stderr
    entries = [json.loads(line) for line in result.stdout.splitlines()]
    batches = [e for e in entries if "records" in e]
    assert [b["base_offset"] for b in batches] == [0, 1]
    assert batches[0]["records"][0]["type"] == "LeaderChange"
    assert batches[1]["records"][0]["type"] == "TopicRecord"
    assert batches[1]["records"][0]["name"] == "orders"
    assert any("stopped" in e for e in entries), "the torn tail is shown, not hidden"
    text = raftmeta("log", "dump", str(tmp_path))
    assert "TopicRecord" in text.stdout and "epoch 1" in text.stdout


def test_snapshot_dump_shows_header_and_records(tmp_path: Path) -> None:
    topic = TopicRecord("payments", uuid_from_str("AAAAAAAAAAAAAAAAAAAAAA"))
    with SnapshotWriter(tmp_path, SnapshotId(10, 2), cluster_id="abc") as writer:
        writer.append([encode_record(topic)])
        path = writer.freeze()
    result = raftmeta("snapshot", "dump", str(path), "--json")
    assert result.returncode == 0, result.stderr
    entries = [json.loads(line) for line in result.stdout.splitlines()]
    assert entries[0]["end_offset"] == 10 and entries[0]["cluster_id"] == "abc"
    assert entries[1]["records"][0]["name"] == "payments"


def test_format_with_a_release_writes_its_bootstrap_feature_levels(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    done = raftmeta(
        "format", "--config", str(config), "--cluster-id", "abc", "--release-version", "4.1"
    )
    assert done.returncode == 0, done.stderr
    assert "eligible.leader.replicas.version=1, metadata.version=27" in done.stdout
    assert (tmp_path / "data" / "bootstrap.features").read_text() == (
        "eligible.leader.replicas.version=1\nmetadata.version=27\n"
    )
    other = tmp_path / "other"
    other.mkdir()
    refused = raftmeta(
        "format",
        "--config",
        str(write_config(other)),
        "--cluster-id",
        "abc",
        "--release-version",
        "9.9",
    )
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "Unknown release version '9.9'" in refused.stderr
    assert not (other / "data").exists(), "nothing formatted on a usage error"


def test_log_dump_of_a_log_its_snapshot_covers_whole_is_empty_not_an_error(
    tmp_path: Path,
) -> None:
    """A node whose latest snapshot covers its whole log keeps no segment (the log starts,
    empty, at the snapshot's end): dumping it shows nothing and succeeds, while a directory
    with no log at all is still an error."""
    topic = TopicRecord("orders", uuid_from_str("AAAAAAAAAAAAAAAAAAAAAA"))
    log = FileLog.open(tmp_path)
    log.append([make_batch(0, 1, [encode_record(topic)], timestamp_ms=5)])
    log.flush()
    log.advance_start(log.log_end_offset)
    log.close()
    assert not list(tmp_path.glob("*.log"))
    result = raftmeta("log", "dump", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    assert not [line for line in result.stdout.splitlines() if "records" in line]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert raftmeta("log", "dump", str(empty)).returncode == 1


def test_format_without_a_release_finalizes_the_latest_release_with_elr_on(
    tmp_path: Path,
) -> None:
    """As kafka-storage format does: a new cluster gets the latest release's levels, so KIP-966
    is on unless the operator names an older release."""
    config = write_config(tmp_path)
    done = raftmeta("format", "--config", str(config), "--cluster-id", "abc")
    assert done.returncode == 0, done.stderr
    features = tmp_path / "data" / "bootstrap.features"
    assert features.read_text() == "eligible.leader.replicas.version=1\nmetadata.version=27\n"
    assert "eligible.leader.replicas.version=1, metadata.version=27" in done.stdout
    again = raftmeta("format", "--config", str(config), "--cluster-id", "abc", "--ignore-formatted")
    assert again.returncode == 0, again.stderr
    assert features.read_text() == "eligible.leader.replicas.version=1\nmetadata.version=27\n"


def test_format_for_release_4_0_keeps_elr_off(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    done = raftmeta(
        "format", "--config", str(config), "--cluster-id", "abc", "--release-version", "4.0"
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "data" / "bootstrap.features").read_text() == (
        "eligible.leader.replicas.version=0\nmetadata.version=25\n"
    )
    again = raftmeta("format", "--config", str(config), "--cluster-id", "abc", "--ignore-formatted")
    assert again.returncode == 0, again.stderr
    assert (
        "eligible.leader.replicas.version=0"
        in (tmp_path / "data" / "bootstrap.features").read_text()
    ), "re-running format leaves the chosen release alone"


def test_format_refuses_an_overgrown_meta_properties_as_a_configuration_error(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path)
    assert raftmeta("format", "--config", str(config), "--cluster-id", "abc").returncode == 0
    meta = tmp_path / "data" / "meta.properties"
    with meta.open("ab") as file:
        file.truncate(2**26)  # sparse: zeros that cost no disk
    again = raftmeta("format", "--config", str(config), "--cluster-id", "abc", "--ignore-formatted")
    assert again.returncode == 2, again.stderr
    lines = again.stderr.strip().splitlines()
    assert len(lines) == 1 and str(meta) in lines[0] and str(2**26) in lines[0], lines
