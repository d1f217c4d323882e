"""The leader-balance audit in plain Python, one process, no Spark.

It computes the same figures as the Spark audit (:mod:`analytics.audit`), from the same rows
(Arrow record batches in the schemas of :mod:`analytics.schemas`), written independently as
straightforward loops. Two uses: the tests hold the Spark audit to it, and the benchmark runs
it over the same files to show where Spark starts to pay off.

The figures, per cluster (see README "Analytics"):

- per broker: leaders, the ideal share of leaders (partitions with replicas over active
  brokers, for active brokers), preferred partitions (``replicas[0]`` is the broker), those it
  leads, and Kafka's imbalance ratio ``1 - preferred_leading / preferred``, flagged when above
  ``leader.imbalance.per.broker.percentage``;
- the preferred-leader ratio; leaders per rack; under-replicated, under-min-ISR and leaderless
  partitions;
- eligible leader replicas (KIP-966): partitions *led from the ELR* (a leader, an ISR below
  min ISR, and an ELR holding the other replicas with every committed write: the state a clean
  election from the ELR leaves, and the one a partition runs in on one ISR member) and
  partitions whose *only hope is an unclean election* (no leader, no ISR and no ELR: at most
  the last known leader, whose election counts as unclean); both are empty with ELR off;
- the election plan: partitions whose preferred replica is registered, unfenced and in the ISR
  but not leading, and the per-broker figures predicted once it has run;
- replica balance (:mod:`analytics.replica_balance`): replicas per broker against the ideal
  share, partitions sharing a rack needlessly or below their topic's replication factor, and a
  reassignment plan bringing every active broker within the threshold;
- from events: elections by type and over time, unclean elections, ISR shrinks and expands per
  broker, fencing events, and leadership changes over time (elections are counted per time
  bucket; leadership changes keep each batch's exact time).
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from analytics import replica_balance
from placement.reassignment import DEFAULT_MAX_MOVES, PartitionReplicas

if TYPE_CHECKING:
    import pyarrow as pa

Columns: TypeAlias = "dict[str, list[Any]] | pa.RecordBatch"
"""Rows as plain columns (name to values, as ``analytics.readers.read_split_columns`` gives)
or as an Arrow batch: the plain audit takes either and never imports pyarrow itself, so
``raftmeta audit --engine plain`` runs on an install without it."""

DEFAULT_THRESHOLD_PERCENT = 10
"""Kafka's default ``leader.imbalance.per.broker.percentage``."""
DEFAULT_MIN_INSYNC_REPLICAS = 1
DEFAULT_BUCKET_MS = 60_000
EXAMPLES = 20
"""How many partitions a report lists per finding, the first by (topic, partition)."""

MIN_ISR_PATTERN = r"^[0-9]{1,9}$"
"""A ``min.insync.replicas`` value the audit understands; anything else counts as the default."""
_MIN_ISR = re.compile(MIN_ISR_PATTERN)


def min_insync_replicas(configs: dict[str, str] | None) -> int:
    value = (configs or {}).get("min.insync.replicas")
    if value is None or not _MIN_ISR.match(value):
        return DEFAULT_MIN_INSYNC_REPLICAS
    return int(value)


def imbalance(preferred: int, preferred_leading: int) -> float | None:
    """Kafka's per-broker ratio: of the partitions preferring a broker, the share it does not
    lead; ``None`` for a broker that is nobody's preferred leader."""
    if preferred == 0:
        return None
    return (preferred - preferred_leading) / preferred


def is_above(value: float | None, threshold_percent: float) -> bool:
    return value is not None and value > threshold_percent / 100


def _example(topic: str | None, partition: int) -> dict[str, Any]:
    return {"topic": topic, "partition": partition}


def _sort_key(example: dict[str, Any]) -> tuple[str, int]:
    return (example["topic"] or "", example["partition"])


def _finding(examples: list[dict[str, Any]]) -> dict[str, Any]:
    return {"count": len(examples), "examples": sorted(examples, key=_sort_key)[:EXAMPLES]}


