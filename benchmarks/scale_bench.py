"""KRaft's lab scale on one machine: a big image, many brokers, and the operations that must
stay fast at that size.

Run: ``.venv/bin/python benchmarks/scale_bench.py [--partitions 2000000] [--brokers 1000]
[--runs 3] [--json FILE]``; propagation to 1,000 brokers' images: ``--partitions 20000
--image-brokers shared-fetch --runs 1``

The cluster: ``--partitions`` partitions (topics of 1,000) at RF 3 on ``--brokers`` brokers in
10 racks, replicas placed with Kafka's rack stripe, written straight into a snapshot that
three ``ControllerNode`` processes start from. The brokers run many to a host process
(``--hosts``), and come in these kinds:

* *lifecycle brokers*, one per broker of the snapshot: each registers under the incarnation
  the snapshot holds, heartbeats every 2 s (every 250 ms while it asks for a controlled
  shutdown) and reports the highest metadata offset, so the controller sees the heartbeat and
  fencing load of ``--brokers`` brokers. They hold no image: 1,000 copies of a 2-million-
  partition image (over 700 MiB each) do not fit one machine.
* *follower brokers* (``--followers``), real embedded ``Broker`` objects that follow the log
  into their own image, for what needs one: propagation from commit to a broker's image, and
  a restarted broker's catch-up. They own no partitions.
* *image brokers* (``--image-brokers``), in place of the lifecycle brokers: every broker of
  the snapshot holds an image of its own, for propagation to all of them and an idle hold
  with every broker following the log. With ``own-fetch`` each is a ``Broker`` with its own
  observer (a Fetch stream per broker, as in production; it costs each host about 6 ms of
  CPU per broker per second, so it fits in the hundreds, not 1,000, on two cores); with
  ``shared-fetch`` one observer per host hands each batch to every broker's own
  ``MetadataReplica`` (the broker's replay), and each broker keeps its own session. The
  images are copies of one loaded image (copy on write: unchanged topics are shared), taken
  once the start-up's records are replayed, so 1,000 of them fit; a smaller ``--partitions``
  keeps the copies a change makes small. Only the idle hold and the propagation run.

Measured (each a median over ``--runs`` where it repeats; ``--json`` writes the keys named):

* ``image_rss_mib``: a fresh process's RSS growth from loading the snapshot; also each
  controller's and each broker host's RSS; the snapshot's size; ``snapshot_load_s``;
* ``failover_kill_s``: kill -9 of the active controller → the first committed CreateTopics;
  ``failover_graceful_s``: the active controller stops gracefully (it resigns) → the same;
* ``controlled_shutdown_s``: a broker asks to shut down → SHUTDOWN_NOW (every leadership it
  held moved away first), and the time until it led nothing;
* ``broker_kill_s``: a broker goes silent → fenced with every partition it led led by
  another, from the kill and from its session's expiry (last heartbeat + 9 s);
* ``rack_loss_s``: the brokers of one rack go silent at once → every partition led again,
  from the last expiry; ``max_queue_hold_ms``: the longest one controller event held the
  queue meanwhile (wall time; the CPU time beside it);
* ``propagation_p99_ms``: CreateTopics acknowledged → each follower broker's image holds it
  (p50/p99/max over topics and followers); with ``--image-brokers``, each of the
  ``propagation_brokers`` brokers' images, at ``propagation_partitions`` partitions, timed
  by each image's own partition listener (``propagation_p50_ms``, ``propagation_max_ms``);
* a follower broker stopped cleanly, 20 writes made, then started again: its catch-up to the
  high watermark;
* the active controller's CPU per broker and the broker hosts' CPU over ``--idle`` seconds
  (a minute by default; ``--idle 600 --only-idle`` is the ten-minute hold),
  ``idle_false_fencings``: live brokers fenced meanwhile, and ``false_fencings``: live brokers
  told they are fenced, over the whole run. Heartbeats and sessions are Kafka's defaults
  (every 2 s, 9 s).

The machine and its load average are printed at the start and the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import Report, load_average, process_cpu_seconds

RESULTS = Path(__file__).resolve().parent / "results" / "scale_bench.txt"
SCRIPT = Path(__file__).resolve()
CLUSTER_ID = "scale-bench"
RACKS = 10
PER_TOPIC = 1_000
REPLICATION_FACTOR = 3
FIRST_BROKER_ID = 1_000
"""Lifecycle brokers are 1000 upward; controllers are 1-3."""
FIRST_FOLLOWER_ID = 100
FIRST_OBSERVER_ID = 500
"""The shared observers of ``--image-brokers shared-fetch`` hosts, one per host."""
SESSION_TIMEOUT_S = 9.0
HEARTBEAT_S = 2.0
SHUTDOWN_HEARTBEAT_S = 0.25
POLL_S = 0.02
DEADLINE_S = 600.0
CHILD_ENV = {**os.environ, "GRPC_VERBOSITY": "ERROR"}


def rss_bytes(pid: int | None = None) -> int:
    with open(f"/proc/{pid or 'self'}/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def incarnation(broker_id: int) -> bytes:
    return random.Random(broker_id).randbytes(16)


def rack_of(broker_id: int) -> str:
    return f"rack-{broker_id % RACKS}"


def answer(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


async def stdin_lines() -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    return reader


# ------------------------------------------------------------------------- the snapshot


def child_build(args: argparse.Namespace) -> None:
    """Writes the cluster's records straight into a snapshot (no image is built)."""
    from placement import KafkaStripedReplicaPlacer, PlacementSpec, StaticClusterView, UsableBroker
    from raftmeta.raft.batch import SnapshotId
    from raftmeta.records import (
        BrokerEndpoint,
        PartitionRecord,
        Record,
        RegisterBrokerRecord,
        SecurityProtocol,
        TopicRecord,
        encode_each,
    )
    from raftmeta.storage.snapshots import SnapshotWriter

    began = time.perf_counter()
    broker_ids = range(FIRST_BROKER_ID, FIRST_BROKER_ID + args.brokers)
    records: list[Record] = [
        RegisterBrokerRecord(
            broker_id,
            incarnation(broker_id),
            index,
            (BrokerEndpoint("PLAINTEXT", "127.0.0.1", 9092, SecurityProtocol.PLAINTEXT),),
            (),
            rack_of(broker_id),
            False,
            False,
        )
        for index, broker_id in enumerate(broker_ids)
    ]
    rng = random.Random(args.seed)
    view = StaticClusterView(
        tuple(UsableBroker(b, rack_of(b), False) for b in broker_ids), (), {}, {}
    )
    placer = KafkaStripedReplicaPlacer(random.Random(args.seed))
    encoded = encode_each(records)
    for index in range(args.partitions // PER_TOPIC):
        topic_id = rng.randbytes(16)
        batch: list[Record] = [TopicRecord(f"topic-{index:05d}", topic_id)]
        for partition_id, placed in enumerate(
            placer.place(PlacementSpec(0, PER_TOPIC, REPLICATION_FACTOR), view)
        ):
            replicas = tuple(placed)
            batch.append(
                PartitionRecord(
                    partition_id, topic_id, replicas, replicas, (), (), replicas[0], 0, 0, 0
                )
            )
        encoded.extend(encode_each(batch))
    writer = SnapshotWriter(Path(args.dir), SnapshotId(len(encoded), 0), cluster_id=CLUSTER_ID)
    writer.append(encoded)
    path = writer.freeze()
    answer(
        {
            "path": str(path),
            "bytes": path.stat().st_size,
            "records": len(encoded),
            "seconds": time.perf_counter() - began,
        }
    )


def run_child(mode: str, *options: str) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--child", mode, *options],
        stdout=subprocess.PIPE,
        text=True,
        timeout=3_600,
        check=False,
        env=CHILD_ENV,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"child {mode} failed with status {completed.returncode}")
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


