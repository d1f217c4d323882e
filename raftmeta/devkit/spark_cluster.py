"""A Spark standalone master and workers on this machine, from the installed pyspark.

pip's pyspark ships Spark's jars and ``bin/spark-class`` but not the ``sbin/start-master.sh`` /
``start-worker.sh`` scripts of a Spark download, so "start a cluster" has no obvious first step.
:class:`SparkCluster` runs the same two classes (``org.apache.spark.deploy.master.Master`` and
``...worker.Worker``) through the installed pyspark's ``spark-class``, with ``SPARK_HOME`` set
to pyspark's directory, and returns from :meth:`SparkCluster.start` once every worker has
registered with the master (its web UI's ``/json/`` page counts them). ``raftmeta
spark-cluster`` is this class behind a command line; a test can use it directly.

The processes run in sessions of their own, so a Ctrl-C typed at the terminal reaches only the
process that started them: :meth:`SparkCluster.stop` stops the workers first, then the master,
each given time to exit cleanly. Their logs go to the work directory (a temporary directory by
default, removed on stop).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, NoReturn

from raftmeta.devkit.ports import free_ports

START_TIMEOUT_S = 90.0
"""A JVM starts in seconds; on a loaded two-core machine a master and a worker take longer."""
STOP_TIMEOUT_S = 20.0
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


class SparkClusterError(Exception):
    """The cluster cannot start or has stopped on its own; the message is one line."""


class SparkExtraMissing(SparkClusterError):
    """pyspark is not installed: a matter of the install, not of the cluster."""


def spark_home() -> Path:
    """pyspark's directory, which holds ``bin/spark-class`` and Spark's jars."""
    try:
        import pyspark
    except ImportError:
        raise SparkExtraMissing(
            "spark-cluster needs pyspark, of the spark extra (pip install 'raftmeta[spark]')"
        ) from None
    return Path(pyspark.__file__).resolve().parent


def check_java() -> None:
    """Fail in one line before any process starts when no JVM can: ``spark-class`` itself
    would only say so in a log."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return
    if shutil.which("java") is None:
        raise SparkClusterError(
            "Java was not found (install a JDK 17 or 21, or set JAVA_HOME); Spark needs it"
        )


def master_state(host: str, webui_port: int) -> dict[str, Any] | None:
    """The master's ``/json/`` page, or None while it does not answer."""
    try:
        with urllib.request.urlopen(f"http://{host}:{webui_port}/json/", timeout=2) as response:
            state = json.load(response)
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def last_line(log: Path) -> str:
    """The last non-blank line of a log: usually why a JVM exited."""
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no log"
    return lines[-1].strip() if lines else "no output"


@dataclass(frozen=True, slots=True)
class SparkProcess:
    """One JVM of the cluster: its name (``master``, ``worker-0``...), process and log."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path


class SparkCluster:
    """A master and ``workers`` workers bound to ``host``.

    A port of 0 (the default: a test's cluster must not collide with another) picks a free
    one; ``cores`` defaults to this machine's cores shared among the
    workers. Usable as a context manager: entering starts the cluster, leaving stops it.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        webui_port: int = 0,
        workers: int = 1,
        cores: int | None = None,
        memory: str = "1g",
        work_dir: Path | None = None,
    ) -> None:
        self.spark_home = spark_home()
        check_java()
        self.spark_class = str(self.spark_home / "bin" / "spark-class")
        self.host = host
        self.workers = workers
        self.memory = memory
        self.cores = cores or max(1, (os.cpu_count() or 1) // workers)
        self._free = iter(free_ports(2 + workers))
        self.port = port or next(self._free)
        self.webui_port = webui_port or next(self._free)
        self.owns_work_dir = work_dir is None
        self.work_dir = (
            Path(tempfile.mkdtemp(prefix="raftmeta-spark-")) if work_dir is None else work_dir
        )
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ)
        self.env.update(
            SPARK_HOME=str(self.spark_home),
            SPARK_LOCAL_IP=host,
            PYSPARK_PYTHON=self.env.get("PYSPARK_PYTHON", sys.executable),
            SPARK_LOG_DIR=str(self.work_dir),
        )
        self.processes: list[SparkProcess] = []

    @property
    def master_url(self) -> str:
        return f"spark://{self.host}:{self.port}"

    @property
    def webui_url(self) -> str:
        return f"http://{self.host}:{self.webui_port}"

    def start(self) -> None:
        """Start the master, wait for its web UI, start the workers and wait until all have
        registered. Raises SparkClusterError if a JVM exits or the wait times out; what was
        started keeps running until :meth:`stop`."""
        self._launch(
            "master",
            [
                *(MASTER_CLASS, "--host", self.host),
                *("--port", str(self.port), "--webui-port", str(self.webui_port)),
            ],
        )
        self._wait_for(
            lambda: master_state(self.host, self.webui_port) is not None,
            f"master at {self.master_url} (web UI port {self.webui_port})",
        )
        for index in range(self.workers):
            scratch = self.work_dir / f"worker-{index}"
            scratch.mkdir(exist_ok=True)
            self._launch(
                f"worker-{index}",
                [
                    *(WORKER_CLASS, self.master_url, "--host", self.host),
                    *("--cores", str(self.cores), "--memory", self.memory),
                    *("--webui-port", str(next(self._free)), "--work-dir", str(scratch)),
                ],
            )

        def all_registered() -> bool:
            state = master_state(self.host, self.webui_port)
            return state is not None and state.get("aliveworkers") == self.workers

        self._wait_for(all_registered, f"{self.workers} worker(s) registered with the master")

    def _launch(self, name: str, arguments: list[str]) -> None:
        log_path = self.work_dir / f"{name}.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                [self.spark_class, *arguments],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.work_dir,
                start_new_session=True,
            )
        self.processes.append(SparkProcess(name, process, log_path))

    def exited(self) -> SparkProcess | None:
        """The first JVM that has exited, if any."""
        for member in self.processes:
            if member.process.poll() is not None:
                return member
        return None

    def _wait_for(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not condition():
            gone = self.exited()
            if gone is not None:
                raise SparkClusterError(
                    f"the Spark {gone.name} exited ({gone.process.returncode}) while waiting "
                    f"for {what}: {last_line(gone.log)}"
                )
            if time.monotonic() > deadline:
                raise SparkClusterError(
                    f"no {what} within {START_TIMEOUT_S:g} s; logs in {self.work_dir}"
                )
            self._pause(0.5)

    def _pause(self, seconds: float) -> None:
        """Waits up to ``seconds`` on the master process: returns early if it exits."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.processes[0].process.wait(timeout=seconds)

    def watch(self) -> NoReturn:
        """Block while every JVM runs; raise SparkClusterError when one exits. A signal
        handler's exception (Ctrl-C's KeyboardInterrupt) ends the wait."""
        while True:
            gone = self.exited()
            if gone is not None:
                raise SparkClusterError(
                    f"the Spark {gone.name} exited ({gone.process.returncode}): "
                    f"{last_line(gone.log)}"
                )
            self._pause(1.0)

    def stop(self) -> None:
        """Workers first (newest first), then the master; then the work directory, if it was
        made here."""
        for member in reversed(self.processes):
            process = member.process
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        if self.owns_work_dir:
            shutil.rmtree(self.work_dir, ignore_errors=True)

    def __enter__(self) -> SparkCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