@dataclass
class _Cluster:
    snapshot_offset: int | None = None
    brokers: dict[int, dict[str, Any]] = field(default_factory=dict)
    min_isr: dict[str | None, int] = field(default_factory=dict)
    partitions: int = 0
    with_replicas: int = 0
    led_by_preferred: int = 0
    leaders: Counter[int] = field(default_factory=Counter)
    preferred: Counter[int] = field(default_factory=Counter)
    preferred_leading: Counter[int] = field(default_factory=Counter)
    under_replicated: list[dict[str, Any]] = field(default_factory=list)
    under_min_isr: list[dict[str, Any]] = field(default_factory=list)
    leaderless: list[dict[str, Any]] = field(default_factory=list)
    led_from_elr: list[dict[str, Any]] = field(default_factory=list)
    unclean_only: list[dict[str, Any]] = field(default_factory=list)
    plan: list[dict[str, Any]] = field(default_factory=list)
    plan_gains: Counter[int] = field(default_factory=Counter)
    plan_losses: Counter[int] = field(default_factory=Counter)
    events: list[dict[str, Any]] = field(default_factory=list)
    assignment: list[tuple[str, int, tuple[int, ...]]] = field(default_factory=list)
    """(topic, partition, replicas) of every partition with a topic name, for the replica
    balance (:mod:`analytics.replica_balance`)."""


def _columns(batch: Columns) -> dict[str, list[Any]]:
    return batch if isinstance(batch, dict) else batch.to_pydict()


def _rows(batches: Iterable[Columns]) -> Iterable[dict[str, Any]]:
    for batch in batches:
        columns = _columns(batch)
        names = list(columns)
        for values in zip(*(columns[name] for name in names), strict=True):
            yield dict(zip(names, values, strict=True))


def plain_audit(
    *,
    partitions: Iterable[Columns],
    brokers: Iterable[Columns],
    topics: Iterable[Columns],
    events: Iterable[Columns] = (),
    threshold_percent: float = DEFAULT_THRESHOLD_PERCENT,
    bucket_ms: int = DEFAULT_BUCKET_MS,
    max_moves: int = DEFAULT_MAX_MOVES,
) -> dict[str, Any]:
    """The audit report of every cluster found in the rows (see :mod:`analytics.report`);
    ``max_moves`` bounds the replica moves of each cluster's reassignment plan."""
    clusters: defaultdict[str, _Cluster] = defaultdict(_Cluster)
    for row in _rows(brokers):
        clusters[row["cluster"]].brokers[row["broker_id"]] = row
    for row in _rows(topics):
        configs = dict(row["configs"] or [])
        clusters[row["cluster"]].min_isr[row["topic"]] = min_insync_replicas(configs)
    for batch in partitions:
        _add_partitions(clusters, batch)
    for row in _rows(events):
        clusters[row["cluster"]].events.append(row)
    return {
        "threshold_percent": threshold_percent,
        "bucket_ms": bucket_ms,
        "clusters": {
            name: _cluster_report(clusters[name], threshold_percent, bucket_ms, max_moves)
            for name in sorted(clusters)
        },
    }


def _add_partitions(clusters: defaultdict[str, _Cluster], batch: Columns) -> None:
    columns = _columns(batch)
    rows = zip(
        columns["cluster"],
        columns["snapshot_offset"],
        columns["topic"],
        columns["partition"],
        columns["replicas"],
        columns["isr"],
        columns["leader"],
        columns["preferred_leader"],
        columns["elr"],
        strict=True,
    )
    for row in rows:
        cluster_name, snapshot_offset, topic, partition, replicas, isr, leader, preferred, elr = row
        cluster = clusters[cluster_name]
        cluster.snapshot_offset = snapshot_offset
        cluster.partitions += 1
        if topic is not None:
            cluster.assignment.append((topic, partition, tuple(replicas)))
        if leader != -1:
            cluster.leaders[leader] += 1
        else:
            cluster.leaderless.append(_example(topic, partition))
        if replicas:
            cluster.with_replicas += 1
            cluster.preferred[preferred] += 1
            if leader == preferred:
                cluster.led_by_preferred += 1
                cluster.preferred_leading[preferred] += 1
            else:
                broker = cluster.brokers.get(preferred)
                if broker is not None and not broker["fenced"] and preferred in isr:
                    cluster.plan.append(_example(topic, partition))
                    cluster.plan_gains[preferred] += 1
                    if leader != -1:
                        cluster.plan_losses[leader] += 1
        if len(isr) < len(replicas):
            cluster.under_replicated.append(_example(topic, partition))
        below_min_isr = len(isr) < cluster.min_isr.get(topic, DEFAULT_MIN_INSYNC_REPLICAS)
        if below_min_isr:
            cluster.under_min_isr.append(_example(topic, partition))
        if leader != -1 and below_min_isr and elr:
            cluster.led_from_elr.append(_example(topic, partition))
        if leader == -1 and not isr and not elr:
            cluster.unclean_only.append(_example(topic, partition))


