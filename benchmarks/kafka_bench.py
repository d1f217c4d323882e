"""The KAFKA listener beside the gRPC Admin service: CreateTopics/s and ElectLeaders latency.

Run: ``.venv/bin/python benchmarks/kafka_bench.py [--runs 3] [--topics 200] [--elections 200]``

One real cluster per run (three ``raftmeta serve`` controllers with ``--kafka`` listeners and
three ``raftmeta broker`` processes, as ``raftmeta dev --kafka`` starts them). In the same run,
on the same cluster, each measurement is taken through both doors, alternating which goes
first from run to run:

- **Kafka**: confluent-kafka's ``AdminClient`` (librdkafka) bootstrapped to the controllers'
  KAFKA listeners;
- **gRPC**: raftmeta's own ``AdminClient`` bootstrapped to the controllers' gRPC listeners.

CreateTopics/s: ``--topics`` one-partition, one-replica topics, one per request, first one
request at a time, then 16 in flight (16 single-topic requests sent together, then the next
16). Each request is answered once its records are committed, so this is the controller's
write path seen from a client. ElectLeaders latency: ``--elections`` PREFERRED elections of one
partition whose preferred replica already leads (ELECTION_NOT_NEEDED: a full round trip
through the controller's queue that appends nothing), one at a time; median and p99.

With 16 in flight the doors differ by design: librdkafka sends the 16 requests on its one
connection to the controller, and the listener answers a connection's requests one at a time,
in order, as a Kafka broker does (each request's effects are in place before the next
starts), so each waits for the previous one's commit; gRPC multiplexes them on one channel and
the controller commits them together.

Figures are medians over ``--runs``; ratios are Kafka / gRPC (above 1: the Kafka door is
faster for rates, slower for latencies). The machine is shared: its load average is printed at
the start and the end.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import ElectionType as KafkaElectionType
from confluent_kafka import KafkaException as ConfluentException
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient as ConfluentAdmin
from confluent_kafka.admin import NewTopic as ConfluentNewTopic  # type: ignore[attr-defined]

from benchmarks.machine import Report
from raftmeta.admin import AdminClient as GrpcAdmin
from raftmeta.admin import ElectionType, KafkaException, NewTopic
from raftmeta.common.elections import TopicPartition
from raftmeta.devkit.cluster import DevCluster
from raftmeta.devkit.ports import free_port_run
from raftmeta.errors import ErrorCode

RESULTS = Path(__file__).resolve().parent / "results" / "kafka_bench.txt"
READY_TIMEOUT_S = 60.0
ANSWER_TIMEOUT_S = 60.0
CONCURRENCY = 16


class Door:
    """One way into the quorum: create one topic, elect one partition."""

    name: str

    def create_many(self, names: Sequence[str]) -> None:
        raise NotImplementedError

    def elect_one(self, topic: str) -> int:
        raise NotImplementedError


class KafkaDoor(Door):
    name = "Kafka (confluent-kafka)"

    def __init__(self, bootstrap: str) -> None:
        self.client = ConfluentAdmin({"bootstrap.servers": bootstrap})

    def create_many(self, names: Sequence[str]) -> None:
        futures: list[Future[Any]] = []
        for name in names:  # one request per topic, all in flight together
            futures += self.client.create_topics([ConfluentNewTopic(name, 1, 1)]).values()
        for future in futures:
            future.result(ANSWER_TIMEOUT_S)

    def elect_one(self, topic: str) -> int:
        answer = self.client.elect_leaders(
            KafkaElectionType.PREFERRED, [KafkaTopicPartition(topic, 0)]
        ).result(ANSWER_TIMEOUT_S)
        (error,) = answer.values()
        return 0 if error is None else int(error.code())


class GrpcDoor(Door):
    name = "gRPC (raftmeta AdminClient)"

    def __init__(self, bootstrap: str) -> None:
        self.client = GrpcAdmin({"bootstrap.servers": bootstrap})

    def create_many(self, names: Sequence[str]) -> None:
        futures: list[Future[Any]] = []
        for name in names:
            futures += self.client.create_topics([NewTopic(name, 1, 1)]).values()
        for future in futures:
            future.result(ANSWER_TIMEOUT_S)

    def elect_one(self, topic: str) -> int:
        answer = (
            self.client.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, 0)])
            .partitions()
            .result(ANSWER_TIMEOUT_S)
        )
        (error,) = answer.values()
        return 0 if error is None else int(error.code)


def wait_until_ready(door: Door, deadline_s: float) -> None:
    """Until a topic can be placed: the brokers register and unfence on their own time."""
    deadline = time.monotonic() + deadline_s
    attempt = 0
    while True:
        attempt += 1
        try:
            door.create_many([f"ready-{attempt}"])
            return
        except (KafkaException, ConfluentException):
            if time.monotonic() > deadline:
                raise
        time.sleep(0.2)


def wait_for_a_named_controller(bootstrap: str, deadline_s: float) -> None:
    """Until Metadata names the active controller: a librdkafka client started before the
    controllers register their KAFKA listeners waits minutes for its next refresh."""
    deadline = time.monotonic() + deadline_s
    while True:
        probe = ConfluentAdmin({"bootstrap.servers": bootstrap})
        try:
            if probe.list_topics(timeout=2).controller_id >= 0:
                return
        except ConfluentException:
            pass
        if time.monotonic() > deadline:
            raise TimeoutError("no controller named on the KAFKA listeners")
        time.sleep(0.2)


def rate(door: Door, prefix: str, count: int, in_flight: int) -> float:
    names = [f"{prefix}-{i}" for i in range(count)]
    started = time.perf_counter()
    for start in range(0, count, in_flight):
        door.create_many(names[start : start + in_flight])
    return count / (time.perf_counter() - started)


def latencies_ms(door: Door, topic: str, count: int) -> list[float]:
    seen: list[float] = []
    for _ in range(count):
        started = time.perf_counter()
        code = door.elect_one(topic)
        seen.append((time.perf_counter() - started) * 1000)
        assert code == ErrorCode.ELECTION_NOT_NEEDED, code
    return seen


def p99(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def one_run(run: int, topics: int, elections: int) -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory(prefix="kafka-bench-") as directory:
        cluster = DevCluster(Path(directory), free_port_run(3), brokers=3, kafka=True)
        cluster.prepare()
        try:
            cluster.start()
            cluster.start_brokers()
            wait_for_a_named_controller(cluster.kafka_bootstrap, READY_TIMEOUT_S)
            doors: list[Door] = [
                KafkaDoor(cluster.kafka_bootstrap),
                GrpcDoor(cluster.bootstrap_servers),
            ]
            if run % 2:
                doors.reverse()
            for door in doors:
                wait_until_ready(door, READY_TIMEOUT_S)
            doors[0].create_many(["elected"])
            figures: dict[str, dict[str, float]] = {}
            for door in doors:
                tag = "k" if isinstance(door, KafkaDoor) else "g"
                seen = latencies_ms(door, "elected", elections)
                figures[door.name] = {
                    "create_1": rate(door, f"{tag}{run}-one", topics, 1),
                    f"create_{CONCURRENCY}": rate(door, f"{tag}{run}-many", topics, CONCURRENCY),
                    "elect_median_ms": statistics.median(seen),
                    "elect_p99_ms": p99(seen),
                }
            return figures
        finally:
            cluster.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--elections", type=int, default=200)
    args = parser.parse_args(argv)
    report = Report(RESULTS)
    report.start()
    report.out(
        f"runs: {args.runs}; topics per rate: {args.topics}; elections: {args.elections}; "
        "cluster: 3 controllers + 3 brokers, real processes"
    )
    runs = [one_run(run, args.topics, args.elections) for run in range(args.runs)]
    names = list(runs[0])
    measures: list[tuple[str, str, Callable[[float], str]]] = [
        ("create_1", "CreateTopics/s, 1 in flight", lambda v: f"{v:8.1f}"),
        (
            f"create_{CONCURRENCY}",
            f"CreateTopics/s, {CONCURRENCY} in flight",
            lambda v: f"{v:8.1f}",
        ),
        ("elect_median_ms", "ElectLeaders median ms", lambda v: f"{v:8.2f}"),
        ("elect_p99_ms", "ElectLeaders p99 ms", lambda v: f"{v:8.2f}"),
    ]
    kafka, grpc = KafkaDoor.name, GrpcDoor.name
    report.out("")
    report.out(f"{'medians over runs':34}{kafka:>26}{grpc:>30}{'Kafka/gRPC':>12}")
    for key, label, show in measures:
        values = {name: statistics.median(run[name][key] for run in runs) for name in names}
        ratio = values[kafka] / values[grpc]
        report.out(f"{label:34}{show(values[kafka]):>26}{show(values[grpc]):>30}{ratio:>12.2f}")
    report.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
