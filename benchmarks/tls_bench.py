"""The cost of TLS on the write path: the same measurement with mutual TLS off and on, in one run.

Each run starts a fresh ``DevCluster`` of real processes on 127.0.0.1: three controllers
(``raftmeta serve``, shipped defaults, fsync on every flush) and three brokers, once plaintext and
once with ``--tls``'s setup (every listener ``CONTROLLER:SSL`` with client certificates required,
ECDSA P-256 certificates from a throwaway CA, so the peers' Fetch and Vote calls and the brokers'
heartbeats are encrypted and authenticated too). Against each quorum, through the Admin gRPC
service with a ``ControllerChannel`` (over TLS as ``CN=admin`` when on):

(a) serial commit latency: one client sends CreateTopics (3 partitions, RF 3) one at a time,
    each waiting for its answer, which the controller gives once the records are committed;
    p50 and p99 over the requests;
(b) CreateTopics/s with N concurrent clients (default 16), each with its own channel, sending
    its requests one after another; and the controllers' CPU time per request (user + system
    of the three processes, from /proc), where the cost of TLS shows first.

Every client opens its channel and finds the controller with one untimed request first, so the
TLS handshakes are not in the figures: they are paid once per connection, and the write path
is about steady state. The two variants alternate in order from run to run (off/on, on/off, ...)
so a change in the machine's load does not land on one side only. Figures are medians over
``--runs`` runs; the ratio is TLS over plaintext.

Run: ``.venv/bin/python benchmarks/tls_bench.py [--runs 3] [--clients 16] [--quick]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import Report, process_cpu_seconds
from raftmeta.admin.quorum import wait_for_leader
from raftmeta.channel import ControllerChannel
from raftmeta.cli.dev import wait_for_brokers
from raftmeta.devkit.cluster import DevCluster
from raftmeta.devkit.ports import free_port_run
from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.security.tls import TlsSettings

RESULTS = Path(__file__).resolve().parent / "results" / "tls_bench.txt"
BROKERS = 3
START_DEADLINE_S = 60.0
VARIANTS = ("plaintext", "mTLS")


def cpu_seconds(pids: Sequence[int]) -> float:
    """User + system CPU time of these processes so far."""
    return sum(process_cpu_seconds(pid) for pid in pids)


async def create(channel: ControllerChannel, name: str) -> float:
    """One CreateTopics, answered once committed; its latency in seconds."""
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
    # TOPIC_ALREADY_EXISTS: this request's own first attempt committed before a NOT_CONTROLLER.
    if code and code != ErrorCode.TOPIC_ALREADY_EXISTS:
        raise RuntimeError(f"CreateTopics {name}: {reply.topics[0]}")
    return time.perf_counter() - began


async def measure(
    servers: str, tls: TlsSettings | None, pids: Sequence[int], args: argparse.Namespace
) -> dict[str, float]:
    figures: dict[str, float] = {}
    serial = ControllerChannel(servers, request_timeout_ms=30_000, tls=tls)
    await create(serial, "serial-warm")
    latencies = sorted([await create(serial, f"serial-{n}") for n in range(args.serial)])
    await serial.close()
    figures["p50_ms"] = 1000 * latencies[len(latencies) // 2]
    figures["p99_ms"] = 1000 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]

    channels = [
        ControllerChannel(servers, request_timeout_ms=30_000, tls=tls) for _ in range(args.clients)
    ]
    await asyncio.gather(*(create(c, f"warm-{i}") for i, c in enumerate(channels)))

    async def client(index: int, channel: ControllerChannel) -> None:
        for number in range(args.per_client):
            await create(channel, f"c{index}-{number}")

    cpu_before = cpu_seconds(pids)
    began = time.perf_counter()
    await asyncio.gather(*(client(i, c) for i, c in enumerate(channels)))
    elapsed = time.perf_counter() - began
    cpu = cpu_seconds(pids) - cpu_before
    for channel in channels:
        await channel.close()
    requests = args.clients * args.per_client
    figures["rate"] = requests / elapsed
    figures["cpu_ms"] = 1000 * cpu / requests
    return figures


def one_run(root: Path, tls: bool, args: argparse.Namespace) -> dict[str, float]:
    cluster = DevCluster(root, free_port_run(3), brokers=BROKERS, racks=0, tls=tls)
    cluster.prepare()
    try:
        cluster.start()
        client_tls = cluster.client_tls()
        wait_for_leader(
            cluster.bootstrap_servers,
            cluster.cluster_id,
            START_DEADLINE_S,
            give_up=lambda: bool(cluster.exited()),
            tls=client_tls,
        )
        cluster.start_brokers()
        unfenced = wait_for_brokers(
            cluster.bootstrap_servers,
            set(cluster.brokers),
            START_DEADLINE_S,
            lambda: bool(cluster.exited()),
            tls=client_tls,
        )
        if unfenced is None:
            raise RuntimeError(f"the brokers did not all register; logs in {root}")
        pids = [node.pid for node in cluster.nodes.values() if node.pid is not None]
        return asyncio.run(measure(cluster.bootstrap_servers, client_tls, pids, args))
    finally:
        cluster.stop()


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients in (b)")
    parser.add_argument("--serial", type=int, default=200, help="serial requests in (a)")
    parser.add_argument("--per-client", type=int, default=25, help="requests per client in (b)")
    parser.add_argument("--quick", action="store_true", help="1 run, fewer requests")
    args = parser.parse_args()
    if args.quick:
        args.runs, args.serial, args.per_client = 1, 50, 5
    if min(args.runs, args.clients, args.serial, args.per_client) < 1:
        parser.error("--runs, --clients, --serial and --per-client must be at least 1")

    report = Report(RESULTS)
    report.start()
    report.out(
        f"3 controllers + {BROKERS} brokers (real processes), CreateTopics of 3 partitions at "
        f"RF 3 over gRPC; (a) {args.serial} serial requests, (b) {args.clients} clients x "
        f"{args.per_client}; {args.runs} runs, TLS off and on alternating"
    )
    results: dict[str, list[dict[str, float]]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="tls-bench-") as scratch:
        for run in range(args.runs):
            order = (False, True) if run % 2 == 0 else (True, False)
            for tls in order:
                name = VARIANTS[tls]
                figures = one_run(Path(scratch) / f"run-{run}-{name}", tls, args)
                results[name].append(figures)
                report.out(
                    f"run {run + 1} {name:>9}: serial p50 {figures['p50_ms']:.1f} ms, "
                    f"p99 {figures['p99_ms']:.1f} ms; {figures['rate']:.0f} CreateTopics/s at "
                    f"{args.clients} clients, {figures['cpu_ms']:.2f} ms controller CPU/request"
                )

    def med(name: str, key: str) -> float:
        return median([figures[key] for figures in results[name]])

    rows: list[tuple[str, str, Any]] = [
        ("serial commit latency p50 (ms)", "p50_ms", "{:.1f}"),
        ("serial commit latency p99 (ms)", "p99_ms", "{:.1f}"),
        (f"CreateTopics/s, {args.clients} clients", "rate", "{:.0f}"),
        ("controller CPU per CreateTopics (ms, 3 nodes)", "cpu_ms", "{:.2f}"),
    ]
    report.out("")
    report.out(f"medians of {args.runs} runs:")
    report.out(f"{'figure':<48}{'plaintext':>11}{'mTLS':>11}{'TLS/plain':>11}")
    for label, key, fmt in rows:
        plain, tls_value = med("plaintext", key), med("mTLS", key)
        ratio = tls_value / plain if plain else float("nan")
        report.out(f"{label:<48}{fmt.format(plain):>11}{fmt.format(tls_value):>11}{ratio:>10.2f}x")
    report.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
