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
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from analytics.integrity import check_sources
from analytics.readers import DEFAULT_MAX_SPLIT_BYTES, Split, plan, read_split
from analytics.schemas import KINDS, spark_ddl
from analytics.sources import AnalyticsInputError, discover

SOURCE_NAME = "raftmeta"


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
        return RaftmetaReader(self.options)


class SplitPartition(InputPartition):
    """One :class:`~analytics.readers.Split`, shipped to the worker that reads it."""

    def __init__(self, split: Split) -> None:
        super().__init__(split)
        self.split = split


class RaftmetaReader(DataSourceReader):
    def __init__(self, options: Any) -> None:
        path = options.get("path")
        if not path:
            raise AnalyticsInputError("the raftmeta source needs a path: .load(PATH)")
        self.path = str(path)
        self.kind = _kind(options)
        self.max_split_bytes = int(options.get("maxSplitBytes", DEFAULT_MAX_SPLIT_BYTES))
        self.allow_partial = str(options.get("allowPartial", "false")).lower() == "true"

    def partitions(self) -> Sequence[InputPartition]:
        checked = check_sources(discover(self.path), allow_partial=self.allow_partial)
        splits = plan(checked.sources, self.kind, self.max_split_bytes)
        return [SplitPartition(split) for split in splits]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        assert isinstance(partition, SplitPartition)
        yield from read_split(partition.split)
