"""kill -9 of the active controller: how long until a client's next CreateTopics succeeds,
through the KAFKA listener (confluent-kafka) beside the gRPC door (raftmeta's AdminClient).

Run: ``.venv/bin/python benchmarks/kafka_failover_bench.py [--runs 5]``

Each run starts a real cluster (three ``raftmeta serve`` controllers with ``--kafka`` listeners
and two ``raftmeta broker`` processes, as ``raftmeta dev --kafka`` starts them), makes one
client of each kind create a topic (so each has found the active controller), kills the active
controller with SIGKILL, and at once has both clients, on their own threads, send their next
CreateTopics. Each figure is the time from the kill to that call's success; a call that fails
(librdkafka's own timeout is 30 s here) counts as a failure and is left out of the times.

The gRPC client retries NOT_CONTROLLER and unreachable nodes by itself; librdkafka keeps
sending to the controller it was told of until a Metadata answer names another, which the
controllers prompt by closing the connections they told of the dead one, once quiet for a
second (so that no call in flight is lost). Both doors wait for the same election, so their
difference is what the Kafka door adds to a failover.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import KafkaException as ConfluentException
from confluent_kafka.admin import AdminClient as ConfluentAdmin
from confluent_kafka.admin import NewTopic as ConfluentNewTopic  # type: ignore[attr-defined]

from benchmarks.machine import Report
from raftmeta.admin import AdminClient as GrpcAdmin
from raftmeta.admin import KafkaException, NewTopic
from raftmeta.admin.quorum import DescribeError, QuorumInfo, describe_quorum
from raftmeta.devkit.cluster import DevCluster
from raftmeta.devkit.ports import free_port_run

RESULTS = Path(__file__).resolve().parent / "results" / "kafka_failover_bench.txt"
CALL_TIMEOUT_S = 30.0
START_DEADLINE_S = 60.0
KAFKA, GRPC = "Kafka (confluent-kafka)", "gRPC (raftmeta AdminClient)"


def poll(found: Callable[[], object], what: str, deadline_s: float = START_DEADLINE_S) -> object:
    """``found()``'s first truthy value, asked every 50 ms until the deadline."""
    until = time.monotonic() + deadline_s
    while time.monotonic() < until:
        value = found()
        if value:
            return value
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def leader(cluster: DevCluster) -> QuorumInfo:
    def found() -> QuorumInfo | None:
        try:
            return describe_quorum(cluster.bootstrap_servers, cluster.cluster_id, timeout_s=1.0)
        except DescribeError:
            return None

    info = poll(found, "a leader")
    assert isinstance(info, QuorumInfo)
    return info


def confluent_create(admin: ConfluentAdmin, name: str) -> bool:
    (future,) = admin.create_topics(
        [ConfluentNewTopic(name, 1, 1)], operation_timeout=10, request_timeout=CALL_TIMEOUT_S
    ).values()
    try:
        future.result(CALL_TIMEOUT_S + 5)
    except (ConfluentException, TimeoutError):
        return False
    return True


def grpc_create(admin: GrpcAdmin, name: str) -> bool:
    (future,) = admin.create_topics([NewTopic(name, 1, 1)]).values()
    try:
        future.result(CALL_TIMEOUT_S)
    except (KafkaException, TimeoutError):
        return False
    return True


def one_run(run: int) -> dict[str, float | None]:
    """Seconds from the kill to each door's next successful create (None: it failed)."""
    with tempfile.TemporaryDirectory(prefix="raftmeta-kafka-failover-") as tmp:
        cluster = DevCluster(Path(tmp) / "cluster", free_port_run(3), brokers=2, kafka=True)
        cluster.prepare()
        try:
            cluster.start()
            cluster.start_brokers()
            first = leader(cluster)
            confluent = ConfluentAdmin({"bootstrap.servers": cluster.kafka_bootstrap})
            grpc = GrpcAdmin({"bootstrap.servers": cluster.bootstrap_servers})
            poll(lambda: confluent_create(confluent, "before-kafka"), "a first Kafka create")
            poll(lambda: grpc_create(grpc, "before-grpc"), "a first gRPC create")
            calls = {
                KAFKA: lambda: confluent_create(confluent, "after-kafka"),
                GRPC: lambda: grpc_create(grpc, "after-grpc"),
            }
            took: dict[str, float | None] = {}

            def measure(name: str, call: Callable[[], bool], killed_at: float) -> None:
                ok = call()
                took[name] = time.monotonic() - killed_at if ok else None

            cluster.nodes[first.leader_id].kill()
            killed_at = time.monotonic()
            threads = [
                threading.Thread(target=measure, args=(name, call, killed_at))
                for name, call in (calls.items() if run % 2 == 0 else reversed(calls.items()))
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(CALL_TIMEOUT_S + 10)
            grpc.close()
            return {name: took.get(name) for name in calls}
        finally:
            cluster.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    report = Report(RESULTS)
    report.start()
    report.out(
        f"runs: {args.runs}; cluster: 3 controllers + 2 brokers, real processes; "
        f"client call timeout {CALL_TIMEOUT_S:.0f} s"
    )
    runs = []
    for run in range(args.runs):
        figures = one_run(run)
        runs.append(figures)
        shown = ", ".join(
            f"{name}: {'failed' if value is None else f'{value:.2f} s'}"
            for name, value in figures.items()
        )
        report.out(f"run {run + 1}: {shown}")
    report.out("")
    report.out(f"{'kill -9 to next create succeeding':36}{'median s':>10}{'max s':>8}{'failed':>8}")
    for name in (KAFKA, GRPC):
        times = [value for run in runs if (value := run[name]) is not None]
        failed = sum(1 for run in runs if run[name] is None)
        median = f"{statistics.median(times):10.2f}" if times else f"{'-':>10}"
        worst = f"{max(times):8.2f}" if times else f"{'-':>8}"
        report.out(f"{name:36}{median}{worst}{failed:>8}")
    report.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
