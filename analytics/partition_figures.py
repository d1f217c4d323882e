"""The partition figures of one split, counted where the split is read.

A million partition rows cost Spark far more to take in, cache and scan (arrays and all) than
the audit's figures cost to count in the worker that decodes them. So the Spark audit reads
partitions as *figure rows*: each split is counted on its own, and Spark adds up the few
thousand rows that result (see :mod:`analytics.figure_frames`). The figures are those of
:mod:`analytics.plain_audit`, whose definitions this module follows, and the tests hold the
two engines' reports equal.

A split's figures need three facts about its cluster from outside the split: which brokers
are registered and unfenced (a preferred leader the election plan may move leadership to),
their racks, and each topic's ``min.insync.replicas``. The driver finds them while it plans
(:func:`plan_figures`: one replay of each cluster's state without its partitions) and ships
them with the splits; the same replay gives the driver the cluster's broker and topic rows,
so no executor replays the state again to read them.

Figure rows (:data:`FIGURE_COLUMNS`), by ``section``:

- ``total``: a per-cluster count ``name`` (:data:`TOTALS`) of ``value``; ``snapshot_offset``
  is the largest offset seen, not a sum;
- ``broker``: a per-broker count ``name`` (:data:`BROKER_COUNTS`) of ``value``, for brokers
  that lead a partition or are preferred by one; ``replicas``: per broker id, the replicas it
  holds among the named partitions;
- ``example``: a partition showing finding ``name``, the split's first :data:`EXAMPLES` by
  (topic, partition);
- ``plan``: a partition in the election plan (every one: the plan lists them all);
- ``size``: ``value`` named partitions of ``topic`` hold ``size`` replicas, and
  ``size_example``: the split's first partitions of each (topic, size), for the finding of
  partitions below their topic's replication factor, known only once all splits are added.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from analytics.plain_audit import DEFAULT_MIN_INSYNC_REPLICAS, EXAMPLES, min_insync_replicas
from analytics.readers import Split, image_rows, load_image, read_split_columns
from analytics.sources import Source
from raftmeta.image import MetadataImage
from raftmeta.records import ConfigResourceType

if TYPE_CHECKING:
    import pyarrow as pa

FIGURE_COLUMNS = ("section", "cluster", "name", "broker_id", "topic", "partition", "size", "value")
FIGURE_DDL = (
    "section STRING, cluster STRING, name STRING, broker_id INT, topic STRING, "
    "partition INT, size INT, value BIGINT"
)
LEADER_FINDINGS = (
    *("under_replicated", "under_min_isr", "leaderless"),
    *("led_from_elr", "unclean_only"),
)
TOTALS = (
    *("snapshot_offset", "partitions", "with_replicas", "led_by_preferred"),
    *LEADER_FINDINGS,
    *("in_plan", "rack_shared"),
)
BROKER_COUNTS = ("leaders", "preferred", "preferred_leading", "plan_gains", "plan_losses")
NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class ClusterContext:
    """What a split's figures need to know of its cluster beyond its own partitions."""

    alive: frozenset[int]
    """Registered, unfenced brokers: those the election plan may hand leadership to."""
    racks: tuple[tuple[int, str], ...]
    """Each registered broker with a rack, and its rack."""
    min_isr: tuple[tuple[str, int], ...]
    """Each topic's ``min.insync.replicas`` as the audit reads it."""


@dataclass(frozen=True, slots=True)
class FigureSplit:
    """A partitions split with its cluster's context; picklable, read by :func:`read_figures`."""

    split: Split
    context: ClusterContext


def context_of(image: MetadataImage) -> ClusterContext:
    topic_type = int(ConfigResourceType.TOPIC)
    return ClusterContext(
        alive=frozenset(b for b, broker in image.brokers.items() if not broker.fenced),
        racks=tuple(
            (b, broker.rack) for b, broker in image.brokers.items() if broker.rack is not None
        ),
        min_isr=tuple(
            (topic.name, min_insync_replicas(dict(image.configs(topic_type, topic.name))))
            for topic in image.topics.values()
        ),
    )


@dataclass(frozen=True)
class PlannedFigures:
    """What the driver plans for the Spark audit's partition figures."""

    splits: list[FigureSplit]
    brokers: list[dict[str, Any]]
    """Every cluster's broker rows (the ``brokers`` kind), from the planning replay."""
    topics: list[dict[str, Any]]
    """Every cluster's topic rows (the ``topics`` kind), from the same replay."""


def plan_figures(sources: Iterable[Source], splits: Sequence[Split]) -> PlannedFigures:
    """Each partitions split of ``sources`` with its cluster's context, and every cluster's
    broker and topic rows, from one replay of each cluster's state (without its partitions,
    where a snapshot holds them all)."""
    contexts: dict[str, ClusterContext] = {}
    brokers: list[dict[str, Any]] = []
    topics: list[dict[str, Any]] = []
    for source in sources:
        image, counts = load_image(source, with_partitions=False)
        contexts[source.cluster] = context_of(image)
        brokers.extend(image_rows(image, source.cluster, "brokers"))
        topics.extend(image_rows(image, source.cluster, "topics", counts))
    return PlannedFigures(
        [FigureSplit(split, contexts[split.source.cluster]) for split in splits], brokers, topics
    )