# -------------------------------------------------------------------------- controllers


async def controller_main(args: argparse.Namespace) -> None:
    """One voter: a ``ControllerNode`` that answers the driver's questions on stdin."""
    from raftmeta.config.node import parse_config
    from raftmeta.quorum import collector
    from raftmeta.server.controller_node import ControllerNode
    from raftmeta.storage import MetadataDir
    from raftmeta.storage.data_dir import METADATA_PARTITION_DIR

    ports = [int(port) for port in args.ports.split(",")]
    data_dir = Path(args.dir) / f"controller-{args.node_id}"
    if not (data_dir / "meta.properties").exists():
        MetadataDir.format(data_dir, args.node_id, CLUSTER_ID)
        snapshot = Path(args.snapshot)
        shutil.copyfile(snapshot, data_dir / METADATA_PARTITION_DIR / snapshot.name)
    logging.basicConfig(
        filename=Path(args.dir) / f"controller-{args.node_id}.log",
        level=logging.WARNING,
        format="%(asctime)s %(name)s %(message)s",
    )
    config = parse_config(
        {
            "node.id": args.node_id,
            "controller.quorum.voters": ",".join(
                f"{index + 1}@127.0.0.1:{port}" for index, port in enumerate(ports)
            ),
            "listeners": f"CONTROLLER://127.0.0.1:{ports[args.node_id - 1]}",
            "metadata.log.dir": str(data_dir),
            "cluster.id": CLUSTER_ID,
        }
    )
    baseline = rss_bytes()
    node = await ControllerNode.start(config)
    collector.freeze_loaded_state()
    controller = node.controller
    answer({"address": node.address, "rss": rss_bytes(), "baseline": baseline})
    reader = await stdin_lines()
    while line := (await reader.readline()).decode().strip():
        words = line.split()
        image = controller.committed_image
        if words[0] == "status":
            answer(
                {
                    "active": controller.is_active,
                    "offset": image.offset,
                    "rss": rss_bytes(),
                    "offline": len(image.leaderless_partitions),
                    "fenced": sum(r.fenced for r in image.brokers.values()),
                }
            )
        elif words[0] == "broker":
            registration = image.broker(int(words[1]))
            answer(
                {
                    "fenced": registration is None or registration.fenced,
                    "leads": image.leader_count(int(words[1])),
                }
            )
        elif words[0] == "holds":
            name, seconds, cpu_name, cpu_seconds = controller.holds.take_longest()
            answer({"name": name, "s": seconds, "cpu_name": cpu_name, "cpu_s": cpu_seconds})
        elif words[0] == "stop":
            await node.stop(graceful=True)
            answer({"stopped": True})
            return
    await node.stop()


class Controllers:
    """The three controller processes; one can be killed or stopped and started again."""

    def __init__(self, directory: Path, snapshot: str, ports: Sequence[int]) -> None:
        self.directory = directory
        self.snapshot = snapshot
        self.ports = list(ports)
        self.servers = [f"127.0.0.1:{port}" for port in self.ports]
        self.processes: dict[int, subprocess.Popen[str]] = {}
        self.started: dict[int, dict[str, Any]] = {}
        for node_id in (1, 2, 3):
            self.start(node_id)
        for node_id in (1, 2, 3):
            self.started[node_id] = self._read(node_id)

    def start(self, node_id: int) -> None:
        self.processes[node_id] = subprocess.Popen(
            [
                sys.executable,
                str(SCRIPT),
                "--child",
                "controller",
                "--dir",
                str(self.directory),
                "--node-id",
                str(node_id),
                "--ports",
                ",".join(map(str, self.ports)),
                "--snapshot",
                self.snapshot,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=CHILD_ENV,
        )

    def restart(self, node_id: int) -> None:
        self.start(node_id)
        self.started[node_id] = self._read(node_id)

    def _read(self, node_id: int) -> dict[str, Any]:
        stdout = self.processes[node_id].stdout
        assert stdout is not None
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"controller {node_id} died; see {self.directory}")
        result: dict[str, Any] = json.loads(line)
        return result

    def ask(self, node_id: int, line: str) -> dict[str, Any]:
        stdin = self.processes[node_id].stdin
        assert stdin is not None
        stdin.write(line + "\n")
        stdin.flush()
        return self._read(node_id)

    def alive(self) -> list[int]:
        return [n for n, p in self.processes.items() if p.poll() is None]

    def active(self) -> int | None:
        for node_id in self.alive():
            if self.ask(node_id, "status")["active"]:
                return node_id
        return None

    def wait_active(self) -> int:
        active: int = wait_for(self.active, "an active controller")
        return active

    def kill(self, node_id: int) -> None:
        self.processes[node_id].send_signal(signal.SIGKILL)
        self.processes[node_id].wait()

    def stop(self, node_id: int) -> None:
        self.ask(node_id, "stop")
        self.processes[node_id].wait(60)

    def cpu_seconds(self, node_id: int) -> float:
        return process_cpu_seconds(self.processes[node_id].pid)

    def close(self) -> None:
        for process in self.processes.values():
            with contextlib.suppress(OSError):
                assert process.stdin is not None
                process.stdin.close()
        for process in self.processes.values():
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def when(condition: Callable[[], bool], what: str) -> float:
    """The moment (``time.monotonic``) ``condition`` was first seen to hold."""
    moment: float = wait_for(lambda: condition() and time.monotonic(), what)
    return moment


