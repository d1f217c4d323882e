"""Fixtures shared across test packages.

``spark`` is one local SparkSession for the whole run, started only when a collected test asks
for it (the JVM costs seconds and hundreds of megabytes), and stopped at the end. Spark tests
must not run in parallel processes: each would start its own JVM on the same two cores.

The session is started as soon as collection ends, before any test runs: pyspark launches the
JVM with a ``preexec_fn``, and a fork that runs Python code in a process whose gRPC threads
are busy (as they are after the quorum tests) can kill the child before it execs ("Java
gateway process exited before sending its port number").

``make test`` runs the tests in three pytest-xdist worker processes (``-n 3``) on two cores:
most tests wait on timers and real processes rather than compute (with two workers the cores
were idle about 30 % of the run). Every worker collects every test, so the eager start above
would give each worker a JVM; a worker does not start one at collection. Instead the tests in
``ONE_AT_A_TIME`` (everything under tests/analytics, the only place the ``spark`` fixture may
be used, and the chaos campaign, which keeps both cores busy on its own) form one work unit,
handed first to one worker, Spark's tests at its head: that worker starts the session when its
first Spark test asks for it, before it has run anything with gRPC threads, and no two of the
heavy tests run at once. The other workers take the longest tests first (``EARLY``: the
simulator's fault campaign in chunks, then the others of a minute or more) and then the rest,
one test at a time, and all share what is left when the unit is done.

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

ONE_AT_A_TIME = (
    "tests/analytics/",
    "tests/process/test_chaos.py::",
)
"""Node id prefixes of the tests one xdist worker runs in order (see the module docstring)."""
EARLY = (
    "tests/sim/test_simulator.py::test_ci_fault_schedules_hold_every_invariant",
    "tests/test_demo.py::test_the_demo_runs_end_to_end_over_mutual_tls_and_ends_balanced",
    "tests/process/test_refusals.py::",
    "tests/process/test_snapshot_catch_up.py::",
    "tests/process/test_dynamic_quorum.py::",
    "tests/sim/test_simulator.py::test_hypothesis_drawn_fault_schedules",
    "tests/sim/test_checker_catches_broken_cores.py::",
    "tests/test_demo.py::test_ctrl_c_while_the_quorum_starts_stops_every_process",
    "tests/process/test_dev_tls.py::",
    "tests/process/test_voter_change_tls.py::",
)
"""Node id prefixes of the longest tests (about a minute or more each), longest first, handed
out right after ``ONE_AT_A_TIME``, each a unit of its own: started early, they do not leave one
worker running them after the other has run everything else (the short tests fill in at the
end). Only tests without module-scoped fixtures, whose set-up would otherwise run twice."""
ONE_AT_A_TIME_UNIT = "one-at-a-time"


def uses_spark(item: pytest.Item) -> bool:
    return "spark" in getattr(item, "fixturenames", ())


def in_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Keep the work units in the order the workers collect (``ONE_AT_A_TIME`` first), not
    xdist's largest unit first."""
    if not in_xdist_worker(config):
        config.option.loadscopereorder = False


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """An xdist hook, run in the controller: ``ONE_AT_A_TIME`` as one unit, every other test a
    unit of its own. Only node ids reach the controller, hence prefixes rather than markers."""
    from xdist.scheduler import LoadScopeScheduling

    class OneAtATimeScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return ONE_AT_A_TIME_UNIT if nodeid.startswith(ONE_AT_A_TIME) else nodeid

    return OneAtATimeScheduling(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker, put ``ONE_AT_A_TIME`` first, Spark's tests at its head, then
    ``EARLY``. Every worker sorts the same collection the same way, as xdist requires."""
    if not in_xdist_worker(config):
        return
    for item in items:
        if uses_spark(item) and not item.nodeid.startswith(ONE_AT_A_TIME):
            raise pytest.UsageError(f"{item.nodeid} uses Spark: list it in ONE_AT_A_TIME")
    spark = [item for item in items if uses_spark(item)]
    heavy = [
        item for item in items if item.nodeid.startswith(ONE_AT_A_TIME) and not uses_spark(item)
    ]
    early_by_id = {
        id(item): item for prefix in EARLY for item in items if item.nodeid.startswith(prefix)
    }
    early = list(early_by_id.values())
    first = {id(item) for item in spark + heavy + early}
    items[:] = spark + heavy + early + [item for item in items if id(item) not in first]


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
