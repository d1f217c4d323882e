"""How many brokers one quorum carries: embedded brokers added in stages against three
controller processes, each broker heartbeating and fetching the log as in production.

Brokers run as embedded ``Broker`` objects, many to a process (``--hosts`` processes share
them), on the shipped defaults (heartbeat every 2 s, session timeout 9 s, an observer
long-polling Fetch). At each stage the brokers are added, the benchmark waits until every one
is unfenced, then holds for ``--hold`` seconds and reports:

* false fencings: a live broker fenced by the controller (its session expired because
  heartbeats were late), counted by every broker itself;
* the leader's CPU per broker (percent of one core) over the hold;
* propagation: from a CreateTopics acknowledgement to every broker's image holding it.

It stops at the first stage with a false fencing or with brokers that never unfence: the
largest clean stage is the ceiling on this machine.

``--channels`` picks how a host's brokers reach the controllers: ``per-broker`` (each its own
``ControllerChannel``, as one broker per process has) or ``shared`` (one channel per host:
every broker still sends its own heartbeats, but over one HTTP/2 connection per controller,
with one keepalive and one leader check for all). Naming both (``per-broker,shared``) runs
the stages once with each, one after the other, to compare them in one run.

The issue's figure wants 10-minute holds (``--hold 600``); the default is shorter so a run
fits in a coffee break.

Run: ``.venv/bin/python benchmarks/broker_scale_bench.py [--stages 50,100,200,400,800,1000]
[--hold 60] [--hosts 4] [--channels shared]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.broker_hosts import Borrowed
from benchmarks.machine import Report

RESULTS = Path(__file__).resolve().parent / "results" / "broker_scale_bench.txt"
SCRIPT = Path(__file__).resolve()
FIRST_BROKER_ID = 1_000
UNFENCE_DEADLINE_S = 180.0
PROPAGATION_DEADLINE_S = 60.0


# ------------------------------------------------------------------------- broker host


class FencingCounter(logging.Handler):
    """Counts the brokers' own reports of being fenced by the controller while alive."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "fenced by the controller" in record.getMessage():
            self.count += 1


async def host_main(args: argparse.Namespace) -> None:
    """One broker host: starts brokers when told (``add <first> <count>``), answers
    ``status`` with its brokers' states and offsets, and stops them when stdin closes."""
    from raftmeta.broker import Broker, BrokerSettings
    from raftmeta.broker.broker import BrokerState
    from raftmeta.storage import MetadataDir

    counter = FencingCounter()
    logging.getLogger("raftmeta").addHandler(counter)
    logging.getLogger("raftmeta").setLevel(logging.WARNING)
    voters = {int(k): v for k, v in json.loads(args.voters).items()}
    brokers: list[Any] = []
    shared: Any = None
    if args.channels == "shared":
        from raftmeta.broker.settings import DEFAULT_SESSION_TIMEOUT_MS
        from raftmeta.channel import ControllerChannel

        # What each broker's own channel would be: its voters, its session timeout.
        shared = ControllerChannel(
            ",".join(address for _, address in sorted(voters.items())),
            request_timeout_ms=DEFAULT_SESSION_TIMEOUT_MS,
        )
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    def answer(payload: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(payload) + "\n")
        sys.stdout.flush()

    while line := (await reader.readline()).decode().strip():
        words = line.split()
        if words[0] == "add":
            first, count = int(words[1]), int(words[2])
            for broker_id in range(first, first + count):
                data_dir = Path(args.dir) / f"broker-{broker_id}"
                MetadataDir.format(data_dir, broker_id, args.cluster_id, ignore_formatted=True)
                broker = Broker(
                    BrokerSettings(
                        broker_id=broker_id,
                        voters=voters,
                        data_dir=data_dir,
                        cluster_id=args.cluster_id,
                        rack=f"rack-{broker_id % 10}",
                    ),
                    channel=None if shared is None else Borrowed(shared),
                )
                await broker.start()
                brokers.append(broker)
            answer({"brokers": len(brokers)})
        elif words[0] == "has":
            answer({"with": sum(b.image.topic_by_name(words[1]) is not None for b in brokers)})
        elif words[0] == "status":
            answer(
                {
                    "brokers": len(brokers),
                    "unfenced": sum(b.state is BrokerState.RUNNING for b in brokers),
                    "min_offset": min((b.metadata_offset for b in brokers), default=-1),
                    "fenced_by_controller": counter.count,
                    "cpu_s": time.process_time(),
                }
            )
    for broker in brokers:
        await broker.stop()
    if shared is not None:
        await shared.close()


class Host:
    """A broker host process and its line-per-command channel."""

    def __init__(
        self, index: int, root: Path, voters: dict[int, str], cluster_id: str, channels: str
    ) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(SCRIPT),
                "--child",
                "host",
                "--dir",
                str(root / f"host-{index}"),
                "--voters",
                json.dumps(voters),
                "--cluster-id",
                cluster_id,
                "--channels",
                channels,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(root / f"host-{index}.log", "wb"),  # noqa: SIM115 (closed with the process)
            text=True,
            env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
        )

    def call(self, command: str) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"a broker host died; see its log ({command})")
        result: dict[str, Any] = json.loads(line)
        return result

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# ------------------------------------------------------------------------------ driver


