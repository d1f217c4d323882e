"""How long a partition reassignment of 10,000 partitions takes, and what it costs the active
controller, on three ``raftmeta serve`` controllers and six ``raftmeta broker`` stand-ins
(``replica.catch.up.delay.ms=0``: a new replica counts as caught up as soon as its leader's
broker sees it live).

Two topics of 5,000 partitions each start on brokers 1-3 (two replicas); each run moves every
partition to brokers 4-6 (the next run moves them back), with one AlterPartitionReassignments
per topic (Kafka's cap on the records of one request is 10,000), and measures:

* the time from sending the requests until ListPartitionReassignments shows no move left (the
  AlterPartition of every partition leader included);
* the active controller's CPU time over that span, per moved partition (user plus system, from
  /proc, its threads included).

Figures are medians over ``--runs`` runs (3 by default).

Run: ``.venv/bin/python benchmarks/reassign_bench.py [--partitions 10000] [--runs 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import Report, process_cpu_seconds
from raftmeta.admin import AsyncAdminClient, NewTopic, TopicPartition
from raftmeta.devkit.cluster import DevCluster, stop_all
from raftmeta.devkit.ports import free_port_run

RESULTS = Path(__file__).resolve().parent / "results" / "reassign_bench.txt"
TOPICS = ("moves-a", "moves-b")
DEADLINE_S = 600.0
POLL_S = 0.05
OVERRIDES = {
    "broker.heartbeat.interval.ms": "500",
    "broker.session.timeout.ms": "9000",
    "replica.catch.up.delay.ms": "0",
}


def layout(partitions: int, brokers: tuple[int, int, int]) -> list[list[int]]:
    return [[brokers[p % 3], brokers[(p + 1) % 3]] for p in range(partitions)]


async def wait(check: object, what: str) -> None:
    give_up = time.monotonic() + DEADLINE_S
    while not await check():  # type: ignore[operator]
        if time.monotonic() > give_up:
            raise TimeoutError(what)
        await asyncio.sleep(POLL_S)


async def measure(cluster: DevCluster, partitions: int, runs: int, report: Report) -> None:
    per_topic = partitions // len(TOPICS)
    client = AsyncAdminClient(
        {"bootstrap.servers": cluster.bootstrap_servers, "request.timeout.ms": 120_000}
    )
    async with client:

        async def unfenced() -> bool:
            try:
                view = await client.describe_cluster()
            except Exception:
                return False
            return {b.id for b in view.brokers if not b.fenced} == set(cluster.brokers)

        await wait(unfenced, "every broker unfenced")
        for topic in TOPICS:  # one request each: together they pass the cap on one request
            await client.create_topics(
                [NewTopic(topic, replica_assignment=layout(per_topic, (1, 2, 3)))]
            )[topic]

        async def idle() -> bool:
            return await client.list_partition_reassignments() == {}

        seconds: list[float] = []
        cpu_ms: list[float] = []
        for run in range(runs):
            brokers = (4, 5, 6) if run % 2 == 0 else (1, 2, 3)
            view = await client.describe_cluster()
            controller = cluster.nodes[view.controller_id].pid
            assert controller is not None
            cpu_began = process_cpu_seconds(controller)
            began = time.perf_counter()
            futures = [
                future
                for topic in TOPICS
                for future in client.alter_partition_reassignments(
                    {
                        TopicPartition(topic, p): replicas
                        for p, replicas in enumerate(layout(per_topic, brokers))
                    }
                ).values()
            ]
            for future in futures:
                await future
            await wait(idle, "every move to complete")
            elapsed = time.perf_counter() - began
            cpu = process_cpu_seconds(controller) - cpu_began
            seconds.append(elapsed)
            cpu_ms.append(1e3 * cpu / (per_topic * len(TOPICS)))
            report.out(
                f"run {run + 1}: {per_topic * len(TOPICS)} partitions to brokers {brokers} in "
                f"{elapsed:.2f} s; active controller CPU {cpu:.2f} s "
                f"({cpu_ms[-1]:.3f} ms per moved partition)"
            )
        report.out(
            f"median over {runs} runs: {statistics.median(seconds):.2f} s to complete the "
            f"reassignment of {per_topic * len(TOPICS)} partitions; "
            f"{statistics.median(cpu_ms):.3f} ms of active-controller CPU per moved partition"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    report = Report(RESULTS)
    report.start()
    report.out(
        f"reassignment of {args.partitions} partitions: 3 controllers, 6 stand-in brokers, "
        "replica.catch.up.delay.ms=0, two replicas per partition"
    )
    with tempfile.TemporaryDirectory(prefix="reassign-bench-") as root:
        cluster = DevCluster(Path(root), free_port_run(3), OVERRIDES, brokers=6)
        cluster.prepare()
        try:
            cluster.start()
            cluster.start_brokers()
            asyncio.run(measure(cluster, args.partitions, args.runs, report))
        finally:
            stop_all(list(cluster.brokers.values()))
            stop_all(list(cluster.nodes.values()))
    report.save()


if __name__ == "__main__":
    main()
