"""Placement rate and balance: Kafka's striped placer against raftmeta's default.

Run with ``python benchmarks/placement_bench.py`` (``--runs``, ``--seed`` to vary). The cluster is
100 brokers in 10 racks of 10, all unfenced; every scenario places 10,000 partitions. Figures are
medians over the runs, each run with its own seed, the placers interleaved within a run:

* rate: partitions placed per CPU second of ``place`` calls (the controller's event-thread
  cost; CPU time, so that other processes on a shared machine do not count);
* leader spread: most minus fewest preferred leaders on one broker, over all 100 brokers;
* replica spread: the same for replicas.

The emptiest-broker placer is listed too: it balances the whole cluster rather than each topic.
"before" is the default placer as it was before the broker layout was cached and small clusters
scanned instead of using heaps (tests/placement/legacy_balance.py, which places identically), so
its rate against "default" shows that change on large clusters.

A second table is the CPU cost of one CreateTopics' placement for small topics (3 partitions, RF
3), before and after in one process, as the controller pays it: the placer alone, and the
controller's whole placement step (cluster view from a live metadata image, placer, answer
check), with each created topic applied to the image before the next. Medians over rounds of 300
topics; before and after alternate within each round and must place identically. The 16-client
CreateTopics benchmark (metadata_bench) registers 6 brokers in 3 racks.

One large topic at RF 3 is the brief's headline case, and also the case where Kafka's lockstep
cursors happen to line up; the other rows show where they do not: RF 2, a topic grown by many
CreatePartitions calls, and many small topics summed over the cluster.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import describe_machine, load_average
from placement import (
    ClusterView,
    EmptiestBrokerPlacer,
    KafkaStripedReplicaPlacer,
    PlacementSpec,
    ReplicaPlacer,
    StaticClusterView,
    StripedReplicaPlacer,
    UsableBroker,
    check_assignment,
)
from raftmeta.controller.topics import ImageClusterView, place_checked
from raftmeta.image import MetadataImage
from raftmeta.records import PartitionRecord, Record, RegisterBrokerRecord, TopicRecord
from tests.placement.legacy_balance import legacy_default

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
    Scenario("10 topics x 1000, RF 3", 3, 10, False),
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
        started = time.process_time()
        placed = placer.place(spec, cluster)
        elapsed += time.process_time() - started
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


class PlacerBefore:
    """The default placer as it was, for the before/after rows."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def place(self, spec: PlacementSpec, cluster: ClusterView) -> list[list[int]]:
        return legacy_default(self._rng, spec, cluster)


PLACERS: dict[str, Callable[[random.Random], ReplicaPlacer]] = {
    "kafka": KafkaStripedReplicaPlacer,
    "default": StripedReplicaPlacer,
    "emptiest": EmptiestBrokerPlacer,
    "before": PlacerBefore,
}


class ImageViewBefore:
    """The controller's cluster view as it was: the usable brokers rebuilt for every request."""

    def __init__(self, image: MetadataImage) -> None:
        self._image = image
        self._usable: tuple[UsableBroker, ...] | None = None

    def usable_brokers(self) -> Iterable[UsableBroker]:
        if self._usable is None:
            self._usable = tuple(
                UsableBroker(broker.broker_id, broker.rack, broker.fenced)
                for broker in self._image.brokers.values()
                if not broker.in_controlled_shutdown
            )
        return self._usable

    def replica_count(self, broker_id: int) -> int:
        return len(self._image.partitions_with_isr_member(broker_id))

    def leader_count(self, broker_id: int) -> int:
        return self._image.preferred_count(broker_id)

    def existing_assignment(self) -> Sequence[Sequence[int]]:
        return []


def controller_step_before(
    placer: PlacerBefore, spec: PlacementSpec, image: MetadataImage
) -> list[list[int]]:
    """The controller's placement step as it was: a fresh view, the placer, the answer checked."""
    view = ImageViewBefore(image)
    brokers = list(view.usable_brokers())
    return check_assignment(spec, brokers, placer.place(spec, view))


def controller_step(
    placer: StripedReplicaPlacer, spec: PlacementSpec, image: MetadataImage
) -> list[list[int]]:
    return place_checked(placer, spec, ImageClusterView(image))


@dataclass(frozen=True, slots=True)
class SmallCase:
    name: str
    brokers: int
    racks: int


SMALL_CASES = (
    SmallCase("6 brokers, 1 rack", 6, 1),
    SmallCase("6 brokers, 3 racks", 6, 3),
    SmallCase("100 brokers, 10 racks", 100, 10),
)
SMALL_TOPICS = 300
"""Topics created per round of the small-topic table."""


def cluster_image(case: SmallCase) -> tuple[MetadataImage, int]:
    """An image with the case's brokers registered and unfenced; returns it and its next offset."""
    image = MetadataImage()
    for broker_id in range(case.brokers):
        rack = None if case.racks == 1 else f"rack-{broker_id % case.racks}"
        image.apply(
            RegisterBrokerRecord(
                broker_id, uuid.UUID(int=broker_id).bytes, 1, rack=rack, fenced=False
            ),
            broker_id,
        )
    return image, case.brokers