def statuses(hosts: Sequence[Host]) -> list[dict[str, Any]]:
    return [host.call("status") for host in hosts]


def wait_all_unfenced(hosts: Sequence[Host], total: int) -> float | None:
    began = time.monotonic()
    while time.monotonic() - began < UNFENCE_DEADLINE_S:
        if sum(s["unfenced"] for s in statuses(hosts)) >= total:
            return time.monotonic() - began
        time.sleep(0.5)
    return None


async def propagation(servers: str, hosts: Sequence[Host], name: str) -> float | None:
    """Seconds from a CreateTopics acknowledgement until every broker's image holds the
    topic."""
    from raftmeta.admin import AsyncAdminClient
    from raftmeta.admin.types import NewTopic

    async with AsyncAdminClient({"bootstrap.servers": servers}) as admin:
        await admin.create_topics([NewTopic(name, num_partitions=3, replication_factor=3)])[name]
    acked = time.monotonic()
    total = sum(s["brokers"] for s in statuses(hosts))
    while time.monotonic() - acked < PROPAGATION_DEADLINE_S:
        if sum(host.call(f"has {name}")["with"] for host in hosts) >= total:
            return time.monotonic() - acked
        await asyncio.sleep(0.01)
    return None


def run(args: argparse.Namespace, channels: str, out: Any) -> None:
    from benchmarks.metadata_bench import CLUSTER_ID, ControllerProcesses

    stages = [int(value) for value in args.stages.split(",")]
    out(f"controller channels: {channels}")
    with tempfile.TemporaryDirectory(prefix="broker-scale-") as temp:
        root = Path(temp)
        controllers = ControllerProcesses(root)
        # metadata_bench's controllers are nodes 1-3; the brokers' ids start far above.
        voters = {i + 1: s for i, s in enumerate(controllers.servers)}
        hosts = [Host(index, root, voters, CLUSTER_ID, channels) for index in range(args.hosts)]
        started = 0
        try:
            for stage in stages:
                adding = stage - started
                per_host = [
                    adding // args.hosts + (i < adding % args.hosts) for i in range(args.hosts)
                ]
                next_id = FIRST_BROKER_ID + started
                for host, count in zip(hosts, per_host, strict=True):
                    if count:
                        host.call(f"add {next_id} {count}")
                        next_id += count
                started = stage
                print(f"{stage} brokers started; waiting for all to be unfenced", flush=True)
                unfence_s = wait_all_unfenced(hosts, stage)
                if unfence_s is None:
                    out(f"{stage:>6} brokers: not all unfenced within {UNFENCE_DEADLINE_S:.0f} s")
                    break
                before = statuses(hosts)
                cpu_before = controllers.cpu_seconds()
                hold_began = time.monotonic()
                time.sleep(args.hold)  # the measured interval itself, not a synchronisation
                held = time.monotonic() - hold_began
                cpu = [a - b for a, b in zip(controllers.cpu_seconds(), cpu_before, strict=True)]
                after = statuses(hosts)
                fencings = sum(a["fenced_by_controller"] for a in after) - sum(
                    b["fenced_by_controller"] for b in before
                )
                spread = asyncio.run(
                    propagation(",".join(controllers.servers), hosts, f"scale-{stage}")
                )
                leader_pct = 100 * max(cpu) / held
                hosts_cpu = sum(a["cpu_s"] - b["cpu_s"] for a, b in zip(after, before, strict=True))
                out(
                    f"{stage:>6} brokers: unfenced in {unfence_s:5.1f} s; over {held:.0f} s: "
                    f"false fencings {fencings}, leader CPU {leader_pct:5.1f}% of a core "
                    f"({leader_pct / stage:.3f}% per broker), broker hosts "
                    f"{100 * hosts_cpu / held:5.1f}% ({100 * hosts_cpu / held / stage:.3f}% "
                    "per broker); CreateTopics to every broker "
                    + ("-" if spread is None else f"{1000 * spread:.0f} ms")
                )
                if fencings:
                    break
        finally:
            for host in hosts:
                host.close()
            controllers.close()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--stages", default="50,100,200,400,800,1000")
    parser.add_argument("--hold", type=float, default=60.0, help="seconds per stage")
    parser.add_argument("--hosts", type=int, default=4, help="broker host processes")
    parser.add_argument(
        "--channels",
        default="shared",
        help="per-broker, shared, or both comma-separated to compare them in one run",
    )
    parser.add_argument("--child", choices=["host"], help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    parser.add_argument("--voters", help=argparse.SUPPRESS)
    parser.add_argument("--cluster-id", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "host":
        asyncio.run(host_main(args))
        return 0
    report = Report(RESULTS)
    report.start()
    report.out(
        f"three controller processes and {args.hosts} broker host processes on 127.0.0.1, "
        f"shipped defaults (heartbeat 2 s, session 9 s), {args.hold:.0f} s per stage"
    )
    modes = [mode.strip() for mode in args.channels.split(",") if mode.strip()]
    if not modes or set(modes) - {"per-broker", "shared"}:
        parser.error("--channels: per-broker, shared, or both")
    for mode in modes:
        run(args, mode, report.out)
    report.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
