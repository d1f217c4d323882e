"""Fixtures shared across test packages.

``spark`` is one local SparkSession for the whole run, started only when a test asks for it
(the JVM costs seconds and hundreds of megabytes), and stopped at the end. Spark tests must not
run in parallel processes: each would start its own JVM on the same two cores.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    from analytics.session import get_spark

    session = get_spark("local[2]", app_name="raftmeta tests")
    # Test data is tiny: one shuffle partition, no adaptive re-planning and no code generation
    # halve the cost of each query, which is nearly all planning and compiling.
    session.conf.set("spark.sql.shuffle.partitions", "1")
    session.conf.set("spark.sql.adaptive.enabled", "false")
    session.conf.set("spark.sql.codegen.wholeStage", "false")
    yield session
    session.stop()
