"""The demo's one Spark session, started in the background while the cluster comes up.

Starting Spark (a JVM, then the session) takes seconds to tens of seconds; the audits need it
only after the cluster was built, skewed and snapshotted. So the runner asks for it first
thing, a thread starts it, and the first audit waits for it only if it is not ready yet.

The JVM inherits this process's stderr when it starts, and prints a warning or two there. The
starting thread points file descriptor 2 at a log file meanwhile, so those lines land in the
log, not across the progress display; ``release_stderr`` takes it back at once if the run
ends before Spark is up, so the final line still reaches the terminal.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from raftmeta.devkit.demo.errors import StepFailed

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


log = logging.getLogger(__name__)

WARM_UP_SNAPSHOT_DEADLINE_S = 10.0
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
"""For a JVM that lives a minute and audits a few hundred rows: the quick JIT only and the
simplest collector. Measured on 2 cores, this halves the JVM's CPU time over the demo's two
audits (90 s to 46 s) and its wall time by a quarter. Set JAVA_TOOL_OPTIONS to override."""


class _StderrSwap:
    """File descriptor 2 pointed at a file, and put back exactly once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._saved: int | None = None

    def into(self, path: Path) -> None:
        with self._lock:
            if self._saved is not None:
                return
            sys.stderr.flush()
            self._saved = os.dup(2)
            with path.open("ab") as log:
                os.dup2(log.fileno(), 2)

    def restore(self) -> None:
        with self._lock:
            if self._saved is None:
                return
            sys.stderr.flush()
            os.dup2(self._saved, 2)
            os.close(self._saved)
            self._saved = None


class SparkStarter:
    """Starts the session once, before the cluster steps; warms it up in a thread while they
    run, and hands it out when ready."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._session: SparkSession | None = None
        self._error: str | None = None
        self._stderr = _StderrSwap()
        self._warm_up_with: Callable[[], Path | None] | None = None
        self._warm_up_decided = threading.Event()
        """Set once a warm-up snapshot was offered, or the session is wanted without one."""

    @staticmethod
    def available() -> bool:
        return importlib.util.find_spec("analytics.session") is not None

    def start(self, jvm_log: Path) -> None:
        """Begin starting Spark; does nothing if it is already started or not installed."""
        if self._thread is not None or not self.available():
            return
        os.environ.setdefault("JAVA_TOOL_OPTIONS", JVM_OPTIONS)
        # The JVM starts here, before the demo's first gRPC call, not in the thread: pyspark
        # forks it through a preexec_fn, and that fork in a process whose gRPC threads are
        # busy can kill the child before it execs (JAVA_GATEWAY_EXITED, seen in a test run).
        self._open(jvm_log)
        self._thread = threading.Thread(
            target=self._warm_up_if_started, name="raftmeta-demo-spark", daemon=True
        )
        self._thread.start()

    def _warm_up_if_started(self) -> None:
        if self._session is not None:
            self._warm_up(self._session)

    def _open(self, jvm_log: Path) -> None:
        from analytics.session import SparkUnavailableError, get_spark

        self._stderr.into(jvm_log)
        try:
            self._session = get_spark()
        except SparkUnavailableError as error:
            self._error = f"{error} (see {jvm_log})"
        except Exception as error:  # anything else from py4j: one line, the step says which
            self._error = f"Spark did not start: {type(error).__name__}: {error}"
        finally:
            self._stderr.restore()

    def offer_warm_up(self, find_snapshot: Callable[[], Path | None]) -> None:
        """Let the starting thread audit a first snapshot once Spark is up, results thrown
        away, while the cluster steps go on: the first audit of a fresh JVM spends most of its
        time compiling and loading, and this way the real one does not."""
        self._warm_up_with = find_snapshot
        self._warm_up_decided.set()

    def _warm_up(self, spark: SparkSession) -> None:
        self._warm_up_decided.wait()
        find_snapshot = self._warm_up_with
        if find_snapshot is None:
            return
        give_up = time.monotonic() + WARM_UP_SNAPSHOT_DEADLINE_S
        snapshot = find_snapshot()
        while snapshot is None and time.monotonic() < give_up and self._warm_up_with:
            time.sleep(0.1)
            snapshot = find_snapshot()
        if snapshot is None:
            return
        from analytics.audit import audit_frames, collect_report

        try:
            collect_report(audit_frames(spark, str(snapshot)))
        except Exception:  # the real audit will report whatever is wrong, in its step
            log.warning("the warm-up audit of %s failed", snapshot, exc_info=True)

    def session(self, jvm_log: Path) -> SparkSession:
        """The session, waiting for the start (and any warm-up) under way, or starting it."""
        self.start(jvm_log)
        if self._thread is None:
            raise StepFailed("the Spark audit is not available (install the spark extra)")
        if not self._warm_up_decided.is_set():
            self._warm_up_with = None
            self._warm_up_decided.set()
        self._thread.join()
        if self._session is None:
            raise StepFailed(self._error or "Spark did not start")
        return self._session

    def release_stderr(self) -> None:
        """Give file descriptor 2 back now, even if Spark is still starting."""
        self._stderr.restore()

    def stop(self) -> None:
        """Stop the session if it is up, so the JVM exits with the demo; a start still under
        way is left alone (its JVM exits when this process does: it watches its stdin)."""
        self.release_stderr()
        if self._session is not None:
            self._session.stop()
            self._session = None


STARTER = SparkStarter()