def wait_for(probe: Callable[[], Any], what: str, deadline_s: float = DEADLINE_S) -> Any:
    began = time.monotonic()
    while time.monotonic() - began < deadline_s:
        value = probe()
        if value:
            return value
        time.sleep(POLL_S)
    raise RuntimeError(f"timed out after {deadline_s:.0f} s waiting for {what}")


# ------------------------------------------------------------------------ broker hosts


class LifecycleBroker:
    """A broker's registration and heartbeats, and nothing else (see the module docstring)."""

    def __init__(
        self,
        broker_id: int,
        channel: Any,
        counters: dict[str, int],
        metadata_offset: Callable[[], int] = lambda: 2**62,
    ) -> None:
        """``metadata_offset``: what each heartbeat reports as replayed; a broker with no image
        reports past any offset, so the controller unfences it at once."""
        self.broker_id = broker_id
        self.channel = channel
        self.counters = counters
        self.metadata_offset = metadata_offset
        self.epoch: int | None = None
        self.unfenced = False
        self.want_shut_down = False
        self.shut_down_at: float | None = None
        self.last_heartbeat = 0.0
        self.task = asyncio.get_running_loop().create_task(self.run())

    async def run(self) -> None:
        from raftmeta.rpc import broker_pb2 as bpb

        while True:
            try:
                if self.epoch is None:
                    reply = await self.channel.call(
                        "BrokerLifecycle/RegisterBroker",
                        bpb.RegisterBrokerRequest(
                            broker_id=self.broker_id,
                            cluster_id=CLUSTER_ID,
                            incarnation_id=incarnation(self.broker_id),
                            listeners=[bpb.Listener(name="PLAINTEXT", host="127.0.0.1", port=9092)],
                            rack=rack_of(self.broker_id),
                        ),
                    )
                    if reply.header.error_code:
                        raise RuntimeError(f"RegisterBroker: {reply.header}")
                    self.epoch = reply.broker_epoch
                reply = await self.channel.call(
                    "BrokerLifecycle/BrokerHeartbeat",
                    bpb.BrokerHeartbeatRequest(
                        broker_id=self.broker_id,
                        broker_epoch=self.epoch,
                        current_metadata_offset=self.metadata_offset(),
                        want_fence=False,
                        want_shut_down=self.want_shut_down,
                    ),
                )
                self.last_heartbeat = time.monotonic()
                if not reply.header.error_code:
                    if reply.should_shut_down:
                        self.shut_down_at = time.monotonic()
                        return
                    if reply.is_fenced and self.unfenced and not self.want_shut_down:
                        self.counters["false_fencings"] += 1
                    self.unfenced = not reply.is_fenced
            except Exception as error:  # a failover: retried at the next beat
                logging.getLogger(__name__).debug("broker %d: %s", self.broker_id, error)
            await asyncio.sleep(SHUTDOWN_HEARTBEAT_S if self.want_shut_down else HEARTBEAT_S)


async def host_main(args: argparse.Namespace) -> None:
    """A host of lifecycle brokers (``add``, ``kill``, ``shutdown``, ``revive``, ``status``)."""
    from raftmeta.channel import ControllerChannel

    logging.basicConfig(level=logging.WARNING)
    channel = ControllerChannel(args.servers, request_timeout_ms=int(SESSION_TIMEOUT_S * 1000))
    counters = {"false_fencings": 0}
    brokers: dict[int, LifecycleBroker] = {}
    reader = await stdin_lines()
    while line := (await reader.readline()).decode().strip():
        words = line.split()
        ids = [int(word) for word in words[1].split(",")] if len(words) > 1 else []
        if words[0] == "add":
            for broker_id in ids:
                brokers[broker_id] = LifecycleBroker(broker_id, channel, counters)
                await asyncio.sleep(0.002)  # spread the first heartbeats over the interval
            answer({"brokers": len(brokers)})
        elif words[0] == "kill":
            last = {}
            for broker_id in ids:
                broker = brokers.pop(broker_id)
                broker.task.cancel()
                last[broker_id] = broker.last_heartbeat
            answer({"last_heartbeat": last})
        elif words[0] == "shutdown":
            for broker_id in ids:
                brokers[broker_id].want_shut_down = True
            answer({"asked": time.monotonic()})
        elif words[0] == "shut":
            answer({"at": {b: brokers[b].shut_down_at for b in ids}})
        elif words[0] == "revive":
            for broker_id in ids:
                old = brokers.pop(broker_id, None)
                if old is not None:
                    old.task.cancel()
                brokers[broker_id] = LifecycleBroker(broker_id, channel, counters)
            answer({"brokers": len(brokers)})
        elif words[0] == "status":
            answer(
                {
                    "unfenced": sum(b.unfenced for b in brokers.values()),
                    "false_fencings": counters["false_fencings"],
                    "cpu": time.process_time(),
                    "rss": rss_bytes(),
                }
            )
    await channel.close()


async def followers_main(args: argparse.Namespace) -> None:
    """A host of real ``Broker`` objects (``add``, ``watch``, ``seen``, ``restart``)."""
    from raftmeta.broker import Broker, BrokerSettings
    from raftmeta.storage import MetadataDir

    logging.basicConfig(level=logging.WARNING)
    voters = {index + 1: server for index, server in enumerate(args.servers.split(","))}
    brokers: dict[int, Any] = {}
    seen: dict[str, dict[int, float]] = {}

    async def start(broker_id: int) -> Any:
        data_dir = Path(args.dir) / f"follower-{broker_id}"
        MetadataDir.format(data_dir, broker_id, CLUSTER_ID, ignore_formatted=True)
        broker = Broker(
            BrokerSettings(
                broker_id=broker_id, voters=voters, data_dir=data_dir, cluster_id=CLUSTER_ID
            )
        )
        await broker.start()
        return broker

    async def watch(name: str) -> None:
        times = seen[name] = {}
        while len(times) < len(brokers):
            for broker_id, broker in brokers.items():
                if broker_id not in times and broker.image.topic_by_name(name) is not None:
                    times[broker_id] = time.monotonic()
            await asyncio.sleep(0.002)

    reader = await stdin_lines()
    watchers: list[asyncio.Task[None]] = []
    while line := (await reader.readline()).decode().strip():
        words = line.split()
        if words[0] == "add":
            for broker_id in range(int(words[1]), int(words[1]) + int(words[2])):
                brokers[broker_id] = await start(broker_id)
            answer({"brokers": len(brokers)})
        elif words[0] == "offsets":
            answer({"offsets": [b.metadata_offset for b in brokers.values()], "rss": rss_bytes()})
        elif words[0] == "watch":
            watchers.append(asyncio.get_running_loop().create_task(watch(words[1])))
            answer({"watching": words[1]})
        elif words[0] == "seen":
            answer({"seen": seen.get(words[1], {})})
        elif words[0] == "stop":  # a clean stop, as a restart does it
            stopping = brokers.pop(int(words[1]))
            await stopping.controlled_shutdown()
            await stopping.stop()
            answer({"stopped": True})
        elif words[0] == "restart":
            broker_id, target = int(words[1]), int(words[2])
            began = time.monotonic()
            broker = brokers[broker_id] = await start(broker_id)
            while broker.metadata_offset < target:
                await asyncio.sleep(0.005)
            answer({"catch_up_s": time.monotonic() - began})
    for broker in brokers.values():
        await broker.stop()


