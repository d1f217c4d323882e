"""Fixtures shared across test packages.

``spark`` is one local SparkSession for the whole run, started only when a collected test asks
for it (the JVM costs seconds and hundreds of megabytes), and stopped at the end. Spark tests
must not run in parallel processes: each would start its own JVM on the same two cores.

The session is started as soon as collection ends, before any test runs: pyspark launches the
JVM with a ``preexec_fn``, and a fork that runs Python code in a process whose gRPC threads
are busy (as they are after the quorum tests) can kill the child before it execs ("Java
gateway process exited before sending its port number").

Property tests draw the same examples on every run (the ``suite`` profile): the suite is a gate,
and a gate that passes or fails by luck tells nobody anything. Looking for new counterexamples
is a separate job, ``make properties``, which loads the ``explore`` profile and draws fresh
examples each round; whatever it finds is fixed and kept as an ``@example``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

settings.register_profile("suite", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None, print_blob=True)
settings.load_profile(os.environ.get("RAFTMETA_HYPOTHESIS_PROFILE", "suite"))

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


_SESSION: list[SparkSession] = []


def pytest_collection_finish(session: pytest.Session) -> None:
    if any("spark" in getattr(item, "fixturenames", ()) for item in session.items):
        _SESSION.append(_start_spark())


def _start_spark() -> SparkSession:
    from analytics.session import get_spark

    return get_spark("local[2]", app_name="raftmeta tests")


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = _SESSION[0] if _SESSION else _start_spark()
    # Test data is tiny: one shuffle partition, no adaptive re-planning and no code generation
    # halve the cost of each query, which is nearly all planning and compiling.
    session.conf.set("spark.sql.shuffle.partitions", "1")
    session.conf.set("spark.sql.adaptive.enabled", "false")
    session.conf.set("spark.sql.codegen.wholeStage", "false")
    yield session
    session.stop()
