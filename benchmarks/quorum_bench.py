"""A three-process quorum on loopback: throughput, commit latency and failover, against PySyncObj.

Each system runs as three OS processes on 127.0.0.1 with their logs in a temporary directory.
raftmeta runs on its shipped defaults, fsync on every flush; PySyncObj runs with its file
journal, which it never fsyncs. The node scripts in ``benchmarks/quorum_nodes/`` take timings
inside the leader process (from append to the commit callback), so the control channel between
this driver and the nodes adds nothing to them. Per run and system:

(a) committed records/s: one-record appends of 100 bytes, many in flight at once;
(b) commit latency p50/p99: a serial client (one append at a time, waiting for its commit),
    then an open-loop client at a light steady rate;
(c) time from ``kill -9`` of the leader to the first commit under the next leader, and the same
    after a graceful stop (SIGTERM: raftmeta resigns and sends EndQuorumEpoch, PySyncObj asks a
    follower to campaign with ``transferLeadership``). The time is from just before the signal
    to the commit of one record that the next leader appends as soon as it leads;
(d) the same figures for PySyncObj, with the ratios.

Figures are medians over runs (failover: over every failover of every run).

Run: ``.venv/bin/python benchmarks/quorum_bench.py [--runs 3] [--quick]``

``--transport both`` runs raftmeta alone on its two Raft transports in one run, interleaved per
run: a grpc.aio unary call per message against framed messages on one long-lived connection per
peer; it prints both side by side with stream/grpc ratios (serial commit p50/p99, records/s, CPU
per commit of all three voters) into ``results/transport_bench.txt``. ``--transport grpc`` or
``stream`` picks raftmeta's transport for the other modes.

``--write-path`` runs raftmeta alone in its two batching modes in one run, interleaved per run:
the fixed 1 ms linger (``--fixed-linger`` on the node) against adaptive batching, and prints the
ratios; results go to ``results/write_path_bench.txt``.

``--failover`` runs raftmeta alone and times leader changes only, each printed: per run, a
cycle of kill -9 of the leader, a graceful stop (SIGTERM) of the next leader (so it follows a
crash and restart), and a graceful stop of a settled quorum's leader, repeated ``--samples``
times; the stopped node is restarted after each. ``--baseline DIR`` runs the same against the
node script of another source tree (an older commit's ``git archive``), interleaved per run,
and prints both with the ratios; results go to ``results/failover_bench.txt``.

``--breakdown`` runs raftmeta alone with every node tracing its write path, makes serial
appends and prints where a commit's time goes, stage by stage across the three processes
(``benchmarks/commit_breakdown.py``); results go to ``results/commit_breakdown.txt``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import queue
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.commit_breakdown import breakdown
from benchmarks.machine import Report
from raftmeta.devkit.ports import free_ports
from raftmeta.quorum.event_loop import loop_name
from raftmeta.quorum.transport_choice import TRANSPORTS

TRANSPORT_CHOICES = TRANSPORTS
"""gRPC first: the stream is compared against it."""

ROOT = Path(__file__).resolve().parent.parent
NODES_DIR = Path(__file__).resolve().parent / "quorum_nodes"
RESULTS = Path(__file__).resolve().parent / "results" / "quorum_bench.txt"
COMMAND_TIMEOUT_S = 180.0
LEADER_TIMEOUT_S = 30.0
FAILOVER_TIMEOUT_S = 20.0

SYSTEMS = ("raftmeta", "PySyncObj")


@dataclass(frozen=True)
class Load:
    throughput_records: int
    window: int
    serial_count: int
    rate_per_s: float
    rate_seconds: float
    failovers: int
    """Failovers of each kind (kill -9, graceful) per run and system."""


FULL = Load(20_000, 1_000, 500, 200.0, 5.0, 2)
QUICK = Load(4_000, 1_000, 200, 200.0, 2.0, 1)


class NodeProcess:
    """One node process and its line-per-command control channel."""

    def __init__(self, name: str, argv: Sequence[str], log_path: Path) -> None:
        self.name = name
        self.argv = list(argv)
        self.log_path = log_path
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._log: IO[bytes] = open(log_path, "ab")  # noqa: SIM115 - closed in close()
        self.process = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            bufsize=1,
        )
        threading.Thread(target=self._read, daemon=True).start()
        started = self._next_line(LEADER_TIMEOUT_S)
        if started.get("event") != "started":
            raise RuntimeError(f"{name} did not start: {started}")

    @property
    def pid(self) -> int:
        return self.process.pid

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        for line in stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _next_line(self, timeout: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise RuntimeError(f"{self.name}: no answer in {timeout:.0f} s") from None
        if line is None:
            raise RuntimeError(f"{self.name} exited; see {self.log_path}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"{self.name}: {answer['error']}")
        return answer

    def call(self, cmd: str, timeout: float = COMMAND_TIMEOUT_S, **args: Any) -> dict[str, Any]:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(json.dumps({"cmd": cmd, **args}) + "\n")
        stdin.flush()
        return self._next_line(timeout)

    def alive(self) -> bool:
        return self.process.poll() is None

    def signal(self, signum: int) -> None:
        os.kill(self.process.pid, signum)

    def wait(self, timeout: float = 10.0) -> None:
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()

    def close(self) -> None:
        """Close stdin (the node stops on end of input), then wait."""
        if self.alive():
            with contextlib.suppress(OSError, ValueError):
                assert self.process.stdin is not None
                self.process.stdin.close()
        self.wait()


class Quorum:
    """Three node processes of one system, which can be killed and restarted one at a time."""

    def __init__(
        self,
        system: str,
        root: Path,
        linger_ms: int | None = None,
        extra_args: Sequence[str] = (),
        source_root: Path = ROOT,
    ) -> None:
        """``source_root``: the source tree whose raftmeta node script runs (another tree
        for an A/B comparison against older code)."""
        self.system = system
        self.source_root = source_root
        self.linger_ms = linger_ms
        self.extra_args = list(extra_args)
        self.root = root
        self.ports = free_ports(3)
        self.nodes: dict[int, NodeProcess] = {}
        self.signalled_at = 0.0
        """Wall-clock time of the last failover's signal, to find it in the node logs."""

    def argv(self, index: int) -> list[str]:
        python = sys.executable
        addresses = [f"127.0.0.1:{port}" for port in self.ports]
        if self.system == "raftmeta":
            voters = ",".join(f"{i + 1}={address}" for i, address in enumerate(addresses))
            linger = [] if self.linger_ms is None else ["--linger-ms", str(self.linger_ms)]
            return [
                python,
                str(self.source_root / "benchmarks" / "quorum_nodes" / "raftmeta_node.py"),
                "--node-id",
                str(index + 1),
                "--data-dir",
                str(self.root / f"node-{index + 1}"),
                "--voters",
                voters,
                *linger,
                *self.extra_args,
            ]
        others = ",".join(a for i, a in enumerate(addresses) if i != index)
        return [
            python,
            str(NODES_DIR / "pysyncobj_node.py"),
            "--address",
            addresses[index],
            "--others",
            others,
            "--journal",
            str(self.root / f"node-{index + 1}.journal"),
        ]

    def start(self, index: int) -> None:
        self.nodes[index] = NodeProcess(
            f"{self.system} node {index + 1}",
            self.argv(index),
            self.root / f"node-{index + 1}.log",
        )

    def start_all(self) -> None:
        for index in range(3):
            self.start(index)

    def leader(self, timeout: float = LEADER_TIMEOUT_S) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for index, node in self.nodes.items():
                if node.alive() and node.call("status").get("leader"):
                    return index
            time.sleep(0.02)
        raise RuntimeError(f"{self.system}: no leader within {timeout:.0f} s")

    def wait_caught_up(self, timeout: float = LEADER_TIMEOUT_S) -> int:
        """Wait until every node has applied what the leader had committed; returns the leader."""
        leader = self.leader(timeout)
        target = self.nodes[leader].call("status")["committed"]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            behind = [n for n in self.nodes.values() if n.call("status")["committed"] < target]
            if not behind:
                return leader
            time.sleep(0.02)
        raise RuntimeError(f"{self.system}: a node did not catch up within {timeout:.0f} s")

    def failover(self, kind: str) -> float | None:
        """Stop the leader (SIGKILL or SIGTERM); ms until the next leader's first commit."""
        leader = self.wait_caught_up()
        survivors = [node for index, node in self.nodes.items() if index != leader]
        for node in survivors:
            node.call("arm")
        old = self.nodes.pop(leader)
        began = time.monotonic()
        self.signalled_at = time.time()
        old.signal(signal.SIGKILL if kind == "kill" else signal.SIGTERM)
        elapsed: float | None = None
        deadline = began + FAILOVER_TIMEOUT_S
        while elapsed is None and time.monotonic() < deadline:
            time.sleep(0.02)
            for node in survivors:
                commit_at = node.call("failover")["commit_at"]
                if commit_at is not None:
                    elapsed = (commit_at - began) * 1000
                    break
        old.wait()
        self.start(leader)
        return elapsed

    def cpu_seconds(self) -> float:
        """CPU time the three node processes have used so far, all their threads included."""
        return float(sum(node.call("cpu")["cpu_s"] for node in self.nodes.values()))

    def close(self) -> None:
        for node in self.nodes.values():
            node.close()
        self.nodes.clear()


