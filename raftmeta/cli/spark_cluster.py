"""``raftmeta spark-cluster``: a Spark standalone master and workers on this machine.

Starts them (:class:`raftmeta.devkit.spark_cluster.SparkCluster`, from the installed pyspark's
``spark-class``), waits until every worker has registered, prints the master URL for
``raftmeta audit --master`` on the first line, and stops them all on Ctrl-C (or SIGTERM). Their
logs go to ``--work-dir`` (a temporary directory by default, removed on exit).
"""

from __future__ import annotations

import argparse
import signal
from pathlib import Path
from types import FrameType
from typing import Any

from raftmeta.cli.errors import USAGE_ERROR, CommandLineError

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


def run(args: argparse.Namespace) -> int:
    from raftmeta.devkit.spark_cluster import SparkCluster, SparkClusterError, SparkExtraMissing

    try:
        cluster = SparkCluster(
            host=args.host,
            port=args.port,
            webui_port=args.webui_port,
            workers=args.workers,
            cores=args.cores,
            memory=args.memory,
            work_dir=args.work_dir,
        )
    except SparkExtraMissing as error:
        raise CommandLineError(str(error), USAGE_ERROR) from None
    except SparkClusterError as error:
        raise CommandLineError(str(error)) from None

    def terminate(signum: int, frame: FrameType | None) -> None:
        raise _Stop

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        cluster.start()
        print(cluster.master_url, flush=True)
        print(
            f"{cluster.workers} worker(s) of {cluster.cores} core(s) and {cluster.memory}; web "
            f"UI {cluster.webui_url}; logs in {cluster.work_dir}; Ctrl-C stops them",
            flush=True,
        )
        cluster.watch()
    except SparkClusterError as error:
        raise CommandLineError(str(error)) from None
    except (KeyboardInterrupt, _Stop):
        print("stopping the Spark workers and master", flush=True)
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)
        cluster.stop()
