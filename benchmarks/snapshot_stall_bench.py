"""How long a node's event loop stops answering while it takes a snapshot of a large image.

Run: ``.venv/bin/python benchmarks/snapshot_stall_bench.py [--runs 3] [--partitions 1000000]``

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
from collections.abc import Callable, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import Report
from benchmarks.metadata_bench import (
    PARTITIONS_PER_TOPIC,
    broker_records,
    check_scale,
    topic_batches,
)
from raftmeta.image import MetadataImage
from raftmeta.raft.batch import SnapshotId
from raftmeta.records import encode_each
from raftmeta.storage.snapshots import SnapshotWriter

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


def write(directory: Path, name: int, records: Iterable[bytes]) -> None:
    writer = SnapshotWriter(directory, SnapshotId(name, 0), cluster_id="stall-bench")
    writer.append(list(records))
    path = writer.freeze()
    path.unlink()


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


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (median is shown)")
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    check_scale(parser, args)
    report = Report(RESULTS)
    out = report.out
    report.start()
    print(f"  .. building an image of {args.partitions:,} partitions", file=sys.stderr, flush=True)
    image = build_image(args.partitions, args.seed)
    results: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    with tempfile.TemporaryDirectory(prefix="snapshot-stall-") as temp:
        for run in range(args.runs):
            for on_loop in (True, False):
                figures = asyncio.run(measure(image, Path(temp), run * 2 + on_loop + 1, on_loop))
                results[on_loop].append(figures)
                where = "on the loop" if on_loop else "on a worker"
                print(
                    f"  .. run {run + 1}/{args.runs} {where}: loop blocked "
                    f"{figures['blocked']:.2f} s, worst tick {figures['worst'] * 1000:.0f} ms, "
                    f"snapshot done in {figures['total']:.2f} s",
                    file=sys.stderr,
                    flush=True,
                )
    out(
        f"snapshot of {image.partition_count:,} partitions, medians of {args.runs} runs "
        f"(a 10 ms ticker on the loop measures how late it wakes)"
    )
    out(
        f"    {'':<28}{'loop held at once':>18}{'worst tick late':>17}{'p99 tick late':>15}"
        f"{'snapshot done':>15}"
    )
    for on_loop, label in ((True, "encoded on the loop"), (False, "encoded on a worker")):
        runs = results[on_loop]

        def med(key: str, runs: list[dict[str, float]] = runs) -> float:
            return statistics.median(run[key] for run in runs)

        out(
            f"    {label:<28}{med('blocked'):>16.2f} s{med('worst') * 1000:>14.0f} ms"
            f"{med('p99') * 1000:>12.0f} ms{med('total'):>13.2f} s"
        )
    out(
        f"    a follower starts an election after {FETCH_TIMEOUT_MS} ms without hearing from "
        "its leader"
    )
    report.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
