"""One raftmeta voter in its own process, driven by ``benchmarks/quorum_bench.py``.

The node runs a ``RaftNode`` and a ``RaftClient`` on the shipped defaults (fsync on every
flush). The driver writes one JSON command per line on stdin and reads one JSON answer per line
on stdout; every timing is taken inside this process, from ``append`` to its commit future.
SIGTERM stops the node gracefully: a leader resigns and sends EndQuorumEpoch first.

Commands: ``status``, ``throughput`` (total, window), ``serial`` (count), ``rate`` (per_s,
seconds), ``arm`` (the next time this node leads a newer epoch it appends one record and
notes when it commits), ``failover`` (that commit time, if any), ``cpu`` (CPU seconds
so far, all threads), ``profile`` (start/stop), ``trace`` (start/take: with ``--trace``, the
write path's stage timestamps, see ``stage_trace.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import dataclasses
import json
import logging
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from benchmarks.quorum_nodes.stage_trace import StageTrace, install
from raftmeta.quorum import (
    NodeSettings,
    NotLeaderError,
    RaftClient,
    RaftNode,
    event_loop,
    serve_raft,
)
from raftmeta.quorum.settings import STREAM
from raftmeta.quorum.transport_choice import TRANSPORTS, node_connect
from raftmeta.raft.batch import Batch
from raftmeta.raft.roles import Role
from raftmeta.storage import MetadataDir, SnapshotReader

CLUSTER_ID = "raftmeta-quorum-bench"
RECORD = b"r" * 100


class Bench:
    """The listener, the load phases and the command loop of one node."""

    def __init__(
        self, node: RaftNode, *, adaptive: bool = True, trace: StageTrace | None = None
    ) -> None:
        self.node = node
        self.trace = trace
        self.client = RaftClient(node, self, adaptive=adaptive)
        self.committed_records = 0
        self.leader: tuple[int | None, int] = (None, -1)
        self.armed_epoch: int | None = None
        self.failover_commit: float | None = None
        self.profiler: cProfile.Profile | None = None

    # ------------------------------------------------------------------ listener

    def handle_commit(self, batches: Sequence[Batch]) -> None:
        for batch in batches:
            if not batch.is_control:
                self.committed_records += batch.next_offset - batch.base_offset

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        pass

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        self.leader = (leader_id, epoch)
        armed = self.armed_epoch
        if leader_id == self.node.node_id and armed is not None and epoch > armed:
            self.armed_epoch = None
            asyncio.get_running_loop().call_soon(self._first_append)

    def _first_append(self) -> None:
        try:
            _, future = self.client.append([RECORD])
        except NotLeaderError:
            return

        def committed(done: asyncio.Future[int]) -> None:
            if not done.cancelled() and done.exception() is None:
                self.failover_commit = time.monotonic()

        future.add_done_callback(committed)

    # ------------------------------------------------------------------ phases

    def status(self) -> dict[str, Any]:
        node = self.node
        if not node.running:
            return {"running": False}
        core = node.core
        leads = core.role is Role.LEADER and self.leader == (node.node_id, core.epoch)
        return {
            "running": True,
            "leader": leads,
            "leader_id": self.leader[0],
            "epoch": core.epoch,
            "committed": self.client.committed_offset,
        }

    async def throughput(self, total: int, window: int) -> dict[str, Any]:
        """``total`` one-record appends with up to ``window`` waiting for commit at once."""
        loop = asyncio.get_running_loop()
        slots = asyncio.Semaphore(window)
        finished = loop.create_future()
        remaining = total
        failures = 0

        def done(future: asyncio.Future[int]) -> None:
            nonlocal remaining, failures
            if future.cancelled() or future.exception() is not None:
                failures += 1
            slots.release()
            remaining -= 1
            if remaining == 0 and not finished.done():
                finished.set_result(None)

        started = time.perf_counter()
        cpu_started = time.process_time()
        for _ in range(total):
            await slots.acquire()
            _, future = self.client.append([RECORD])
            future.add_done_callback(done)
        await finished
        elapsed = time.perf_counter() - started
        return {
            "seconds": elapsed,
            "records": total,
            "failures": failures,
            "cpu_seconds": time.process_time() - cpu_started,
        }

    async def serial(self, count: int) -> dict[str, Any]:
        latencies = []
        for _ in range(count):
            started = time.perf_counter()
            _, future = self.client.append([RECORD])
            await future
            latencies.append((time.perf_counter() - started) * 1000)
        return {"latencies_ms": latencies}

    async def rate(self, per_s: float, seconds: float) -> dict[str, Any]:
        """Open loop: append one record every 1/per_s seconds, whatever is still waiting."""
        loop = asyncio.get_running_loop()
        count = int(per_s * seconds)
        latencies: list[float] = []
        pending: list[asyncio.Future[int]] = []
        began = loop.time()
        for i in range(count):
            delay = began + i / per_s - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            started = time.perf_counter()
            _, future = self.client.append([RECORD])

            def done(_: asyncio.Future[int], started: float = started) -> None:
                latencies.append((time.perf_counter() - started) * 1000)

            future.add_done_callback(done)
            pending.append(future)
        await asyncio.gather(*pending)
        achieved = count / (loop.time() - began)
        return {"latencies_ms": latencies, "achieved_per_s": achieved}

    # ------------------------------------------------------------------ commands

    async def command(self, request: dict[str, Any]) -> dict[str, Any]:
        name = request["cmd"]
        if name == "status":
            return self.status()
        if name == "throughput":
            return await self.throughput(int(request["total"]), int(request["window"]))
        if name == "serial":
            return await self.serial(int(request["count"]))
        if name == "rate":
            return await self.rate(float(request["per_s"]), float(request["seconds"]))
        if name == "arm":
            self.armed_epoch = self.node.core.epoch
            self.failover_commit = None
            return {"armed": self.armed_epoch}
        if name == "cpu":
            return {"cpu_s": time.process_time()}
        if name == "failover":
            return {"commit_at": self.failover_commit}
        if name == "profile":
            if request["action"] == "start":
                self.profiler = cProfile.Profile()
                self.profiler.enable()
            elif self.profiler is not None:
                self.profiler.disable()
                self.profiler.dump_stats(request["path"])
                self.profiler = None
            return {}
        if name == "trace":
            if self.trace is None:
                raise ValueError("the node was started without --trace")
            if request["action"] == "start":
                self.trace.take()
                self.trace.enabled = True
                return {}
            self.trace.enabled = False
            return {"events": self.trace.take()}
        raise ValueError(f"unknown command {name!r}")


def reply(answer: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()


async def serve(args: argparse.Namespace) -> None:
    data_dir = Path(args.data_dir)
    MetadataDir.format(data_dir, args.node_id, CLUSTER_ID, ignore_formatted=True)
    voters = {}
    for item in args.voters.split(","):
        node_id, address = item.split("=", 1)
        voters[int(node_id)] = address
    settings = NodeSettings(
        node_id=args.node_id,
        voters=voters,
        data_dir=data_dir,
        cluster_id=CLUSTER_ID,
        listen_port=int(voters[args.node_id].rsplit(":", 1)[1]),
        transport=args.transport,
        stream_listen=("127.0.0.1", 0) if args.transport == STREAM else None,
    )
    if args.high_watermark_delay_ms is not None:
        raft = dataclasses.replace(
            settings.raft, high_watermark_delay_ms=args.high_watermark_delay_ms
        )
        settings = dataclasses.replace(settings, raft=raft)
    if args.thread_writes:
        settings = dataclasses.replace(settings, inline_small_writes=False)
    if args.linger_ms is not None:
        settings = dataclasses.replace(settings, append_linger_ms=args.linger_ms)
    trace: StageTrace | None = None
    if args.trace:
        trace = StageTrace()
        install(trace)
    node = RaftNode(settings, node_connect(args.transport, None))
    bench = Bench(node, adaptive=not args.fixed_linger, trace=trace)
    server = await serve_raft(node)
    await node.start()

    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()

    async def stop() -> None:
        await node.stop(graceful=True)
        stopped.set()

    loop.add_signal_handler(signal.SIGTERM, lambda: loop.create_task(stop()))
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    reply({"event": "started", "node_id": args.node_id, "loop": event_loop.loop_name()})

    async def commands() -> None:
        while True:
            line = await reader.readline()
            if not line:
                return
            try:
                answer = await bench.command(json.loads(line))
            except Exception as error:  # answered to the driver rather than lost
                answer = {"error": repr(error)}
            reply(answer)

    reading = loop.create_task(commands())
    waiting = loop.create_task(stopped.wait())
    await asyncio.wait({reading, waiting}, return_when=asyncio.FIRST_COMPLETED)
    if not stopped.is_set():
        await node.stop(graceful=True)
    await server.stop()
    reading.cancel()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--node-id", type=int, required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--voters", required=True, help="id=host:port,... for every voter")
    parser.add_argument("--linger-ms", type=int, help="append linger (default: the shipped one)")
    parser.add_argument(
        "--fixed-linger",
        action="store_true",
        help="every batch waits the linger (the batching before group commit), for comparison",
    )
    parser.add_argument(
        "--transport",
        choices=TRANSPORTS,
        default=STREAM,
        help="how the voters carry Raft messages (controller.quorum.transport)",
    )
    parser.add_argument(
        "--high-watermark-delay-ms",
        type=int,
        help="how long the leader may hold a fetch only high-watermark news would answer "
        "(default: the core's, 2; 0 answers at once, as before), for comparison",
    )
    parser.add_argument(
        "--thread-writes",
        action="store_true",
        help="make every write durable on a worker thread, small appends too (for comparison)",
    )
    parser.add_argument(
        "--trace",
        action="store_true",
        help="record the write path's stage timestamps (the trace command collects them)",
    )
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s"
    )
    event_loop.run(serve(parser.parse_args()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
