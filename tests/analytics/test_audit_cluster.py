"""The audit on a real Spark cluster reading S3: ``raftmeta spark-cluster --workers 2`` (a
standalone master and two workers from the installed pyspark, started as a user starts them), an
S3-compatible server (moto's server mode) holding exported history of several clusters, and
``raftmeta audit s3://... --master spark://...`` run as a user runs it (a separate process: a
standalone-master session cannot share this process with the suite's ``local`` one). Its report
must equal the audit of the same files read locally.

The command is checked on the way: it prints the master URL on its first line, and at the end of
the module Ctrl-C (SIGINT) stops it with status 0, the master and both workers with it: their
ports are closed and no JVM it started is left, checked by pid.

Everything listens on 127.0.0.1 only. One cluster for the module; the workers get one core and
1 GiB each (an executor's default memory, so executors fit).
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
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from analytics import files
from analytics.synthetic import build_image, write_node_directory, write_snapshot
from raftmeta.cli.main import main
from raftmeta.devkit.ports import free_ports
from raftmeta.devkit.spark_cluster import MASTER_CLASS, WORKER_CLASS
from tests.analytics.helpers import failover_history
from tests.support.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60.0
URL_TIMEOUT_S = 240.0
"""``spark-cluster`` prints the URL once both workers have registered: three JVMs starting on a
loaded two-core machine (the command itself gives each wait 90 s)."""
AUDIT_TIMEOUT_S = 420.0
"""Two minutes on a loaded two-core machine (executor JVMs start, ~70 small stages run)."""
STOP_TIMEOUT_S = 60.0
"""The command gives each JVM 20 s to stop cleanly before killing it."""


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _environment(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(_spark_home()),
        SPARK_LOCAL_IP="127.0.0.1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        PYSPARK_PYTHON=sys.executable,
    )
    env.update(extra)
    return env


def _json(url: str) -> object:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return json.load(response)
    except (OSError, ValueError):
        return None


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def _spark_role(pid: int) -> str | None:
    """``master`` or ``worker`` if ``pid`` is a running Spark master or worker JVM, else None
    (gone, a zombie, or a reused pid running something else)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, IndexError):
        return None
    if state == "Z":
        return None
    if MASTER_CLASS.encode() in command:
        return "master"
    if WORKER_CLASS.encode() in command:
        return "worker"
    return None


def _spark_children(parent: int) -> dict[int, str]:
    """The Spark master and worker JVMs whose parent is ``parent``, by pid (``spark-class``
    execs the JVM, so each is a direct child of the command that started it)."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent_pid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        role = _spark_role(int(entry.name)) if parent_pid == parent else None
        if role is not None:
            found[int(entry.name)] = role
    return found


def _interrupt(process: subprocess.Popen[str]) -> int:
    """Ctrl-C, as typed at the command; its exit status (killed, and a failure, if it hangs)."""
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """``raftmeta spark-cluster --workers 2`` and an S3 server; yields the master URL and the
    AWS variables that reach the server. Stops the command with Ctrl-C at the end and checks
    that it stopped everything it started."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java")
    logs = tmp_path_factory.mktemp("cluster-logs")
    master_port, master_ui, s3_port = free_ports(3)
    aws = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{s3_port}",
    }
    moto = str(Path(sys.executable).parent / "moto_server")
    with open(logs / "s3.log", "wb") as s3_log:
        s3 = subprocess.Popen(
            [moto, "-H", "127.0.0.1", "-p", str(s3_port)],
            env=_environment(),
            stdout=s3_log,
            stderr=subprocess.STDOUT,
            cwd=logs,
        )
    try:
        with open(logs / "spark-cluster.err", "w") as spark_errors:
            spark = subprocess.Popen(
                [
                    *(sys.executable, "-m", "raftmeta", "spark-cluster", "--workers", "2"),
                    *("--port", str(master_port), "--webui-port", str(master_ui)),
                    *("--cores", "1", "--memory", "1g", "--work-dir", str(logs / "spark")),
                ],
                env=_environment(),
                stdout=subprocess.PIPE,
                stderr=spark_errors,
                text=True,
            )
        lines: queue.Queue[str] = queue.Queue()
        assert spark.stdout is not None
        stdout = spark.stdout

        def forward() -> None:
            for line in stdout:
                lines.put(line)

        threading.Thread(target=forward, daemon=True).start()
        try:
            try:
                first_line = lines.get(timeout=URL_TIMEOUT_S).strip()
            except queue.Empty:
                pytest.fail("spark-cluster printed no master URL")
            master = f"spark://127.0.0.1:{master_port}"
            assert first_line == master, (logs / "spark-cluster.err").read_text()[-3000:]
            jvms = _spark_children(spark.pid)
            assert sorted(jvms.values()) == ["master", "worker", "worker"], jvms
            state = _json(f"http://127.0.0.1:{master_ui}/json/")
            assert isinstance(state, dict) and state.get("aliveworkers") == 2, state
            wait_until(
                lambda: _json(f"http://127.0.0.1:{s3_port}/moto-api/data.json") is not None,
                "the S3 server to answer",
                START_TIMEOUT_S,
            )
            yield {"master": master, **aws}
        finally:
            code = _interrupt(spark)
    finally:
        s3.terminate()
        try:
            s3.wait(timeout=20)
        except subprocess.TimeoutExpired:
            s3.kill()
            s3.wait()
    assert code == 0, (logs / "spark-cluster.err").read_text()[-3000:]
    assert not _accepts(master_port), "the master is stopped"
    assert not _accepts(master_ui)
    left = {pid: role for pid, role in jvms.items() if _spark_role(pid) is not None}
    assert not left, f"Spark JVMs left running after Ctrl-C: {left}"


