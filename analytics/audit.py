"""The leader-balance audit on Spark: DataFrames for notebooks, a report dict for the CLI.

:func:`audit_frames` reads a path with the ``raftmeta`` data source and builds one DataFrame
per figure (see :mod:`analytics.plain_audit` for what each figure means; the two modules must
agree, and the tests check that they do). :func:`collect_report` runs them and gathers the
results into the report that :mod:`analytics.report` prints and writes. Every aggregation runs
in Spark; only the few rows of the results come back to the driver.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from analytics import figure_frames
from analytics.partition_figures import PlannedFigures, plan_figures
from analytics.plain_audit import (
    DEFAULT_BUCKET_MS,
    DEFAULT_MIN_INSYNC_REPLICAS,
    DEFAULT_THRESHOLD_PERCENT,
    EXAMPLES,
    MIN_ISR_PATTERN,
)
from analytics.readers import DEFAULT_MAX_SPLIT_BYTES, KINDS, Split, plan
from analytics.replica_frames import replica_findings, replica_sections
from analytics.schemas import SCHEMAS, spark_ddl
from analytics.sources import Source
from analytics.spark_source import SOURCE_NAME, read_figure_rows, read_splits
from placement.reassignment import DEFAULT_MAX_MOVES

FINDINGS = ("under_replicated", "under_min_isr", "leaderless", "led_from_elr", "unclean_only")
AFTER_COLUMNS = ("leaders", "imbalance", "above_threshold")
"""Broker-table columns predicted for after the election plan, with an ``_after`` suffix."""
PARTITION_COLUMNS = (
    *("cluster", "snapshot_offset", "topic", "partition", "replicas", "isr"),
    *("leader", "preferred_leader", "elr"),
)
"""The partition columns the audit reads: Spark converts no others (a million topic ids and
recovery states, as strings, cost more to take in than all that the audit uses)."""


@dataclass(frozen=True)
class Plan:
    """What the driver plans before the audit reads anything (see :func:`plan_reads`)."""

    splits: Mapping[str, Sequence[Split]]
    """The splits of every kind."""
    figures: PlannedFigures
    """The partitions splits to be counted where they are read, and the broker and topic
    rows the driver found while planning them."""


def plan_reads(
    path: str | os.PathLike[str],
    *,
    allow_partial: bool = False,
    sources: Sequence[Source] | None = None,
    max_split_bytes: int = DEFAULT_MAX_SPLIT_BYTES,
) -> Plan:
    """The splits of every kind the audit reads, planned here on the driver, once.

    ``sources`` are the already checked sources of ``path`` (see
    :func:`analytics.integrity.check_sources`); without them ``path`` is discovered and
    checked here. Damage raises :class:`~analytics.integrity.DamagedInputError` unless
    ``allow_partial``. ``max_split_bytes`` bounds how much of a file one split reads. No
    Spark is needed, so a caller may plan while the session starts."""
    if sources is None:
        from analytics.integrity import check_sources
        from analytics.sources import discover

        sources = check_sources(discover(path), allow_partial=allow_partial).sources
    splits = {kind: plan(sources, kind, max_split_bytes) for kind in KINDS}
    return Plan(splits, plan_figures(sources, splits["partitions"]))


def read(spark: SparkSession, path: str, kind: str, allow_partial: bool = False) -> DataFrame:
    """``spark.read.format("raftmeta").option("kind", kind).load(path)``, with the kind's
    schema given up front: Spark then need not start a Python process to ask the source."""
    reader = spark.read.format(SOURCE_NAME).schema(spark_ddl(kind)).option("kind", kind)
    if allow_partial:
        reader = reader.option("allowPartial", "true")
    return reader.load(path)


@dataclass(frozen=True)
class AuditFrames:
    """The audit as DataFrames; every frame has a ``cluster`` column."""

    threshold_percent: float
    bucket_ms: int
    partition_rows: DataFrame
    """The partitions as read, with the columns the audit uses (see ``PARTITION_COLUMNS``);
    the report never scans them (it counts from ``figures``), the frames below built from
    them are for a notebook's own questions, built on first use."""
    brokers: DataFrame
    topics: DataFrame
    events: DataFrame
    clusters: DataFrame
    """One row per cluster: snapshot offset, counts, preferred-leader ratio, finding counts."""
    broker_table: DataFrame
    """Per broker: leadership now, and (columns ending ``_after``) once the plan has run."""
    leaders_per_rack: DataFrame
    predicted: DataFrame
    """Per broker after the election plan: leaders, imbalance, above_threshold."""
    elections_over_time: DataFrame
    unclean_elections: DataFrame
    isr_changes: DataFrame
    fencing: DataFrame
    leadership_changes: DataFrame
    replicas_per_broker: DataFrame
    """Per broker id a partition names: how many replicas it holds."""
    figures: DataFrame
    """The figure rows every partitions split counted where it was read (see
    :mod:`analytics.partition_figures`): the report's partition figures come from them."""
    max_moves: int = DEFAULT_MAX_MOVES

    @functools.cached_property
    def partitions(self) -> DataFrame:
        """Partition rows with the audit's flags: under_replicated, under_min_isr,
        leaderless, led_from_elr, unclean_only (KIP-966; see :mod:`analytics.plain_audit`),
        in_plan (the election plan would move its leadership to the preferred replica)."""
        return flagged_partitions(self.partition_rows, self.brokers, self.topics)

    @functools.cached_property
    def election_plan(self) -> DataFrame:
        """The partitions a preferred election would move, with their preferred and current
        leaders."""
        return election_plan(self.partitions)

    @functools.cached_property
    def assignment(self) -> DataFrame:
        """Per named partition: its replicas, which the reassignment plan reads."""
        return self.partition_rows.where(F.col("topic").isNotNull()).select(
            "cluster", "topic", "partition", "replicas"
        )

    @functools.cached_property
    def replica_findings(self) -> DataFrame:
        """Per named partition: ``rack_shared`` and ``below_replication_factor`` (see
        :mod:`analytics.replica_balance`)."""
        return replica_findings(self.assignment, self.brokers)


