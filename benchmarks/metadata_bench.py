"""Metadata at scale: a million-partition image, its snapshot, an observer catching up, CreateTopics
over gRPC, and placement balance.

Run: ``.venv/bin/python benchmarks/metadata_bench.py [--runs 3] [--partitions 1000000]``

(a) 1,000 topics x 1,000 partitions at RF 3 on 100 brokers in 10 racks, built from the project's
    own records (RegisterBrokerRecord, TopicRecord, PartitionRecord; replicas placed with Kafka's
    rack stripe, which is fast and spreads replicas the same way the default placer does):

    * image RSS: resident memory of a fresh process after replaying the records, minus the same
      process's resident memory before (imports done); also after loading the snapshot;
    * snapshot write: the image as records (``to_records``), encoded, written and fsynced by
      ``SnapshotWriter``, and the file's size;
    * snapshot load: a fresh process opens the file with ``SnapshotReader`` (which verifies the
      checksum) and builds a new image from it as a node does (``load_snapshot_image``: the
      records unpacked batch by batch, the partitions built and indexed in bulk), once with the
      cycle collector left on and once with it paused for the load (``gc.disable`` then
      ``gc.freeze``): a million new container objects make the collector walk the heap again
      and again;
    * observer catch-up: a three-voter quorum in one process holds the metadata as a snapshot
      plus a log after it; an observer ``RaftNode`` in another process starts from an empty
      directory and the clock runs until its image has applied everything up to the high
      watermark the leader had when the observer started (FetchSnapshot, load, then Fetch).

(b) CreateTopics/s through the Admin gRPC service of a real three-voter quorum with 6 registered,
    unfenced brokers, 1 and 16 concurrent clients, each creating topics of 3 partitions at RF 3.

(c) Placement rate and leader spread (most minus fewest preferred leaders on one broker) for
    10,000 partitions on 100 brokers in 10 racks: Kafka's striping against the default
    per-broker-balanced placer, measured by ``benchmarks/placement_bench.py``'s own code.

Every figure is a median over ``--runs`` runs (each in fresh processes). The machine is shared
with other work: its load average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import Report, process_cpu_seconds
from placement import KafkaStripedReplicaPlacer, PlacementSpec, StaticClusterView, UsableBroker
from raftmeta.devkit.ports import free_ports
from raftmeta.image import MetadataImage, load_snapshot_image
from raftmeta.raft.batch import Batch, SnapshotId
from raftmeta.records import (
    BrokerEndpoint,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    SecurityProtocol,
    TopicRecord,
    decode_record,
    encode_each,
)
from raftmeta.storage import MetadataDir
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR
from raftmeta.storage.snapshots import SnapshotReader, SnapshotWriter

ROOT = Path(__file__).resolve().parent.parent
CHILD_ENV = {**os.environ, "GRPC_VERBOSITY": "ERROR"}
"""Children's gRPC keeps its informational lines (a GOAWAY at shutdown) to itself."""
RESULTS = Path(__file__).resolve().parent / "results" / "metadata_bench.txt"
SCRIPT = Path(__file__).resolve()

BROKERS = 100
RACKS = 10
PARTITIONS_PER_TOPIC = 1_000
REPLICATION_FACTOR = 3
CLUSTER_ID = "metadata-bench"
SNAPSHOT_EPOCH = 0
"""The snapshot is planted in freshly formatted directories, before any election: epoch 0 is
older than every epoch a leader will have."""
LOG_TOPICS = 200
"""Topics of 10 partitions appended after the snapshot: "some log" the observer replays."""
CHILD_TIMEOUT_S = 900.0

RSS_TARGET_BYTES = 1.5 * 2**30
LOAD_TARGET_S = 10.0
CREATE_TARGET_PER_S = 500.0
FIRST_BROKER_ID = 101


# --- the cluster's records ------------------------------------------------------------------


def broker_records() -> list[Record]:
    return [
        RegisterBrokerRecord(
            broker_id,
            random.Random(broker_id).randbytes(16),
            broker_id,
            (BrokerEndpoint("PLAINTEXT", f"broker-{broker_id}", 9092, SecurityProtocol.PLAINTEXT),),
            (),
            f"rack-{broker_id % RACKS}",
            False,
            False,
        )
        for broker_id in range(BROKERS)
    ]


def topic_batches(
    topics: int, per_topic: int, seed: int, prefix: str = "topic"
) -> Iterator[list[Record]]:
    """One batch per topic: its TopicRecord and its PartitionRecords, leader = first replica."""
    rng = random.Random(seed)
    brokers = tuple(UsableBroker(index, f"rack-{index % RACKS}", False) for index in range(BROKERS))
    view = StaticClusterView(brokers, (), {}, {})
    placer = KafkaStripedReplicaPlacer(random.Random(seed))
    for index in range(topics):
        topic_id = rng.randbytes(16)
        batch: list[Record] = [TopicRecord(f"{prefix}-{index:05d}", topic_id)]
        for partition_id, placed in enumerate(
            placer.place(PlacementSpec(0, per_topic, REPLICATION_FACTOR), view)
        ):
            replicas = tuple(placed)
            batch.append(
                PartitionRecord(
                    partition_id, topic_id, replicas, replicas, (), (), replicas[0], 0, 0, 0
                )
            )
        yield batch


# --- measuring inside a child process -------------------------------------------------------