@dataclass
class Figures:
    records_per_s: list[float] = field(default_factory=list)
    cpu_s_per_10k: list[float] = field(default_factory=list)
    serial_p50: list[float] = field(default_factory=list)
    serial_p99: list[float] = field(default_factory=list)
    serial_cpu_ms: list[float] = field(default_factory=list)
    rate_p50: list[float] = field(default_factory=list)
    rate_p99: list[float] = field(default_factory=list)
    kill_ms: list[float] = field(default_factory=list)
    graceful_ms: list[float] = field(default_factory=list)
    failed_failovers: int = 0


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    rank = min(len(ordered) - 1, max(0, round(fraction * len(ordered) + 0.5) - 1))
    return ordered[rank]


def run_system(
    system: str,
    load: Load,
    figures: Figures,
    log: Callable[[str], None],
    extra_args: Sequence[str] = (),
    label: str | None = None,
) -> None:
    label = label or system
    with tempfile.TemporaryDirectory(prefix=f"quorum-bench-{system}-") as tmp:
        quorum = Quorum(system, Path(tmp), extra_args=extra_args)
        try:
            quorum.start_all()
            leader = quorum.wait_caught_up()
            node = quorum.nodes[leader]
            node.call("serial", count=20)  # warm up connections and code paths
            result = node.call("throughput", total=load.throughput_records, window=load.window)
            if result["failures"]:
                raise RuntimeError(f"{system}: {result['failures']} appends failed")
            figures.records_per_s.append(result["records"] / result["seconds"])
            figures.cpu_s_per_10k.append(result["cpu_seconds"] / result["records"] * 10_000)
            cpu_before = quorum.cpu_seconds()
            serial = node.call("serial", count=load.serial_count)["latencies_ms"]
            cpu = quorum.cpu_seconds() - cpu_before
            figures.serial_cpu_ms.append(cpu / load.serial_count * 1000)
            figures.serial_p50.append(percentile(serial, 0.50))
            figures.serial_p99.append(percentile(serial, 0.99))
            rate = node.call("rate", per_s=load.rate_per_s, seconds=load.rate_seconds)
            figures.rate_p50.append(percentile(rate["latencies_ms"], 0.50))
            figures.rate_p99.append(percentile(rate["latencies_ms"], 0.99))
            log(
                f"  {label}: {figures.records_per_s[-1]:,.0f} records/s, serial p50/p99 "
                f"{figures.serial_p50[-1]:.2f}/{figures.serial_p99[-1]:.2f} ms, "
                f"{load.rate_per_s:.0f}/s p50/p99 {figures.rate_p50[-1]:.2f}/"
                f"{figures.rate_p99[-1]:.2f} ms"
            )
            for _ in range(load.failovers):
                for kind, into in (("kill", figures.kill_ms), ("graceful", figures.graceful_ms)):
                    elapsed = quorum.failover(kind)
                    if elapsed is None:
                        # Counted at the give-up time, so the median is not flattered.
                        figures.failed_failovers += 1
                        into.append(FAILOVER_TIMEOUT_S * 1000)
                        log(f"  {label}: {kind} failover: no commit in {FAILOVER_TIMEOUT_S} s")
                    else:
                        into.append(elapsed)
                        log(f"  {label}: {kind} failover {elapsed:.0f} ms")
        finally:
            quorum.close()


