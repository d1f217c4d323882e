"""``raftmeta audit``: its files, its election plan format, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from analytics.synthetic import build_image, write_node_directory, write_snapshot
from raftmeta.cli.election_request import parse_partitions_json
from raftmeta.cli.main import main
from raftmeta.devkit.ports import free_ports
from tests.analytics.helpers import failover_history


def _cluster(directory: Path) -> Path:
    image = build_image(brokers=5, racks=2, topics=4, partitions_per_topic=10, skew=0.5, seed=4)
    return write_snapshot(image, directory, cluster_id="c", name="east.checkpoint")


def test_audit_writes_the_report_plots_and_a_plan_the_election_tool_reads(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clusters = tmp_path / "clusters"
    clusters.mkdir()
    _cluster(clusters)
    write_node_directory(
        clusters / "story", cluster_id="s", batches=failover_history(), snapshot_at=6
    )
    out = tmp_path / "out"
    assert main(["audit", str(clusters), "--out", str(out), "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((out / "report.json").read_text())
    assert sorted(printed["clusters"]) == ["east", "story"]
    _check_story(printed["clusters"]["story"])
    cluster = printed["clusters"]["east"]
    assert cluster["brokers_above_threshold"] == [0, 1, 2, 3, 4]
    assert cluster["election_plan"]["brokers_above_threshold_after"] == []
    out = out / "east"
    plan = json.loads((out / "election-plan.json").read_text())
    assert set(plan) == {"partitions"}
    assert plan["partitions"]
    assert all(set(entry) == {"topic", "partition"} for entry in plan["partitions"])
    assert all(isinstance(entry["partition"], int) for entry in plan["partitions"])
    assert len(plan["partitions"]) == cluster["election_plan"]["count"]
    elected = parse_partitions_json((out / "election-plan.json").read_text())
    assert [(entry.topic, entry.partition) for entry in elected] == [
        (entry["topic"], entry["partition"]) for entry in plan["partitions"]
    ]
    assert cluster["election_plan"]["examples"] == plan["partitions"][:20]
    for name in ("leaders.png", "imbalance.png", "leadership.png"):
        assert (out / name).read_bytes()[:4] == b"\x89PNG"
    assert not spark.sparkContext._jsc.sc().isStopped()  # the shared session was left running

    plain_out = tmp_path / "plain"
    assert main(["audit", str(clusters), "--out", str(plain_out), "--engine", "plain"]) == 0
    assert "cluster east" in capsys.readouterr().out
    assert json.loads((plain_out / "report.json").read_text()) == printed
    plain_plan = plain_out / "east" / "election-plan.json"
    assert plain_plan.read_text() == (out / "election-plan.json").read_text()


def _check_story(story: dict[str, Any]) -> None:
    """Broker 1 fails and comes back (see ``failover_history``)."""
    events = story["events"]
    assert events["records"] == 15
    assert events["elections_by_type"] == {"non_preferred": 2, "preferred": 1, "unclean": 1}
    assert events["unclean_elections"]["examples"] == [
        {"offset": 14, "topic": "orders", "partition": 1, "leader": 2, "previous_leader": 3}
    ]
    assert events["isr_shrinks"] == [
        {"broker_id": 1, "count": 3},
        {"broker_id": 2, "count": 1},
        {"broker_id": 3, "count": 1},
    ]
    assert events["fencing"][0] == {
        "broker_id": 1,
        "fenced": 1,
        "unfenced": 1,
        "controlled_shutdowns": 0,
        "registrations": 1,
        "unregistrations": 0,
    }
    assert events["fencing_events"] == 2


def test_bad_paths_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", str(tmp_path / "missing")]) == 1
    assert capsys.readouterr().err == f"{tmp_path / 'missing'}: no such file or directory\n"
    text = tmp_path / "notes.checkpoint"
    text.write_text("hello " * 20)
    assert main(["audit", str(text)]) == 1
    error = capsys.readouterr().err
    assert error.startswith("not a raftmeta snapshot:") and error.count("\n") == 1
    assert main(["audit", str(tmp_path), "--threshold", "150"]) == 2
    assert "not between 0 and 100" in capsys.readouterr().err


def test_without_java_the_audit_says_so_in_one_line(tmp_path: Path) -> None:
    snapshot = _cluster(tmp_path)
    env = {key: value for key, value in os.environ.items() if key != "JAVA_HOME"}
    env["PATH"] = str(tmp_path / "no-java-here")
    result = subprocess.run(
        [sys.executable, "-m", "raftmeta", "audit", str(snapshot), "--out", str(tmp_path / "o")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("Java was not found")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("engine", ["plain", "spark"])
def test_a_directory_of_garbage_is_an_error_not_an_empty_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spark: SparkSession, engine: str
) -> None:
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "00000000000000000000.log").write_bytes(bytes(range(256)) * 20)
    out = tmp_path / "out"
    assert main(["audit", str(garbage), "--out", str(out), "--engine", engine]) == 1
    error = capsys.readouterr().err
    assert "no readable metadata" in error and error.count("\n") == 1
    assert not out.exists() or not any(out.iterdir()), "nothing is written"


def _audit_process(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], float]:
    snapshot = _cluster(tmp_path)
    started = time.monotonic()
    result = subprocess.run(
        [
            *(sys.executable, "-m", "raftmeta", "audit", str(snapshot)),
            *("--out", str(tmp_path / "o"), *args),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return result, time.monotonic() - started


def test_an_unreachable_master_fails_fast_naming_the_url_and_the_cause(tmp_path: Path) -> None:
    (closed_port,) = free_ports(1)
    master = f"spark://127.0.0.1:{closed_port}"
    result, seconds = _audit_process(tmp_path, "--master", master)
    assert result.returncode == 1
    assert seconds < 10, f"took {seconds:.1f} s"
    assert result.stderr.count("\n") == 1, result.stderr
    assert master in result.stderr and "connection refused" in result.stderr
    assert not (tmp_path / "o").exists()


def test_a_java_that_will_not_start_fails_fast_in_one_line(tmp_path: Path) -> None:
    java_home = tmp_path / "broken-jdk"
    (java_home / "bin").mkdir(parents=True)
    java = java_home / "bin" / "java"
    java.write_text("#!/bin/sh\nexit 1\n")
    java.chmod(0o755)
    env = {**os.environ, "JAVA_HOME": str(java_home)}
    result, seconds = _audit_process(tmp_path, "--master", "local[1]", env=env)
    assert result.returncode == 1
    assert seconds < 10, f"took {seconds:.1f} s"
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("Spark did not start (master local[1]): "), result.stderr
    assert "Traceback" not in result.stderr