def rss_bytes() -> int:
    """Resident memory now (not the peak), from ``/proc/self/statm``."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def progress(line: str) -> None:
    """Progress goes to stderr, which the parent passes through; stdout carries the answer."""
    print(f"  .. {line}", file=sys.stderr, flush=True)


def answer(figures: Mapping[str, Any]) -> None:
    print(json.dumps(figures), flush=True)


@contextlib.contextmanager
def collector_paused(paused: bool) -> Iterator[None]:
    """Pause the cycle collector for a bulk load, then move what survived into the permanent
    generation so later collections do not walk a million long-lived objects again."""
    if not paused:
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def load_image(reader: SnapshotReader) -> MetadataImage:
    """The image a snapshot holds, loaded as a node loads it (``load_snapshot_image``)."""
    return load_snapshot_image(reader)


class Stopwatch:
    """Wall time and this process's CPU time since it was made: on a shared machine the CPU
    time says what the work costs, the wall time what it took with the others running."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def read(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def child_build(args: argparse.Namespace) -> None:
    """Replay the cluster's records into an image, then write it as a snapshot."""
    topics = args.partitions // PARTITIONS_PER_TOPIC
    baseline = rss_bytes()
    image = MetadataImage()
    watch = Stopwatch()
    with collector_paused(args.gc_paused):
        brokers = broker_records()
        image.apply_batch(brokers, 0)
        offset = len(brokers)
        for batch in topic_batches(topics, PARTITIONS_PER_TOPIC, args.seed):
            image.apply_batch(batch, offset)
            offset += len(batch)
        del batch, brokers
    built = watch.read()
    gc.collect()
    image_rss = rss_bytes() - baseline
    progress(f"built {image.partition_count:,} partitions in {built[0]:.1f} s")

    watch = Stopwatch()
    encoded = encode_each(image.to_records())
    encoding = watch.read()
    snapshot_id = SnapshotId(image.offset + 1, SNAPSHOT_EPOCH)
    watch = Stopwatch()
    writer = SnapshotWriter(Path(args.dir), snapshot_id, cluster_id=CLUSTER_ID)
    writer.append(encoded)
    path = writer.freeze()
    writing = watch.read()
    record_count = len(encoded)
    del encoded
    progress(f"snapshot written: {path.stat().st_size / 2**20:.0f} MiB")

    from raftmeta.controller.controller import fork

    watch = Stopwatch()
    forked = fork(image)
    forking = watch.read()
    del forked
    answer(
        {
            "partitions": image.partition_count,
            "build": built,
            "image_rss": image_rss,
            "peak_rss": peak_rss_bytes() - baseline,
            "encode": encoding,
            "write": writing,
            "snapshot_bytes": path.stat().st_size,
            "snapshot_records": record_count,
            "snapshot_path": str(path),
            "fork": forking,
            "digest": image.digest(),
        }
    )


def child_load(args: argparse.Namespace) -> None:
    """Load the snapshot into a new image, as a node does at start-up."""
    baseline = rss_bytes()
    watch = Stopwatch()
    with collector_paused(args.gc_paused):
        reader = SnapshotReader(args.snapshot)
        verified = watch.read()
        image = load_image(reader)
    loaded = watch.read()
    gc.collect()
    answer(
        {
            "load": loaded,
            "verify": verified,
            "image_rss": rss_bytes() - baseline,
            "peak_rss": peak_rss_bytes() - baseline,
            "partitions": image.partition_count,
            "digest": image.digest(),
        }
    )