FAILOVER_CYCLE = (
    ("kill", "kill -9"),
    ("graceful", "graceful, after a crash and restart"),
    ("graceful", "graceful, settled quorum"),
)
"""One cycle of ``--failover``: each stopped leader is restarted before the next step."""


@dataclass
class FailoverFigures:
    kill_ms: list[float] = field(default_factory=list)
    graceful_ms: list[tuple[str, float]] = field(default_factory=list)
    """(which handover, ms) in the order taken."""


def run_failovers(
    root: Path,
    samples: int,
    figures: FailoverFigures,
    log: Callable[[str], None],
    extra_args: Sequence[str],
    label: str,
    keep_logs: Path | None,
) -> None:
    with tempfile.TemporaryDirectory(prefix="quorum-bench-failover-") as tmp:
        logs = Path(tmp)
        if keep_logs is not None:
            logs = Path(tempfile.mkdtemp(prefix=f"{label}-", dir=keep_logs))
            log(f"  {label}: node logs in {logs}")
        quorum = Quorum("raftmeta", logs, extra_args=extra_args, source_root=root)
        try:
            quorum.start_all()
            leader = quorum.wait_caught_up()
            quorum.nodes[leader].call("serial", count=20)  # warm up connections
            for _ in range(samples):
                for kind, name in FAILOVER_CYCLE:
                    elapsed = quorum.failover(kind)
                    if elapsed is None:
                        elapsed = FAILOVER_TIMEOUT_S * 1000
                        log(f"  {label}: {name}: no commit in {FAILOVER_TIMEOUT_S:.0f} s")
                    else:
                        at = time.strftime("%H:%M:%S", time.localtime(quorum.signalled_at))
                        millis = int(quorum.signalled_at * 1000) % 1000
                        log(f"  {label}: {name}: {elapsed:.0f} ms (signal at {at},{millis:03d})")
                    if kind == "kill":
                        figures.kill_ms.append(elapsed)
                    else:
                        figures.graceful_ms.append((name, elapsed))
        finally:
            quorum.close()


