"""The Spark audit as the demo uses it: run it on an exported history, read back what it wrote.

The audit (``analytics``) writes ``report.json``, the plots, ``election-plan.json`` and
``reassignment-plan.json`` into its output folder; the demo shows the per-broker imbalance table
from the report, checks the brokers against the threshold, and hands the election plan to the
election tool and the reassignment plan (:mod:`replica_outcome`) to ``reassign-partitions``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table

from raftmeta.devkit.demo.errors import StepFailed, require_module
from raftmeta.devkit.demo.replica_outcome import ReplicaBalance, replica_balance_of
from raftmeta.devkit.demo.spark import STARTER

REPORT_FILE = "report.json"
PLAN_FILE = "election-plan.json"
"""The names ``analytics.report`` writes (for one cluster: straight into the output folder)."""
LEADERSHIP_BUCKET_MS = 1000
"""The demo's failure and repair happen a minute or so apart: the audit's default one-minute
buckets could net them out to nothing, so the leadership history is kept per second."""


@dataclass(frozen=True, slots=True)
class BrokerBalance:
    broker_id: int
    rack: str | None
    leaders: int
    preferred: int
    """Partitions whose preferred replica (the first in the replica list) is this broker."""
    imbalance_percent: float
    """Kafka's formula: the share of ``preferred`` this broker does not lead, in percent."""


@dataclass(frozen=True, slots=True)
class AuditOutcome:
    out_dir: Path
    report: Path
    plan: Path
    plots: tuple[Path, ...]
    threshold: float
    brokers: tuple[BrokerBalance, ...]
    plan_size: int
    replicas: ReplicaBalance
    """Replicas per broker and the reassignment plan."""

    def over_threshold(self) -> list[int]:
        return [b.broker_id for b in self.brokers if b.imbalance_percent > self.threshold]

    def table(self, title: str) -> Table:
        table = Table(title=title, title_justify="left")
        for name in ("broker", "rack", "leaders", "preferred", "imbalance"):
            table.add_column(name, justify="left" if name == "rack" else "right")
        for b in self.brokers:
            over = b.imbalance_percent > self.threshold
            imbalance = f"{b.imbalance_percent:.0f}%"
            table.add_row(
                str(b.broker_id),
                b.rack or "-",
                str(b.leaders),
                str(b.preferred),
                f"[bold red]{imbalance}[/]" if over else f"[green]{imbalance}[/]",
            )
        table.caption = f"threshold {self.threshold:g}% (leader.imbalance.per.broker.percentage)"
        return table

    def as_json(self) -> dict[str, Any]:
        return {
            "out_dir": str(self.out_dir),
            "report": str(self.report),
            "plan": str(self.plan),
            "plots": [str(p) for p in self.plots],
            "threshold": self.threshold,
            "over_threshold": self.over_threshold(),
            "plan_size": self.plan_size,
            "replicas": self.replicas.as_json(),
        }


def run_audit(
    snapshot: Path,
    out_dir: Path,
    threshold: float,
    *,
    jvm_log: Path,
    progress: Callable[[str], None] = lambda _: None,
) -> AuditOutcome:
    """Audit ``snapshot`` into ``out_dir`` in this process, on the demo's one Spark session
    (see ``spark``); the JVM's own output goes to ``jvm_log``."""
    require_module("the Spark audit", "analytics.audit")
    from analytics.audit import audit_frames, collect_report
    from analytics.report import write_outputs

    progress("waiting for Spark to start")
    spark = STARTER.session(jvm_log)
    progress("reading the snapshot")
    frames = audit_frames(
        spark, str(snapshot), threshold_percent=threshold, bucket_ms=LEADERSHIP_BUCKET_MS
    )
    report = collect_report(frames, progress)
    written = write_outputs(report, out_dir, progress)
    plots = tuple(path for path in written if path.suffix == ".png")
    return outcome_of(report, out_dir, plots)


def outcome_of(report: dict[str, Any], out_dir: Path, plots: tuple[Path, ...]) -> AuditOutcome:
    """The figures the demo shows and checks, read from the audit's report."""
    cluster = _only_cluster(report, out_dir)
    threshold = float(report["threshold_percent"])
    brokers = tuple(
        BrokerBalance(
            broker_id=int(row["broker_id"]),
            rack=row.get("rack"),
            leaders=int(row["leaders"]),
            preferred=int(row["preferred"]),
            imbalance_percent=100.0 * float(row["imbalance"] or 0.0),
        )
        for row in cluster["broker_table"]
    )
    return AuditOutcome(
        out_dir=out_dir,
        report=out_dir / REPORT_FILE,
        plan=out_dir / PLAN_FILE,
        plots=plots,
        threshold=threshold,
        brokers=brokers,
        plan_size=int(cluster["election_plan"]["count"]),
        replicas=replica_balance_of(cluster, out_dir),
    )


def _only_cluster(report: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    clusters = report.get("clusters") or {}
    if len(clusters) != 1:
        raise StepFailed(f"the audit found {len(clusters)} clusters in one snapshot; see {out_dir}")
    cluster: dict[str, Any] = next(iter(clusters.values()))
    return cluster