def child_profile_load(args: argparse.Namespace) -> None:
    """cProfile of a snapshot load with the collector left on, top functions to stderr."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    reader = SnapshotReader(args.snapshot)
    profiler.enable()
    image = load_image(reader)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stderr)
    stats.sort_stats("tottime").print_stats(12)
    answer({"partitions": image.partition_count})


# --- a quorum and an observer ---------------------------------------------------------------


class ImageFollower:
    """A ``Listener`` keeping a metadata image of the committed log, as an embedded broker or
    any observer would; it wakes waiters whenever it applied something."""

    def __init__(self, paused_load: bool) -> None:
        self.image = MetadataImage()
        self.applied_end = 0
        """Every offset below this is applied (control batches count as applied)."""
        self.paused_load = paused_load
        self.snapshot_loaded_at: float | None = None
        self.snapshot_load_s = 0.0
        self.leader: tuple[int | None, int] = (None, -1)
        self._event = asyncio.Event()

    @property
    def changed(self) -> asyncio.Event:
        """Set at the next change."""
        return self._event

    def _notify(self) -> None:
        event, self._event = self._event, asyncio.Event()
        event.set()

    async def wait_for(self, predicate: Callable[[], bool], timeout: float) -> None:
        async def until() -> None:
            while not predicate():
                await self._event.wait()

        await asyncio.wait_for(until(), timeout)

    def handle_commit(self, batches: Sequence[Batch]) -> None:
        for batch in batches:
            if not batch.is_control:
                self.image.apply_batch(
                    [decode_record(data) for data in batch.records()], batch.base_offset
                )
        self.applied_end = batches[-1].next_offset
        self._notify()

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        started = time.perf_counter()
        self.image = MetadataImage()  # drop the old one before building the new
        with collector_paused(self.paused_load):
            self.image = load_image(reader)
        self.snapshot_load_s = time.perf_counter() - started
        self.snapshot_loaded_at = time.perf_counter()
        self.applied_end = reader.snapshot_id.end_offset
        self._notify()

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        self.leader = (leader_id, epoch)
        self._notify()

    def snapshot(self) -> Callable[[], list[bytes]]:
        return self.image.snapshot_work()


def plant_snapshot(snapshot: Path, data_dir: Path, node_id: int) -> None:
    """Format ``data_dir`` and put ``snapshot`` in it: the node starts holding that state."""
    MetadataDir.format(data_dir, node_id, CLUSTER_ID)
    target = data_dir / METADATA_PARTITION_DIR / snapshot.name
    shutil.copyfile(snapshot, target)


async def quorum_main(args: argparse.Namespace) -> None:
    """Three voters holding the snapshot, plus a log after it; answers ``hw`` on stdin."""
    from raftmeta.quorum import (
        NodeSettings,
        NotLeaderError,
        Peers,
        RaftClient,
        RaftNode,
        RaftServer,
        serve_raft,
    )
    from raftmeta.raft.roles import Role

    root = Path(args.dir)
    snapshot = Path(args.snapshot)
    ids = (1, 2, 3)
    nodes: dict[int, Any] = {}
    followers: dict[int, ImageFollower] = {}
    clients: dict[int, Any] = {}
    servers: dict[int, RaftServer] = {}
    started = time.perf_counter()
    for node_id in ids:
        plant_snapshot(snapshot, root / f"voter-{node_id}", node_id)
        settings = NodeSettings(
            node_id=node_id, voters={}, data_dir=root / f"voter-{node_id}", cluster_id=CLUSTER_ID
        )
        node = RaftNode(settings, Peers)
        follower = ImageFollower(paused_load=True)
        clients[node_id] = RaftClient(node, follower, snapshot_source=follower.snapshot)
        servers[node_id] = await serve_raft(node)
        nodes[node_id], followers[node_id] = node, follower
    voters = {node_id: f"127.0.0.1:{server.port}" for node_id, server in servers.items()}
    for node_id in ids:
        await nodes[node_id].start(voters)
    progress(f"quorum: three voters loaded the snapshot in {time.perf_counter() - started:.1f} s")

    def leader_id() -> int | None:
        for node_id, node in nodes.items():
            leads = node.running and node.core.role is Role.LEADER
            if leads and followers[node_id].leader == (node_id, node.core.epoch):
                return node_id
        return None

    deadline = 300.0

    async def settled_leader() -> int:
        """A leader every voter has caught up with: loading the snapshots blocked the one
        event loop for a while, so the first epochs may not last."""

        def settled() -> bool:
            current = leader_id()
            if current is None:
                return False
            high_watermark = nodes[current].core.high_watermark
            return all(f.applied_end >= high_watermark for f in followers.values())

        await asyncio.wait_for(_until(settled, followers.values()), deadline)
        current = leader_id()
        assert current is not None
        return current

    # The log after the snapshot: new topics of 10 partitions, 10 topics a batch. An append
    # whose epoch ends is retried under fresh names: it may have committed anyway.
    for chunk in range(LOG_TOPICS // 10):
        for attempt in range(10):
            current = await settled_leader()
            records = [
                record
                for batch in topic_batches(
                    10,
                    10,
                    args.seed * 1_000_003 + chunk * 101 + attempt,
                    f"logged-{chunk}-{attempt}",
                )
                for record in batch
            ]
            try:
                _, future = clients[current].append(encode_each(records))
                await asyncio.wait_for(future, deadline)
                break
            except NotLeaderError:
                progress("quorum: an append lost its epoch; retrying")
        else:
            raise RuntimeError("no append committed in 10 attempts")
    current = await settled_leader()
    high_watermark = nodes[current].core.high_watermark
    snapshot_end = nodes[current].core.log.start_offset
    answer(
        {
            "voters": voters,
            "leader": current,
            "high_watermark": high_watermark,
            "snapshot_end": snapshot_end,
            "log_records": high_watermark - snapshot_end,
            "partitions": followers[current].image.partition_count,
            "rss": rss_bytes(),
        }
    )

    def on_command(command: str) -> None:
        if command == "hw":
            leading = leader_id()
            watermark = None if leading is None else nodes[leading].core.high_watermark
            answer({"leader": leading, "high_watermark": watermark})

    await until_stdin_closes(on_command)
    for node_id, node in nodes.items():
        await node.stop(graceful=False)
        await servers[node_id].stop()


async def _until(predicate: Callable[[], bool], followers: Any) -> None:
    """Wait until ``predicate`` holds, re-checking whenever any follower applied something."""
    followers = list(followers)
    while not predicate():
        waits = [asyncio.ensure_future(f.changed.wait()) for f in followers]
        try:
            await asyncio.wait(waits, timeout=0.05, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for wait in waits:
                wait.cancel()


async def observer_main(args: argparse.Namespace) -> None:
    """An observer from an empty directory: time until it applied the leader's high watermark."""
    from raftmeta.quorum import NodeSettings, Peers, RaftClient, RaftNode, serve_raft

    voters = {int(node_id): address for node_id, address in json.loads(args.voters).items()}
    data_dir = Path(args.dir) / f"observer-{args.node_id}"
    MetadataDir.format(data_dir, args.node_id, CLUSTER_ID)
    baseline = rss_bytes()
    node = RaftNode(
        NodeSettings(node_id=args.node_id, voters=voters, data_dir=data_dir, cluster_id=CLUSTER_ID),
        Peers,
    )
    follower = ImageFollower(paused_load=args.gc_paused)
    RaftClient(node, follower)
    watch = Stopwatch()
    started = watch.wall
    server = await serve_raft(node)
    await node.start(voters)
    await follower.wait_for(lambda: follower.applied_end >= args.target, CHILD_TIMEOUT_S)
    caught_up = watch.read()
    loaded_at = follower.snapshot_loaded_at
    figures = {
        "catch_up": caught_up,
        "snapshot_fetched_s": None
        if loaded_at is None
        else loaded_at - started - follower.snapshot_load_s,
        "snapshot_load_s": follower.snapshot_load_s,
        "applied_end": follower.applied_end,
        "partitions": follower.image.partition_count,
        "image_rss": rss_bytes() - baseline,
    }
    await node.stop(graceful=False)
    await server.stop()
    answer(figures)


# --- the parent: running children and printing ----------------------------------------------


def build_in_child(directory: Path, partitions: int, seed: int) -> dict[str, Any]:
    """Build the image in a fresh process and write its snapshot into ``directory``."""
    return run_child(
        "build",
        "--dir",
        str(directory),
        "--partitions",
        str(partitions),
        "--seed",
        str(seed),
        "--gc-paused",
    )


def run_child(mode: str, *options: str, stdin: bool = False) -> dict[str, Any]:
    command = [sys.executable, str(SCRIPT), "--child", mode, *options]
    completed = subprocess.run(
        command,
        stdout=subprocess.PIPE,
        text=True,
        timeout=CHILD_TIMEOUT_S,
        check=False,
        env=CHILD_ENV,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"child {mode} failed with status {completed.returncode}")
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