def failovers(args: argparse.Namespace) -> int:
    """``--failover``: leader changes only, every sample printed, optionally A/B."""
    report = Report(RESULTS.with_name("failover_bench.txt"))
    out = report.out
    report.start()
    sides: dict[str, Path] = {}
    if args.baseline is not None:
        sides["before"] = Path(args.baseline).resolve()
    sides["after" if args.baseline is not None else "raftmeta"] = ROOT
    transport = args.transport or "stream"
    out(
        f"three raftmeta voter processes on 127.0.0.1, transport {transport}, shipped timeouts; "
        f"per run {args.samples} cycles of: kill -9 of the leader, graceful stop (SIGTERM) of "
        "the next leader, graceful stop of the settled quorum's leader; each stopped node is "
        "restarted at once. Time: from just before the signal to the commit of one record "
        "the next leader appends as soon as it leads (taken in that process)"
    )
    for side, root in sides.items():
        out(f"{side}: node script from {root}")
    results = {side: FailoverFigures() for side in sides}
    keep = None if args.keep_logs is None else Path(args.keep_logs)
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    progress: list[str] = []
    for run in range(args.runs):
        print(f"run {run + 1}/{args.runs}", flush=True)
        for side, root in sides.items():
            run_failovers(
                root, args.samples, results[side], progress.append, args.node_args, side, keep
            )
            for line in progress:
                print(line, flush=True)
            progress.clear()
    out("")
    for side, figures in results.items():
        kills = figures.kill_ms
        out(
            f"{side}: kill -9 -> first new commit: median {statistics.median(kills):.0f} ms over "
            f"{len(kills)} samples, max {max(kills):.0f}: " + ", ".join(f"{k:.0f}" for k in kills)
        )
        for name in dict.fromkeys(name for name, _ in figures.graceful_ms):
            taken = [ms for n, ms in figures.graceful_ms if n == name]
            over = sum(1 for ms in taken if ms > 60)
            out(
                f"{side}: {name} -> first new commit: {len(taken)} samples, median "
                f"{statistics.median(taken):.0f} ms, max {max(taken):.0f}, {over} over 60 ms: "
                + ", ".join(f"{ms:.0f}" for ms in taken)
            )
    if "before" in results:
        before, after = results["before"], results["after"]
        ratio = statistics.median(after.kill_ms) / statistics.median(before.kill_ms)
        out(f"kill -9 median after/before: {ratio:.2f}x")
        worst_before = max(ms for _, ms in before.graceful_ms)
        worst_after = max(ms for _, ms in after.graceful_ms)
        out(f"worst graceful handover: before {worst_before:.0f} ms, after {worst_after:.0f} ms")
    out(f"sides interleaved per run; {args.runs} runs")
    report.save()
    return 0