def _driver_rows(spark: SparkSession, rows: Sequence[Mapping[str, Any]], kind: str) -> DataFrame:
    """Rows of ``kind`` the driver holds, as a DataFrame of the kind's schema."""
    names = SCHEMAS[kind].names
    return spark.createDataFrame(
        [
            tuple(dict(row[name]) if name == "configs" else row[name] for name in names)
            for row in rows
        ],
        schema=spark_ddl(kind),
    )


def _imbalance(preferred: Column, preferred_leading: Column) -> Column:
    return F.when(preferred > 0, (preferred - preferred_leading) / preferred)


def _above(ratio: Column, threshold_percent: float) -> Column:
    return F.coalesce(ratio > F.lit(threshold_percent / 100), F.lit(False))


def audit_frames(
    spark: SparkSession,
    path: str | os.PathLike[str],
    *,
    threshold_percent: float = DEFAULT_THRESHOLD_PERCENT,
    bucket_ms: int = DEFAULT_BUCKET_MS,
    cache: bool = True,
    allow_partial: bool = False,
    max_moves: int = DEFAULT_MAX_MOVES,
    planned: Plan | None = None,
) -> AuditFrames:
    """Builds the audit's DataFrames for ``path``; nothing runs until they are used.

    The files are planned on the driver (``planned``, from :func:`plan_reads`, or here) and
    read one task per split. With ``cache``, the frames several figures read (brokers,
    topics, events, the flagged partitions, the cluster summary and the broker rows) are
    cached, so each file is read once per report. A damaged log fails the planning unless
    ``allow_partial`` (see :mod:`analytics.integrity`).
    """
    if planned is None:
        planned = plan_reads(path, allow_partial=allow_partial)
    location = os.fspath(path)
    # The planning replay found the brokers and topics already: the driver hands them over.
    brokers = _driver_rows(spark, planned.figures.brokers, "brokers")
    topics = _driver_rows(spark, planned.figures.topics, "topics")
    event_splits = planned.splits["events"]
    if all(split.to_offset <= split.from_offset for split in event_splits):
        # Bare snapshots have no log, so no events: no Python task need say so.
        events = _driver_rows(spark, [], "events")
    else:
        events = read_splits(spark, location, event_splits, "events")
    figures = read_figure_rows(spark, location, planned.figures.splits)
    if cache:
        # Rows from the driver reach Spark through a Python task, every time unless cached.
        brokers = brokers.cache()
        topics = topics.cache()
        events = events.cache()
        figures = figures.cache()
    partition_rows = read_splits(
        spark, location, planned.splits["partitions"], "partitions", PARTITION_COLUMNS
    )
    clusters = cluster_summary(figure_frames.partition_totals(figures), brokers, topics, events)
    if cache:
        clusters = clusters.cache()
    rows = broker_rows(brokers, figure_frames.broker_counts(figures), clusters)
    if cache:
        rows = rows.cache()
    table = broker_table(rows, threshold_percent)
    elections = _elections(events, bucket_ms)
    return AuditFrames(
        threshold_percent=threshold_percent,
        bucket_ms=bucket_ms,
        partition_rows=partition_rows,
        brokers=brokers,
        topics=topics,
        events=events,
        clusters=clusters,
        broker_table=table,
        leaders_per_rack=leaders_per_rack(rows),
        predicted=predicted(table),
        elections_over_time=elections_over_time(elections),
        unclean_elections=unclean_elections(elections),
        isr_changes=isr_changes(events),
        fencing=fencing(events),
        leadership_changes=leadership_changes(elections),
        replicas_per_broker=figure_frames.replicas_per_broker(figures),
        figures=figures,
        max_moves=max_moves,
    )