class QuorumProcess:
    """The quorum child, kept running while observers catch up with it."""

    def __init__(self, directory: Path, snapshot: str, seed: int) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(SCRIPT),
                "--child",
                "quorum",
                "--dir",
                str(directory),
                "--snapshot",
                snapshot,
                "--seed",
                str(seed),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            env=CHILD_ENV,
        )
        self.ready = self._read()

    def _read(self) -> dict[str, Any]:
        stdout: IO[str] | None = self.process.stdout
        assert stdout is not None
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"quorum child exited with status {self.process.wait()}")
        result: dict[str, Any] = json.loads(line)
        return result

    def high_watermark(self) -> int:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write("hw\n")
        stdin.flush()
        answered = self._read()
        if answered["high_watermark"] is None:
            raise RuntimeError("the quorum has no leader")
        return int(answered["high_watermark"])

    def close(self) -> None:
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@dataclass
class Verdict:
    met: bool
    text: str


def at_most(value: float, target: float, unit: str, scale: float = 1.0) -> str:
    if value <= target:
        return f"target <= {target / scale:g} {unit}: met"
    return f"target <= {target / scale:g} {unit}: MISSED ({value / target:.2f}x)"


def at_least(value: float, target: float, unit: str) -> str:
    if value >= target:
        return f"target >= {target:g} {unit}: met"
    return f"target >= {target:g} {unit}: MISSED ({value / target:.2f}x)"


def timed_row(
    out: Callable[[str], None],
    label: str,
    samples: Sequence[Sequence[float]],
    target: float | None = None,
) -> None:
    """One (wall, CPU) figure: medians, the target judged on wall time and on CPU time (what
    an idle machine would approach), and every wall sample."""
    wall = median([sample[0] for sample in samples])
    cpu = median([sample[1] for sample in samples])
    verdict = ""
    if target is not None:
        verdict = at_most(wall, target, "s")
        if (wall <= target) != (cpu <= target):
            verdict += f" (on CPU time: {'met' if cpu <= target else 'missed'})"
    walls = spread([sample[0] for sample in samples], ".2f")
    out(f"    {label:<44} {wall:>9.2f} {cpu:>7.2f}  {walls}  {verdict}".rstrip())


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def mib(value: float) -> str:
    return f"{value / 2**20:,.0f} MiB"


def spread(values: Sequence[float], fmt: str) -> str:
    return "(" + ", ".join(format(value, fmt) for value in values) + ")"


def code_version() -> str:
    """The commit measured, and any library file that differed from it (others edit the same
    tree while benchmarks run)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", "raftmeta", "placement", "elections"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.split("\n")
    except OSError:
        return "unknown (no git)"
    edited = sorted(line[3:] for line in changed if line.strip() and not line.startswith("??"))
    if not edited:
        return f"commit {head}"
    return f"commit {head} with uncommitted changes to {', '.join(edited)}"


def check_scale(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``--runs`` and ``--partitions`` as the image builders need them (whole topics)."""
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.partitions < PARTITIONS_PER_TOPIC or args.partitions % PARTITIONS_PER_TOPIC:
        parser.error(f"--partitions must be a multiple of {PARTITIONS_PER_TOPIC}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per figure (median is shown)")
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument(
        "--observer-partitions",
        type=int,
        default=None,
        help="partitions for the observer catch-up (default: --partitions)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--skip", action="append", default=[], choices=("a", "b", "c", "observer", "controllers")
    )
    parser.add_argument(
        "--controller-give-up",
        type=float,
        default=300.0,
        help="seconds a controller quorum holding the big snapshot gets to answer (default 300)",
    )
    parser.add_argument("--profile", action="store_true", help="cProfile a snapshot load")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    parser.add_argument("--snapshot", help=argparse.SUPPRESS)
    parser.add_argument("--voters", help=argparse.SUPPRESS)
    parser.add_argument("--node-id", type=int, default=4, help=argparse.SUPPRESS)
    parser.add_argument("--ports", help=argparse.SUPPRESS)
    parser.add_argument("--profile-out", help=argparse.SUPPRESS)
    parser.add_argument("--target", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--gc-paused", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--setting", action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        children: dict[str, Callable[[argparse.Namespace], Any]] = {
            "build": child_build,
            "load": child_load,
            "profile-load": child_profile_load,
            "quorum": lambda a: asyncio.run(quorum_main(a)),
            "observer": lambda a: asyncio.run(observer_main(a)),
            "controller": lambda a: run_controller_process(controller_main(a)),
        }
        children[args.child](args)
        return 0
    check_scale(parser, args)

    report = Report(RESULTS)
    out = report.out
    report.start()
    out(f"code: {code_version()}")
    out(f"medians of {args.runs} runs; each run in fresh processes")
    if "a" not in args.skip:
        scale_section(args, out)
    if "b" not in args.skip:
        create_topics_section(args, out)
    if "c" not in args.skip:
        placement_section(args, out)
    report.save()
    return 0


def scale_section(args: argparse.Namespace, out: Callable[[str], None]) -> None:
    partitions = args.partitions
    topics = partitions // PARTITIONS_PER_TOPIC
    out("")
    out(
        f"(a) {partitions:,} partitions ({topics:,} topics x {PARTITIONS_PER_TOPIC:,}, RF "
        f"{REPLICATION_FACTOR}) on {BROKERS} brokers in {RACKS} racks"
    )
    builds: list[dict[str, Any]] = []
    loads: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="metadata-bench-") as temp:
        root = Path(temp)
        snapshot = ""
        for run in range(args.runs):
            directory = root / f"run-{run}"
            directory.mkdir()
            print(
                f"run {run + 1}/{args.runs}: building the image and writing its snapshot",
                flush=True,
            )
            build = build_in_child(directory, partitions, args.seed)
            builds.append(build)
            snapshot = build["snapshot_path"]
            for paused in (False, True):
                print(
                    f"run {run + 1}/{args.runs}: loading the snapshot, collector "
                    f"{'paused' if paused else 'on'}",
                    flush=True,
                )
                options = ["--snapshot", snapshot] + (["--gc-paused"] if paused else [])
                loaded = run_child("load", *options)
                if loaded["digest"] != build["digest"]:
                    raise RuntimeError("the loaded image differs from the one written")
                loads[paused].append(loaded)
            if run + 1 < args.runs:
                shutil.rmtree(directory)
        if args.profile:
            print("profile of one snapshot load, collector on:", flush=True)
            run_child("profile-load", "--snapshot", snapshot)

        image_rss = median([b["image_rss"] for b in builds])
        loaded_rss = median([load["image_rss"] for load in loads[True]])
        out(
            f"    {'image RSS after replaying the records':<44} {mib(image_rss):>9}  "
            f"{at_most(max(image_rss, loaded_rss), RSS_TARGET_BYTES, 'GiB', 2**30)}"
        )
        out(
            f"    {'image RSS after loading the snapshot':<44} {mib(loaded_rss):>9}  "
            f"(peak during the load {mib(median([load['peak_rss'] for load in loads[True]]))})"
        )
        out(
            f"    {'snapshot size':<44} {mib(median([b['snapshot_bytes'] for b in builds])):>9}  "
            f"({builds[0]['snapshot_records']:,} records)"
        )
        out(f"    {'':<44} {'wall s':>9} {'CPU s':>7}")
        timed_row(out, "replay of the records (build) *", [b["build"] for b in builds])
        timed_row(out, "snapshot write: to_records + encode", [b["encode"] for b in builds])
        timed_row(out, "snapshot write: write + fsync", [b["write"] for b in builds])
        for paused in (False, True):
            timed_row(
                out,
                f"snapshot load, collector {'paused' if paused else 'on'}",
                [load["load"] for load in loads[paused]],
                LOAD_TARGET_S,
            )
        timed_row(
            out, "  of which reader open + checksum", [load["verify"] for load in loads[True]]
        )
        timed_row(out, "controller fork of the image **", [b["fork"] for b in builds])
        out("    *  collector paused; includes making the records and placing the replicas")
        out(
            "    ** raftmeta.controller.controller.fork, which copies the committed image on the "
            "event loop when a controller becomes active"
        )
        if "observer" not in args.skip:
            observer_section(args, root, snapshot, out)
        if "controllers" not in args.skip:
            controllers_section(args, root, snapshot, out)


