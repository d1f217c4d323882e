"""``raftmeta spark-cluster``: a Spark standalone master and workers on this machine.

pip's pyspark ships Spark's jars and ``bin/spark-class`` but not the ``sbin/start-master.sh`` /
``start-worker.sh`` scripts of a Spark download, so "start a cluster" has no obvious first step.
This command runs the same two classes (``org.apache.spark.deploy.master.Master`` and
``...worker.Worker``) through the installed pyspark's ``spark-class``, with ``SPARK_HOME`` set
to pyspark's directory, waits until every worker has registered, prints the master URL for
``raftmeta audit --master``, and stops them all on Ctrl-C (or SIGTERM).

The processes run in sessions of their own, so the Ctrl-C typed at this command reaches only
it: the workers are stopped first, then the master, each given time to exit cleanly. Their
logs go to ``--work-dir`` (a temporary directory by default, removed on exit).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import FrameType
from typing import Any

from raftmeta.cli.errors import USAGE_ERROR, CommandLineError

START_TIMEOUT_S = 90.0
"""A JVM starts in seconds; on a loaded two-core machine a master and a worker take longer."""
STOP_TIMEOUT_S = 20.0
DEFAULT_PORT = 7077
DEFAULT_WEBUI_PORT = 8080


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "spark-cluster",
        help="run a local Spark standalone master and workers from the installed pyspark",
        description="Start a Spark standalone master and workers on this machine (from "
        "pyspark's spark-class), print the master URL for `raftmeta audit --master`, and stop "
        "them on Ctrl-C.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    parser.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        help=f"the master's port (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    parser.add_argument(
        "--webui-port",
        type=_port,
        default=DEFAULT_WEBUI_PORT,
        help=f"the master's web UI port (default {DEFAULT_WEBUI_PORT}; 0 picks a free one)",
    )
    parser.add_argument("--workers", type=_positive, default=1, help="workers to start")
    parser.add_argument(
        "--cores", type=_positive, default=None, help="cores per worker (default: all / workers)"
    )
    parser.add_argument("--memory", default="1g", help="memory per worker (default 1g)")
    parser.add_argument(
        "--work-dir", type=Path, default=None, help="logs and worker scratch (default: a temp dir)"
    )
    parser.set_defaults(handler=run)


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"not a port: {text!r}")
    return int(text)


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive integer: {text!r}")
    return int(text)


class _Stop(Exception):
    """SIGTERM, turned into the same clean stop as Ctrl-C."""


def _spark_home() -> Path:
    try:
        import pyspark
    except ImportError:
        raise CommandLineError(
            "spark-cluster needs pyspark, of the spark extra (pip install 'raftmeta[spark]')",
            USAGE_ERROR,
        ) from None
    return Path(pyspark.__file__).resolve().parent


def _check_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return
    if shutil.which("java") is None:
        raise CommandLineError(
            "Java was not found (install a JDK 17 or 21, or set JAVA_HOME); Spark needs it"
        )


def _master_state(host: str, webui_port: int) -> dict[str, Any] | None:
    try:
        with urllib.request.urlopen(f"http://{host}:{webui_port}/json/", timeout=2) as response:
            state = json.load(response)
    except (OSError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def _last_line(log: Path) -> str:
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no log"
    return lines[-1].strip() if lines else "no output"


class _Cluster:
    """The master and worker processes, each in a session of its own, with their logs."""

    def __init__(self, spark_home: Path, work_dir: Path, host: str) -> None:
        self.spark_class = str(spark_home / "bin" / "spark-class")
        self.work_dir = work_dir
        self.env = dict(os.environ)
        self.env.update(
            SPARK_HOME=str(spark_home),
            SPARK_LOCAL_IP=host,
            PYSPARK_PYTHON=self.env.get("PYSPARK_PYTHON", sys.executable),
            SPARK_LOG_DIR=str(work_dir),
        )
        self.processes: list[tuple[str, subprocess.Popen[bytes], Path]] = []

    def start(self, name: str, arguments: list[str]) -> None:
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
        self.processes.append((name, process, log_path))

    def exited(self) -> tuple[str, int, Path] | None:
        for name, process, log in self.processes:
            code = process.poll()
            if code is not None:
                return name, code, log
        return None

    def wait_for(self, condition: Any, what: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not condition():
            gone = self.exited()
            if gone is not None:
                name, code, log = gone
                raise CommandLineError(
                    f"the Spark {name} exited ({code}) while waiting for {what}: {_last_line(log)}"
                )
            if time.monotonic() > deadline:
                raise CommandLineError(
                    f"no {what} within {START_TIMEOUT_S:g} s; logs in {self.work_dir}"
                )
            self.pause(0.5)

    def pause(self, seconds: float) -> None:
        """Waits up to ``seconds`` on the master process: returns early if it exits."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.processes[0][1].wait(timeout=seconds)

    def stop(self) -> None:
        """Workers first (newest first), then the master."""
        for _, process, _ in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


def run(args: argparse.Namespace) -> int:
    from raftmeta.devkit.ports import free_ports

    spark_home = _spark_home()
    _check_java()
    port, webui_port = args.port, args.webui_port
    picked = iter(free_ports(2 + args.workers))
    port = port or next(picked)
    webui_port = webui_port or next(picked)
    cores = args.cores or max(1, (os.cpu_count() or 1) // args.workers)
    owned_dir = args.work_dir is None
    work_dir = Path(tempfile.mkdtemp(prefix="raftmeta-spark-")) if owned_dir else args.work_dir
    work_dir.mkdir(parents=True, exist_ok=True)
    master_url = f"spark://{args.host}:{port}"
    cluster = _Cluster(spark_home, work_dir, args.host)

    def terminate(signum: int, frame: FrameType | None) -> None:
        raise _Stop

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        cluster.start(
            "master",
            [
                *("org.apache.spark.deploy.master.Master", "--host", args.host),
                *("--port", str(port), "--webui-port", str(webui_port)),
            ],
        )
        cluster.wait_for(
            lambda: _master_state(args.host, webui_port) is not None,
            f"master at {master_url} (web UI port {webui_port})",
        )
        for index in range(args.workers):
            scratch = work_dir / f"worker-{index}"
            scratch.mkdir(exist_ok=True)
            cluster.start(
                f"worker-{index}",
                [
                    *("org.apache.spark.deploy.worker.Worker", master_url, "--host", args.host),
                    *("--cores", str(cores), "--memory", args.memory),
                    *("--webui-port", str(next(picked)), "--work-dir", str(scratch)),
                ],
            )

        def all_registered() -> bool:
            state = _master_state(args.host, webui_port)
            return state is not None and state.get("aliveworkers") == args.workers

        cluster.wait_for(all_registered, f"{args.workers} worker(s) registered with the master")
        print(master_url, flush=True)
        print(
            f"{args.workers} worker(s) of {cores} core(s) and {args.memory}; web UI "
            f"http://{args.host}:{webui_port}; logs in {work_dir}; Ctrl-C stops them",
            flush=True,
        )
        while True:
            gone = cluster.exited()
            if gone is not None:
                name, code, log = gone
                raise CommandLineError(f"the Spark {name} exited ({code}): {_last_line(log)}")
            cluster.pause(1.0)
    except (KeyboardInterrupt, _Stop):
        print("stopping the Spark workers and master", flush=True)
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        cluster.stop()
        if owned_dir:
            shutil.rmtree(work_dir, ignore_errors=True)