# --- partitions and clusters -------------------------------------------------------------------


def flagged_partitions(partitions: DataFrame, brokers: DataFrame, topics: DataFrame) -> DataFrame:
    """Partition rows with the audit's findings and whether the election plan would move their
    leadership to the preferred replica (alive, in the ISR, not leading yet)."""
    min_isr = topics.select(
        "cluster",
        "topic",
        F.when(
            F.col("configs")["min.insync.replicas"].rlike(MIN_ISR_PATTERN),
            F.col("configs")["min.insync.replicas"].cast("int"),
        )
        .otherwise(F.lit(DEFAULT_MIN_INSYNC_REPLICAS))
        .alias("min_isr"),
    )
    preferred_alive = brokers.select(
        "cluster",
        F.col("broker_id").alias("preferred_leader"),
        (~F.col("fenced")).alias("preferred_alive"),
    )
    has_replicas = F.size("replicas") > 0
    return (
        partitions.join(F.broadcast(min_isr), ["cluster", "topic"], "left")
        .join(F.broadcast(preferred_alive), ["cluster", "preferred_leader"], "left")
        .select(
            "cluster",
            "snapshot_offset",
            "topic",
            "partition",
            "replicas",
            "leader",
            "preferred_leader",
            has_replicas.alias("has_replicas"),
            (F.size("isr") < F.size("replicas")).alias("under_replicated"),
            (F.size("isr") < F.coalesce("min_isr", F.lit(DEFAULT_MIN_INSYNC_REPLICAS))).alias(
                "under_min_isr"
            ),
            (F.col("leader") == -1).alias("leaderless"),
            (
                (F.col("leader") != -1)
                & (F.size("isr") < F.coalesce("min_isr", F.lit(DEFAULT_MIN_INSYNC_REPLICAS)))
                & (F.size("elr") > 0)
            ).alias("led_from_elr"),
            ((F.col("leader") == -1) & (F.size("isr") == 0) & (F.size("elr") == 0)).alias(
                "unclean_only"
            ),
            (
                has_replicas
                & (F.col("leader") != F.col("preferred_leader"))
                & F.coalesce("preferred_alive", F.lit(False))
                & F.array_contains("isr", F.col("preferred_leader"))
            ).alias("in_plan"),
        )
    )


def _active() -> Column:
    """A broker that is neither fenced nor shutting down: one that can lead."""
    return ~F.col("fenced") & ~F.col("in_controlled_shutdown")