def controllers_section(
    args: argparse.Namespace, root: Path, snapshot: str, out: Callable[[str], None]
) -> None:
    """Three ControllerNode processes start holding the snapshot: how long until one of them
    is an active controller that answers a CreateTopics?"""
    from raftmeta.storage.quorum_state import QUORUM_STATE_FILE, QuorumStateStore

    directory = root / "controllers"
    directory.mkdir()
    print("starting three ControllerNode processes holding the snapshot", flush=True)
    watch = Stopwatch()
    quorum = ControllerProcesses(directory, snapshot=snapshot)
    try:
        loaded_s = watch.read()[0]
        outcome = asyncio.run(first_create(quorum.servers, args.controller_give_up))
        cpu = sum(quorum.cpu_seconds())
    finally:
        quorum.close()
    epochs = [
        QuorumStateStore(
            directory / f"controller-{node_id}" / METADATA_PARTITION_DIR / QUORUM_STATE_FILE
        )
        .read()
        .epoch
        for node_id in (1, 2, 3)
    ]
    leaderships = 0
    for node_id in (1, 2, 3):
        with contextlib.suppress(OSError):
            log_text = (directory / f"controller-{node_id}.log").read_text(encoding="utf-8")
            leaderships += sum(
                "this node" in line and "leads" in line for line in log_text.split("\n")
            )
    out(
        f"    three ControllerNode processes holding the snapshot: started (snapshot loaded) "
        f"after {loaded_s:.1f} s; {outcome}"
    )
    out(
        f"      CPU used by the three: {cpu:.0f} s; Raft epoch reached: {max(epochs)}; "
        f"leaderships taken: {leaderships}"
    )


async def first_create(servers: Sequence[str], give_up_s: float) -> str:
    """What became of one CreateTopics sent to a fresh controller quorum within the time."""
    from raftmeta.channel import ControllerChannel
    from raftmeta.errors import KafkaError
    from raftmeta.rpc import admin_pb2 as apb

    began = time.perf_counter()
    channel = ControllerChannel(servers, request_timeout_ms=int(give_up_s * 1000))
    try:
        reply = await channel.call(
            "Admin/CreateTopics",
            apb.CreateTopicsRequest(
                topics=[apb.NewTopic(name="first", num_partitions=3, replication_factor=3)],
                timeout_ms=int(give_up_s * 1000),
            ),
        )
    except KafkaError as error:
        return f"no CreateTopics answered in {give_up_s:.0f} s more ({error.message})"
    finally:
        await channel.close()
    elapsed = time.perf_counter() - began
    code = reply.header.error_code or reply.topics[0].error_code
    return f"the first CreateTopics was answered (error code {code}) {elapsed:.1f} s later"