async def image_host_main(args: argparse.Namespace) -> None:
    """A host of the cluster's brokers as real ``Broker`` objects, each following the log into
    its own image (``add``, ``watch``, ``seen``, ``status``).

    Each starts from the cluster's snapshot, linked into its directory as a broker restarted
    with its log on disk would have it, so the controllers serve no snapshot fetches; it
    registers under the incarnation the snapshot holds, heartbeats at the shipped defaults
    (every 2 s, session 9 s) over one channel the host's brokers share, and long-polls Fetch
    from the leader under its own id. A false fencing is a broker going from RUNNING back to
    RECOVERY while it is alive. Propagation is timed by each broker's partition listener, which
    runs once the committed batch is in its image.
    """
    from benchmarks.broker_hosts import Borrowed
    from raftmeta.broker import Broker, BrokerSettings
    from raftmeta.broker.broker import BrokerState
    from raftmeta.broker.replica import PartitionChange
    from raftmeta.broker.settings import DEFAULT_SESSION_TIMEOUT_MS
    from raftmeta.channel import ControllerChannel
    from raftmeta.storage import MetadataDir
    from raftmeta.storage.data_dir import METADATA_PARTITION_DIR

    logging.basicConfig(level=logging.WARNING)
    voters = {index + 1: server for index, server in enumerate(args.servers.split(","))}
    shared = ControllerChannel(args.servers, request_timeout_ms=DEFAULT_SESSION_TIMEOUT_MS)
    snapshot = Path(args.snapshot)
    brokers: dict[int, Broker] = {}
    counters = {"false_fencings": 0}
    watched: dict[str, dict[int, float]] = {}
    """Topic name → broker id → when that broker's image first held the topic."""

    def count_false_fencing(old: BrokerState, new: BrokerState) -> None:
        if old is BrokerState.RUNNING and new is BrokerState.RECOVERY:
            counters["false_fencings"] += 1

    def seen_by(broker_id: int, broker: Broker) -> Callable[[int, Sequence[PartitionChange]], None]:
        def on_change(offset: int, changes: Sequence[PartitionChange]) -> None:
            now = time.monotonic()
            for name, seen in watched.items():
                if broker_id not in seen and broker.image.topic_by_name(name) is not None:
                    seen[broker_id] = now

        return on_change

    async def start(broker_id: int) -> Broker:
        data_dir = Path(args.dir) / f"broker-{broker_id}"
        MetadataDir.format(data_dir, broker_id, CLUSTER_ID, ignore_formatted=True)
        linked = data_dir / METADATA_PARTITION_DIR / snapshot.name
        if not linked.exists():
            os.link(snapshot, linked)
        broker = Broker(
            BrokerSettings(
                broker_id=broker_id,
                voters=voters,
                data_dir=data_dir,
                cluster_id=CLUSTER_ID,
                rack=rack_of(broker_id),
            ),
            channel=Borrowed(shared),
        )
        broker.incarnation_id = incarnation(broker_id)
        broker.on_state_change(count_false_fencing)
        broker.on_partition_change(seen_by(broker_id, broker))
        await broker.start()
        return broker

    reader = await stdin_lines()
    while line := (await reader.readline()).decode().strip():
        words = line.split()
        if words[0] == "add":
            for broker_id in (int(word) for word in words[1].split(",")):
                brokers[broker_id] = await start(broker_id)
            answer({"brokers": len(brokers)})
        elif words[0] == "watch":
            watched[words[1]] = {}
            answer({"watching": words[1]})
        elif words[0] == "seen":
            answer({"seen": watched.get(words[1], {})})
        elif words[0] == "status":
            answer(
                {
                    "unfenced": sum(b.state is BrokerState.RUNNING for b in brokers.values()),
                    "false_fencings": counters["false_fencings"],
                    "min_offset": min((b.metadata_offset for b in brokers.values()), default=-1),
                    "cpu": time.process_time(),
                    "rss": rss_bytes(),
                }
            )
    for broker in brokers.values():
        await broker.stop()
    await shared.close()


