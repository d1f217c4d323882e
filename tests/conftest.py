"""Fixtures shared across test packages.

``spark`` is one local SparkSession for the whole run, started only when a collected test asks
for it (the JVM costs seconds and hundreds of megabytes), and stopped at the end. Spark tests
must not run in parallel processes: each would start its own JVM on the same two cores.

The session is started as soon as collection ends, before any test runs: pyspark launches the
JVM with a ``preexec_fn``, and a fork that runs Python code in a process whose gRPC threads
are busy (as they are after the quorum tests) can kill the child before it execs ("Java
gateway process exited before sending its port number").

``make test`` runs the tests in two pytest-xdist worker processes (``-n 2``): most tests wait
on timers and real processes rather than compute, so two at a time nearly halve the run. Every
worker collects every test, so the eager start above would give each worker a JVM. Under
xdist the Spark tests instead form one group (``--dist loadgroup``, the default here whenever
``-n`` is given), which goes to one worker as the first work it is handed; that worker starts
the session when its first Spark test asks for it, which is before it has run anything with
gRPC threads. The other worker never starts one. Tests that use both cores on their own (the
simulator's schedules, a Spark cluster, the fault campaign) form another group, so no two of
them run at once, and they are handed out first, so that the longest work does not start last.

Property tests draw the same examples on every run (the ``suite`` profile): the suite is a gate,
and a gate that passes or fails by luck tells nobody anything. Looking for new counterexamples
is a separate job, ``make properties``, which loads the ``explore`` profile and draws fresh
examples each round; whatever it finds is fixed and kept as an ``@example``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

settings.register_profile("suite", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, database=None, print_blob=True)
settings.load_profile(os.environ.get("RAFTMETA_HYPOTHESIS_PROFILE", "suite"))

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


_SESSION: list[SparkSession] = []

SPARK_GROUP = "spark-session"
"""The xdist group of the tests that use the in-process SparkSession."""
CPU_BOUND_GROUP = "cpu-bound"
"""The xdist group of the tests marked ``cpu_bound``."""
DIST_KEY = "raftmeta_dist"
"""The controller's ``--dist`` mode, handed to each worker (whose own option says "no")."""


def uses_spark(item: pytest.Item) -> bool:
    return "spark" in getattr(item, "fixturenames", ())


def in_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``-n`` alone would spread the Spark tests over every worker: make it mean loadgroup, in
    the order the workers collect (the Spark group first), not xdist's largest group first."""
    if in_xdist_worker(config):
        return
    if getattr(config.option, "numprocesses", None) and config.option.dist == "no":
        config.option.dist = "loadgroup"
    if getattr(config.option, "dist", "no") == "loadgroup":
        config.option.loadscopereorder = False


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """An xdist hook, run in the controller for each worker before it starts."""
    node.workerinput[DIST_KEY] = node.config.option.dist


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker, group the Spark tests and the CPU-bound tests (see the module
    docstring), Spark first.

    Runs before xdist's own hook, which names each grouped test after its group. Every worker
    sorts the same collection the same way, as xdist requires.
    """
    workerinput: dict[str, Any] = getattr(config, "workerinput", {})
    if workerinput.get(DIST_KEY) != "loadgroup":
        return
    config.option.loadgroup = True
    spark = [item for item in items if uses_spark(item)]
    cpu_bound = [
        item
        for item in items
        if not uses_spark(item) and item.get_closest_marker("cpu_bound") is not None
    ]
    for item in spark:
        item.add_marker(pytest.mark.xdist_group(SPARK_GROUP))
    for item in cpu_bound:
        item.add_marker(pytest.mark.xdist_group(CPU_BOUND_GROUP))
    grouped = {id(item) for item in spark + cpu_bound}
    items[:] = spark + cpu_bound + [item for item in items if id(item) not in grouped]


def pytest_collection_finish(session: pytest.Session) -> None:
    if not in_xdist_worker(session.config) and any(uses_spark(item) for item in session.items):
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
