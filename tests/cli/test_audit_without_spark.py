"""``raftmeta audit --engine plain`` on an install without the spark extra (no pyarrow, no
pyspark, no matplotlib): it used to die on ``import pyarrow``; now it writes the report and the
election plan, says the plots were left out, and ``--engine spark`` says in one line what it
needs. The extra is hidden from a real ``raftmeta`` process by an import hook."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from analytics.synthetic import build_image, write_snapshot

HIDE_THE_EXTRA = """
import sys
from importlib.abc import MetaPathFinder

class HideSparkExtra(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"pyarrow", "pyspark", "matplotlib", "py4j"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, HideSparkExtra())
from raftmeta.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def audit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", HIDE_THE_EXTRA, "audit", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_plain_audit_needs_no_spark_extra(tmp_path: Path) -> None:
    image = build_image(brokers=4, racks=2, topics=3, partitions_per_topic=8, skew=0.5, seed=3)
    (tmp_path / "clusters").mkdir()
    write_snapshot(image, tmp_path / "clusters", cluster_id="c", name="east.checkpoint")
    out = tmp_path / "out"
    finished = audit(str(tmp_path / "clusters"), "--engine", "plain", "--out", str(out))
    assert finished.returncode == 0, finished.stderr
    assert "Traceback" not in finished.stderr
    assert "no plots: matplotlib" in finished.stdout
    report = json.loads((out / "report.json").read_text())
    assert list(report["clusters"]) == ["east"]
    assert json.loads((out / "election-plan.json").read_text())["partitions"]
    assert not list(out.rglob("*.png"))


def test_the_spark_engine_says_what_it_needs(tmp_path: Path) -> None:
    image = build_image(brokers=3, racks=1, topics=1, partitions_per_topic=3, skew=0.0, seed=1)
    (tmp_path / "clusters").mkdir()
    write_snapshot(image, tmp_path / "clusters", cluster_id="c", name="east.checkpoint")
    finished = audit(str(tmp_path / "clusters"), "--out", str(tmp_path / "out"))
    assert finished.returncode == 2
    assert finished.stderr.count("\n") == 1 and "spark extra" in finished.stderr
    assert "Traceback" not in finished.stderr


def test_the_plain_column_names_are_the_schemas() -> None:
    from analytics.readers import COLUMNS, KINDS
    from analytics.schemas import KINDS as SCHEMA_KINDS
    from analytics.schemas import SCHEMAS

    assert KINDS == SCHEMA_KINDS
    assert {kind: tuple(SCHEMAS[kind].names) for kind in KINDS} == COLUMNS
