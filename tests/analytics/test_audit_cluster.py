"""The audit on a real Spark cluster reading S3: a standalone master and two workers started
from the installed pyspark, an S3-compatible server (moto's server mode) holding exported
history of several clusters, and ``raftmeta audit s3://... --master spark://...`` run as a
user runs it (a separate process: a standalone-master session cannot share this process with
the suite's ``local`` one). Its report must equal the audit of the same files read locally.

Everything listens on 127.0.0.1 only. One master for the module; the workers get one core and
1 GiB each (an executor's default memory, so executors fit).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from analytics import files
from analytics.synthetic import build_image, write_node_directory, write_snapshot
from raftmeta.cli.main import main
from raftmeta.devkit.ports import free_ports
from tests.analytics.helpers import failover_history
from tests.support.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60.0
AUDIT_TIMEOUT_S = 420.0
"""Two minutes on a loaded two-core machine (executor JVMs start, ~70 small stages run)."""


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


class Processes:
    """Child processes started by this module, stopped (by their own ids) in reverse order."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.started: list[subprocess.Popen[bytes]] = []

    def start(self, name: str, command: list[str], env: dict[str, str]) -> None:
        log = open(self.logs / f"{name}.log", "wb")  # noqa: SIM115 (kept open for the child)
        self.started.append(
            subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=self.logs)
        )
        log.close()

    def stop(self) -> None:
        for process in reversed(self.started):
            process.terminate()
        for process in reversed(self.started):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A Spark master with two workers and an S3 server; yields the master URL and the AWS
    variables that reach the server."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java")
    logs = tmp_path_factory.mktemp("cluster-logs")
    master_port, master_ui, s3_port, *worker_uis = free_ports(5)
    aws = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{s3_port}",
    }
    processes = Processes(logs)
    spark_class = str(_spark_home() / "bin" / "spark-class")
    try:
        moto = str(Path(sys.executable).parent / "moto_server")
        processes.start("s3", [moto, "-H", "127.0.0.1", "-p", str(s3_port)], _environment())
        master = f"spark://127.0.0.1:{master_port}"
        processes.start(
            "master",
            [
                *(spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"),
                *("--port", str(master_port), "--webui-port", str(master_ui)),
            ],
            _environment(),
        )
        for index, ui_port in enumerate(worker_uis[:2]):
            work = logs / f"worker-{index}"
            work.mkdir()
            processes.start(
                f"worker-{index}",
                [
                    *(spark_class, "org.apache.spark.deploy.worker.Worker", master),
                    *("--host", "127.0.0.1", "--cores", "1", "--memory", "1g"),
                    *("--webui-port", str(ui_port), "--work-dir", str(work)),
                ],
                _environment(),
            )
        wait_until(
            lambda: _json(f"http://127.0.0.1:{s3_port}/moto-api/data.json") is not None,
            "the S3 server to answer",
            START_TIMEOUT_S,
        )

        def alive_workers() -> bool:
            state = _json(f"http://127.0.0.1:{master_ui}/json/")
            return isinstance(state, dict) and state.get("aliveworkers") == 2

        wait_until(alive_workers, "two workers registered with the master", START_TIMEOUT_S)
        yield {"master": master, **aws}
    finally:
        processes.stop()


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
