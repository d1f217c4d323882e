"""The example notebook runs from top to bottom (its code cells, in order, in one namespace)."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "leader_balance.ipynb"


def test_leader_balance_notebook_runs_and_plans_the_skew_away(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("RAFTMETA_PATH", raising=False)
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    namespace: dict[str, Any] = {"__name__": "__notebook__"}
    for cell in cells:
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), str(NOTEBOOK), "exec"), namespace)
    assert namespace["spark"] is spark
    cluster = namespace["cluster"]
    assert cluster["partitions"] == 1000
    assert cluster["brokers_above_threshold"]
    assert cluster["election_plan"]["brokers_above_threshold_after"] == [11]
    for name in ("report.json", "election-plan.json", "leaders.png", "imbalance.png"):
        assert (namespace["out"] / name).stat().st_size > 0
    printed = capsys.readouterr().out
    assert "partitions to move back to their preferred leader" in printed
    # The fenced broker that still leads is called out, not left in the table.
    (fenced,) = [row for row in cluster["broker_table"] if row["fenced"]]
    assert fenced["broker_id"] == 11 and fenced["leaders"] > 0
    assert f"WARNING: broker 11 is fenced but leads {fenced['leaders']} partitions" in printed
    # The notebook ends on a leadership chart drawn from a log with changes in it.
    assert namespace["history"]["events"]["leadership_changes"]
    assert (namespace["history_out"] / "leadership.png").stat().st_size > 0
    # Nothing is left behind once the notebook's objects are gone (as at kernel shutdown).
    workdir = namespace["workdir"]
    assert workdir.is_dir()
    namespace.clear()
    gc.collect()
    assert not workdir.exists()