def _cluster_report(
    cluster: _Cluster, threshold: float, bucket_ms: int, max_moves: int
) -> dict[str, Any]:
    active = {
        broker_id
        for broker_id, row in cluster.brokers.items()
        if not row["fenced"] and not row["in_controlled_shutdown"]
    }
    ideal = cluster.with_replicas / len(active) if active else None
    broker_ids = sorted(set(cluster.brokers) | set(cluster.leaders) | set(cluster.preferred))
    table = []
    predicted = []
    for broker_id in broker_ids:
        row = cluster.brokers.get(broker_id)
        ratio = imbalance(cluster.preferred[broker_id], cluster.preferred_leading[broker_id])
        table.append(
            {
                "broker_id": broker_id,
                "rack": None if row is None else row["rack"],
                "registered": row is not None,
                "fenced": bool(row and row["fenced"]),
                "in_controlled_shutdown": bool(row and row["in_controlled_shutdown"]),
                "leaders": cluster.leaders[broker_id],
                "ideal_leaders": None if ideal is None else (ideal if broker_id in active else 0.0),
                "preferred": cluster.preferred[broker_id],
                "preferred_leading": cluster.preferred_leading[broker_id],
                "imbalance": ratio,
                "above_threshold": is_above(ratio, threshold),
            }
        )
        after = imbalance(
            cluster.preferred[broker_id],
            cluster.preferred_leading[broker_id] + cluster.plan_gains[broker_id],
        )
        predicted.append(
            {
                "broker_id": broker_id,
                "leaders": cluster.leaders[broker_id]
                + cluster.plan_gains[broker_id]
                - cluster.plan_losses[broker_id],
                "imbalance": after,
                "above_threshold": is_above(after, threshold),
            }
        )
    racks: dict[str | None, dict[str, Any]] = {}
    for broker_id in broker_ids:
        row = cluster.brokers.get(broker_id)
        rack = None if row is None else row["rack"]
        entry = racks.setdefault(rack, {"rack": rack, "brokers": 0, "leaders": 0, "preferred": 0})
        entry["brokers"] += row is not None
        entry["leaders"] += cluster.leaders[broker_id]
        entry["preferred"] += cluster.preferred[broker_id]
    return {
        "snapshot_offset": cluster.snapshot_offset,
        "partitions": cluster.partitions,
        "brokers": len(cluster.brokers),
        "active_brokers": len(active),
        "preferred_leader_ratio": (
            cluster.led_by_preferred / cluster.with_replicas if cluster.with_replicas else None
        ),
        "broker_table": table,
        "brokers_above_threshold": [row["broker_id"] for row in table if row["above_threshold"]],
        "leaders_per_rack": sorted(
            racks.values(), key=lambda entry: (entry["rack"] is not None, entry["rack"] or "")
        ),
        "under_replicated": _finding(cluster.under_replicated),
        "under_min_isr": _finding(cluster.under_min_isr),
        "leaderless": _finding(cluster.leaderless),
        "led_from_elr": _finding(cluster.led_from_elr),
        "unclean_only": _finding(cluster.unclean_only),
        "election_plan": {
            "count": len(cluster.plan),
            "partitions": sorted(cluster.plan, key=_sort_key),
            "predicted": predicted,
            "brokers_above_threshold_after": [
                row["broker_id"] for row in predicted if row["above_threshold"]
            ],
        },
        "events": _events_report(cluster.events, bucket_ms),
        "replica_balance": replica_balance.section(
            replica_balance.plain_figures(
                cluster.assignment,
                {broker_id: row["rack"] for broker_id, row in cluster.brokers.items()},
            ),
            cluster.brokers.values(),
            lambda: (PartitionReplicas(*entry) for entry in cluster.assignment),
            threshold_percent=threshold,
            max_moves=max_moves,
        ),
    }