async def shared_fetch_host_main(args: argparse.Namespace) -> None:
    """A host of brokers that each hold an image and a session, fed by one observer.

    One observer node per host fetches the committed log from the leader (so the controllers
    serve one fetcher per host, not one per broker) and hands every batch to each broker's
    own ``MetadataReplica``, the replay a ``Broker`` runs, so every broker replays it into its
    own image; each broker heartbeats on its own at the shipped defaults, reporting the offset
    its image has reached. Commands as ``image_host_main``'s; ``add`` comes once, with all of
    the host's brokers, before the observer starts (it loads the cluster's snapshot into every
    image on a worker thread).
    """
    from benchmarks.broker_hosts import ReplicaFanOut
    from raftmeta.broker.replica import MetadataReplica, PartitionChange
    from raftmeta.broker.settings import DEFAULT_SESSION_TIMEOUT_MS
    from raftmeta.channel import ControllerChannel
    from raftmeta.quorum.client import RaftClient
    from raftmeta.quorum.grpc_server import serve_raft
    from raftmeta.quorum.node import RaftNode
    from raftmeta.quorum.settings import STREAM, NodeSettings
    from raftmeta.quorum.transport_choice import node_connect
    from raftmeta.storage import MetadataDir
    from raftmeta.storage.data_dir import METADATA_PARTITION_DIR

    logging.basicConfig(level=logging.WARNING)
    voters = {index + 1: server for index, server in enumerate(args.servers.split(","))}
    channel = ControllerChannel(args.servers, request_timeout_ms=DEFAULT_SESSION_TIMEOUT_MS)
    counters = {"false_fencings": 0}
    brokers: dict[int, LifecycleBroker] = {}
    replicas: dict[int, MetadataReplica] = {}
    watched: dict[str, dict[int, float]] = {}
    """Topic name → broker id → when that broker's image first held the topic."""

    def seen_by(broker_id: int, replica: MetadataReplica) -> Callable[..., None]:
        def on_change(offset: int, changes: Sequence[PartitionChange]) -> None:
            now = time.monotonic()
            for name, seen in watched.items():
                if broker_id not in seen and replica.image.topic_by_name(name) is not None:
                    seen[broker_id] = now

        return on_change

    def offset_of(fan_out: ReplicaFanOut, replica: MetadataReplica) -> Callable[[], int]:
        return lambda: fan_out.metadata_offset(replica)

    node: RaftNode | None = None
    server: Any = None
    fan_out: ReplicaFanOut | None = None
    reader = await stdin_lines()
    while line := (await reader.readline()).decode().strip():
        words = line.split()
        if words[0] == "add":
            ids = [int(word) for word in words[1].split(",")]
            for broker_id in ids:
                replica = replicas[broker_id] = MetadataReplica(broker_id, lambda: None)
                replica.on_partition_change(seen_by(broker_id, replica))
            fan_out = ReplicaFanOut(list(replicas.values()))
            # Sessions first: a broker of the snapshot that stays silent while its host loads
            # is fenced. Until its image holds its registration, a heartbeat reports an offset
            # that keeps it from being unfenced, as a catching-up broker's does.
            for broker_id in ids:
                brokers[broker_id] = LifecycleBroker(
                    broker_id, channel, counters, offset_of(fan_out, replicas[broker_id])
                )
                await asyncio.sleep(0.002)  # spread the first heartbeats over the interval
            data_dir = Path(args.dir) / f"observer-{args.node_id}"
            MetadataDir.format(data_dir, args.node_id, CLUSTER_ID, ignore_formatted=True)
            snapshot = Path(args.snapshot)
            os.link(snapshot, data_dir / METADATA_PARTITION_DIR / snapshot.name)
            node = RaftNode(
                NodeSettings(
                    node_id=args.node_id, voters=voters, data_dir=data_dir, cluster_id=CLUSTER_ID
                ),
                node_connect(STREAM, None),
            )
            RaftClient(node, fan_out, snapshot_source=fan_out.snapshot_work)
            server = await serve_raft(node)
            await node.start(voters)
            while fan_out.metadata_offset(replicas[ids[0]]) < 0:
                await asyncio.sleep(0.05)  # the snapshot's load, on the node's worker thread
            answer({"brokers": len(brokers)})
        elif words[0] == "spread":
            assert fan_out is not None
            began = time.process_time()
            fan_out.spread()
            answer({"images": len(replicas), "cpu_s": time.process_time() - began})
        elif words[0] == "watch":
            watched[words[1]] = {}
            answer({"watching": words[1]})
        elif words[0] == "seen":
            answer({"seen": watched.get(words[1], {})})
        elif words[0] == "status":
            answer(
                {
                    "unfenced": sum(b.unfenced for b in brokers.values()),
                    "false_fencings": counters["false_fencings"],
                    "min_offset": min((r.metadata_offset for r in replicas.values()), default=-1),
                    "cpu": time.process_time(),
                    "rss": rss_bytes(),
                }
            )
    for lifecycle in brokers.values():
        lifecycle.task.cancel()
    if node is not None:
        await node.stop(graceful=False)
        await server.stop()
    await channel.close()


class Child:
    """A host process spoken to one line at a time."""

    def __init__(self, mode: str, *options: str, log: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SCRIPT), "--child", mode, *options],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(log, "wb"),  # noqa: SIM115 (closed with the process)
            text=True,
            env=CHILD_ENV,
        )

    def ask(self, line: str) -> dict[str, Any]:
        self.tell(line)
        return self.reply(line)

    def tell(self, line: str) -> None:
        """Send a command without waiting: several hosts can then work on theirs at once."""
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def reply(self, line: str) -> dict[str, Any]:
        """The answer to the command ``line`` sent by :meth:`tell`."""
        assert self.process.stdout is not None
        reply = self.process.stdout.readline()
        if not reply:
            raise RuntimeError(f"a host died answering {line.split()[0]}")
        result: dict[str, Any] = json.loads(reply)
        return result

    def close(self) -> None:
        assert self.process.stdin is not None
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# ------------------------------------------------------------------------------ driver


def median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def create_topic(servers: Sequence[str], name: str) -> None:
    from raftmeta.admin import AsyncAdminClient, NewTopic

    async with AsyncAdminClient({"bootstrap.servers": ",".join(servers)}) as admin:
        topic = NewTopic(name, num_partitions=1, replication_factor=3)
        await admin.create_topics([topic], request_timeout=120)[name]


class Cluster:
    """The controllers and the broker hosts of one run."""

    def __init__(self, args: argparse.Namespace, root: Path, snapshot: str) -> None:
        from raftmeta.devkit.ports import free_ports

        self.args = args
        ports = free_ports(3)
        servers = ",".join(f"127.0.0.1:{port}" for port in ports)
        self.broker_ids = list(range(FIRST_BROKER_ID, FIRST_BROKER_ID + args.brokers))

        # The brokers' kind (see the module docstring): image brokers, or lifecycle brokers.
        def host_options(index: int) -> tuple[str, ...]:
            images = ("--servers", servers, "--dir", str(root), "--snapshot", snapshot)
            if args.image_brokers == "own-fetch":
                return ("images", *images)
            if args.image_brokers == "shared-fetch":
                return ("shared", *images, "--node-id", str(FIRST_OBSERVER_ID + index))
            return ("host", "--servers", servers)

        # The hosts start with the controllers, not after them: the snapshot's brokers must
        # heartbeat within a session timeout of the controllers' start, or they are fenced.
        self.hosts = [
            Child(*host_options(i), log=root / f"host-{i}.log") for i in range(args.hosts)
        ]
        self.controllers = Controllers(root, snapshot, ports)
        self.host_of: dict[int, Child] = {}
        for index, broker_id in enumerate(self.broker_ids):
            self.host_of[broker_id] = self.hosts[index % args.hosts]
        adds = {
            host: "add " + ",".join(str(b) for b in self.broker_ids if self.host_of[b] is host)
            for host in self.hosts
        }
        for host, line in adds.items():
            host.tell(line)
        for host, line in adds.items():
            host.reply(line)
        self.followers = (
            None
            if args.image_brokers
            else Child(
                "followers", "--servers", servers, "--dir", str(root), log=root / "followers.log"
            )
        )
        self.created = 0

    def unfenced(self) -> int:
        return sum(host.ask("status")["unfenced"] for host in self.hosts)

    def false_fencings(self) -> int:
        return sum(host.ask("status")["false_fencings"] for host in self.hosts)

    def hosts_cpu_seconds(self) -> float:
        """CPU time the broker hosts have used so far, together."""
        return sum(float(host.ask("status")["cpu"]) for host in self.hosts)

    def each_host(self, command: str, ids: Sequence[int]) -> dict[str, Any]:
        merged: dict[str, Any] = {}
        for host in self.hosts:
            mine = [b for b in ids if self.host_of[b] is host]
            if mine:
                for key, value in host.ask(f"{command} " + ",".join(map(str, mine))).items():
                    if isinstance(value, dict):
                        merged.setdefault(key, {}).update(value)
                    else:
                        merged[key] = value
        return merged

    def write(self) -> float:
        """Seconds for one CreateTopics to be acknowledged (committed)."""
        self.created += 1
        began = time.monotonic()
        asyncio.run(create_topic(self.controllers.servers, f"bench-{self.created}"))
        return time.monotonic() - began

    def led_by_other(self, broker_id: int, active: int) -> bool:
        state = self.controllers.ask(active, f"broker {broker_id}")
        return bool(state["fenced"]) and state["leads"] == 0

    def close(self) -> None:
        for child in (*self.hosts, self.followers):
            if child is not None:
                child.close()
        self.controllers.close()