def ensure_pysyncobj() -> None:
    if importlib.util.find_spec("pysyncobj") is not None:
        return
    pip = Path(sys.executable).parent / "pip"
    command = [str(pip)] if pip.exists() else [sys.executable, "-m", "pip"]
    print("installing pysyncobj into the running Python's environment", flush=True)
    subprocess.run([*command, "install", "--quiet", "pysyncobj"], check=True)


def median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def table(results: dict[str, Figures], load: Load, runs: int) -> Iterator[str]:
    ours, theirs = results["raftmeta"], results["PySyncObj"]

    def fmt(value: float | None, unit: str) -> str:
        if value is None:
            return "-"
        return f"{value:,.0f}" if unit == "/s" or value >= 100 else f"{value:.2f}"

    rows: list[tuple[str, str, list[float], list[float], float | None]] = [
        # label, unit, raftmeta, PySyncObj, latency target in ms
        (
            f"(a) committed records/s, {load.window} in flight",
            "/s",
            ours.records_per_s,
            theirs.records_per_s,
            None,
        ),
        ("    leader CPU-s per 10k records", "s", ours.cpu_s_per_10k, theirs.cpu_s_per_10k, None),
        ("(b) serial commit p50", "ms", ours.serial_p50, theirs.serial_p50, 3.0),
        ("    serial commit p99", "ms", ours.serial_p99, theirs.serial_p99, 10.0),
        (
            "    CPU-ms per serial commit, 3 processes",
            "ms",
            ours.serial_cpu_ms,
            theirs.serial_cpu_ms,
            None,
        ),
        (
            f"    {load.rate_per_s:.0f}/s commit p50",
            "ms",
            ours.rate_p50,
            theirs.rate_p50,
            None,
        ),
        (f"    {load.rate_per_s:.0f}/s commit p99", "ms", ours.rate_p99, theirs.rate_p99, None),
        ("(c) kill -9 -> first new commit", "ms", ours.kill_ms, theirs.kill_ms, 1000.0),
        (
            "    graceful stop -> first new commit",
            "ms",
            ours.graceful_ms,
            theirs.graceful_ms,
            100.0,
        ),
    ]
    yield (f"{'figure (median)':<40} {'raftmeta':>10} {'PySyncObj':>10} {'ratio':>7}  target")
    for label, unit, mine, other, target in rows:
        a, b = median(mine), median(other)
        ratio = f"{a / b:.2f}x" if a is not None and b else "-"
        verdict = ""
        if label.startswith("(a)"):
            if a is not None and b is not None:
                verdict = (
                    "met (>= PySyncObj)"
                    if a >= b
                    else f"MISSED by {b - a:,.0f}/s ({(b - a) / b:.0%} below PySyncObj)"
                )
        elif target is not None and a is not None:
            verdict = (
                f"<= {target:g} ms: met"
                if a <= target
                else f"<= {target:g} ms: MISSED by {a - target:.1f} ms ({a / target:.1f}x)"
            )
        yield f"{label:<40} {fmt(a, unit):>10} {fmt(b, unit):>10} {ratio:>7}  {verdict}".rstrip()
    for name, figures in results.items():
        for label, samples in (("kill -9", figures.kill_ms), ("graceful", figures.graceful_ms)):
            if samples:
                slow = sum(1 for sample in samples if sample > 1000)
                yield (
                    f"{name} {label} failover: {len(samples)} samples, min {min(samples):.0f} ms, "
                    f"max {max(samples):.0f} ms, {slow} over 1 s: "
                    + ", ".join(f"{sample:.0f}" for sample in samples)
                )
        if figures.failed_failovers:
            yield (
                f"{name}: {figures.failed_failovers} failovers saw no commit within "
                f"{FAILOVER_TIMEOUT_S:.0f} s (counted as {FAILOVER_TIMEOUT_S:.0f} s above)"
            )
    yield f"ratio = raftmeta / PySyncObj; latencies and records/s are medians over {runs} runs"


