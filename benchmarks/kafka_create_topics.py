"""CreateTopics through the controllers' KAFKA listeners, from real Kafka clients.

The quorum is ``metadata_bench``'s three ``ControllerNode`` processes (shipped defaults, fsync
on), each also listening for Kafka's protocol (``listeners=CONTROLLER://...,KAFKA://...``, as
``raftmeta dev --kafka`` configures them), with ``CREATE_BROKERS`` registered, heartbeating
brokers to place replicas on. The clients are confluent-kafka ``AdminClient`` s
(``benchmarks/quorum_nodes/kafka_client.py``), one per client, each sending one CreateTopics of
one topic at a time; only the public Kafka protocol is used, so the figures stay comparable
whatever the listener does inside.

A phase of N clients runs them either as N processes of one client each (``processes``) or as N
threads of one process (``threads``); the phase reports the same figures as the gRPC column's
``create_topics_phase``: writes/s, p50/p99, and the CPU every controller process spent over
the phase per write (``quorum_cpu_ms``, the leader's alone as ``leader_cpu_ms``).

Run alone (``.venv/bin/python benchmarks/kafka_create_topics.py``) it measures the 1- and
16-client phases in both client modes on one quorum, to say which mode reaches more here;
``--profile`` profiles each N-client phase on the controllers (cProfile on the event-loop
thread's CPU time, so neither waiting nor being preempted on a loaded machine counts) and prints
the leader's top entries: where the controller's CPU goes per Kafka CreateTopics.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import load_average
from benchmarks.metadata_bench import ControllerProcesses, print_busiest_profile, registered_brokers
from benchmarks.quorum_nodes.kafka_client import controller_named
from raftmeta.devkit.ports import free_ports

CLIENT_SCRIPT = Path(__file__).resolve().parent / "quorum_nodes" / "kafka_client.py"
CLIENT_MODES = ("processes", "threads")
DEFAULT_CLIENT_MODE = "threads"
"""The mode that reached more with 16 clients on this 2-core machine: over seven paired rounds
of this module's own run (two runs, the modes' order alternating, load average 6 to 20),
threads reached more in six, by a median 1.33x, with less client CPU per write (0.22-0.27 ms
against 0.33-0.39 ms): sixteen interpreters, each with librdkafka's threads, take CPU from
the controllers on two cores."""
PARTITIONS = 3
"""The gRPC column's partitions per topic, so both doors do the same write."""
REPLICATION_FACTOR = 3
"""The gRPC column's replication factor, on the same six brokers."""
READY_TIMEOUT_S = 120.0
PHASE_TIMEOUT_S = 900.0
"""The longest a client process may take over its timed creates before the phase fails."""
ANSWER_LIMIT_BYTES = 2**24
"""A client process's answer is one line holding every latency it timed (16 clients on threads
x 300 creates is about 100 KB), past asyncio's 64 KiB default."""


class KafkaControllers(ControllerProcesses):
    """``ControllerProcesses`` that also serve Kafka's protocol, each on a port of its own."""

    def __init__(
        self,
        directory: Path,
        *,
        settings: dict[str, str] | None = None,
    ) -> None:
        ports = free_ports(6)
        grpc_ports, kafka_ports = ports[:3], ports[3:]
        self.kafka_bootstrap = ",".join(f"127.0.0.1:{port}" for port in kafka_ports)
        super().__init__(
            directory,
            settings=settings,
            ports=grpc_ports,
            node_settings={
                node_id: {
                    "listeners": f"CONTROLLER://127.0.0.1:{grpc_ports[node_id - 1]},"
                    f"KAFKA://127.0.0.1:{kafka_ports[node_id - 1]}"
                }
                for node_id in (1, 2, 3)
            },
        )


