"""``raftmeta spark-cluster`` starts a standalone master and a worker from the installed
pyspark, prints the master URL, an audit runs on it, and Ctrl-C stops them all.

Everything runs in child processes: the audit's session belongs to a standalone master, which
cannot share this process with the suite's local one (tests/conftest.py).
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from analytics.synthetic import build_image, write_snapshot
from raftmeta.cli.main import main
from raftmeta.devkit.ports import free_ports

REPO = Path(__file__).resolve().parents[2]
URL_TIMEOUT_S = 120.0
AUDIT_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 60.0


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PYSPARK_PYTHON"] = sys.executable
    return env


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def test_spark_cluster_runs_an_audit_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java")
    port, webui_port = free_ports(2)
    cluster = subprocess.Popen(
        [
            *(sys.executable, "-m", "raftmeta", "spark-cluster", "--port", str(port)),
            *("--webui-port", str(webui_port), "--cores", "1", "--memory", "1g"),
            *("--work-dir", str(tmp_path / "spark")),
        ],
        env=_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert cluster.stdout is not None
    stdout = cluster.stdout

    def forward() -> None:
        for line in stdout:
            lines.put(line)

    threading.Thread(target=forward, daemon=True).start()
    try:
        try:
            url = lines.get(timeout=URL_TIMEOUT_S).strip()
        except queue.Empty:
            pytest.fail("spark-cluster printed no master URL")
        assert url == f"spark://127.0.0.1:{port}"
        image = build_image(brokers=4, racks=2, topics=2, partitions_per_topic=6, skew=0.5, seed=2)
        snapshot = write_snapshot(image, tmp_path, cluster_id="c", name="east.checkpoint")
        out = tmp_path / "out"
        audit = subprocess.run(
            [
                *(sys.executable, "-m", "raftmeta", "audit", str(snapshot), "--master", url),
                *("--out", str(out), "--format", "json"),
                *("--conf", "spark.sql.shuffle.partitions=1"),
                *("--conf", "spark.sql.adaptive.enabled=false"),
                *("--conf", "spark.sql.codegen.wholeStage=false"),
            ],
            env=_environment(),
            capture_output=True,
            text=True,
            timeout=AUDIT_TIMEOUT_S,
            check=False,
        )
        assert audit.returncode == 0, audit.stderr[-3000:]
        plain_command = ["audit", str(snapshot), "--engine", "plain", "--out", str(tmp_path / "p")]
        assert main(plain_command) == 0
        plain = json.loads((tmp_path / "p" / "report.json").read_text())
        assert json.loads((out / "report.json").read_text()) == plain
    finally:
        cluster.send_signal(signal.SIGINT)
        try:
            code = cluster.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            cluster.kill()
            raise
    assert code == 0, cluster.stderr.read() if cluster.stderr else ""
    assert not _accepts(port), "the master is stopped"
    assert not _accepts(webui_port)