WRITE_PATH_MODES: dict[str, list[str]] = {
    "fixed linger (before)": ["--fixed-linger"],
    "adaptive (after)": [],
}
"""The two batching modes of ``--write-path``: every batch waits the 1 ms linger, against
group commit (a batch goes at once when nothing is in flight)."""


def compare_table(
    results: dict[str, Figures], before_label: str, after_label: str, load: Load
) -> Iterator[str]:
    """Two raftmeta modes side by side: each figure, and after/before as a ratio."""
    before, after = results[before_label], results[after_label]
    rows: list[tuple[str, list[float], list[float], bool]] = [
        # label, before, after, higher is better
        (
            f"committed records/s, {load.window} in flight",
            before.records_per_s,
            after.records_per_s,
            True,
        ),
        ("leader CPU-s per 10k records", before.cpu_s_per_10k, after.cpu_s_per_10k, False),
        ("serial commit p50 ms", before.serial_p50, after.serial_p50, False),
        ("serial commit p99 ms", before.serial_p99, after.serial_p99, False),
        ("CPU-ms per serial commit, 3 processes", before.serial_cpu_ms, after.serial_cpu_ms, False),
        (f"{load.rate_per_s:.0f}/s commit p50 ms", before.rate_p50, after.rate_p50, False),
        (f"{load.rate_per_s:.0f}/s commit p99 ms", before.rate_p99, after.rate_p99, False),
        ("kill -9 -> first new commit ms", before.kill_ms, after.kill_ms, False),
        ("graceful stop -> first new commit ms", before.graceful_ms, after.graceful_ms, False),
    ]
    ratio_title = f"{after_label}/{before_label}"
    yield (
        f"{'figure (median)':<40} {before_label:>10} {after_label:>10} "
        f"{ratio_title:>{max(13, len(ratio_title))}}"
    )
    for label, old, new, higher_better in rows:
        a, b = median(old), median(new)
        if a is None or b is None:
            continue
        ratio = b / a if a else float("nan")
        better = (b >= a) if higher_better else (b <= a)
        text = f"{b:,.0f}" if b >= 100 else f"{b:.2f}"
        old_text = f"{a:,.0f}" if a >= 100 else f"{a:.2f}"
        verdict = "better" if better else "WORSE"
        yield (
            f"{label:<40} {old_text:>10} {text:>10} "
            f"{ratio:>{max(13, len(ratio_title)) - 1}.2f}x  {verdict}"
        )
    for name, figures in results.items():
        if figures.graceful_ms:
            samples = figures.graceful_ms
            yield (
                f"{name} graceful handovers (each follows a kill -9 and restart of the previous "
                f"leader): {len(samples)} samples, max {max(samples):.0f} ms: "
                + ", ".join(f"{sample:.0f}" for sample in samples)
            )