def _events_report(events: list[dict[str, Any]], bucket_ms: int) -> dict[str, Any]:
    by_type: Counter[str] = Counter()
    over_time: Counter[tuple[int, str]] = Counter()
    leadership: Counter[tuple[int, int]] = Counter()
    shrinks: Counter[int] = Counter()
    expands: Counter[int] = Counter()
    fencing: defaultdict[int, Counter[str]] = defaultdict(Counter)
    unclean = []
    for row in events:
        bucket = row["batch_time_ms"] // bucket_ms * bucket_ms
        election = row["election"]
        if election is not None:
            by_type[election] += 1
            over_time[bucket, election] += 1
            exact = row["batch_time_ms"]
            if row["leader"] != -1:
                leadership[exact, row["leader"]] += 1
            if row["previous_leader"] is not None and row["previous_leader"] != -1:
                leadership[exact, row["previous_leader"]] -= 1
            if election == "unclean":
                unclean.append(
                    {
                        "offset": row["offset"],
                        "topic": row["topic"],
                        "partition": row["partition"],
                        "leader": row["leader"],
                        "previous_leader": row["previous_leader"],
                    }
                )
        for broker_id in row["isr_removed"] or ():
            shrinks[broker_id] += 1
        for broker_id in row["isr_added"] or ():
            expands[broker_id] += 1
        record_type = row["record_type"]
        if record_type == "BrokerRegistrationChangeRecord":
            counts = fencing[row["broker_id"]]
            if row["fencing"] is not None:
                counts[row["fencing"]] += 1
            if row["controlled_shutdown"]:
                counts["controlled_shutdowns"] += 1
        elif record_type == "RegisterBrokerRecord":
            fencing[row["broker_id"]]["registrations"] += 1
        elif record_type == "UnregisterBrokerRecord":
            fencing[row["broker_id"]]["unregistrations"] += 1
    fencing_keys = (
        "fenced",
        "unfenced",
        "controlled_shutdowns",
        "registrations",
        "unregistrations",
    )
    return {
        "records": len(events),
        "elections_by_type": dict(sorted(by_type.items())),
        "elections_over_time": [
            {"time_ms": time_ms, "election": election, "count": count}
            for (time_ms, election), count in sorted(over_time.items())
        ],
        "unclean_elections": {
            "count": len(unclean),
            "examples": sorted(unclean, key=lambda entry: entry["offset"])[:EXAMPLES],
        },
        "isr_shrinks": [
            {"broker_id": broker_id, "count": count} for broker_id, count in sorted(shrinks.items())
        ],
        "isr_expands": [
            {"broker_id": broker_id, "count": count} for broker_id, count in sorted(expands.items())
        ],
        "fencing": [
            {"broker_id": broker_id, **{key: fencing[broker_id][key] for key in fencing_keys}}
            for broker_id in sorted(fencing)
        ],
        "fencing_events": sum(
            fencing[broker_id][key]
            for broker_id in fencing
            for key in ("fenced", "unfenced", "controlled_shutdowns")
        ),
        "leadership_changes": [
            {"time_ms": time_ms, "broker_id": broker_id, "change": change}
            for (time_ms, broker_id), change in sorted(leadership.items())
            if change != 0
        ],
    }


def audit_path(
    path: str | os.PathLike[str],
    *,
    threshold_percent: float = DEFAULT_THRESHOLD_PERCENT,
    bucket_ms: int = DEFAULT_BUCKET_MS,
    progress: Callable[[str], None] | None = None,
    allow_partial: bool = False,
    max_moves: int = DEFAULT_MAX_MOVES,
) -> dict[str, Any]:
    """The plain audit of the files under ``path``, read by the same readers Spark uses.

    A damaged log raises :class:`~analytics.integrity.DamagedInputError`; with
    ``allow_partial`` its whole prefix is audited instead."""
    from analytics.integrity import check_sources
    from analytics.readers import plan, read_split_columns
    from analytics.sources import discover

    sources = check_sources(discover(path), allow_partial=allow_partial).sources

    def read(kind: str) -> list[Columns]:
        if progress is not None:
            progress(f"reading {kind}")
        return [batch for split in plan(sources, kind) for batch in read_split_columns(split)]

    brokers, topics, events = read("brokers"), read("topics"), read("events")
    if progress is not None:
        progress("reading and auditing partitions")
    partitions = (
        batch for split in plan(sources, "partitions") for batch in read_split_columns(split)
    )
    return plain_audit(
        partitions=partitions,
        brokers=brokers,
        topics=topics,
        events=events,
        threshold_percent=threshold_percent,
        bucket_ms=bucket_ms,
        max_moves=max_moves,
    )