def cluster_summary(
    partition_totals: DataFrame, brokers: DataFrame, topics: DataFrame, events: DataFrame
) -> DataFrame:
    """One row per cluster named in the partition totals (see
    :func:`analytics.figure_frames.partition_totals`) or any of the other three kinds of rows:
    snapshot offset, counts, finding counts and the preferred-leader ratio."""
    broker_summary = brokers.groupBy("cluster").agg(
        F.count(F.lit(1)).alias("brokers"),
        F.sum(_active().cast("long")).alias("active_brokers"),
    )
    event_summary = events.groupBy("cluster").agg(F.count(F.lit(1)).alias("event_records"))
    names = (
        partition_totals.select("cluster")
        .union(brokers.select("cluster"))
        .union(topics.select("cluster"))
        .union(events.select("cluster"))
        .distinct()
    )
    return (
        names.join(partition_totals, "cluster", "left")
        .join(broker_summary, "cluster", "left")
        .join(event_summary, "cluster", "left")
        .select(
            "cluster",
            "snapshot_offset",
            *(
                F.coalesce(name, F.lit(0)).cast("long").alias(name)
                for name in (
                    "partitions",
                    "with_replicas",
                    "led_by_preferred",
                    *FINDINGS,
                    "in_plan",
                    "rack_shared",
                    "brokers",
                    "active_brokers",
                    "event_records",
                )
            ),
        )
        .withColumn(
            "preferred_leader_ratio",
            F.when(F.col("with_replicas") > 0, F.col("led_by_preferred") / F.col("with_replicas")),
        )
    )


# --- brokers -----------------------------------------------------------------------------------

SHARE_COUNTS = ("leaders", "preferred", "preferred_leading", "plan_gains", "plan_losses")
"""Per broker: partitions it leads, prefers it, it leads as preferred, and how many
leaderships the election plan would give it and take from it."""


def broker_rows(brokers: DataFrame, shares: DataFrame, clusters: DataFrame) -> DataFrame:
    """Every registered broker and every broker id a partition names, with its state, its
    ``SHARE_COUNTS`` and its cluster's partition and active-broker counts."""
    registered = brokers.select(
        "cluster",
        "broker_id",
        "rack",
        F.lit(True).alias("registered"),
        "fenced",
        "in_controlled_shutdown",
        _active().alias("active"),
    )
    return (
        registered.join(shares, ["cluster", "broker_id"], "full_outer")
        .join(clusters.select("cluster", "with_replicas", "active_brokers"), "cluster", "left")
        .select(
            "cluster",
            "broker_id",
            "rack",
            F.coalesce("registered", F.lit(False)).alias("registered"),
            F.coalesce("fenced", F.lit(False)).alias("fenced"),
            F.coalesce("in_controlled_shutdown", F.lit(False)).alias("in_controlled_shutdown"),
            F.coalesce("active", F.lit(False)).alias("active"),
            *(F.coalesce(name, F.lit(0)).cast("long").alias(name) for name in SHARE_COUNTS),
            "with_replicas",
            "active_brokers",
        )
    )


def broker_table(rows: DataFrame, threshold_percent: float) -> DataFrame:
    """The per-broker leadership table: now, and (columns ending ``_after``) once the
    election plan has run."""
    imbalance = _imbalance(F.col("preferred"), F.col("preferred_leading"))
    imbalance_after = _imbalance(
        F.col("preferred"), F.col("preferred_leading") + F.col("plan_gains")
    )
    return rows.select(
        "cluster",
        "broker_id",
        "rack",
        "registered",
        "fenced",
        "in_controlled_shutdown",
        "leaders",
        F.when(F.col("active_brokers") == 0, F.lit(None).cast("double"))
        .when(F.col("active"), F.col("with_replicas") / F.col("active_brokers"))
        .otherwise(F.lit(0.0))
        .alias("ideal_leaders"),
        "preferred",
        "preferred_leading",
        imbalance.alias("imbalance"),
        _above(imbalance, threshold_percent).alias("above_threshold"),
        (F.col("leaders") + F.col("plan_gains") - F.col("plan_losses")).alias("leaders_after"),
        imbalance_after.alias("imbalance_after"),
        _above(imbalance_after, threshold_percent).alias("above_threshold_after"),
    )


def predicted(table: DataFrame) -> DataFrame:
    """Per broker after the election plan: leaders, imbalance, above_threshold."""
    return table.select(
        "cluster",
        "broker_id",
        *(F.col(f"{name}_after").alias(name) for name in AFTER_COLUMNS),
    )


def leaders_per_rack(rows: DataFrame) -> DataFrame:
    """Registered brokers, leaderships and preferences per rack (null: brokers with none)."""
    return rows.groupBy("cluster", "rack").agg(
        F.sum(F.col("registered").cast("long")).alias("brokers"),
        F.sum("leaders").alias("leaders"),
        F.sum("preferred").alias("preferred"),
    )


def election_plan(partitions: DataFrame) -> DataFrame:
    """The partitions a preferred election would move, with their preferred and current
    leaders."""
    return partitions.where("in_plan").select(
        "cluster", "topic", "partition", "preferred_leader", "leader"
    )


