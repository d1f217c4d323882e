"""The Spark audit's partition figures, added up from the figure rows each split counted.

:mod:`analytics.partition_figures` counts every split where it is read; the frames here add
those few rows up per cluster and per broker, pick each finding's first examples, judge each
topic's replication factor, and list the election plan. They stand in for the scans of the
per-partition frames, which stay defined (and lazy) for whoever wants the rows themselves.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from analytics.partition_figures import BROKER_COUNTS, TOTALS
from analytics.plain_audit import EXAMPLES


def _section(figures: DataFrame, name: str) -> DataFrame:
    return figures.where(F.col("section") == name)


def _sum_of(name: str) -> Column:
    return F.coalesce(F.sum(F.when(F.col("name") == name, F.col("value"))), F.lit(0)).alias(name)


def partition_totals(figures: DataFrame) -> DataFrame:
    """Per cluster with partitions: the snapshot offset and every count of ``TOTALS``."""
    return (
        _section(figures, "total")
        .groupBy("cluster")
        .agg(
            F.max(F.when(F.col("name") == "snapshot_offset", F.col("value"))).alias(
                "snapshot_offset"
            ),
            *(_sum_of(name) for name in TOTALS[1:]),
        )
    )


def broker_counts(figures: DataFrame) -> DataFrame:
    """Per broker that leads or is preferred by a partition: ``BROKER_COUNTS``."""
    return (
        _section(figures, "broker")
        .groupBy("cluster", "broker_id")
        .agg(*(_sum_of(name) for name in BROKER_COUNTS))
    )


def replicas_per_broker(figures: DataFrame) -> DataFrame:
    """How many replicas each broker id holds, over the named partitions."""
    return (
        _section(figures, "replicas")
        .groupBy("cluster", "broker_id")
        .agg(F.sum("value").cast("long").alias("replicas"))
    )


def election_plan(figures: DataFrame) -> DataFrame:
    """The partitions a preferred election would move."""
    return _section(figures, "plan").select("cluster", "topic", "partition")


def _topic_order() -> list[Column]:
    return [F.coalesce(F.col("topic"), F.lit("")), F.col("partition")]


def _first(frame: DataFrame, group: list[str]) -> DataFrame:
    window = Window.partitionBy(*group).orderBy(*_topic_order())
    return (
        frame.withColumn("_rank", F.row_number().over(window))
        .where(F.col("_rank") <= EXAMPLES)
        .drop("_rank")
    )


def below_replication_factor(figures: DataFrame) -> DataFrame:
    """Per cluster, the named partitions holding fewer replicas than their topic's factor
    (its most common replica count, the larger on a tie): the first examples, each row
    carrying the finding's total (``_total``)."""
    sizes = (
        _section(figures, "size")
        .groupBy("cluster", "topic", "size")
        .agg(F.sum("value").alias("count"))
    )
    by_popularity = Window.partitionBy("cluster", "topic").orderBy(
        F.col("count").desc(), F.col("size").desc()
    )
    factors = (
        sizes.withColumn("_rank", F.row_number().over(by_popularity))
        .where(F.col("_rank") == 1)
        .select("cluster", "topic", F.col("size").alias("factor"))
    )
    below = sizes.join(factors, ["cluster", "topic"]).where(F.col("size") < F.col("factor"))
    totals = below.groupBy("cluster").agg(F.sum("count").cast("long").alias("_total"))
    examples = (
        _section(figures, "size_example")
        .join(below.select("cluster", "topic", "size"), ["cluster", "topic", "size"])
        .select("cluster", "topic", "partition")
    )
    return (
        _first(examples, ["cluster"])
        .join(totals, "cluster")
        .select(
            "cluster",
            F.lit("below_replication_factor").alias("finding"),
            "topic",
            "partition",
            "_total",
        )
    )


def finding_examples(figures: DataFrame) -> DataFrame:
    """Per cluster and finding, the first examples by (topic, partition)."""
    examples = _section(figures, "example").select(
        "cluster", F.col("name").alias("finding"), "topic", "partition"
    )
    return _first(examples, ["cluster", "finding"]).orderBy("cluster", "finding", *_topic_order())
