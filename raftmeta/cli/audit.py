"""``raftmeta audit PATH``: the leader-balance audit of snapshots and logs, on Spark.

Prints a table (or the JSON report with ``--format json``) and writes ``report.json``, the
plots and ``election-plan.json`` (for ``raftmeta leader-election --path-to-json-file``) to
``--out``. Spark runs locally unless ``--master`` or ``SPARK_MASTER`` names a cluster;
``--engine plain`` computes the same report in this process without Spark.

PATH may be a URI every executor can reach (``s3://bucket/clusters``, ``hdfs://...``,
``gs://...``; see :mod:`analytics.files`), as on a real cluster it must be: the files are
listed here and read on the executors. S3 takes the standard ``AWS_*`` variables
(``AWS_ENDPOINT_URL`` for an S3-compatible server), passed on to the executors.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from pathlib import Path
from typing import Any

from raftmeta.cli.errors import USAGE_ERROR, CommandLineError

DEFAULT_OUT = Path("raftmeta-audit")


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 100")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return value


def _spark_setting(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise argparse.ArgumentTypeError(f"not KEY=VALUE: {text!r}")
    return key.strip(), value


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "audit",
        help="leader balance, ISR health and election history of snapshots and logs (Spark)",
    )
    parser.add_argument(
        "path",
        help="a snapshot file, a node's metadata directory, or a folder of many clusters' "
        "(a local path, or a URI: file://, s3://bucket/prefix, hdfs://, gs://)",
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--threshold",
        type=_percent,
        default=None,
        metavar="PCT",
        help="leader.imbalance.per.broker.percentage to judge brokers by (default 10)",
    )
    parser.add_argument(
        "--max-moves",
        type=_positive,
        default=None,
        metavar="N",
        help="the most replica moves the reassignment plan may hold (default 1000)",
    )
    parser.add_argument(
        "--master", default=None, help="Spark master URL (default $SPARK_MASTER or local[*])"
    )
    parser.add_argument(
        "--conf",
        action="append",
        type=_spark_setting,
        default=[],
        metavar="KEY=VALUE",
        help="a Spark property for the session, as spark-submit's --conf (repeatable)",
    )
    parser.add_argument(
        "--engine",
        choices=("spark", "plain"),
        default="spark",
        help="plain: compute the same report in this process, without Spark",
    )
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="audit a damaged log as far as it is whole (the report's first line says what is "
        "missing) instead of failing",
    )
    parser.set_defaults(handler=run_audit)


def _spark_failure(error: Exception) -> str:
    """One line out of a Spark error, preferring the reader's own message."""
    text = str(error)
    match = re.search(r"AnalyticsInputError: ([^\n]+)", text)
    if match:
        return match.group(1).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return f"Spark job failed: {lines[0] if lines else type(error).__name__}"


def run_audit(args: argparse.Namespace) -> int:
    from rich.console import Console

    from analytics.integrity import check_sources
    from analytics.plain_audit import DEFAULT_THRESHOLD_PERCENT
    from analytics.sources import AnalyticsInputError, discover

    threshold = DEFAULT_THRESHOLD_PERCENT if args.threshold is None else args.threshold
    if args.out.exists() and not args.out.is_dir():
        raise CommandLineError(f"--out {args.out} is not a directory", USAGE_ERROR)
    try:
        checked = check_sources(discover(args.path), allow_partial=args.allow_partial)
    except AnalyticsInputError as error:
        raise CommandLineError(str(error)) from None
    except OSError as error:  # a device, a socket, a directory it may not read
        where = error.filename or args.path
        raise CommandLineError(
            f"{where}: not a snapshot, a metadata directory or a folder of them "
            f"({error.strerror or error})"
        ) from None
    status_console = Console(stderr=True)
    with status_console.status("starting") as status:

        def progress(message: str) -> None:
            status.update(message)

        try:
            if args.engine == "plain":
                report = _plain_report(args, threshold, progress)
            else:
                report = _spark_report(args, threshold, progress, checked.sources)
        except AnalyticsInputError as error:
            raise CommandLineError(str(error)) from None
        except OSError as error:
            raise CommandLineError(
                f"{error.filename or args.path}: cannot read it ({error.strerror or error})"
            ) from None
        if not report["clusters"]:
            damage = f": {checked.damage[0].describe()}" if checked.damage else ""
            raise CommandLineError(
                f"{args.path}: no readable metadata in {len(checked.sources)} source(s) "
                f"(every snapshot and log segment found is empty or damaged){damage}; "
                "nothing written"
            )
        if checked.damage:
            # First in the report, so neither a reader of the JSON nor of the table misses it.
            report = {"partial": [entry.partial_note() for entry in checked.damage], **report}
        from analytics.report import write_outputs

        progress(f"writing {args.out}")
        try:
            write_outputs(report, args.out, progress)
        except OSError as error:
            raise CommandLineError(f"{error.filename or args.out}: {error.strerror}") from None
    if args.format == "json":
        from analytics.report import report_document

        print(json.dumps(report_document(report), indent=2))
    else:
        from analytics.report import render_text

        console = Console()
        render_text(report, console.print)
        from analytics.report import plots_available

        if plots_available():
            what = "report, plots, election plan and reassignment plan"
        else:
            what = (
                "report, election plan and reassignment plan (no plots: matplotlib, of the "
                "spark extra, is absent)"
            )
        console.print(f"{len(checked.sources)} cluster(s); {what} in {args.out}")
    return 0


