"""Audit benchmark: the raftmeta data source and the leader-balance audit, Spark against plain.

For a snapshot of 1M partitions (100 brokers on 10 racks, 1,000 topics, replication 3, a tenth
of the partitions led by their second replica), written with SnapshotWriter from an image:

- ``raftmeta audit`` end to end as a user runs it, a process of its own from start to exit
  (Spark's session start included), Spark on local[2] beside ``--engine plain``, each with the
  peak resident memory of its whole process tree (the JVM included), sampled from /proc;
- where the Spark audit's time goes: session start, then each step of the report;
- the data source's read rate on local[2] (rows per second, and per core);
- the full audit (every figure, the election plan) on local[2];
- ten clusters' snapshots (100k partitions each) audited in one Spark job;
- the same two audits in one plain Python process over the same files, in the same run.

Each figure is the median of ``--runs`` runs (default 3); peak memory is the largest seen.
Targets: full audit of 1M partitions in at most 60 s; reads of at least 100k rows/s per core.

    .venv/bin/python benchmarks/audit_bench.py [--partitions 1000000] [--runs 3] [--save]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analytics.plain_audit import audit_path
from analytics.readers import plan, read_split
from analytics.sources import discover
from analytics.synthetic import build_image, write_snapshot
from benchmarks.machine import describe_machine

RESULTS = Path(__file__).resolve().parent / "results" / "audit_bench.txt"
CORES = 2


def _median_seconds(runs: int, action: Callable[[], Any]) -> tuple[float, Any]:
    times = []
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _write_cluster(
    directory: Path, name: str, partitions: int, brokers: int, racks: int, seed: int
) -> Path:
    topics = max(1, partitions // 1000)
    image = build_image(
        brokers=brokers,
        racks=racks,
        topics=topics,
        partitions_per_topic=partitions // topics,
        skew=0.1,
        seed=seed,
    )
    return write_snapshot(image, directory, cluster_id=name, name=f"{name}.checkpoint")


def _tree_usage(root: int, cpu_seconds: dict[int, float]) -> int:
    """Resident memory of ``root`` and every process below it, from /proc; each process's CPU
    seconds so far are recorded in ``cpu_seconds`` (by pid), so processes that have already
    ended still count."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    total, pending = 0, [root]
    page = os.sysconf("SC_PAGE_SIZE")
    tick = os.sysconf("SC_CLK_TCK")
    while pending:
        pid = pending.pop()
        pending.extend(children.get(pid, ()))
        try:
            with open(f"/proc/{pid}/statm") as statm:
                total += int(statm.read().split()[1]) * page
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used = (int(fields[11]) + int(fields[12])) / tick
        cpu_seconds[pid] = max(cpu_seconds.get(pid, 0.0), used)
    return total


