"""Placement rate and balance: Kafka's striped placer against raftmeta's default.

Run with ``python benchmarks/placement_bench.py`` (``--runs``, ``--seed`` to vary). The cluster is
100 brokers in 10 racks of 10, all unfenced; every scenario places 10,000 partitions. Figures are
medians over the runs, each run with its own seed:

* rate: partitions placed per second of ``place`` calls (the controller's event-thread cost);
* leader spread: most minus fewest preferred leaders on one broker, over all 100 brokers;
* replica spread: the same for replicas.

The emptiest-broker placer is listed too: it balances the whole cluster rather than each topic.

One large topic at RF 3 is the brief's headline case, and also the case where Kafka's lockstep
cursors happen to line up; the other rows show where they do not: RF 2, a topic grown by many
CreatePartitions calls, and many small topics summed over the cluster.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from placement import (
    EmptiestBrokerPlacer,
    KafkaStripedReplicaPlacer,
    PlacementSpec,
    ReplicaPlacer,
    StaticClusterView,
    StripedReplicaPlacer,
    UsableBroker,
)

BROKERS = 100
RACKS = 10
PARTITIONS = 10_000


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    replication_factor: int
    calls: int
    """How many ``place`` calls share the partitions."""
    same_topic: bool
    """True: each call extends one topic (CreatePartitions); False: each is a new topic."""


SCENARIOS = (
    Scenario("1 topic x 10000, RF 3", 3, 1, True),
    Scenario("1 topic x 10000, RF 2", 2, 1, True),
    Scenario("1 topic, 400 calls x 25, RF 3", 3, 400, True),
    Scenario("1000 topics x 10, RF 3", 3, 1000, False),
)


@dataclass(frozen=True, slots=True)
class Result:
    rate: float
    leader_spread: int
    replica_spread: int


def run(make: Callable[[random.Random], ReplicaPlacer], scenario: Scenario, seed: int) -> Result:
    brokers = tuple(UsableBroker(index, f"rack-{index % RACKS}", False) for index in range(BROKERS))
    placer = make(random.Random(seed))
    per_call = PARTITIONS // scenario.calls
    topic: list[list[int]] = []
    leaders: Counter[int] = Counter()
    replicas: Counter[int] = Counter()
    elapsed = 0.0
    for _ in range(scenario.calls):
        existing = tuple(tuple(partition) for partition in topic) if scenario.same_topic else ()
        # The counts cover everything placed so far, as the controller's image would.
        cluster = StaticClusterView(brokers, existing, replicas, leaders)
        spec = PlacementSpec(len(existing), per_call, scenario.replication_factor)
        started = time.perf_counter()
        placed = placer.place(spec, cluster)
        elapsed += time.perf_counter() - started
        if scenario.same_topic:
            topic.extend(placed)
        for partition in placed:
            leaders[partition[0]] += 1
            replicas.update(partition)
    leader_values = [leaders[index] for index in range(BROKERS)]
    replica_values = [replicas[index] for index in range(BROKERS)]
    return Result(
        rate=per_call * scenario.calls / elapsed,
        leader_spread=max(leader_values) - min(leader_values),
        replica_spread=max(replica_values) - min(replica_values),
    )


def median_result(results: list[Result]) -> Result:
    return Result(
        rate=statistics.median(result.rate for result in results),
        leader_spread=round(statistics.median(result.leader_spread for result in results)),
        replica_spread=round(statistics.median(result.replica_spread for result in results)),
    )


PLACERS: dict[str, Callable[[random.Random], ReplicaPlacer]] = {
    "kafka": KafkaStripedReplicaPlacer,
    "default": StripedReplicaPlacer,
    "emptiest": EmptiestBrokerPlacer,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    arguments = parser.parse_args()
    print(
        f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(
        f"cluster: {BROKERS} brokers in {RACKS} racks, {PARTITIONS} partitions per scenario, "
        f"medians of {arguments.runs} runs"
    )
    header = (
        f"{'scenario':<32} {'placer':<8} {'partitions/s':>13} {'leader spread':>14} "
        f"{'replica spread':>15}"
    )
    print(header)
    print("-" * len(header))
    for scenario in SCENARIOS:
        for name, make in PLACERS.items():
            results = [
                run(make, scenario, arguments.seed + run_index)
                for run_index in range(arguments.runs)
            ]
            result = median_result(results)
            print(
                f"{scenario.name:<32} {name:<8} {result.rate:>13,.0f} "
                f"{result.leader_spread:>14} {result.replica_spread:>15}"
            )


if __name__ == "__main__":
    main()