def _plain_report(args: argparse.Namespace, threshold: float, progress: Any) -> dict[str, Any]:
    from analytics.plain_audit import audit_path

    return audit_path(
        args.path,
        threshold_percent=threshold,
        progress=progress,
        allow_partial=args.allow_partial,
        max_moves=_max_moves(args),
    )


def _max_moves(args: argparse.Namespace) -> int:
    from placement.reassignment import DEFAULT_MAX_MOVES

    return DEFAULT_MAX_MOVES if args.max_moves is None else int(args.max_moves)


def _spark_report(
    args: argparse.Namespace, threshold: float, progress: Any, sources: list[Any]
) -> dict[str, Any]:
    try:
        import pyarrow  # noqa: F401  (the readers hand Spark Arrow batches)
        import pyspark  # noqa: F401
    except ImportError as error:
        raise CommandLineError(
            f"--engine spark needs {error.name}, of the spark extra "
            "(pip install 'raftmeta[spark]'); --engine plain needs neither",
            USAGE_ERROR,
        ) from None
    from analytics.session import resolve_master

    progress(f"starting Spark ({resolve_master(args.master)}) and planning the reads")
    from pyspark.sql import SparkSession

    # A session this process already runs (a notebook, a test) is used and left running.
    owned = SparkSession.getActiveSession() is None
    starting = _SessionStart(args.master, dict(args.conf))
    from analytics.audit import audit_frames, collect_report, plan_reads

    # The driver plans every read while the JVM starts: both take seconds, on different
    # threads. Input the planning rejects fails the audit without waiting for the session.
    planned = plan_reads(args.path, allow_partial=args.allow_partial, sources=sources)
    spark = starting.result()
    try:
        frames = audit_frames(
            spark,
            args.path,
            threshold_percent=threshold,
            allow_partial=args.allow_partial,
            max_moves=_max_moves(args),
            planned=planned,
        )
        return collect_report(frames, progress)
    except CommandLineError:
        raise
    except Exception as error:  # Spark wraps worker errors in its own exception types
        raise CommandLineError(_spark_failure(error)) from None
    finally:
        if owned:
            spark.stop()


class _SessionStart:
    """``get_spark`` on a thread of its own, so the driver can plan meanwhile. The thread is a
    daemon: an audit that fails before it needs the session exits without waiting for the
    JVM, which stops by itself when this process ends."""

    def __init__(self, master: str | None, settings: dict[str, str]) -> None:
        self._master = master
        self._settings = settings
        self._session: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._start, name="spark-start", daemon=True)
        self._thread.start()

    def _start(self) -> None:
        from analytics.session import get_spark

        try:
            self._session = get_spark(
                self._master, app_name="raftmeta audit", settings=self._settings
            )
        except BaseException as error:  # handed to the thread that waits for the session
            self._error = error

    def result(self) -> Any:
        """The session, or :class:`CommandLineError` in one line if Spark did not start."""
        from analytics.session import SparkUnavailableError

        self._thread.join()
        if isinstance(self._error, SparkUnavailableError):
            raise CommandLineError(str(self._error)) from None
        if self._error is not None:
            raise self._error
        return self._session