def _example_key(example: tuple[str | None, int]) -> tuple[str, int]:
    return (example[0] or "", example[1])


def read_figures(figure_split: FigureSplit) -> dict[str, list[Any]]:
    """The figure rows of one split, as columns in :data:`FIGURE_COLUMNS` order."""
    context = figure_split.context
    alive = context.alive
    rack_of = dict(context.racks)
    rack_count = len(set(rack_of.values()))
    min_isr: dict[str | None, int] = dict(context.min_isr)
    totals: Counter[str] = Counter()
    snapshot_offset: int | None = None
    counts: dict[str, Counter[int]] = {name: Counter() for name in BROKER_COUNTS}
    leaders, preferred_counts, preferred_leading = (
        counts["leaders"],
        counts["preferred"],
        counts["preferred_leading"],
    )
    plan_gains, plan_losses = counts["plan_gains"], counts["plan_losses"]
    replica_counts: Counter[int] = Counter()
    flagged: dict[str, list[tuple[str | None, int]]] = {
        name: [] for name in (*LEADER_FINDINGS, "rack_shared")
    }
    plan: list[tuple[str | None, int]] = []
    sizes: defaultdict[tuple[str, int], list[int]] = defaultdict(list)
    for columns in read_split_columns(figure_split.split):
        if columns["snapshot_offset"]:
            snapshot_offset = columns["snapshot_offset"][-1]
        rows = zip(
            columns["topic"],
            columns["partition"],
            columns["replicas"],
            columns["isr"],
            columns["leader"],
            columns["preferred_leader"],
            columns["elr"],
            strict=True,
        )
        for topic, partition, replicas, isr, leader, preferred, elr in rows:
            totals["partitions"] += 1
            example = (topic, partition)
            if topic is not None:
                replica_counts.update(replicas)
                sizes[topic, len(replicas)].append(partition)
                if rack_count >= 2:
                    spread = len({rack_of.get(b) for b in replicas} - {None})
                    if spread < min(len(replicas), rack_count):
                        flagged["rack_shared"].append(example)
            if leader != NO_LEADER:
                leaders[leader] += 1
            else:
                flagged["leaderless"].append(example)
            if replicas:
                totals["with_replicas"] += 1
                preferred_counts[preferred] += 1
                if leader == preferred:
                    totals["led_by_preferred"] += 1
                    preferred_leading[preferred] += 1
                elif preferred in alive and preferred in isr:
                    plan.append(example)
                    plan_gains[preferred] += 1
                    if leader != NO_LEADER:
                        plan_losses[leader] += 1
            if len(isr) < len(replicas):
                flagged["under_replicated"].append(example)
            below_min_isr = len(isr) < min_isr.get(topic, DEFAULT_MIN_INSYNC_REPLICAS)
            if below_min_isr:
                flagged["under_min_isr"].append(example)
            if leader != NO_LEADER and below_min_isr and elr:
                flagged["led_from_elr"].append(example)
            if leader == NO_LEADER and not isr and not elr:
                flagged["unclean_only"].append(example)
    totals["in_plan"] = len(plan)
    for name, examples in flagged.items():
        totals[name] = len(examples)
    cluster = figure_split.split.source.cluster
    out: dict[str, list[Any]] = {name: [] for name in FIGURE_COLUMNS}

    def add(section: str, name: str | None = None, **values: Any) -> None:
        out["section"].append(section)
        out["cluster"].append(cluster)
        out["name"].append(name)
        for column in ("broker_id", "topic", "partition", "size", "value"):
            out[column].append(values.get(column))

    if not totals["partitions"]:
        return out
    add("total", "snapshot_offset", value=snapshot_offset)
    for name in TOTALS[1:]:
        add("total", name, value=totals[name])
    for name, counter in counts.items():
        for broker_id, count in counter.items():
            add("broker", name, broker_id=broker_id, value=count)
    for broker_id, count in replica_counts.items():
        add("replicas", broker_id=broker_id, value=count)
    for name, examples in flagged.items():
        for topic, partition in heapq.nsmallest(EXAMPLES, examples, key=_example_key):
            add("example", name, topic=topic, partition=partition)
    for topic, partition in plan:
        add("plan", topic=topic, partition=partition)
    for (topic, size), partitions in sizes.items():
        add("size", topic=topic, size=size, value=len(partitions))
        for partition in heapq.nsmallest(EXAMPLES, partitions):
            add("size_example", topic=topic, size=size, partition=partition)
    return out


def figure_batches(figure_split: FigureSplit) -> Iterator[pa.RecordBatch]:
    """:func:`read_figures` as one Arrow record batch (the Spark source's form)."""
    import pyarrow as pa

    schema = pa.schema(
        [
            ("section", pa.string()),
            ("cluster", pa.string()),
            ("name", pa.string()),
            ("broker_id", pa.int32()),
            ("topic", pa.string()),
            ("partition", pa.int32()),
            ("size", pa.int32()),
            ("value", pa.int64()),
        ]
    )
    yield pa.RecordBatch.from_pydict(read_figures(figure_split), schema=schema)