def write_path_table(results: dict[str, Figures], load: Load, runs: int) -> Iterator[str]:
    before, after = WRITE_PATH_MODES
    yield from compare_table(results, before, after, load)
    yield (
        f"before = every batch waits controller.quorum.append.linger.ms (1 ms); after = group "
        f"commit, linger only an upper bound; medians over {runs} runs, modes interleaved per run"
    )


def transports(args: argparse.Namespace, load: Load) -> int:
    """``--transport both``: the gRPC and stream transports side by side in one run."""
    report = Report(RESULTS.with_name("transport_bench.txt"))
    out = report.out
    report.start()
    out(
        "three raftmeta voter processes on 127.0.0.1, 100-byte records, fsync on every flush, "
        f"event loop {loop_name()}; {load.throughput_records:,} appends with {load.window} in "
        f"flight, {load.serial_count} serial appends through the embedded append API (timed in "
        f"the leader), {load.failovers} kill -9 and {load.failovers} graceful failovers per run"
    )
    out(
        "grpc: one grpc.aio unary call per Raft message; stream: framed messages on one "
        "long-lived TCP connection per peer pair (controller.quorum.transport)"
    )
    results = {transport: Figures() for transport in TRANSPORT_CHOICES}
    progress: list[str] = []
    for run in range(args.runs):
        print(f"run {run + 1}/{args.runs}", flush=True)
        for transport in TRANSPORT_CHOICES:
            extra = [*args.node_args, "--transport", transport]
            run_system("raftmeta", load, results[transport], progress.append, extra, transport)
            for line in progress:
                print(line, flush=True)
            progress.clear()
    out("")
    for line in compare_table(results, *TRANSPORT_CHOICES, load):
        out(line)
    out(
        f"ratio = stream / grpc; medians over {args.runs} runs, transports interleaved per run; "
        "CPU per serial commit counts all three voter processes"
    )
    report.save()
    return 0


def write_path(args: argparse.Namespace, load: Load) -> int:
    report = Report(RESULTS.with_name("write_path_bench.txt"))
    out = report.out
    report.start()
    out(
        "three raftmeta voter processes on 127.0.0.1, 100-byte records, fsync on every flush; "
        f"{load.throughput_records:,} appends with {load.window} in flight, "
        f"{load.serial_count} serial appends through the embedded append API (timed in the "
        f"leader), {load.failovers} kill -9 and {load.failovers} graceful failovers per run"
    )
    results = {label: Figures() for label in WRITE_PATH_MODES}
    progress: list[str] = []
    for run in range(args.runs):
        print(f"run {run + 1}/{args.runs}", flush=True)
        for label, extra in WRITE_PATH_MODES.items():
            extra = [*args.node_args, *extra]
            run_system("raftmeta", load, results[label], progress.append, extra, label)
            for line in progress:
                print(line, flush=True)
            progress.clear()
    out("")
    for line in write_path_table(results, load, args.runs):
        out(line)
    report.save()
    return 0