def time_small_topics(
    case: SmallCase, seed: int, before: bool, controller_path: bool
) -> tuple[float, list[list[list[int]]]]:
    """CPU seconds per placement over SMALL_TOPICS new 3-partition topics, and what was placed.

    CPU time of this process, not wall time: the figure asked for is the controller's CPU per
    call, and on a shared machine wall time also counts the turns other processes take. Reading
    that clock costs about as much as a small placement, so it is read around the whole round,
    and the round's other work (applying each topic to the image, so the next one sees it) is
    timed again on its own and taken off.
    """
    image, offset = cluster_image(case)
    spec = PlacementSpec(0, 3, 3)
    rng = random.Random(seed)
    placer_before = PlacerBefore(rng)
    placer = StripedReplicaPlacer(rng)
    placed: list[list[list[int]]] = []
    batches: list[list[Record]] = []
    started = time.process_time()
    for topic in range(SMALL_TOPICS):
        if controller_path:
            if before:
                assignment = controller_step_before(placer_before, spec, image)
            else:
                assignment = controller_step(placer, spec, image)
        else:
            view = ImageViewBefore(image) if before else ImageClusterView(image)
            assignment = (placer_before if before else placer).place(spec, view)
        placed.append(assignment)
        records = topic_records(topic, assignment)
        batches.append(records)
        image.apply_batch(records, offset)
        offset += len(records)
    elapsed = time.process_time() - started
    image, offset = cluster_image(case)
    started = time.process_time()
    for topic, records in enumerate(batches):
        # What the loop above did besides placing, without the placing.
        topic_records(topic, placed[topic])
        image.apply_batch(records, offset)
        offset += len(records)
    elapsed -= time.process_time() - started
    return elapsed / SMALL_TOPICS, placed


def topic_records(topic: int, assignment: list[list[int]]) -> list[Record]:
    topic_id = uuid.UUID(int=topic + 1).bytes
    records: list[Record] = [TopicRecord(f"topic-{topic}", topic_id)]
    records.extend(
        PartitionRecord(
            partition_id=partition,
            topic_id=topic_id,
            replicas=tuple(replicas),
            isr=tuple(replicas),
            leader=replicas[0],
        )
        for partition, replicas in enumerate(assignment)
    )
    return records


def small_topic_table(rounds: int, seed: int) -> None:
    print()
    print(
        f"one CreateTopics' placement, 3 partitions x RF 3, CPU microseconds per topic "
        f"(medians of {rounds} rounds of {SMALL_TOPICS} topics)"
    )
    header = f"{'cluster':<24} {'step':<18} {'before':>8} {'after':>8} {'before/after':>13}"
    print(header)
    print("-" * len(header))
    for case in SMALL_CASES:
        for step, controller_path in (("placer", False), ("controller step", True)):
            before_times: list[float] = []
            after_times: list[float] = []
            for round_index in range(rounds):
                # Alternate which goes first, so neither always runs on a warmer cache.
                timed = {
                    before: time_small_topics(case, seed + round_index, before, controller_path)
                    for before in ((True, False) if round_index % 2 == 0 else (False, True))
                }
                (before_time, before_placed), (after_time, after_placed) = (
                    timed[True],
                    timed[False],
                )
                if before_placed != after_placed:
                    raise SystemExit(f"{case.name}: the placements differ; not comparable")
                before_times.append(before_time)
                after_times.append(after_time)
            before_us = statistics.median(before_times) * 1e6
            after_us = statistics.median(after_times) * 1e6
            print(
                f"{case.name:<24} {step:<18} {before_us:>8.1f} {after_us:>8.1f} "
                f"{before_us / after_us:>12.2f}x"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=15, help="rounds of the small-topic table")
    parser.add_argument("--small-only", action="store_true", help="only the small-topic table")
    arguments = parser.parse_args()
    print(f"machine: {describe_machine()}; load average {load_average()}")
    if not arguments.small_only:
        print(
            f"cluster: {BROKERS} brokers in {RACKS} racks, {PARTITIONS} partitions per "
            f"scenario, medians of {arguments.runs} runs"
        )
        header = (
            f"{'scenario':<32} {'placer':<8} {'partitions/s':>13} {'leader spread':>14} "
            f"{'replica spread':>15}"
        )
        print(header)
        print("-" * len(header))
        for scenario in SCENARIOS:
            results: dict[str, list[Result]] = {name: [] for name in PLACERS}
            for run_index in range(arguments.runs):
                for name, make in PLACERS.items():
                    results[name].append(run(make, scenario, arguments.seed + run_index))
            rates: dict[str, float] = {}
            for name, placer_results in results.items():
                result = median_result(placer_results)
                rates[name] = result.rate
                print(
                    f"{scenario.name:<32} {name:<8} {result.rate:>13,.0f} "
                    f"{result.leader_spread:>14} {result.replica_spread:>15}"
                )
            print(f"{'':<32} default/before rate: {rates['default'] / rates['before']:.2f}x")
    small_topic_table(arguments.rounds, arguments.seed)
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
