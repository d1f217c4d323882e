"""Runs the demo's steps in order, shows their progress, and always stops what it started.

Exit statuses: 0 when every step passed; 1 when one failed (one line names the step, the
reason and where the logs are); 130 after Ctrl-C or SIGTERM. Whichever way it ends, every
process the demo started has been stopped (see ``processes.ProcessBook``) before it returns.

``demo.json`` in the data directory follows the run: each finished step with its time and
result, the status, and at the end where the audit reports and plots are.
"""

from __future__ import annotations

import logging
import signal
import tempfile
import time
import traceback
from pathlib import Path
from types import FrameType
from typing import Any

from rich.console import Console

from raftmeta.devkit.demo.context import DemoContext
from raftmeta.devkit.demo.display import StepDisplay, steps_table
from raftmeta.devkit.demo.errors import StepFailed
from raftmeta.devkit.demo.processes import ProcessBook
from raftmeta.devkit.demo.spark import STARTER
from raftmeta.devkit.demo.steps import SPARK_LOG, STEPS, Step, summary, write_json

STATE_FILE = "demo.json"
LOG_FILE = "demo.log"
INTERRUPT_STOP_DEADLINE_S = 3.0
"""After Ctrl-C, each group of processes gets this long to stop gracefully before SIGKILL."""


class DemoSetupError(Exception):
    """The demo cannot start at all (say, --data-dir is not empty); exit status 2."""


def prepare_root(data_dir: Path | None) -> Path:
    """A fresh directory: ``data_dir`` if it is empty or missing, else a new temporary one."""
    if data_dir is None:
        return Path(tempfile.mkdtemp(prefix="raftmeta-demo-"))
    root = data_dir.resolve()
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise DemoSetupError(f"--data-dir {data_dir} is not an empty directory")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise DemoSetupError(f"cannot create --data-dir {data_dir}: {error.strerror}") from None
    return root


def _log_into(path: Path) -> logging.Handler:
    """Send this process's log records (gRPC, py4j, Spark's Python side) to ``path``: the
    terminal belongs to the progress display."""
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.getLogger().addHandler(handler)
    return handler


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM ends the demo the way Ctrl-C does."""
    raise KeyboardInterrupt


class _Run:
    """One run's record: the finished steps and how it ended, mirrored into ``demo.json``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.rows: list[tuple[str, float, str]] = []
        self.status = "running"
        self.current = ""
        self.failure = ""
        self.started = time.monotonic()

    def save(self, ctx: DemoContext | None) -> None:
        state: dict[str, Any] = {
            "status": self.status,
            "current_step": self.current,
            "failure": self.failure,
            "seconds": round(time.monotonic() - self.started, 1),
            "steps": [
                {"title": title, "seconds": round(seconds, 2), "result": result}
                for title, seconds, result in self.rows
            ],
        }
        if ctx is not None:
            state.update(summary(ctx))
        write_json(self.root / STATE_FILE, state)


def _say(console: Console, text: str, style: str | None = None) -> None:
    """One line, never wrapped: paths must stay whole for a reader to copy them."""
    console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)


def run_live_demo(
    data_dir: Path | None,
    *,
    console: Console | None = None,
    errors: Console | None = None,
    steps: tuple[Step, ...] = STEPS,
    tls: bool = False,
) -> int:
    """Run ``steps``; progress goes to ``console``, the one failure line to ``errors``.
    ``tls``: the cluster and every client in it speak mutual TLS."""
    console = console or Console(highlight=False)
    errors = errors or Console(stderr=True, highlight=False)
    try:
        root = prepare_root(data_dir)
    except DemoSetupError as error:
        _say(errors, f"raftmeta demo: {error}", "red")
        return 2
    over = ", over mutual TLS" if tls else ""
    _say(console, f"raftmeta demo: a quorum, brokers, a failure and an audit{over}, in {root}")
    book = ProcessBook(root)
    run = _Run(root)
    log_handler = _log_into(root / LOG_FILE)
    if any(step.needs_spark for step in steps):
        STARTER.start(root / SPARK_LOG)
    ctx: DemoContext | None = None
    previous_int = signal.getsignal(signal.SIGINT)
    previous_term = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with StepDisplay(console) as display:
            ctx = DemoContext(root, display, book, tls=tls)
            run.save(ctx)
            for step in steps:
                run.current = step.title
                display.begin(step.title)
                try:
                    result = step.run(ctx)
                except StepFailed as error:
                    run.failure = str(error)
                except (
                    Exception
                ) as error:  # a bug must still stop everything and say so in one line
                    with (root / LOG_FILE).open("a") as log:
                        log.write(f"step {step.title!r} failed:\n{traceback.format_exc()}\n")
                    run.failure = f"{type(error).__name__}: {error} (traceback in {LOG_FILE})"
                if run.failure:
                    display.end(ok=False, note="failed")
                    break
                run.rows.append((step.title, display.end(ok=True, note=result), result))
                run.save(ctx)
        run.status = "failed" if run.failure else "ok"
    except KeyboardInterrupt:
        run.status = "interrupted"
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        deadline = INTERRUPT_STOP_DEADLINE_S if run.status != "ok" else 5.0
        try:
            if ctx is not None and ctx.view is not None:
                ctx.view.close()
            book.stop_everything(deadline)
            if run.status == "ok":
                STARTER.stop()
            else:
                # py4j may have been cut off mid-call; the JVM exits with this process anyway.
                STARTER.release_stderr()
        finally:
            signal.signal(signal.SIGINT, previous_int)
            signal.signal(signal.SIGTERM, previous_term)
            logging.getLogger().removeHandler(log_handler)
            log_handler.close()
        run.save(ctx)
    return _conclude(console, errors, run, ctx, book)


def _conclude(
    console: Console, errors: Console, run: _Run, ctx: DemoContext | None, book: ProcessBook
) -> int:
    stopped = len({id(e.child) for e in book.entries})
    if run.status == "interrupted":
        _say(
            errors,
            f"raftmeta demo interrupted during {run.current!r}; stopped {stopped} processes; "
            f"data in {run.root}",
        )
        return 130
    if run.status == "failed":
        _say(
            errors,
            f"raftmeta demo failed at step {run.current!r}: {run.failure}; logs in {run.root}",
            "red",
        )
        return 1
    console.print(steps_table(run.rows))
    total = time.monotonic() - run.started
    _say(console, f"Done in {total:.0f} s; every process stopped. Data in {run.root}")
    if ctx is not None:
        for label, outcome in ctx.audits.items():
            _say(console, f"  audit ({label}): {outcome.report}")
            for plot in outcome.plots:
                _say(console, f"    plot: {plot}")
        if "skewed" in ctx.audits:
            _say(console, f"  election plan: {ctx.audits['skewed'].plan}")
        if ctx.election_log is not None:
            _say(console, f"  election output: {ctx.election_log}")
        if "balanced" in ctx.audits:
            _say(console, f"  reassignment plan: {ctx.audits['balanced'].replicas.plan}")
        if ctx.reassignment_log is not None:
            _say(console, f"  reassign-partitions output: {ctx.reassignment_log}")
    return 0