def commit_breakdown(args: argparse.Namespace, load: Load) -> int:
    """``--breakdown``: the stages of serial commits, timed in all three processes."""
    report = Report(RESULTS.with_name("commit_breakdown.txt"))
    out = report.out
    report.start()
    out(
        "three raftmeta voter processes on 127.0.0.1 with --trace, 100-byte records, fsync on "
        f"every flush, event loop {loop_name()}; {load.serial_count} serial appends per run "
        "through the embedded append API"
    )
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="quorum-bench-breakdown-") as temp:
            quorum = Quorum("raftmeta", Path(temp), extra_args=[*args.node_args, "--trace"])
            try:
                quorum.start_all()
                leader = quorum.wait_caught_up()
                quorum.nodes[leader].call("serial", count=50)
                for node in quorum.nodes.values():
                    node.call("trace", action="start")
                quorum.nodes[leader].call("serial", count=load.serial_count)
                events = {
                    index: [tuple(event) for event in node.call("trace", action="take")["events"]]
                    for index, node in quorum.nodes.items()
                }
            finally:
                quorum.close()
        out("")
        out(f"run {run + 1}/{args.runs}")
        for line in breakdown(leader, events):
            out(line)
    report.save()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per system (median is shown)")
    parser.add_argument("--quick", action="store_true", help="smaller phases, one failover each")
    parser.add_argument(
        "--write-path",
        action="store_true",
        help="raftmeta only: fixed 1 ms linger against adaptive batching (group commit), "
        "both in one run",
    )
    parser.add_argument(
        "--transport",
        choices=(*TRANSPORT_CHOICES, "both"),
        help="raftmeta's Raft transport (default: the shipped one, stream); both: raftmeta "
        "alone, gRPC against the stream side by side in one run",
    )
    parser.add_argument(
        "--failover",
        action="store_true",
        help="raftmeta only: time kill -9 failovers and graceful handovers, every sample printed",
    )
    parser.add_argument(
        "--samples", type=int, default=4, help="--failover: cycles per run (default 4)"
    )
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="--failover: also run the node script of this source tree (older code), "
        "interleaved per run, and print the ratios",
    )
    parser.add_argument(
        "--keep-logs",
        metavar="DIR",
        help="--failover: keep each quorum's node logs and data under DIR",
    )
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="raftmeta only: where a serial commit's time goes, stage by stage, timed in all "
        "three processes",
    )
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.samples < 1:
        parser.error("--samples must be at least 1")
    if args.baseline is not None and not args.failover:
        parser.error("--baseline goes with --failover")
    if (
        args.baseline is not None
        and not (Path(args.baseline) / "benchmarks" / "quorum_nodes" / "raftmeta_node.py").is_file()
    ):
        parser.error(f"--baseline {args.baseline}: no benchmarks/quorum_nodes/raftmeta_node.py")
    load = QUICK if args.quick else FULL
    single = args.transport not in (None, "both")
    args.node_args = ["--transport", args.transport] if single else []
    if args.failover:
        if args.transport == "both":
            parser.error("--failover times one transport; give it one --transport")
        return failovers(args)
    if args.transport == "both":
        if args.write_path:
            parser.error("--write-path compares batching; give it one --transport")
        return transports(args, load)
    if args.write_path:
        return write_path(args, load)
    if args.breakdown:
        return commit_breakdown(args, load)
    ensure_pysyncobj()

    report = Report(RESULTS)
    out = report.out
    report.start()
    out(
        "three local processes per system on 127.0.0.1, 100-byte records; "
        f"{load.throughput_records:,} appends with {load.window} in flight, "
        f"{load.serial_count} serial appends, {load.rate_per_s:.0f}/s for {load.rate_seconds:g} s, "
        f"{load.failovers} kill -9 and {load.failovers} graceful failovers per run"
    )
    out(
        "raftmeta: shipped defaults (election timeout 300 ms, fetch timeout 500 ms, linger 1 ms), "
        "fsync of the log on every flush on every voter"
    )
    out(
        "PySyncObj: file journal on its defaults (raftMinTimeout 0.4 s, raftMaxTimeout 1.4 s); "
        "PySyncObj does NOT fsync its journal, so its figures are for a log a power loss can lose"
    )
    out(
        "PySyncObj ships new entries to followers on its appendEntriesPeriod tick (0.1 s), "
        "which sets its commit latency"
    )
    out(
        "failover: from just before the signal to the commit of one record the next leader "
        "appends as soon as it knows it leads (measured in that process)"
    )
    results = {system: Figures() for system in SYSTEMS}
    progress: list[str] = []
    for run in range(args.runs):
        print(f"run {run + 1}/{args.runs}", flush=True)
        for system in SYSTEMS:
            extra = args.node_args if system == "raftmeta" else []
            run_system(system, load, results[system], progress.append, extra)
            for line in progress:
                print(line, flush=True)
            progress.clear()
    out("")
    for line in table(results, load, args.runs):
        out(line)
    out(
        "graceful: raftmeta resigns and sends EndQuorumEpoch; PySyncObj calls "
        "transferLeadership (TimeoutNow) and exits once a follower leads"
    )
    report.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