def measure(args: argparse.Namespace, out: Callable[[str], None]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="scale-bench-") as temp:
        root = Path(temp)
        (root / "snapshot").mkdir()
        print(f"writing the snapshot of {args.partitions:,} partitions", flush=True)
        built = run_child(
            "build",
            "--dir",
            str(root / "snapshot"),
            "--partitions",
            str(args.partitions),
            "--brokers",
            str(args.brokers),
            "--seed",
            "33",
        )
        out(
            f"snapshot: {built['bytes'] / 2**20:.0f} MiB, {built['records']:,} records, written "
            f"in {built['seconds']:.0f} s"
        )
        loads = []
        for run in range(args.runs):
            print(f"run {run + 1}/{args.runs}: loading the snapshot in a fresh process", flush=True)
            loads.append(run_child("load", "--snapshot", built["path"], "--gc-paused"))
        figures["snapshot_load_s"] = median([load["load"][0] for load in loads])
        figures["image_rss_mib"] = median([load["image_rss"] / 2**20 for load in loads])
        out(
            f"snapshot load (fresh process, collector paused): "
            f"{figures['snapshot_load_s']:.1f} s wall, "
            f"{median([load['load'][1] for load in loads]):.1f} s CPU; image RSS "
            f"{figures['image_rss_mib']:.0f} MiB"
        )
        print("starting three controllers holding the snapshot", flush=True)
        began = time.monotonic()
        cluster = Cluster(args, root, built["path"])
        try:
            run_cluster(args, cluster, figures, out, began)
        finally:
            cluster.close()
    return figures


def run_cluster(
    args: argparse.Namespace,
    cluster: Cluster,
    figures: dict[str, Any],
    out: Callable[[str], None],
    began: float,
) -> None:
    controllers = cluster.controllers
    controllers.wait_active()
    wait_for(lambda: cluster.unfenced() >= args.brokers, "every broker unfenced")
    out(f"three controllers and {args.brokers:,} brokers up after {time.monotonic() - began:.0f} s")
    if args.image_brokers == "shared-fetch":
        spread = [host.ask("spread") for host in cluster.hosts]
        out(
            f"each broker's image copied from its host's first: "
            f"{max(s['cpu_s'] for s in spread):.2f} s of CPU per host at most"
        )
    rss = {n: controllers.ask(n, "status")["rss"] / 2**20 for n in controllers.alive()}
    host_rss = [host.ask("status")["rss"] / 2**20 for host in cluster.hosts]
    out(
        "RSS: controllers "
        + ", ".join(f"{value:.0f}" for value in rss.values())
        + f" MiB; {'image' if args.image_brokers else 'lifecycle'} broker hosts "
        f"{max(host_rss):.0f} MiB at most ({args.brokers // args.hosts} brokers each)"
    )
    figures["controller_rss_mib"] = max(rss.values())
    figures["broker_host_rss_mib"] = max(host_rss)

    if args.image_brokers:
        idle(args, cluster, figures, out)
        propagation_to_all(args, cluster, figures, out)
        figures["false_fencings"] = cluster.false_fencings()
        out(f"false fencings over the whole run: {figures['false_fencings']}")
        return
    if args.only_idle:
        idle(args, cluster, figures, out)
        figures["false_fencings"] = cluster.false_fencings()
        out(f"false fencings over the whole run: {figures['false_fencings']}")
        return
    if not args.only_rack_loss:
        stages(args, cluster, figures, out)
    rack_loss(args, cluster, figures, out)


def idle(
    args: argparse.Namespace,
    cluster: Cluster,
    figures: dict[str, Any],
    out: Callable[[str], None],
) -> None:
    """The cluster left alone for ``--idle`` seconds: the active controller's CPU per broker,
    the broker hosts' CPU, and the live brokers fenced meanwhile (each counted by its host)."""
    controllers = cluster.controllers
    active = controllers.wait_active()
    fencings_before = cluster.false_fencings()
    hosts_before = cluster.hosts_cpu_seconds()
    cpu_before = controllers.cpu_seconds(active)
    began = time.monotonic()
    time.sleep(args.idle)  # the measured interval itself, not a synchronisation
    held = time.monotonic() - began
    idle_cpu = (controllers.cpu_seconds(active) - cpu_before) / held
    hosts_cpu = (cluster.hosts_cpu_seconds() - hosts_before) / held
    figures["idle_s"] = held
    figures["idle_false_fencings"] = cluster.false_fencings() - fencings_before
    figures["controller_cpu_per_broker_pct"] = 100 * idle_cpu / args.brokers
    figures["broker_hosts_cpu_pct"] = 100 * hosts_cpu
    out(
        f"idle {held:.0f} s: active controller {100 * idle_cpu:.1f}% of a core "
        f"({figures['controller_cpu_per_broker_pct']:.4f}% per broker), broker hosts "
        f"{100 * hosts_cpu:.1f}% of a core; live brokers fenced meanwhile: "
        f"{figures['idle_false_fencings']} (heartbeat every {HEARTBEAT_S:.0f} s, session "
        f"{SESSION_TIMEOUT_S:.0f} s); load average now {load_average()}"
    )