def observer_section(
    args: argparse.Namespace, root: Path, snapshot: str, out: Callable[[str], None]
) -> None:
    partitions = args.observer_partitions or args.partitions
    if partitions != args.partitions:
        directory = root / "observer-build"
        directory.mkdir()
        print(f"building a {partitions:,}-partition snapshot for the observer", flush=True)
        snapshot = build_in_child(directory, partitions, args.seed)["snapshot_path"]
    quorum_dir = root / "quorum"
    quorum_dir.mkdir()
    print("starting a three-voter quorum holding the snapshot", flush=True)
    quorum = QuorumProcess(quorum_dir, snapshot, args.seed)
    results: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    try:
        ready = quorum.ready
        node_id = 10
        for run in range(args.runs):
            for paused in (False, True):
                target = quorum.high_watermark()
                print(
                    f"run {run + 1}/{args.runs}: observer {node_id} catching up to {target:,}, "
                    f"collector {'paused' if paused else 'on'}",
                    flush=True,
                )
                options = [
                    "--dir",
                    str(quorum_dir),
                    "--voters",
                    json.dumps(ready["voters"]),
                    "--node-id",
                    str(node_id),
                    "--target",
                    str(target),
                ]
                observed = run_child("observer", *options + (["--gc-paused"] if paused else []))
                results[paused].append(observed)
                shutil.rmtree(quorum_dir / f"observer-{node_id}")
                node_id += 1
    finally:
        quorum.close()
    out(
        f"    observer catch-up from empty, {partitions:,} partitions: a snapshot of "
        f"{ready['snapshot_end']:,} records plus a log of "
        f"{ready['log_records']:,} records after it (new topics, leader changes)"
    )
    out(f"    {'':<44} {'wall s':>9} {'CPU s':>7}")
    for paused in (False, True):
        runs = results[paused]
        timed_row(
            out,
            f"observer catch-up, collector {'paused' if paused else 'on'}",
            [r["catch_up"] for r in runs],
        )
        fetched = [r["snapshot_fetched_s"] for r in runs if r["snapshot_fetched_s"] is not None]
        out(
            f"      FetchSnapshot {median(fetched):.2f} s, snapshot load "
            f"{median([r['snapshot_load_s'] for r in runs]):.2f} s, then the log (wall)"
        )
    out(f"    observer image RSS {mib(median([r['image_rss'] for r in results[True]]))}")


CREATE_BROKERS = 6
CREATE_RACKS = 3
SINGLE_CLIENT_TOPICS = 200
TOPICS_PER_CONCURRENT_CLIENT = 100
CONCURRENT_CLIENTS = 16


async def until_stdin_closes(on_line: Callable[[str], None]) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := (await reader.readline()).decode():
        if line.strip():
            on_line(line.strip())


def run_controller_process(main: Coroutine[Any, Any, None]) -> None:
    """Run a controller child as ``raftmeta serve`` runs: its collector settings, its loop."""
    from raftmeta.quorum import collector, event_loop

    collector.tune_for_server()
    event_loop.run(main)


async def controller_main(args: argparse.Namespace) -> None:
    """One voter of the CreateTopics quorum: a ``ControllerNode`` serving Raft, Admin and
    BrokerLifecycle on its port, until stdin closes."""
    from raftmeta.config.node import parse_config
    from raftmeta.quorum import collector
    from raftmeta.server.controller_node import ControllerNode

    ports = [int(port) for port in args.ports.split(",")]
    data_dir = Path(args.dir) / f"controller-{args.node_id}"
    if args.snapshot:
        plant_snapshot(Path(args.snapshot), data_dir, args.node_id)
        # Leadership changes are logged at INFO: kept beside the directory for a post-mortem.
        logging.basicConfig(
            filename=Path(args.dir) / f"controller-{args.node_id}.log",
            level=logging.INFO,
            format="%(asctime)s %(name)s %(message)s",
        )
    else:
        MetadataDir.format(data_dir, args.node_id, CLUSTER_ID)
    config = parse_config(
        {
            "node.id": args.node_id,
            "controller.quorum.voters": ",".join(
                f"{index + 1}@127.0.0.1:{port}" for index, port in enumerate(ports)
            ),
            "listeners": f"CONTROLLER://127.0.0.1:{ports[args.node_id - 1]}",
            "metadata.log.dir": str(data_dir),
            "cluster.id": CLUSTER_ID,
            **dict(setting.split("=", 1) for setting in args.setting),
        }
    )
    profiler: Any = None
    if args.profile_out:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    node = await ControllerNode.start(config)
    collector.freeze_loaded_state()
    commits: list[float] = []
    node.client.commit_latency_observer = commits.append
    window: Any = None

    def on_line(line: str) -> None:
        nonlocal window
        # "commits": the append-to-commit latencies (ms) this node saw as leader since the
        # last ask, so a phase can report how long Raft took under its load.
        if line == "commits":
            answer({"commit_ms": [1000 * seconds for seconds in commits]})
            commits.clear()
        # "profile" ... "profile-stop PATH": a cProfile of one phase on this thread's CPU
        # time, which waiting, and being preempted on a loaded machine, do not advance.
        elif line == "profile":
            import cProfile

            window = cProfile.Profile(time.thread_time)
            window.enable()
            answer({"profiling": True})
        elif line.startswith("profile-stop "):
            if window is not None:
                window.disable()
                window.dump_stats(line.removeprefix("profile-stop "))
                window = None
            answer({"profiling": False})

    answer({"address": node.address})
    await until_stdin_closes(on_line)
    await node.stop()
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile_out)