def _clusters(root: Path) -> Path:
    """Exported history of two clusters and a bare snapshot of a third, locally."""
    nodes = root / "nodes"
    exported = root / "clusters"
    write_node_directory(
        nodes / "story", cluster_id="story", batches=failover_history(), snapshot_at=6
    )
    assert (
        main(["log", "export", str(nodes / "story"), str(exported), "--high-watermark", "15"]) == 0
    )
    write_node_directory(
        nodes / "short", cluster_id="short", batches=failover_history()[:3], snapshot_at=3
    )
    assert (
        main(["log", "export", str(nodes / "short"), str(exported), "--high-watermark", "9"]) == 0
    )
    image = build_image(brokers=4, racks=2, topics=3, partitions_per_topic=8, skew=0.6, seed=3)
    write_snapshot(image, exported, cluster_id="east", name="east.checkpoint")
    return exported


def _upload(local: Path, uri: str) -> None:
    for path in sorted(local.rglob("*")):
        if path.is_file():
            files.write_file(files.join(uri, path.relative_to(local).as_posix()), path.read_bytes())


def test_the_audit_of_s3_on_a_standalone_cluster_equals_the_local_audit(
    cluster: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    aws = {key: value for key, value in cluster.items() if key.startswith("AWS_")}
    for key, value in aws.items():
        monkeypatch.setenv(key, value)
    import pyarrow.fs as pafs

    creator, _ = pafs.FileSystem.from_uri("s3://audits?allow_bucket_creation=true")
    creator.create_dir("audits")
    local = _clusters(tmp_path)
    _upload(local, "s3://audits/clusters")
    out = tmp_path / "out"
    result = subprocess.run(
        [
            *(sys.executable, "-m", "raftmeta", "audit", "s3://audits/clusters"),
            *("--master", cluster["master"], "--out", str(out), "--format", "json"),
            # Tiny data: what the suite's local session sets (tests/conftest.py).
            *(
                "--conf",
                "spark.sql.shuffle.partitions=2",
                "--conf",
                "spark.sql.adaptive.enabled=false",
            ),
            *("--conf", "spark.sql.codegen.wholeStage=false"),
        ],
        env=_environment(**aws),
        capture_output=True,
        text=True,
        timeout=AUDIT_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    remote = json.loads((out / "report.json").read_text())
    assert sorted(remote["clusters"]) == ["east", "short", "story"]
    assert remote["clusters"]["story"]["events"]["elections_by_type"] == {
        "non_preferred": 2,
        "preferred": 1,
        "unclean": 1,
    }
    for name, path in (("local", str(local)), ("s3-plain", "s3://audits/clusters")):
        plain_out = tmp_path / name
        assert main(["audit", path, "--engine", "plain", "--out", str(plain_out)]) == 0
        assert json.loads((plain_out / "report.json").read_text()) == remote, name