def propagation_to_all(
    args: argparse.Namespace,
    cluster: Cluster,
    figures: dict[str, Any],
    out: Callable[[str], None],
) -> None:
    """CreateTopics acknowledged → each of the cluster's image brokers holds it in its image,
    over ``--samples`` topics created one after another."""
    controllers = cluster.controllers
    spreads: list[float] = []
    for sample in range(args.samples):
        name = f"seen-{sample}"
        for host in cluster.hosts:
            host.ask(f"watch {name}")
        asyncio.run(create_topic(controllers.servers, name))
        acked = time.monotonic()

        def seen_by_all(topic: str = name) -> list[float] | None:
            seen = [
                at for host in cluster.hosts for at in host.ask(f"seen {topic}")["seen"].values()
            ]
            return seen if len(seen) >= args.brokers else None

        seen = wait_for(seen_by_all, "every broker's image to hold the topic")
        spreads.extend(max(0.0, at - acked) for at in seen)
        print(
            f"sample {sample + 1}: every broker's image held it after "
            f"{1000 * max(spreads[-len(seen) :]):.0f} ms",
            flush=True,
        )
    figures["propagation_brokers"] = args.brokers
    figures["propagation_partitions"] = args.partitions
    figures["propagation_p50_ms"] = 1000 * percentile(spreads, 0.5)
    figures["propagation_p99_ms"] = 1000 * percentile(spreads, 0.99)
    figures["propagation_max_ms"] = 1000 * max(spreads)
    out(
        f"propagation, acknowledged → the images of all {args.brokers:,} brokers "
        f"({args.partitions:,} partitions), {args.samples} topics, {len(spreads):,} samples: "
        f"p50 {figures['propagation_p50_ms']:.0f} ms, p99 {figures['propagation_p99_ms']:.0f} "
        f"ms, max {figures['propagation_max_ms']:.0f} ms"
    )


def stages(
    args: argparse.Namespace,
    cluster: Cluster,
    figures: dict[str, Any],
    out: Callable[[str], None],
) -> None:
    """Everything between start-up and the rack loss."""
    controllers = cluster.controllers
    followers = cluster.followers
    assert followers is not None
    idle(args, cluster, figures, out)

    # Propagation to real brokers' images.
    active = controllers.wait_active()
    followers.ask(f"add {FIRST_FOLLOWER_ID} {args.followers}")
    wait_for(
        lambda: min(followers.ask("offsets")["offsets"]) >= 0,
        "the follower brokers' first metadata",
    )
    spreads: list[float] = []
    for sample in range(args.samples):
        name = f"seen-{sample}"
        followers.ask(f"watch {name}")
        asyncio.run(create_topic(controllers.servers, name))
        acked = time.monotonic()

        def seen_by_all(topic: str = name) -> dict[str, float] | None:
            seen: dict[str, float] = followers.ask(f"seen {topic}")["seen"]
            return seen if len(seen) >= args.followers else None

        seen = wait_for(seen_by_all, "every follower to see the topic")
        spreads.extend(max(0.0, at - acked) for at in seen.values())
    figures["propagation_p99_ms"] = 1000 * percentile(spreads, 0.99)
    out(
        f"propagation, acknowledged → {args.followers} follower images, {len(spreads)} samples: "
        f"p50 {1000 * percentile(spreads, 0.5):.0f} ms, p99 {figures['propagation_p99_ms']:.0f} "
        f"ms, max {1000 * max(spreads):.0f} ms"
    )

    # A restarted follower's catch-up.
    followers.ask(f"stop {FIRST_FOLLOWER_ID}")
    for _ in range(20):
        cluster.write()
    target = controllers.ask(active, "status")["offset"]
    catch_up = followers.ask(f"restart {FIRST_FOLLOWER_ID} {target}")["catch_up_s"]
    figures["catch_up_s"] = catch_up
    out(f"a follower broker restarted after 20 writes caught up in {catch_up:.2f} s")

    kills: list[float] = []
    graceful: list[float] = []
    for run in range(args.runs):
        cluster.write()
        active = controllers.wait_active()
        killed_at = time.monotonic()
        controllers.kill(active)
        cluster.write()
        kills.append(time.monotonic() - killed_at)
        print(f"run {run + 1}: kill -9 → committed write {kills[-1]:.2f} s", flush=True)
        controllers.restart(active)
        active = controllers.wait_active()
        cluster.write()
        stopped_at = time.monotonic()
        controllers.stop(active)
        cluster.write()
        graceful.append(time.monotonic() - stopped_at)
        print(f"run {run + 1}: graceful stop → committed write {graceful[-1]:.2f} s", flush=True)
        controllers.restart(active)
    figures["failover_kill_s"] = median(kills)
    figures["failover_graceful_s"] = median(graceful)
    out(
        f"controller failover → first committed CreateTopics: kill -9 "
        f"{figures['failover_kill_s']:.2f} s, graceful {figures['failover_graceful_s']:.2f} s "
        f"(runs: {', '.join(f'{k:.2f}' for k in kills)} / "
        f"{', '.join(f'{g:.2f}' for g in graceful)})"
    )
    wait_for(lambda: cluster.unfenced() >= args.brokers, "every broker unfenced again")

    shutdowns: list[float] = []
    moved: list[float] = []
    for run in range(args.runs):
        broker_id = cluster.broker_ids[run * 7 % args.brokers]
        active = controllers.wait_active()
        leads = controllers.ask(active, f"broker {broker_id}")["leads"]
        asked = cluster.each_host("shutdown", [broker_id])["asked"]

        def leads_nothing(b: int = broker_id, a: int = active) -> bool:
            return bool(controllers.ask(a, f"broker {b}")["leads"] == 0)

        def told_to_go(b: int = broker_id) -> float | None:
            at: float | None = cluster.each_host("shut", [b])["at"][str(b)]
            return at

        moved_at = when(leads_nothing, "the shutting-down broker to lead nothing")
        done: float = wait_for(told_to_go, "SHUTDOWN_NOW")
        moved.append(moved_at - asked)
        shutdowns.append(done - asked)
        print(f"run {run + 1}: broker {broker_id} (led {leads}) shut down in {shutdowns[-1]:.2f} s")
        cluster.each_host("revive", [broker_id])
    figures["controlled_shutdown_s"] = median(shutdowns)
    out(
        f"controlled shutdown → SHUTDOWN_NOW {figures['controlled_shutdown_s']:.2f} s "
        f"(every leadership moved after {median(moved):.2f} s; heartbeats every "
        f"{SHUTDOWN_HEARTBEAT_S * 1000:.0f} ms while it asks)"
    )
    wait_for(lambda: cluster.unfenced() >= args.brokers, "every broker unfenced again")

    from_kill: list[float] = []
    from_expiry: list[float] = []
    for run in range(args.runs):
        broker_id = cluster.broker_ids[(run * 13 + 3) % args.brokers]
        active = controllers.wait_active()
        last = cluster.each_host("kill", [broker_id])["last_heartbeat"]
        killed_at = time.monotonic()
        last_beat = float(next(iter(last.values())))

        def moved_away(b: int = broker_id, a: int = active) -> bool:
            return cluster.led_by_other(b, a)

        done = when(moved_away, "the killed broker's partitions led by others")
        from_kill.append(done - killed_at)
        from_expiry.append(done - (last_beat + SESSION_TIMEOUT_S))
        cluster.each_host("revive", [broker_id])
    figures["broker_kill_s"] = median(from_kill)
    figures["broker_kill_after_expiry_s"] = median(from_expiry)
    out(
        f"kill -9 of a broker → fenced, all it led led again: {figures['broker_kill_s']:.2f} s "
        f"from the kill, {figures['broker_kill_after_expiry_s']:.2f} s from its session's expiry"
    )
    wait_for(lambda: cluster.unfenced() >= args.brokers, "every broker unfenced again")


