"""The audit's replica-balance section as the demo reads it: replicas per broker against the
ideal share, and the reassignment plan it wrote for ``raftmeta reassign-partitions``.

The demo checks these figures after a seventh broker joins (it is outside the threshold and
the plan moves replicas onto it) and again after the plan has run (every broker within).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.table import Table

REASSIGNMENT_PLAN_FILE = "reassignment-plan.json"
"""The name ``analytics.report`` gives the plan, beside ``report.json``."""


@dataclass(frozen=True, slots=True)
class BrokerReplicas:
    broker_id: int
    rack: str | None
    replicas: int
    within_threshold: bool | None
    """None for a broker that is not active (fenced, shutting down): the audit does not judge it."""
    replicas_after: int
    """Its count once the plan has run, as the audit predicts it."""


@dataclass(frozen=True, slots=True)
class ReplicaBalance:
    plan: Path
    ideal: float | None
    bounds: tuple[int, int] | None
    """The counts within the threshold, lowest and highest."""
    brokers: tuple[BrokerReplicas, ...]
    partitions_moved: int
    replicas_moved: int
    outside_after: tuple[int, ...]
    """Active brokers still outside the threshold once the plan has run."""

    def outside(self) -> list[int]:
        return [b.broker_id for b in self.brokers if b.within_threshold is False]

    def replicas_of(self, broker_id: int) -> int:
        return next((b.replicas for b in self.brokers if b.broker_id == broker_id), 0)

    def after_plan(self, broker_id: int) -> int:
        return next((b.replicas_after for b in self.brokers if b.broker_id == broker_id), 0)

    def table(self, title: str, threshold: float) -> Table:
        table = Table(title=title, title_justify="left")
        for name in ("broker", "rack", "replicas", "after plan"):
            table.add_column(name, justify="left" if name == "rack" else "right")
        for b in self.brokers:
            count = str(b.replicas)
            if b.within_threshold is False:
                count = f"[bold red]{count}[/]"
            elif b.within_threshold:
                count = f"[green]{count}[/]"
            after = str(b.replicas_after) if self.partitions_moved else "-"
            table.add_row(str(b.broker_id), b.rack or "-", count, after)
        band = "" if self.bounds is None else f"; within: {self.bounds[0]}-{self.bounds[1]}"
        ideal = "-" if self.ideal is None else f"{self.ideal:.1f}"
        table.caption = f"ideal {ideal} per broker, threshold {threshold:g}%{band}"
        return table

    def as_json(self) -> dict[str, Any]:
        return {
            "plan": str(self.plan),
            "outside_threshold": self.outside(),
            "partitions_moved": self.partitions_moved,
            "replicas_moved": self.replicas_moved,
            "outside_threshold_after": list(self.outside_after),
            "replicas": {str(b.broker_id): b.replicas for b in self.brokers},
        }


def replica_balance_of(cluster: dict[str, Any], out_dir: Path) -> ReplicaBalance:
    """The figures from one cluster's ``replica_balance`` in the audit's report."""
    section = cluster["replica_balance"]
    plan = section["plan"]
    bounds = section.get("bounds")
    return ReplicaBalance(
        plan=out_dir / REASSIGNMENT_PLAN_FILE,
        ideal=section["ideal_replicas"],
        bounds=None if bounds is None else (int(bounds[0]), int(bounds[1])),
        brokers=tuple(
            BrokerReplicas(
                broker_id=int(row["broker_id"]),
                rack=row.get("rack"),
                replicas=int(row["replicas"]),
                within_threshold=row["within_threshold"],
                replicas_after=int(row["replicas_after"]),
            )
            for row in sorted(section["broker_table"], key=lambda row: int(row["broker_id"]))
        ),
        partitions_moved=int(plan["partitions_moved"]),
        replicas_moved=int(plan["replicas_moved"]),
        outside_after=tuple(int(b) for b in plan["brokers_outside_threshold_after"]),
    )