class ClientProcess:
    """One ``kafka_client.py`` process running ``clients`` clients on threads."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(
        cls, bootstrap: str, prefix: str, clients: int, first_index: int, count: int
    ) -> ClientProcess:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(CLIENT_SCRIPT),
            "--bootstrap",
            bootstrap,
            "--prefix",
            prefix,
            "--count",
            str(count),
            "--clients",
            str(clients),
            "--first-index",
            str(first_index),
            "--partitions",
            str(PARTITIONS),
            "--replication-factor",
            str(REPLICATION_FACTOR),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=ANSWER_LIMIT_BYTES,
        )
        return cls(process)

    async def answer(self, timeout_s: float = READY_TIMEOUT_S) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout_s)
        if not line:
            raise RuntimeError(f"a Kafka client process exited ({await self.process.wait()})")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"a Kafka client failed: {answer['error']}")
        return answer

    def go(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"go\n")

    async def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 15)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


async def kafka_create_topics_phase(
    bootstrap: str,
    prefix: str,
    clients: int,
    per_client: int,
    cpu_seconds: Callable[[], list[float]],
    mode: str = DEFAULT_CLIENT_MODE,
) -> dict[str, Any]:
    """``clients`` Kafka clients, each sending ``per_client`` CreateTopics in turn, started
    together once every one has sent an untimed first request; the figures of
    ``metadata_bench.create_topics_phase``, with the client CPU summed over the processes."""
    if mode not in CLIENT_MODES:
        raise ValueError(f"client mode {mode!r}: expected one of {CLIENT_MODES}")
    layout = [(index, 1) for index in range(clients)] if mode == "processes" else [(0, clients)]
    processes = [
        await ClientProcess.start(bootstrap, prefix, threads, first, per_client)
        for first, threads in layout
    ]
    try:
        for process in processes:
            await process.answer()  # ready
        servers_cpu_began = cpu_seconds()
        for process in processes:
            process.go()
        results = [await process.answer(PHASE_TIMEOUT_S) for process in processes]
        servers_cpu = [
            after - before for after, before in zip(cpu_seconds(), servers_cpu_began, strict=True)
        ]
    finally:
        for process in processes:
            await process.close()
    latencies = sorted(value for result in results for value in result["latencies_ms"])
    requests = clients * per_client
    elapsed = max(result["ended"] for result in results) - min(r["began"] for r in results)
    return {
        "rate": requests / elapsed,
        "p50_ms": latencies[len(latencies) // 2],
        "p99_ms": latencies[int(len(latencies) * 0.99)],
        "client_cpu_ms": 1000 * sum(result["cpu_s"] for result in results) / requests,
        "resent": sum(result["resent"] for result in results),
        "leader_cpu_ms": 1000 * max(servers_cpu) / requests,
        "quorum_cpu_ms": 1000 * sum(servers_cpu) / requests,
    }


async def wait_for_named_controller(bootstrap: str) -> None:
    await asyncio.to_thread(controller_named, bootstrap, READY_TIMEOUT_S)


def describe(mode: str, clients: int, phase: dict[str, Any]) -> str:
    return (
        f"  {mode:>9}, {clients:>2} client(s): {phase['rate']:7,.0f} CreateTopics/s, "
        f"p50 {phase['p50_ms']:.2f} ms, p99 {phase['p99_ms']:.2f} ms, server CPU "
        f"{phase['quorum_cpu_ms']:.2f} ms/write (leader {phase['leader_cpu_ms']:.2f}), "
        f"client CPU {phase['client_cpu_ms']:.2f} ms/write"
    )


async def compare_modes(
    controllers: KafkaControllers,
    modes: Sequence[str],
    phases: Sequence[tuple[int, int]],
    rounds: int,
    profiles: Path | None = None,
) -> dict[tuple[str, int], list[float]]:
    """Each phase in each mode, alternating the modes' order round by round; the rates.
    With ``profiles`` (a directory), each N-client phase is profiled on the controllers and
    the leader's profile printed after it."""
    rates: dict[tuple[str, int], list[float]] = {}
    async with registered_brokers(controllers.servers):
        await wait_for_named_controller(controllers.kafka_bootstrap)
        for round_ in range(rounds):
            order = list(modes) if round_ % 2 == 0 else list(reversed(modes))
            for clients, per_client in phases:
                for mode in order if clients > 1 else modes[:1]:  # 1 client: the same
                    profiled = profiles is not None and clients > 1
                    if profiled:
                        controllers.start_phase_profiles()
                    phase = await kafka_create_topics_phase(
                        controllers.kafka_bootstrap,
                        f"{mode[0]}{round_}-c{clients}",
                        clients,
                        per_client,
                        controllers.cpu_seconds,
                        mode,
                    )
                    rates.setdefault((mode, clients), []).append(phase["rate"])
                    print(describe(mode, clients, phase), flush=True)
                    if profiles is not None and profiled:
                        label = f"{mode}-{round_}"
                        print_busiest_profile(controllers.stop_phase_profiles(profiles, label))
    return rates


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=16, help="clients of the busy phase")
    parser.add_argument("--per-client", type=int, default=50, help="creates per busy client")
    parser.add_argument("--single", type=int, default=100, help="creates of the 1-client phase")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of every phase and mode")
    parser.add_argument("--modes", default=",".join(CLIENT_MODES))
    parser.add_argument(
        "--profile",
        action="store_true",
        help="profile every N-client phase on the controllers (cProfile on the event loop "
        "thread's CPU time) and print the leader's top entries",
    )
    args = parser.parse_args(argv)
    modes = [mode for mode in args.modes.split(",") if mode]
    if not modes or any(mode not in CLIENT_MODES for mode in modes):
        parser.error(f"--modes: a subset of {','.join(CLIENT_MODES)}")
    print(f"load average at start: {load_average()}", flush=True)
    phases = [(1, args.single), (args.clients, args.per_client)]
    with tempfile.TemporaryDirectory(prefix="kafka-create-topics-") as temp:
        controllers = KafkaControllers(Path(temp))
        profiles = Path(temp) if args.profile else None
        try:
            rates = asyncio.run(compare_modes(controllers, modes, phases, args.rounds, profiles))
        finally:
            with contextlib.suppress(Exception):
                controllers.close()
    print(f"load average at end: {load_average()}")
    for (mode, clients), values in sorted(rates.items(), key=lambda item: item[0][::-1]):
        print(f"median {mode:>9}, {clients:>2} client(s): {statistics.median(values):7,.0f}/s")
    paired = [rates.get((mode, args.clients), []) for mode in CLIENT_MODES]
    if all(paired):
        # Each round's two figures share a window: their ratio moves less than either.
        ratios = [threads / processes for processes, threads in zip(*paired, strict=True)]
        print(
            f"threads/processes, {args.clients} clients, median of per-round ratios: "
            f"{statistics.median(ratios):.2f}x (threads higher in "
            f"{sum(ratio > 1 for ratio in ratios)} of {len(ratios)} rounds)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