def rack_loss(
    args: argparse.Namespace,
    cluster: Cluster,
    figures: dict[str, Any],
    out: Callable[[str], None],
) -> None:
    controllers = cluster.controllers
    racks: list[float] = []
    holds: list[dict[str, Any]] = []
    for run in range(args.rack_runs):
        rack = run % RACKS
        lost = [b for b in cluster.broker_ids if b % RACKS == rack]
        active = controllers.wait_active()
        fenced_before = controllers.ask(active, "status")["fenced"]
        controllers.ask(active, "holds")
        last = cluster.each_host("kill", lost)["last_heartbeat"]
        expiry = max(float(v) for v in last.values()) + SESSION_TIMEOUT_S

        # A broker's fencing record comes in the last slice of its fencing, after every
        # leadership it held has moved: once all are fenced, whatever can be led again is.
        # (Partitions can stay leaderless: lifecycle brokers never rejoin ISRs, so earlier
        # stages leave some ISRs with one member, which may be in the lost rack.)
        def all_led(a: int = active, count: int = fenced_before + len(lost)) -> bool:
            return bool(controllers.ask(a, "status")["fenced"] >= count)

        wait_for(all_led, "every partition led again after the rack loss")
        racks.append(time.monotonic() - expiry)
        holds.append(controllers.ask(active, "holds"))
        print(f"rack {rack}: led again {racks[-1]:.2f} s after the last expiry; {holds[-1]}")
        cluster.each_host("revive", lost)
        wait_for(lambda: cluster.unfenced() >= args.brokers, "every broker unfenced again")
    figures["rack_loss_s"] = median(racks)
    longest = max(holds, key=lambda h: h["s"])
    figures["max_queue_hold_ms"] = 1000 * longest["s"]
    figures["max_queue_hold_cpu_ms"] = 1000 * max(h["cpu_s"] for h in holds)
    out(
        f"rack of {args.brokers // RACKS} brokers lost → every partition led again "
        f"{figures['rack_loss_s']:.2f} s after the last session expired; longest queue hold "
        f"{figures['max_queue_hold_ms']:.0f} ms ({longest['name']}), "
        f"{figures['max_queue_hold_cpu_ms']:.0f} ms of CPU"
    )
    figures["false_fencings"] = cluster.false_fencings()
    out(f"false fencings over the whole run: {figures['false_fencings']}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--partitions", type=int, default=2_000_000)
    parser.add_argument("--brokers", type=int, default=1_000)
    parser.add_argument("--hosts", type=int, default=4, help="lifecycle broker host processes")
    parser.add_argument("--followers", type=int, default=2, help="real brokers with images")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rack-runs", type=int, default=1)
    parser.add_argument("--samples", type=int, default=20, help="propagation topics")
    parser.add_argument("--idle", type=float, default=60.0, help="idle seconds measured")
    parser.add_argument("--json", type=Path, help="write the medians here")
    parser.add_argument(
        "--image-brokers",
        choices=["own-fetch", "shared-fetch"],
        help="the cluster's brokers hold images (with a smaller --partitions): own-fetch runs "
        "each as a Broker with its own observer, shared-fetch feeds each broker's replica from "
        "one observer per host; measures the idle hold and propagation to every broker",
    )
    parser.add_argument(
        "--only-idle",
        action="store_true",
        help="measure only the idle hold (--idle seconds) and its false fencings",
    )
    parser.add_argument(
        "--only-rack-loss",
        action="store_true",
        help="skip every stage between start-up and the rack loss",
    )
    parser.add_argument(
        "--child",
        choices=["build", "controller", "host", "images", "shared", "followers", "load"],
        help=argparse.SUPPRESS,
    )
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=33, help=argparse.SUPPRESS)
    parser.add_argument("--node-id", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--ports", help=argparse.SUPPRESS)
    parser.add_argument("--snapshot", help=argparse.SUPPRESS)
    parser.add_argument("--servers", help=argparse.SUPPRESS)
    parser.add_argument("--gc-paused", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "build":
        child_build(args)
        return 0
    if args.child == "load":
        from benchmarks.metadata_bench import child_load

        child_load(args)
        return 0
    if args.child == "controller":
        from raftmeta.quorum import collector, event_loop

        collector.tune_for_server()
        event_loop.run(controller_main(args))
        return 0
    if args.child == "host":
        asyncio.run(host_main(args))
        return 0
    if args.child == "followers":
        asyncio.run(followers_main(args))
        return 0
    if args.child == "shared":
        import faulthandler

        faulthandler.register(signal.SIGUSR1)  # where a host is stuck: kill -USR1 <pid>
        asyncio.run(shared_fetch_host_main(args))
        return 0
    if args.child == "images":
        if os.environ.get("PROFILE_HOST"):
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
            try:
                asyncio.run(image_host_main(args))
            finally:
                prof.disable()
                prof.dump_stats(os.environ["PROFILE_HOST"] + f".{os.getpid()}")
            return 0
        asyncio.run(image_host_main(args))
        return 0
    report = Report(RESULTS)
    report.start()
    kind = (
        f"{args.hosts} lifecycle broker hosts, {args.followers} follower brokers"
        if args.image_brokers is None
        else f"{args.hosts} hosts of image-holding brokers ({args.image_brokers})"
    )
    report.out(
        f"{args.partitions:,} partitions (RF {REPLICATION_FACTOR}) on {args.brokers:,} brokers "
        f"in {RACKS} racks; {kind}; medians of {args.runs} runs"
    )
    figures = measure(args, report.out)
    earlier = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    report.save()
    # Each run is a section of its own, under the command that made it; earlier ones stay.
    command = f"$ benchmarks/scale_bench.py {' '.join(sys.argv[1:])}\n"
    RESULTS.write_text(earlier + command + RESULTS.read_text(encoding="utf-8"), encoding="utf-8")
    if args.json is not None:
        keys = (
            "image_rss_mib",
            "snapshot_load_s",
            "failover_kill_s",
            "failover_graceful_s",
            "controlled_shutdown_s",
            "broker_kill_s",
            "rack_loss_s",
            "max_queue_hold_ms",
            "propagation_p99_ms",
            "false_fencings",
        )
        document = {key: figures.get(key) for key in keys}
        document["extra"] = {k: v for k, v in figures.items() if k not in keys}
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
