"""The replica-balance section on Spark (see :mod:`analytics.replica_balance` for what each
figure means): replicas per broker and the two partition findings are counted in Spark; the
judging against the threshold and the plan are the plain module's, so both engines agree."""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from analytics import replica_balance
from placement.reassignment import PartitionReplicas


def replicas_per_broker(assignment: DataFrame) -> DataFrame:
    """How many replicas each broker id holds, over the named partitions."""
    return (
        assignment.select("cluster", F.explode("replicas").alias("broker_id"))
        .groupBy("cluster", "broker_id")
        .agg(F.count(F.lit(1)).cast("long").alias("replicas"))
    )


def replica_findings(assignment: DataFrame, brokers: DataFrame) -> DataFrame:
    """Per named partition: whether its replicas span fewer racks than they could
    (``rack_shared``) and whether it holds fewer replicas than its topic's most common count,
    the larger on a tie (``below_replication_factor``).

    Each partition is judged on its own row: its cluster's racks arrive as one small map per
    cluster, broadcast, so the millions of (partition, replica) pairs are never exploded,
    joined or shuffled; only the per-topic counts of replica-list sizes are aggregated."""
    racks = brokers.where(F.col("rack").isNotNull())
    rack_maps = racks.groupBy("cluster").agg(
        F.map_from_entries(F.collect_list(F.struct("broker_id", "rack"))).alias("rack_of"),
        F.countDistinct("rack").alias("racks"),
    )
    key = ["cluster", "topic", "partition"]
    sizes = assignment.select(*key, "replicas", F.size("replicas").alias("size"))
    by_popularity = Window.partitionBy("cluster", "topic").orderBy(
        F.col("count").desc(), F.col("size").desc()
    )
    factors = (
        sizes.groupBy("cluster", "topic", "size")
        .agg(F.count(F.lit(1)).alias("count"))
        .withColumn("_rank", F.row_number().over(by_popularity))
        .where(F.col("_rank") == 1)
        .select("cluster", "topic", F.col("size").alias("replication_factor"))
    )
    replica_racks = F.filter(
        F.transform("replicas", lambda broker: F.col("rack_of")[broker]),
        lambda rack: rack.isNotNull(),
    )
    spread = F.coalesce(F.size(F.array_distinct(replica_racks)), F.lit(0))
    racks_known = F.coalesce("racks", F.lit(0))
    return (
        sizes.join(F.broadcast(rack_maps), "cluster", "left")
        .join(F.broadcast(factors), ["cluster", "topic"], "left")
        .select(
            *key,
            ((racks_known >= 2) & (spread < F.least(F.col("size"), racks_known))).alias(
                "rack_shared"
            ),
            (F.col("size") < F.col("replication_factor")).alias("below_replication_factor"),
        )
    )


REPLICA_FINDINGS = ("rack_shared", "below_replication_factor")


def finding_examples(findings: DataFrame) -> DataFrame:
    """Per cluster and finding, its first examples by (topic, partition), each row carrying
    the finding's total (``_total``): counts and examples come from one pass."""
    flagged = None
    for finding in REPLICA_FINDINGS:
        rows = findings.where(finding).select(
            "cluster", F.lit(finding).alias("finding"), "topic", "partition"
        )
        flagged = rows if flagged is None else flagged.unionByName(rows)
    assert flagged is not None
    group = Window.partitionBy("cluster", "finding")
    return (
        flagged.withColumn("_total", F.count(F.lit(1)).over(group))
        .withColumn("_rank", F.row_number().over(group.orderBy("topic", "partition")))
        .where(F.col("_rank") <= replica_balance.EXAMPLES)
        .select("cluster", "finding", "topic", "partition", "_total")
        .orderBy("cluster", "finding", "topic", "partition")
    )


def replica_sections(
    replica_rows: list[Any],
    example_rows: list[Any],
    broker_rows: list[Any],
    assignment_rows: DataFrame,
    names: list[str],
    *,
    threshold_percent: float,
    max_moves: int,
) -> dict[str, dict[str, Any]]:
    """Each cluster's ``replica_balance`` from the rows of :func:`replicas_per_broker`,
    :func:`finding_examples` and the registered brokers (``broker_id``, ``rack``, ``fenced``,
    ``in_controlled_shutdown``): the figures from Spark, judged and planned by
    :func:`analytics.replica_balance.section`; the assignment is fetched, as Arrow, only for
    a cluster that needs a plan."""
    counts: dict[str, dict[int, int]] = {}
    for row in replica_rows:
        counts.setdefault(row["cluster"], {})[row["broker_id"]] = row["replicas"]
    totals: dict[tuple[str, str], int] = {}
    examples: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in example_rows:
        totals[row["cluster"], row["finding"]] = row["_total"]
        examples.setdefault((row["cluster"], row["finding"]), []).append(
            {"topic": row["topic"], "partition": row["partition"]}
        )
    registered: dict[str, list[dict[str, Any]]] = {}
    for row in broker_rows:
        registered.setdefault(row["cluster"], []).append(
            {key: row[key] for key in ("broker_id", "rack", "fenced", "in_controlled_shutdown")}
        )

    def assignment_of(name: str) -> list[PartitionReplicas]:
        table = (
            assignment_rows.where(F.col("cluster") == name)
            .select("topic", "partition", "replicas")
            .toArrow()
        )
        return [
            PartitionReplicas(topic, partition, tuple(replicas))
            for topic, partition, replicas in zip(
                table.column("topic").to_pylist(),
                table.column("partition").to_pylist(),
                table.column("replicas").to_pylist(),
                strict=True,
            )
        ]

    sections = {}
    for name in names:

        def assignment(name: str = name) -> list[PartitionReplicas]:
            return assignment_of(name)

        figures = replica_balance.ReplicaFigures(
            counts.get(name, {}),
            *(
                (totals.get((name, finding), 0), examples.get((name, finding), []))
                for finding in REPLICA_FINDINGS
            ),
        )
        sections[name] = replica_balance.section(
            figures,
            registered.get(name, []),
            assignment,
            threshold_percent=threshold_percent,
            max_moves=max_moves,
        )
    return sections