def end_to_end(command: list[str]) -> tuple[float, int, float]:
    """Seconds from start to exit of ``command``, the peak memory of its process tree and the
    CPU seconds the tree used (sampled every 0.1 s, so a process that lives less than that
    may be missed): on a machine shared with other work the CPU seconds vary far less than
    the elapsed time does."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    cpu_seconds: dict[int, float] = {}
    finished = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not finished.wait(0.1):
            peak = max(peak, _tree_usage(process.pid, cpu_seconds))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, errors = process.communicate()
    seconds = time.perf_counter() - started
    finished.set()
    sampler.join()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {errors.decode()[-2000:]}")
    return seconds, peak, sum(cpu_seconds.values())


def _unpersist(frames: Any) -> None:
    """Frees what an in-process audit cached, so the next run reads the files again."""
    for frame in (frames.figures, frames.brokers, frames.topics, frames.events, frames.clusters):
        frame.unpersist()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--save", action="store_true", help=f"also write {RESULTS}")
    parser.add_argument(
        "--end-to-end-only",
        action="store_true",
        help="measure raftmeta audit end to end per engine, and nothing in process",
    )
    args = parser.parse_args(argv)
    lines: list[str] = []

    def say(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    say(f"machine: {describe_machine()}")
    with tempfile.TemporaryDirectory(prefix="audit-bench-") as scratch:
        root = Path(scratch)
        one, many = root / "one", root / "many"
        one.mkdir()
        many.mkdir()
        start = time.perf_counter()
        big = _write_cluster(one, "big", args.partitions, 100, 10, seed=1)
        say(
            f"built and wrote a {args.partitions:,}-partition snapshot "
            f"({big.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - start:.1f} s"
        )
        start = time.perf_counter()
        each = args.partitions // args.clusters
        for index in range(args.clusters):
            _write_cluster(many, f"cluster-{index:02d}", each, 100, 10, seed=100 + index)
        say(
            f"built and wrote {args.clusters} snapshots of {each:,} partitions "
            f"in {time.perf_counter() - start:.1f} s"
        )

        out = root / "out"
        for label, path in (
            (f"1 x {args.partitions:,}", big),
            (f"{args.clusters} x {each:,}", many),
        ):
            figures = []
            elapsed: dict[str, float] = {}
            for engine in ("spark", "plain"):
                command = [sys.executable, "-m", "raftmeta", "audit", str(path), "--engine", engine]
                command += ["--out", str(out / engine), "--format", "json"]
                if engine == "spark":
                    command += ["--master", "local[2]"]
                runs = [end_to_end(command) for _ in range(args.runs)]
                seconds = statistics.median(run[0] for run in runs)
                peak = max(run[1] for run in runs)
                cpu = statistics.median(run[2] for run in runs)
                elapsed[engine] = seconds
                memory = f"peak RSS {peak / 2**20:,.0f} MiB"
                figures.append(f"{engine} {seconds:6.1f} s (CPU {cpu:5.1f} s), {memory}")
            ratio = elapsed["spark"] / elapsed["plain"]
            say(
                f"raftmeta audit {label:>16}, end to end: "
                + "; ".join(figures)
                + f"; spark/plain {ratio:.1f}x (target <= 2x)"
            )
        if args.end_to_end_only:
            if args.save:
                RESULTS.parent.mkdir(parents=True, exist_ok=True)
                RESULTS.write_text("\n".join(lines) + "\n")
            return 0

        def read_plain() -> int:
            splits = plan(discover(big), "partitions")
            return sum(batch.num_rows for split in splits for batch in read_split(split))

        seconds, rows = _median_seconds(args.runs, read_plain)
        say(f"pure reader, one process:  {rows / seconds:>12,.0f} rows/s ({seconds:.2f} s)")

        from pyspark.sql import functions as F

        from analytics.audit import audit_frames, collect_report
        from analytics.session import get_spark

        start = time.perf_counter()
        spark = get_spark("local[2]", app_name="audit bench")
        spark.range(1).count()
        say(f"Spark session start (local[2]): {time.perf_counter() - start:.1f} s")

        steps: list[tuple[str, float]] = []
        frames = audit_frames(spark, str(big))
        collect_report(frames, lambda step: steps.append((step, time.perf_counter())))
        steps.append(("done", time.perf_counter()))
        _unpersist(frames)
        say(
            "Spark audit of 1M, by step: "
            + ", ".join(
                f"{name} {later - when:.1f} s"
                for (name, when), (_, later) in itertools.pairwise(steps)
            )
        )

        def read_spark() -> int:
            frame = spark.read.format("raftmeta").load(str(big))
            row = frame.agg(F.count(F.lit(1)), F.sum("leader"), F.sum(F.size("isr"))).first()
            assert row is not None
            return int(row[0])

        seconds, rows = _median_seconds(args.runs, read_spark)
        say(
            f"data source on local[2]:   {rows / seconds:>12,.0f} rows/s, "
            f"{rows / seconds / CORES:,.0f} per core ({seconds:.2f} s; target >= 100,000/core)"
        )

        def spark_audit(path: Path) -> Callable[[], dict[str, Any]]:
            def run() -> dict[str, Any]:
                frames = audit_frames(spark, str(path))
                try:
                    return collect_report(frames)
                finally:
                    _unpersist(frames)

            return run

        def plain_audit(path: Path) -> Callable[[], dict[str, Any]]:
            return lambda: audit_path(path)

        results: dict[str, dict[str, Any]] = {}
        cases = ((f"1 x {args.partitions:,}", big), (f"{args.clusters} x {each:,}", many))
        for label, path in cases:
            spark_seconds, spark_report = _median_seconds(args.runs, spark_audit(path))
            plain_seconds, plain_report = _median_seconds(args.runs, plain_audit(path))
            if spark_report != plain_report:
                say(f"!! the Spark and plain reports differ for {label}")
            results[label] = spark_report
            say(
                f"full audit {label:>16}: Spark local[2] {spark_seconds:6.1f} s, "
                f"plain Python {plain_seconds:6.1f} s"
                + ("  (target <= 60 s)" if path == big else "")
            )
        spark.stop()
        summary = results[f"1 x {args.partitions:,}"]["clusters"]["big"]
        say(
            f"1M cluster: preferred-leader ratio {summary['preferred_leader_ratio']:.3f}, "
            f"{len(summary['brokers_above_threshold'])} brokers above 10%, election plan "
            f"{summary['election_plan']['count']:,} partitions, "
            f"{len(summary['election_plan']['brokers_above_threshold_after'])} above after it"
        )
    if args.save:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