class ControllerProcesses:
    """Three ``ControllerNode`` processes on loopback: the quorum CreateTopics runs against."""

    def __init__(
        self,
        directory: Path,
        *,
        profile: bool = False,
        snapshot: str | None = None,
        settings: Mapping[str, str] | None = None,
        node_settings: Mapping[int, Mapping[str, str]] | None = None,
        ports: Sequence[int] | None = None,
    ) -> None:
        """``settings`` are extra node configuration keys for every controller;
        ``node_settings`` more for one controller (by node id), over those; ``ports`` the
        controllers' own (gRPC) ports, free ones when not given."""
        ports = list(ports) if ports is not None else free_ports(3)
        self.servers = [f"127.0.0.1:{port}" for port in ports]
        self.profiles = [directory / f"controller-{node_id}.prof" for node_id in (1, 2, 3)]
        self.processes = [
            subprocess.Popen(
                [
                    sys.executable,
                    str(SCRIPT),
                    "--child",
                    "controller",
                    "--dir",
                    str(directory),
                    "--node-id",
                    str(node_id),
                    "--ports",
                    ",".join(map(str, ports)),
                    *(["--profile-out", str(self.profiles[node_id - 1])] if profile else []),
                    *(["--snapshot", snapshot] if snapshot else []),
                    *(
                        argument
                        for key, value in {
                            **(settings or {}),
                            **(node_settings or {}).get(node_id, {}),
                        }.items()
                        for argument in ("--setting", f"{key}={value}")
                    ),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=CHILD_ENV,
            )
            for node_id in (1, 2, 3)
        ]
        for process in self.processes:
            assert process.stdout is not None
            if not process.stdout.readline():
                self.close()
                raise RuntimeError("a controller process did not start")

    def cpu_seconds(self) -> list[float]:
        """User plus system CPU time each controller process has used so far."""
        return [process_cpu_seconds(process.pid) for process in self.processes]

    def commit_latencies_ms(self) -> list[float]:
        """Append-to-commit latencies (ms) of the appends made since the last call, from
        every controller (only the leader appends)."""
        latencies: list[float] = []
        for process in self.processes:
            latencies.extend(self._ask(process, "commits")["commit_ms"])
        return latencies

    def start_phase_profiles(self) -> None:
        """Start profiling each controller's event-loop thread on its CPU time."""
        for process in self.processes:
            self._ask(process, "profile")

    def stop_phase_profiles(self, directory: Path, label: str) -> list[Path]:
        """Stop the profiles :meth:`start_phase_profiles` started; their files, by node id."""
        paths = [directory / f"controller-{node_id}.{label}.prof" for node_id in (1, 2, 3)]
        for process, path in zip(self.processes, paths, strict=True):
            self._ask(process, f"profile-stop {path}")
        return paths

    @staticmethod
    def _ask(process: subprocess.Popen[str], line: str) -> dict[str, Any]:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(line + "\n")
        process.stdin.flush()
        answer: dict[str, Any] = json.loads(process.stdout.readline())
        return answer

    def close(self) -> None:
        for process in self.processes:
            with contextlib.suppress(OSError):
                assert process.stdin is not None
                process.stdin.close()
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextlib.asynccontextmanager
async def registered_brokers(servers: Sequence[str]) -> AsyncIterator[None]:
    """Register ``CREATE_BROKERS`` brokers and keep them heartbeating (so unfenced) for as
    long as the block runs: CreateTopics needs live brokers to place replicas on."""
    from raftmeta.channel import ControllerChannel
    from raftmeta.rpc import broker_pb2 as bpb

    lifecycle = ControllerChannel(servers)
    epochs: dict[int, int] = {}
    # Above the controllers' ids (1-3): a broker may not share a voter's id.
    for broker_id in range(FIRST_BROKER_ID, FIRST_BROKER_ID + CREATE_BROKERS):
        reply = await lifecycle.call(
            "BrokerLifecycle/RegisterBroker",
            bpb.RegisterBrokerRequest(
                broker_id=broker_id,
                cluster_id=CLUSTER_ID,
                incarnation_id=random.randbytes(16),
                listeners=[bpb.Listener(name="PLAINTEXT", host="127.0.0.1", port=9000 + broker_id)],
                rack=f"rack-{broker_id % CREATE_RACKS}",
            ),
        )
        if reply.header.error_code:
            raise RuntimeError(f"RegisterBroker: {reply.header}")
        epochs[broker_id] = reply.broker_epoch

    async def heartbeat(broker_id: int) -> bool:
        reply = await lifecycle.call(
            "BrokerLifecycle/BrokerHeartbeat",
            bpb.BrokerHeartbeatRequest(
                broker_id=broker_id,
                broker_epoch=epochs[broker_id],
                current_metadata_offset=2**62,
                want_fence=False,
            ),
        )
        if reply.header.error_code:
            raise RuntimeError(f"BrokerHeartbeat: {reply.header}")
        return not reply.is_fenced

    unfenced: set[int] = set()
    give_up = time.monotonic() + 60
    while len(unfenced) < CREATE_BROKERS:
        if time.monotonic() > give_up:
            raise RuntimeError(f"only brokers {sorted(unfenced)} unfenced in 60 s")
        for broker_id in epochs:
            if await heartbeat(broker_id):
                unfenced.add(broker_id)

    async def keep_alive() -> None:
        while True:
            await asyncio.sleep(1.0)
            for broker_id in epochs:
                await heartbeat(broker_id)

    alive = asyncio.create_task(keep_alive())
    try:
        yield
    finally:
        alive.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await alive
        await lifecycle.close()


async def create_topics_run(
    servers: Sequence[str], run: int, cpu_seconds: Callable[[], list[float]]
) -> dict[str, Any]:
    """With the brokers registered, time CreateTopics with 1 and 16 clients, each client its
    own ``ControllerChannel`` sending one topic per request."""
    figures: dict[str, Any] = {}
    async with registered_brokers(servers):
        for clients, per_client in (
            (1, SINGLE_CLIENT_TOPICS),
            (CONCURRENT_CLIENTS, TOPICS_PER_CONCURRENT_CLIENT),
        ):
            figures[str(clients)] = await create_topics_phase(
                servers, f"r{run}-c{clients}", clients, per_client, cpu_seconds
            )
            print(
                f"run {run + 1}: {clients:>2} client(s): {figures[str(clients)]['rate']:,.0f} "
                "CreateTopics/s",
                flush=True,
            )
    return figures


async def create_topics_phase(
    servers: Sequence[str],
    prefix: str,
    clients: int,
    per_client: int,
    cpu_seconds: Callable[[], list[float]],
) -> dict[str, Any]:
    """``clients`` concurrent clients, each sending ``per_client`` CreateTopics in turn."""
    from raftmeta.channel import ControllerChannel
    from raftmeta.errors import ErrorCode
    from raftmeta.rpc import admin_pb2 as apb

    channels = [ControllerChannel(servers) for _ in range(clients)]
    latencies: list[float] = []
    resent: list[str] = []

    async def create(channel: ControllerChannel, name: str) -> None:
        began = time.perf_counter()
        reply = await channel.call(
            "Admin/CreateTopics",
            apb.CreateTopicsRequest(
                topics=[apb.NewTopic(name=name, num_partitions=3, replication_factor=3)],
                timeout_ms=30_000,
            ),
        )
        if reply.header.error_code:
            raise RuntimeError(f"CreateTopics {name}: {reply.header}")
        code = reply.topics[0].error_code
        if code == ErrorCode.TOPIC_ALREADY_EXISTS:
            # Names are unique, so this request's own earlier attempt created it: the
            # channel re-sent it after a NOT_CONTROLLER that followed the commit.
            resent.append(name)
        elif code:
            raise RuntimeError(f"CreateTopics {name}: {reply.topics[0]}")
        latencies.append(time.perf_counter() - began)

    async def client(index: int, channel: ControllerChannel) -> None:
        for number in range(per_client):
            await create(channel, f"{prefix}-{index}-{number}")

    # One untimed request per client first: opening the channel, finding the controller.
    await asyncio.gather(
        *(create(channel, f"{prefix}-{index}-warm") for index, channel in enumerate(channels))
    )
    latencies.clear()
    began = time.perf_counter()
    cpu_began = time.process_time()
    servers_cpu_began = cpu_seconds()
    await asyncio.gather(*(client(index, channel) for index, channel in enumerate(channels)))
    elapsed = time.perf_counter() - began
    servers_cpu = [
        after - before for after, before in zip(cpu_seconds(), servers_cpu_began, strict=True)
    ]
    client_cpu = time.process_time() - cpu_began
    for channel in channels:
        await channel.close()
    latencies.sort()
    requests = clients * per_client
    return {
        "rate": requests / elapsed,
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p99_ms": 1000 * latencies[int(len(latencies) * 0.99)],
        "client_cpu_ms": 1000 * client_cpu / requests,
        "resent": len(resent),
        "leader_cpu_ms": 1000 * max(servers_cpu) / requests,
        "quorum_cpu_ms": 1000 * sum(servers_cpu) / requests,
    }


def print_busiest_profile(paths: Sequence[Path]) -> None:
    """The top functions of the controller process that spent the most time: the leader."""
    import pstats

    loaded = [pstats.Stats(str(path)) for path in paths if path.exists()]
    if not loaded:
        return
    # Not total time, which counts waiting in epoll too: the leader is the one making the calls.
    busiest = max(loaded, key=lambda stats: stats.total_calls)  # type: ignore[attr-defined]
    print("profile of the busiest controller process (the leader), by own time:", flush=True)
    busiest.sort_stats("tottime").print_stats(25)
    busiest.sort_stats("cumulative").print_stats(40)


def create_topics_section(args: argparse.Namespace, out: Callable[[str], None]) -> None:
    out("")
    out(
        f"(b) CreateTopics through gRPC (Admin service via ControllerChannel), one topic of 3 "
        f"partitions at RF 3 per request, {CREATE_BROKERS} unfenced brokers in {CREATE_RACKS} "
        "racks, three ControllerNode processes on loopback (shipped defaults, fsync on)"
    )
    runs: list[dict[str, Any]] = []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="metadata-bench-create-") as temp:
            print(f"run {run + 1}/{args.runs}: starting three controller processes", flush=True)
            profile = args.profile and run == 0
            quorum = ControllerProcesses(Path(temp), profile=profile)
            try:
                measured = create_topics_run(quorum.servers, run, quorum.cpu_seconds)
                runs.append(asyncio.run(measured))
            finally:
                quorum.close()
            if profile:
                print_busiest_profile(quorum.profiles)
    for clients, per_client in (
        ("1", SINGLE_CLIENT_TOPICS),
        (str(CONCURRENT_CLIENTS), TOPICS_PER_CONCURRENT_CLIENT),
    ):
        phases = [run[clients] for run in runs]
        rates = [phase["rate"] for phase in phases]
        verdict = at_least(median(rates), CREATE_TARGET_PER_S, "/s") if clients != "1" else ""
        out(
            f"    {clients:>2} client(s) x {per_client} requests: {median(rates):>6,.0f} "
            f"CreateTopics/s {spread(rates, ',.0f')}  {verdict}".rstrip()
        )
        leader_ms = median([phase["leader_cpu_ms"] for phase in phases])
        out(
            f"       latency p50 {median([phase['p50_ms'] for phase in phases]):.1f} ms, "
            f"p99 {median([phase['p99_ms'] for phase in phases]):.1f} ms; re-sent after a "
            f"leader change: {sum(phase['resent'] for phase in phases)}"
        )
        out(
            f"       CPU per request: leader {leader_ms:.2f} ms (at most {1000 / leader_ms:,.0f}/s "
            f"on one free core), all three voters "
            f"{median([phase['quorum_cpu_ms'] for phase in phases]):.2f} ms, client "
            f"{median([phase['client_cpu_ms'] for phase in phases]):.2f} ms"
        )


def placement_section(args: argparse.Namespace, out: Callable[[str], None]) -> None:
    from benchmarks.placement_bench import PLACERS, SCENARIOS, median_result
    from benchmarks.placement_bench import run as place

    out("")
    out(
        f"(c) placement of 10,000 partitions on {BROKERS} brokers in {RACKS} racks "
        "(benchmarks/placement_bench.py's scenarios)"
    )
    header = f"    {'scenario':<32} {'placer':<8} {'partitions/s':>13} {'leader spread':>14}"
    out(header)
    for scenario in (SCENARIOS[0], SCENARIOS[-1]):
        for name in ("kafka", "default"):
            result = median_result(
                [place(PLACERS[name], scenario, args.seed + run) for run in range(args.runs)]
            )
            rate, leader_spread = result.rate, result.leader_spread
            out(f"    {scenario.name:<32} {name:<8} {rate:>13,.0f} {leader_spread:>14}")


if __name__ == "__main__":
    raise SystemExit(main())