# --- events ------------------------------------------------------------------------------------


def _elections(events: DataFrame, bucket_ms: int) -> DataFrame:
    """The events that are leader elections, each with the start of its time bucket."""
    bucket = F.col("batch_time_ms") - F.pmod(F.col("batch_time_ms"), F.lit(bucket_ms))
    return events.where(F.col("election").isNotNull()).withColumn("time_ms", bucket)


def elections_over_time(elections: DataFrame) -> DataFrame:
    """How many elections of each kind happened in each time bucket."""
    return elections.groupBy("cluster", "time_ms", "election").agg(F.count(F.lit(1)).alias("count"))


def unclean_elections(elections: DataFrame) -> DataFrame:
    """Each unclean election: where in the log, which partition, new and previous leader."""
    return elections.where(F.col("election") == "unclean").select(
        "cluster", "offset", "topic", "partition", "leader", "previous_leader"
    )


def isr_changes(events: DataFrame) -> DataFrame:
    """Per broker, how often it left an ISR (shrinks) and joined one (expands)."""
    shrinks = events.select("cluster", F.explode("isr_removed").alias("broker_id")).select(
        "cluster", "broker_id", F.lit(1).alias("shrinks"), F.lit(0).alias("expands")
    )
    expands = events.select("cluster", F.explode("isr_added").alias("broker_id")).select(
        "cluster", "broker_id", F.lit(0).alias("shrinks"), F.lit(1).alias("expands")
    )
    return (
        shrinks.unionByName(expands)
        .groupBy("cluster", "broker_id")
        .agg(
            F.sum("shrinks").cast("long").alias("shrinks"),
            F.sum("expands").cast("long").alias("expands"),
        )
    )


def _count_where(condition: Column, name: str) -> Column:
    return F.sum(F.when(condition, 1).otherwise(0)).cast("long").alias(name)


def fencing(events: DataFrame) -> DataFrame:
    """Per broker: fencings, unfencings, controlled shutdowns, registrations and
    unregistrations."""
    record_type = F.col("record_type")
    change = record_type == "BrokerRegistrationChangeRecord"
    return (
        events.where(
            change
            | (record_type == "RegisterBrokerRecord")
            | (record_type == "UnregisterBrokerRecord")
        )
        .groupBy("cluster", "broker_id")
        .agg(
            _count_where(change & (F.col("fencing") == "fenced"), "fenced"),
            _count_where(change & (F.col("fencing") == "unfenced"), "unfenced"),
            _count_where(
                change & F.coalesce("controlled_shutdown", F.lit(False)), "controlled_shutdowns"
            ),
            _count_where(record_type == "RegisterBrokerRecord", "registrations"),
            _count_where(record_type == "UnregisterBrokerRecord", "unregistrations"),
        )
    )


def leadership_changes(elections: DataFrame) -> DataFrame:
    """Per batch time and broker, the net change in leaderships (gains minus losses), where
    it is not zero: exact times, not buckets, so a plot shows each change where it happened."""
    exact = F.col("batch_time_ms").alias("time_ms")
    gains = elections.where(F.col("leader") != -1).select(
        "cluster", exact, F.col("leader").alias("broker_id"), F.lit(1).alias("change")
    )
    losses = elections.where(
        F.col("previous_leader").isNotNull() & (F.col("previous_leader") != -1)
    ).select(
        "cluster", exact, F.col("previous_leader").alias("broker_id"), F.lit(-1).alias("change")
    )
    return (
        gains.unionByName(losses)
        .groupBy("cluster", "time_ms", "broker_id")
        .agg(F.sum("change").cast("long").alias("change"))
        .where(F.col("change") != 0)
    )


# --- the report --------------------------------------------------------------------------------


def _first_examples(frame: DataFrame, group: list[str], order: list[Column]) -> DataFrame:
    window = Window.partitionBy(*group).orderBy(*order)
    return (
        frame.withColumn("_rank", F.row_number().over(window))
        .where(F.col("_rank") <= EXAMPLES)
        .drop("_rank")
    )


def _grouped(rows: list[Any], make: Callable[[Any], dict[str, Any]]) -> dict[str, list[Any]]:
    grouped: dict[str, list[Any]] = {}
    for row in rows:
        grouped.setdefault(row["cluster"], []).append(make(row))
    return grouped


