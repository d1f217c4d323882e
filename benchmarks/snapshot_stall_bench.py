"""How long a node's event loop stops answering while it takes, or loads, a snapshot of a large
image.

Run: ``.venv/bin/python benchmarks/snapshot_stall_bench.py [--runs 3] [--partitions 1000000]
[--only write|load]``

A node's event loop answers Fetch requests and runs the Raft driver; while it is blocked, the
followers hear nothing from their leader. Two ways of taking a snapshot of the same image are
compared side by side, in one process, with a ticker on the loop that wakes every 10 ms and
records how late each wake-up was:

* on the loop (raftmeta before this benchmark existed): the image is turned into records and
  encoded on the event loop, then written and fsynced on a worker thread;
* on a worker (what ``RaftNode`` does now): the image is copied on the loop
  (``MetadataImage.snapshot_work``), then encoded, written and fsynced on a worker thread while
  the loop goes on. The worker holds the GIL for most of that time, so the loop still waits for
  it in slices; the ticker's worst lateness shows how long those slices are.

Loading a snapshot (at start-up, or a follower installing its leader's) is measured the same
way, into a ``QuorumController`` as a controller node does, by two paths side by side:

* on the loop (raftmeta before the load was split): the file is opened on a worker thread, then
  ``handle_load_snapshot`` decodes the records and builds the image on the event loop;
* on a worker (what ``RaftNode`` does now): ``prepare_snapshot`` opens, decodes and builds on a
  worker thread (``build_snapshot_state``: the built objects leave the collector's young
  generation in one step), and only its install (resign if active, swap the images) runs on
  the loop.

The image is built as in ``metadata_bench.py`` (1,000 partitions per topic, RF 3, 100 brokers in
10 racks). Figures are medians over ``--runs`` runs; the machine and its load are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import Report
from benchmarks.metadata_bench import (
    PARTITIONS_PER_TOPIC,
    broker_records,
    check_scale,
    topic_batches,
)
from raftmeta.controller import ControllerSettings, QuorumController
from raftmeta.image import MetadataImage
from raftmeta.quorum.node import build_snapshot_state
from raftmeta.raft.batch import SnapshotId
from raftmeta.raft.core import NotLeaderError
from raftmeta.records import encode_each
from raftmeta.storage.snapshots import SnapshotReader, SnapshotWriter

RESULTS = Path(__file__).resolve().parent / "results" / "snapshot_stall_bench.txt"
TICK_S = 0.010
FETCH_TIMEOUT_MS = 500
"""``controller.quorum.fetch.timeout.ms``: a follower that hears nothing from its leader for this
long starts an election."""


def build_image(partitions: int, seed: int) -> MetadataImage:
    image = MetadataImage()
    gc.disable()
    try:
        brokers = broker_records()
        image.apply_batch(brokers, 0)
        offset = len(brokers)
        for batch in topic_batches(partitions // PARTITIONS_PER_TOPIC, PARTITIONS_PER_TOPIC, seed):
            image.apply_batch(batch, offset)
            offset += len(batch)
    finally:
        gc.freeze()
        gc.enable()
    return image


def write(directory: Path, name: int, records: Iterable[bytes], *, keep: bool = False) -> Path:
    writer = SnapshotWriter(directory, SnapshotId(name, 0), cluster_id="stall-bench")
    writer.append(list(records))
    path = writer.freeze()
    if not keep:
        path.unlink()
    return path


class _StandbyLog:
    """The metadata log of a controller that never leads here: loading needs no appends."""

    def next_offset(self) -> int:
        return 0

    def append(self, records: Sequence[bytes]) -> tuple[int, asyncio.Future[int]]:
        raise NotLeaderError(None, 0)


class Ticker:
    """Wakes every 10 ms on the loop and keeps the worst lateness seen."""

    def __init__(self) -> None:
        self.worst_s = 0.0
        self.late: list[float] = []
        self._stop = False

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self._stop:
            due = loop.time() + TICK_S
            await asyncio.sleep(TICK_S)
            lateness = loop.time() - due
            self.late.append(lateness)
            self.worst_s = max(self.worst_s, lateness)

    def stop(self) -> None:
        self._stop = True


async def measure(
    image: MetadataImage, directory: Path, name: int, on_loop: bool
) -> dict[str, float]:
    ticker = Ticker()
    task = asyncio.create_task(ticker.run())
    await asyncio.sleep(TICK_S * 3)
    start = time.perf_counter()
    if on_loop:
        records = encode_each(image.to_records())
        blocked = time.perf_counter() - start
        await asyncio.to_thread(write, directory, name, records)
    else:
        work: Callable[[], list[bytes]] = image.snapshot_work()
        blocked = time.perf_counter() - start
        await asyncio.to_thread(lambda: write(directory, name, work()))
    total = time.perf_counter() - start
    ticker.stop()
    await task
    late = sorted(ticker.late)
    return {
        "blocked": blocked,
        "total": total,
        "worst": ticker.worst_s,
        "p99": late[int(len(late) * 0.99)] if late else 0.0,
    }


async def measure_load(path: Path, on_loop: bool) -> dict[str, float]:
    """Loads the snapshot at ``path`` into a fresh controller as the node did (``on_loop``) or
    does (a worker builds, the loop installs), with the ticker running."""
    controller = QuorumController(
        ControllerSettings(1, "stall-bench"), _StandbyLog(), clock=lambda: 0
    )
    ticker = Ticker()
    task = asyncio.create_task(ticker.run())
    await asyncio.sleep(TICK_S * 3)
    start = time.perf_counter()
    if on_loop:
        reader = await asyncio.to_thread(SnapshotReader, path)
        held = time.perf_counter()
        controller.handle_load_snapshot(reader)
        blocked = time.perf_counter() - held
    else:
        install = await asyncio.to_thread(
            build_snapshot_state, lambda: controller.prepare_snapshot(SnapshotReader(path))
        )
        held = time.perf_counter()
        install()
        blocked = time.perf_counter() - held
    total = time.perf_counter() - start
    ticker.stop()
    await task
    loaded = controller.committed_image.partition_count
    late = sorted(ticker.late)
    return {
        "blocked": blocked,
        "total": total,
        "worst": ticker.worst_s,
        "p99": late[int(len(late) * 0.99)] if late else 0.0,
        "partitions": float(loaded),
    }


def print_table(
    out: Callable[[str], None],
    results: dict[bool, list[dict[str, float]]],
    labels: tuple[str, str],
    done: str,
) -> None:
    out(
        f"    {'':<28}{'loop held at once':>18}{'worst tick late':>17}{'p99 tick late':>15}"
        f"{done:>15}"
    )
    for on_loop, label in zip((True, False), labels, strict=True):
        runs = results[on_loop]

        def med(key: str, runs: list[dict[str, float]] = runs) -> float:
            return statistics.median(run[key] for run in runs)

        out(
            f"    {label:<28}{med('blocked'):>16.2f} s{med('worst') * 1000:>14.0f} ms"
            f"{med('p99') * 1000:>12.0f} ms{med('total'):>13.2f} s"
        )


def bench_writes(image: MetadataImage, temp: Path, runs: int) -> dict[bool, list[dict[str, float]]]:
    results: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for run in range(runs):
        for on_loop in (True, False):
            figures = asyncio.run(measure(image, temp, run * 2 + on_loop + 1, on_loop))
            results[on_loop].append(figures)
            where = "on the loop" if on_loop else "on a worker"
            print(
                f"  .. write run {run + 1}/{runs} {where}: loop blocked "
                f"{figures['blocked']:.2f} s, worst tick {figures['worst'] * 1000:.0f} ms, "
                f"snapshot done in {figures['total']:.2f} s",
                file=sys.stderr,
                flush=True,
            )
    return results


def bench_loads(path: Path, runs: int) -> dict[bool, list[dict[str, float]]]:
    results: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for run in range(runs):
        # Alternate which path goes first, so neither always runs on a warmer process.
        order = (True, False) if run % 2 == 0 else (False, True)
        for on_loop in order:
            figures = asyncio.run(measure_load(path, on_loop))
            gc.collect()
            results[on_loop].append(figures)
            where = "on the loop" if on_loop else "on a worker"
            print(
                f"  .. load run {run + 1}/{runs} {where}: loop held {figures['blocked']:.2f} s "
                f"at once, worst tick {figures['worst'] * 1000:.0f} ms, "
                f"{figures['partitions']:,.0f} partitions loaded in {figures['total']:.2f} s",
                file=sys.stderr,
                flush=True,
            )
    return results


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (median is shown)")
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--only", choices=("write", "load"), help="measure only taking or only loading"
    )
    args = parser.parse_args()
    check_scale(parser, args)
    report = Report(RESULTS)
    out = report.out
    report.start()
    print(f"  .. building an image of {args.partitions:,} partitions", file=sys.stderr, flush=True)
    image = build_image(args.partitions, args.seed)
    partitions = image.partition_count
    with tempfile.TemporaryDirectory(prefix="snapshot-stall-") as temp:
        if args.only != "load":
            writes = bench_writes(image, Path(temp), args.runs)
            out(
                f"snapshot of {partitions:,} partitions, medians of {args.runs} runs "
                f"(a 10 ms ticker on the loop measures how late it wakes)"
            )
            print_table(
                out, writes, ("encoded on the loop", "encoded on a worker"), "snapshot done"
            )
        if args.only != "write":
            path = write(Path(temp), 0, encode_each(image.to_records()), keep=True)
            records = SnapshotReader(path).header.record_count
            del image
            gc.unfreeze()
            gc.collect()
            loads = bench_loads(path, args.runs)
            out(
                f"loading a snapshot of {partitions:,} partitions ({records:,} records, "
                f"{path.stat().st_size / 1e6:.1f} MB) into a controller, medians of {args.runs} "
                "runs"
            )
            print_table(out, loads, ("built on the loop", "built on a worker"), "load done")
    out(
        f"    a follower starts an election after {FETCH_TIMEOUT_MS} ms without hearing from "
        "its leader"
    )
    report.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
