"""The audit's replica-balance section: replicas per broker against the ideal share, partitions
whose replicas share a rack needlessly, partitions below their topic's replication factor, and a
reassignment plan that brings every active broker within the threshold.

Each engine counts the figures its own way (the Spark audit in Spark, the plain audit in the
loops of :func:`plain_figures`) and hands them to :func:`section`, which judges them against the
threshold and, only when some active broker lies outside it, asks the engine for the partitions'
replica lists and plans the moves with :func:`placement.reassignment.balance_plan`. The plan is a
function of the assignment alone, so both engines arrive at the same one.

The definitions (see README "Analytics"):

- the ideal share is the replicas on active brokers (registered, unfenced, not shutting down)
  over their number; an active broker is within the threshold when its count lies between
  ``floor(ideal * (1 - t))`` and ``ceil(ideal * (1 + t))``. Brokers that are not active are
  listed but not judged, and the plan moves nothing onto or off them (draining one is
  ``raftmeta reassign-partitions --generate --drain-broker``);
- a partition's replicas *share a rack* when they span fewer distinct racks than
  ``min(replicas, racks)``, racks counted over the registered brokers, with at least two;
- a topic's replication factor is its partitions' most common replica count (the larger on a
  tie); a partition with fewer replicas is *below the replication factor*.

Partitions without a topic name (a partition whose topic record is missing) are left out of
the section: they cannot be named in a reassignment.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from placement.reassignment import (
    DEFAULT_MAX_MOVES,
    PartitionReplicas,
    PlanBroker,
    balance_plan,
    replica_bounds,
    topic_replication_factor,
)

EXAMPLES = 20
"""How many partitions a finding lists, the first by (topic, partition): the count
:data:`analytics.plain_audit.EXAMPLES` gives the other findings (that module imports this one)."""


@dataclass(frozen=True)
class ReplicaFigures:
    """What an engine counts: replicas per broker id (every broker a partition names), and the
    two findings as (count, first examples)."""

    replicas: Mapping[int, int]
    rack_shared: tuple[int, list[dict[str, Any]]]
    below_replication_factor: tuple[int, list[dict[str, Any]]]


def _example(topic: str, partition: int) -> dict[str, Any]:
    return {"topic": topic, "partition": partition}


def _finding(examples: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]]]:
    ordered = sorted(examples, key=lambda e: (e["topic"], e["partition"]))
    return len(ordered), ordered[:EXAMPLES]


def plain_figures(
    assignment: Iterable[tuple[str, int, tuple[int, ...]]], racks: Mapping[int, str | None]
) -> ReplicaFigures:
    """The figures in plain loops over (topic, partition, replicas) and the registered brokers'
    racks."""
    rows = list(assignment)
    replicas: Counter[int] = Counter()
    sizes: defaultdict[str, list[int]] = defaultdict(list)
    rack_count = len({rack for rack in racks.values() if rack is not None})
    shared = []
    for topic, partition, members in rows:
        replicas.update(members)
        sizes[topic].append(len(members))
        spread = len({racks.get(b) for b in members} - {None})
        if rack_count >= 2 and spread < min(len(members), rack_count):
            shared.append(_example(topic, partition))
    factors = {topic: topic_replication_factor(counts) for topic, counts in sizes.items()}
    below = [_example(t, p) for t, p, members in rows if len(members) < factors[t]]
    return ReplicaFigures(dict(replicas), _finding(shared), _finding(below))


def section(
    figures: ReplicaFigures,
    brokers: Iterable[Mapping[str, Any]],
    assignment: Callable[[], Iterable[PartitionReplicas]],
    *,
    threshold_percent: float,
    max_moves: int = DEFAULT_MAX_MOVES,
) -> dict[str, Any]:
    """The report's ``replica_balance`` for one cluster. ``brokers`` are the registered
    brokers' rows (``broker_id``, ``rack``, ``fenced``, ``in_controlled_shutdown``);
    ``assignment`` gives every named partition's replicas, and is called only when a plan is
    needed."""
    plan_brokers = {
        row["broker_id"]: PlanBroker(
            row["broker_id"],
            row["rack"],
            not row["fenced"] and not row["in_controlled_shutdown"],
        )
        for row in brokers
    }
    active = sorted(b for b, broker in plan_brokers.items() if broker.active)
    counts = {
        b: figures.replicas.get(b, 0) for b in sorted(set(plan_brokers) | set(figures.replicas))
    }
    ideal: float | None = None
    lower = upper = 0
    if active:
        total = sum(counts[b] for b in active)
        ideal = total / len(active)
        lower, upper = replica_bounds(Fraction(total, len(active)), threshold_percent)

    def is_active(broker_id: int) -> bool:
        return broker_id in plan_brokers and plan_brokers[broker_id].active

    def within(broker_id: int, count: int) -> bool | None:
        return lower <= count <= upper if is_active(broker_id) else None

    outside = [b for b in active if not within(b, counts[b])]
    after = dict(counts)
    moves: list[dict[str, Any]] = []
    stopped = None
    if outside:
        plan = balance_plan(
            assignment(),
            plan_brokers.values(),
            threshold_percent=threshold_percent,
            max_moves=max_moves,
        )
        after = {b: plan.after.get(b, 0) for b in counts}
        moves = [
            {"topic": topic, "partition": partition, "replicas": list(replicas)}
            for (topic, partition), replicas in plan.reassignments.items()
        ]
        stopped = plan.stopped
        moved_replicas = len(plan.moves)
    else:
        moved_replicas = 0
    table = [
        {
            "broker_id": b,
            "rack": plan_brokers[b].rack if b in plan_brokers else None,
            "registered": b in plan_brokers,
            "active": is_active(b),
            "replicas": counts[b],
            "ideal_replicas": None if ideal is None else (ideal if is_active(b) else 0.0),
            "within_threshold": within(b, counts[b]),
            "replicas_after": after[b],
            "within_threshold_after": within(b, after[b]),
        }
        for b in counts
    ]
    rack_shared_count, rack_shared_examples = figures.rack_shared
    below_count, below_examples = figures.below_replication_factor
    return {
        "ideal_replicas": ideal,
        "bounds": None if ideal is None else [lower, upper],
        "broker_table": table,
        "brokers_outside_threshold": outside,
        "rack_shared": {"count": rack_shared_count, "examples": rack_shared_examples},
        "below_replication_factor": {"count": below_count, "examples": below_examples},
        "plan": {
            "partitions_moved": len(moves),
            "replicas_moved": moved_replicas,
            "max_moves": max_moves,
            "stopped": stopped,
            "partitions": moves,
            "brokers_outside_threshold_after": [b for b in active if not within(b, after[b])],
        },
    }