QUERY_THREADS = 4
"""Queries submitted at once: while one is planned on the driver, another's tasks run."""


def _concurrently(actions: Mapping[str, Callable[[], Any]]) -> dict[str, Any]:
    """Runs independent Spark actions from several driver threads and returns their results
    by name: Spark schedules their tasks side by side, so small queries do not queue."""
    if len(actions) <= 1:
        return {name: action() for name, action in actions.items()}
    with ThreadPoolExecutor(max_workers=QUERY_THREADS, thread_name_prefix="audit-query") as pool:
        futures = {name: pool.submit(action) for name, action in actions.items()}
        return {name: future.result() for name, future in futures.items()}


def collect_report(
    frames: AuditFrames, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Runs the audit and returns the report (the structure of
    :func:`analytics.plain_audit.plain_audit`).

    The cached reads (brokers, topics, events and the partition figures) are filled first,
    side by side, each by one query (a query that meets an empty cache twice, through a union
    or a self-join, would read the files twice); then every figure is queried at once, but
    for the event figures of a history with no events at all (a bare snapshot's)."""

    def step(message: str) -> None:
        if progress is not None:
            progress(message)

    topic_order = [F.coalesce(F.col("topic"), F.lit("")), F.col("partition")]
    reads = {name: getattr(frames, name) for name in ("brokers", "topics", "events", "figures")}
    reads = {name: frame for name, frame in reads.items() if frame.is_cached}
    counts: dict[str, int] = {}
    if reads:
        step(f"reading {', '.join(reads)}")
        counts = _concurrently({name: frame.count for name, frame in reads.items()})
    step("clusters, brokers, findings, election plan, events and replica figures")
    counted = frames.unclean_elections.withColumn(
        "_total", F.count(F.lit(1)).over(Window.partitionBy("cluster"))
    )
    event_queries: dict[str, Callable[[], Any]] = {
        "over_time": frames.elections_over_time.orderBy("cluster", "time_ms", "election").collect,
        "unclean": _first_examples(counted, ["cluster"], [F.col("offset")])
        .orderBy("cluster", "offset")
        .collect,
        "isr": frames.isr_changes.orderBy("cluster", "broker_id").collect,
        "fencing": frames.fencing.orderBy("cluster", "broker_id").collect,
        "leadership": frames.leadership_changes.orderBy("cluster", "time_ms", "broker_id").collect,
    }
    if counts.get("events") == 0:
        # Every event figure is empty: their queries would cost most of a second each.
        event_queries = {name: list for name in event_queries}
    results = _concurrently(
        {
            **event_queries,
            "clusters": frames.clusters.collect,
            "brokers": frames.broker_table.orderBy("cluster", "broker_id").collect,
            # A plan can name a sizeable share of a million partitions: fetch it as Arrow.
            "plan": figure_frames.election_plan(frames.figures)
            .orderBy("cluster", *topic_order)
            .toArrow,
            "findings": figure_frames.finding_examples(frames.figures).collect,
            "below_factor": figure_frames.below_replication_factor(frames.figures).collect,
            "racks": frames.leaders_per_rack.orderBy(
                "cluster", F.col("rack").isNotNull(), F.coalesce("rack", F.lit(""))
            ).collect,
            "replicas": frames.replicas_per_broker.collect,
            "registered": frames.brokers.select(
                "cluster", "broker_id", "rack", "fenced", "in_controlled_shutdown"
            ).collect,
        }
    )
    cluster_rows = results["clusters"]
    broker_rows = results["brokers"]
    table = _grouped(
        broker_rows,
        lambda row: {
            key: row[key] for key in row.asDict() if key != "cluster" and not key.endswith("_after")
        },
    )
    predicted = _grouped(
        broker_rows,
        lambda row: {
            "broker_id": row["broker_id"],
            **{key: row[f"{key}_after"] for key in AFTER_COLUMNS},
        },
    )
    racks = _grouped(
        results["racks"],
        lambda row: {
            "rack": row["rack"],
            "brokers": row["brokers"],
            "leaders": row["leaders"],
            "preferred": row["preferred"],
        },
    )
    examples: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in results["findings"]:
        examples.setdefault((row["cluster"], row["finding"]), []).append(
            {"topic": row["topic"], "partition": row["partition"]}
        )
    plan_table = results["plan"]
    plans: dict[str, list[dict[str, Any]]] = {}
    for cluster_name, topic, partition in zip(
        plan_table.column("cluster").to_pylist(),
        plan_table.column("topic").to_pylist(),
        plan_table.column("partition").to_pylist(),
        strict=True,
    ):
        plans.setdefault(cluster_name, []).append({"topic": topic, "partition": partition})
    over_time = _grouped(
        results["over_time"],
        lambda row: {"time_ms": row["time_ms"], "election": row["election"], "count": row["count"]},
    )
    unclean_rows = results["unclean"]
    unclean_examples = _grouped(
        unclean_rows,
        lambda row: {key: row[key] for key in row.asDict() if key not in ("cluster", "_total")},
    )
    unclean_counts = {row["cluster"]: row["_total"] for row in unclean_rows}
    isr = _grouped(results["isr"], lambda row: row.asDict())
    fencing = _grouped(
        results["fencing"],
        lambda row: {key: row[key] for key in row.asDict() if key != "cluster"},
    )
    leadership = _grouped(
        results["leadership"],
        lambda row: {
            "time_ms": row["time_ms"],
            "broker_id": row["broker_id"],
            "change": row["change"],
        },
    )

    replica_examples: list[Mapping[str, Any]] = [
        {**row.asDict(), "_total": totals[row["cluster"]]}
        for totals in [{row["cluster"]: row["rack_shared"] for row in cluster_rows}]
        for row in results["findings"]
        if row["finding"] == "rack_shared"
    ]
    replica_examples += results["below_factor"]
    step("replica balance plan")
    balance = replica_sections(
        results["replicas"],
        replica_examples,
        results["registered"],
        frames.assignment,
        sorted(row["cluster"] for row in cluster_rows),
        threshold_percent=frames.threshold_percent,
        max_moves=frames.max_moves,
    )
    report_clusters: dict[str, Any] = {}
    for row in sorted(cluster_rows, key=lambda row: row["cluster"]):
        name = row["cluster"]
        brokers_table = table.get(name, [])
        predicted_rows = predicted.get(name, [])
        by_type: dict[str, int] = {}
        for entry in over_time.get(name, []):
            by_type[entry["election"]] = by_type.get(entry["election"], 0) + entry["count"]
        fencing_rows = fencing.get(name, [])
        report_clusters[name] = {
            "snapshot_offset": row["snapshot_offset"],
            "partitions": row["partitions"],
            "brokers": row["brokers"],
            "active_brokers": row["active_brokers"],
            "preferred_leader_ratio": row["preferred_leader_ratio"],
            "broker_table": brokers_table,
            "brokers_above_threshold": [
                entry["broker_id"] for entry in brokers_table if entry["above_threshold"]
            ],
            "leaders_per_rack": racks.get(name, []),
            **{
                finding: {"count": row[finding], "examples": examples.get((name, finding), [])}
                for finding in FINDINGS
            },
            "election_plan": {
                "count": row["in_plan"],
                "partitions": plans.get(name, []),
                "predicted": predicted_rows,
                "brokers_above_threshold_after": [
                    entry["broker_id"] for entry in predicted_rows if entry["above_threshold"]
                ],
            },
            "events": {
                "records": row["event_records"],
                "elections_by_type": dict(sorted(by_type.items())),
                "elections_over_time": over_time.get(name, []),
                "unclean_elections": {
                    "count": unclean_counts.get(name, 0),
                    "examples": unclean_examples.get(name, []),
                },
                "isr_shrinks": [
                    {"broker_id": entry["broker_id"], "count": entry["shrinks"]}
                    for entry in isr.get(name, [])
                    if entry["shrinks"]
                ],
                "isr_expands": [
                    {"broker_id": entry["broker_id"], "count": entry["expands"]}
                    for entry in isr.get(name, [])
                    if entry["expands"]
                ],
                "fencing": fencing_rows,
                "fencing_events": sum(
                    entry["fenced"] + entry["unfenced"] + entry["controlled_shutdowns"]
                    for entry in fencing_rows
                ),
                "leadership_changes": leadership.get(name, []),
            },
            "replica_balance": balance[name],
        }
    return {
        "threshold_percent": frames.threshold_percent,
        "bucket_ms": frames.bucket_ms,
        "clusters": report_clusters,
    }
