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
    the larger on a tie (``below_replication_factor``)."""
    racks = brokers.where(F.col("rack").isNotNull()).select("cluster", "broker_id", "rack")
    rack_counts = racks.groupBy("cluster").agg(F.countDistinct("rack").alias("racks"))
    key = ["cluster", "topic", "partition"]
    spread = (
        assignment.select(*key, F.explode("replicas").alias("broker_id"))
        .join(F.broadcast(racks), ["cluster", "broker_id"])
        .groupBy(*key)
        .agg(F.countDistinct("rack").alias("spread"))
    )
    sizes = assignment.select(*key, F.size("replicas").alias("size"))
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
    racks_known = F.coalesce("racks", F.lit(0))
    return (
        sizes.join(spread, key, "left")
        .join(rack_counts, "cluster", "left")
        .join(factors, ["cluster", "topic"], "left")
        .select(
            *key,
            (
                (racks_known >= 2)
                & (F.coalesce("spread", F.lit(0)) < F.least(F.col("size"), racks_known))
            ).alias("rack_shared"),
            (F.col("size") < F.col("replication_factor")).alias("below_replication_factor"),
        )
    )


def replica_sections(
    replicas: DataFrame,
    findings: DataFrame,
    brokers: DataFrame,
    assignment_rows: DataFrame,
    names: list[str],
    *,
    threshold_percent: float,
    max_moves: int,
) -> dict[str, dict[str, Any]]:
    """Each cluster's ``replica_balance`` from :func:`replicas_per_broker`,
    :func:`replica_findings`, the broker rows and the assignment: the figures from Spark,
    judged and planned by :func:`analytics.replica_balance.section`; the assignment is
    fetched, as Arrow, only for a cluster that needs a plan."""
    counts: dict[str, dict[int, int]] = {}
    for row in replicas.collect():
        counts.setdefault(row["cluster"], {})[row["broker_id"]] = row["replicas"]
    totals = {
        row["cluster"]: row
        for row in findings.groupBy("cluster")
        .agg(
            F.sum(F.col("rack_shared").cast("long")).alias("rack_shared"),
            F.sum(F.col("below_replication_factor").cast("long")).alias("below"),
        )
        .collect()
    }
    order = [F.col("topic"), F.col("partition")]
    by_cluster = Window.partitionBy("cluster").orderBy(*order)
    examples: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for finding in ("rack_shared", "below_replication_factor"):
        flagged = findings.where(finding)
        for row in (
            flagged.withColumn("_rank", F.row_number().over(by_cluster))
            .where(F.col("_rank") <= replica_balance.EXAMPLES)
            .orderBy("cluster", *order)
            .collect()
        ):
            examples.setdefault((row["cluster"], finding), []).append(
                {"topic": row["topic"], "partition": row["partition"]}
            )
    registered: dict[str, list[dict[str, Any]]] = {}
    for row in brokers.select(
        "cluster", "broker_id", "rack", "fenced", "in_controlled_shutdown"
    ).collect():
        registered.setdefault(row["cluster"], []).append(row.asDict())

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

        total = totals.get(name)
        figures = replica_balance.ReplicaFigures(
            counts.get(name, {}),
            (0 if total is None else total["rack_shared"], examples.get((name, "rack_shared"), [])),
            (
                0 if total is None else total["below"],
                examples.get((name, "below_replication_factor"), []),
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
