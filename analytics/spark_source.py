"""The ``raftmeta`` PySpark data source: ``spark.read.format("raftmeta")``.

::

    spark.dataSource.register(RaftmetaDataSource)
    partitions = (
        spark.read.format("raftmeta").option("kind", "partitions").load("/data/clusters")
    )

Options: ``kind`` (``partitions``, the default, ``brokers``, ``topics``, ``events`` or
``configs``; see :mod:`analytics.schemas` for the columns), ``maxSplitBytes`` (how much of one
file an input partition reads, default 4 MiB) and ``allowPartial`` (``true``: read a damaged
log as far as it is whole instead of failing; see :mod:`analytics.integrity`). The path is a
snapshot file, a node's metadata directory or a folder of many clusters (see
:mod:`analytics.sources`), local or a URI the executors reach (``s3://``, ``hdfs://``,
``gs://``; see :mod:`analytics.files`):
the driver lists and plans, each executor opens the files of its own splits. Planning and
reading are done by :mod:`analytics.readers`; this module only adapts them to Spark's
interface, so workers must be able to import the ``analytics`` package (installing raftmeta
is enough).

:func:`read_splits` is for a driver that has planned already (the audit does, once for every
kind, while its session starts): the splits travel in the ``plannedSplits`` option, so the
source's planning step only unpacks them instead of listing, checking and planning the path
again in a Python process of its own.
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from analytics.integrity import check_sources
from analytics.partition_figures import FIGURE_DDL, FigureSplit, figure_batches
from analytics.readers import DEFAULT_MAX_SPLIT_BYTES, Split, plan, read_split
from analytics.schemas import KINDS, SCHEMAS, spark_ddl
from analytics.sources import AnalyticsInputError, discover

SOURCE_NAME = "raftmeta"
PLANNED_SPLITS_OPTION = "plannedSplits"
PLANNED_FIGURES_OPTION = "plannedFigures"


def _kind(options: Any) -> str:
    kind = str(options.get("kind", "partitions")).lower()
    if kind not in KINDS:
        raise AnalyticsInputError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    return kind


class RaftmetaDataSource(DataSource):
    """Reads raftmeta snapshots and logs as partitions, brokers, topics, events or configs."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> str:
        return spark_ddl(_kind(self.options))

    def reader(self, schema: Any) -> DataSourceReader:
        return RaftmetaReader(self.options, [field.name for field in schema.fields])


class SplitPartition(InputPartition):
    """One :class:`~analytics.readers.Split`, shipped to the worker that reads it."""

    def __init__(self, split: Split) -> None:
        super().__init__(split)
        self.split = split


class FigurePartition(InputPartition):
    """One :class:`~analytics.partition_figures.FigureSplit`, counted by the worker that
    reads it."""

    def __init__(self, figure_split: FigureSplit) -> None:
        super().__init__(figure_split)
        self.figure_split = figure_split


class RaftmetaReader(DataSourceReader):
    """Reads the splits of one kind; a schema given with ``.schema(...)`` may name only some of
    the kind's columns, in its order, and only those are handed to Spark."""

    def __init__(self, options: Any, columns: Sequence[str] | None = None) -> None:
        path = options.get("path")
        if not path:
            raise AnalyticsInputError("the raftmeta source needs a path: .load(PATH)")
        self.path = str(path)
        self.kind = _kind(options)
        self.max_split_bytes = int(options.get("maxSplitBytes", DEFAULT_MAX_SPLIT_BYTES))
        self.allow_partial = str(options.get("allowPartial", "false")).lower() == "true"
        whole = columns is None or list(columns) == list(SCHEMAS[self.kind].names)
        self.columns = None if whole else list(columns or ())
        planned = options.get(PLANNED_SPLITS_OPTION)
        self.planned: tuple[Split, ...] | None = None
        if planned:
            # Written by encode_splits in this session's own driver, like the rest of its plan.
            self.planned = pickle.loads(base64.b64decode(str(planned)))
        figures = options.get(PLANNED_FIGURES_OPTION)
        self.figures: tuple[FigureSplit, ...] | None = None
        if figures:
            # Written by read_figure_rows in this session's own driver.
            self.figures = pickle.loads(base64.b64decode(str(figures)))

    def partitions(self) -> Sequence[InputPartition]:
        if self.figures is not None:
            return [FigurePartition(figure_split) for figure_split in self.figures]
        if self.planned is not None:
            return [SplitPartition(split) for split in self.planned]
        checked = check_sources(discover(self.path), allow_partial=self.allow_partial)
        splits = plan(checked.sources, self.kind, self.max_split_bytes)
        return [SplitPartition(split) for split in splits]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        if isinstance(partition, FigurePartition):
            yield from figure_batches(partition.figure_split)
            return
        assert isinstance(partition, SplitPartition)
        if self.columns is None:
            yield from read_split(partition.split)
            return
        for batch in read_split(partition.split):
            yield batch.select(self.columns)


def encode_splits(splits: Sequence[Split] | Sequence[FigureSplit]) -> str:
    """Splits planned on the driver, as the text of the ``plannedSplits`` (or
    ``plannedFigures``) option."""
    return base64.b64encode(pickle.dumps(tuple(splits), protocol=pickle.HIGHEST_PROTOCOL)).decode()


def read_splits(
    spark: SparkSession,
    path: str,
    splits: Sequence[Split],
    kind: str,
    columns: Sequence[str] | None = None,
) -> DataFrame:
    """The rows of ``kind`` from ``splits`` the driver planned for ``path``: the source reads
    them as they are, without discovering, checking or planning the path again. ``columns``
    (of the kind's schema, in its order) keeps Spark from converting the others at all."""
    return (
        spark.read.format(SOURCE_NAME)
        .schema(spark_ddl(kind, columns))
        .option("kind", kind)
        .option(PLANNED_SPLITS_OPTION, encode_splits(splits))
        .load(path)
    )


def read_figure_rows(
    spark: SparkSession, path: str, figure_splits: Sequence[FigureSplit]
) -> DataFrame:
    """The figure rows (see :mod:`analytics.partition_figures`) of the partitions splits the
    driver planned for ``path``, each split counted by the worker that reads it."""
    return (
        spark.read.format(SOURCE_NAME)
        .schema(FIGURE_DDL)
        .option("kind", "partitions")
        .option(PLANNED_FIGURES_OPTION, encode_splits(figure_splits))
        .load(path)
    )
