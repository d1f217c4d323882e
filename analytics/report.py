"""Turning an audit report into what people read: a table, JSON, plots and an election plan.

The report is the dict built by :func:`analytics.audit.collect_report` (or the plain
:func:`analytics.plain_audit.plain_audit`). Files written to the output directory:

- ``report.json``: the whole report, with each election plan cut to its first partitions
  (the full plan is in its own file);
- ``election-plan.json``: the plan in the ``--path-to-json-file`` format of
  ``kafka-leader-election.sh`` and ``raftmeta leader-election``,
  ``{"partitions": [{"topic": ..., "partition": ...}, ...]}``. With several clusters each gets
  ``<cluster>/election-plan.json`` instead, since the tool talks to one cluster at a time;
- ``reassignment-plan.json``: the replica-balance plan (:mod:`analytics.replica_balance`) in
  the ``--reassignment-json-file`` format of ``kafka-reassign-partitions.sh`` and ``raftmeta
  reassign-partitions``, ``{"version": 1, "partitions": [{"topic", "partition", "replicas",
  "log_dirs"}]}``, beside the election plan (per cluster likewise);
- ``leaders.png`` (leaders per broker against preferred and ideal), ``imbalance.png`` (Kafka's
  imbalance ratio per broker against the threshold) and ``leadership.png`` (leaders per broker
  over time, from the log), under ``<cluster>/`` likewise when there are several.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from analytics.plain_audit import EXAMPLES

PLAN_FILE = "election-plan.json"
REASSIGNMENT_PLAN_FILE = "reassignment-plan.json"
REPORT_FILE = "report.json"
PLOT_FILES = ("leaders.png", "imbalance.png", "leadership.png", "replicas.png")
"""The figures :mod:`analytics.plots` writes, by name: examples/leader_balance.ipynb shows them."""


def plan_document(cluster_report: dict[str, Any]) -> dict[str, Any]:
    """The election plan as ``raftmeta leader-election --path-to-json-file`` reads it."""
    return {
        "partitions": [
            {"topic": entry["topic"], "partition": entry["partition"]}
            for entry in cluster_report["election_plan"]["partitions"]
        ]
    }


def reassignment_document(cluster_report: dict[str, Any]) -> dict[str, Any]:
    """The replica-balance plan as ``raftmeta reassign-partitions --reassignment-json-file``
    reads it."""
    return {
        "version": 1,
        "partitions": [
            {
                "topic": entry["topic"],
                "partition": entry["partition"],
                "replicas": entry["replicas"],
                "log_dirs": ["any"] * len(entry["replicas"]),
            }
            for entry in cluster_report["replica_balance"]["plan"]["partitions"]
        ],
    }


def report_document(report: dict[str, Any]) -> dict[str, Any]:
    """The report as written to ``report.json``: plans cut to their first partitions."""
    document = copy.deepcopy(report)
    for cluster in document["clusters"].values():
        for plan in (cluster["election_plan"], cluster["replica_balance"]["plan"]):
            plan["examples"] = plan.pop("partitions")[:EXAMPLES]
    return document


def cluster_directory(out: Path, report: dict[str, Any], cluster: str) -> Path:
    if len(report["clusters"]) == 1:
        return out
    return out / _safe_name(cluster)


def _safe_name(cluster: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in cluster).strip(".")
    return cleaned or "cluster"


def write_outputs(
    report: dict[str, Any], out: Path, progress: Callable[[str], None] | None = None
) -> list[Path]:
    """Writes report.json, the election plans and the plots; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / REPORT_FILE]
    (out / REPORT_FILE).write_text(json.dumps(report_document(report), indent=2) + "\n")
    for name, cluster in report["clusters"].items():
        directory = cluster_directory(out, report, name)
        directory.mkdir(parents=True, exist_ok=True)
        plan_path = directory / PLAN_FILE
        plan_path.write_text(json.dumps(plan_document(cluster), indent=2) + "\n")
        written.append(plan_path)
        moves_path = directory / REASSIGNMENT_PLAN_FILE
        moves_path.write_text(json.dumps(reassignment_document(cluster), indent=2) + "\n")
        written.append(moves_path)
        if not plots_available():
            continue  # the report and the plan are the audit; the plots need the spark extra
        if progress is not None:
            progress(f"plotting {name}")
        from analytics.plots import plot_cluster
        from analytics.replica_plots import plot_replicas

        written.extend(
            plot_cluster(
                name,
                cluster,
                report["threshold_percent"],
                directory,
                bucket_ms=int(report.get("bucket_ms") or 0),
            )
        )
        written.append(plot_replicas(name, cluster, report["threshold_percent"], directory))
    return written


def plots_available() -> bool:
    """Whether matplotlib (from the ``spark`` extra) is installed to draw the plots."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _format_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def render_text(report: dict[str, Any], write: Callable[..., None], max_brokers: int = 40) -> None:
    """Prints the report as rich tables through ``write`` (a Console's ``print``). What a
    partial audit lacks comes first, one unwrapped line each."""
    from rich.markup import escape
    from rich.table import Table

    threshold = report["threshold_percent"]
    for note in report.get("partial", ()):
        write(f"[bold red]PARTIAL[/bold red] {escape(note)}", soft_wrap=True)
    for name, cluster in report["clusters"].items():
        ratio = _format_ratio(cluster["preferred_leader_ratio"])
        write(
            f"[bold]cluster {name}[/bold]: {cluster['partitions']} partitions, "
            f"{cluster['brokers']} brokers ({cluster['active_brokers']} active), "
            f"state as of offset {cluster['snapshot_offset']}, preferred leaders {ratio}"
        )
        table = Table(title=f"leadership per broker (threshold {threshold}%)")
        for column in ("broker", "rack", "state", "leaders", "ideal", "preferred", "imbalance"):
            table.add_column(column, justify="left" if column in ("rack", "state") else "right")
        rows = sorted(
            cluster["broker_table"],
            key=lambda row: (-(row["imbalance"] or 0.0), row["broker_id"]),
        )
        for row in rows[:max_brokers]:
            state = (
                "unregistered"
                if not row["registered"]
                else "fenced"
                if row["fenced"]
                else "shutting down"
                if row["in_controlled_shutdown"]
                else "active"
            )
            ideal = row["ideal_leaders"]
            imbalance = _format_ratio(row["imbalance"])
            if row["above_threshold"]:
                imbalance = f"[red]{imbalance}[/red]"
            table.add_row(
                str(row["broker_id"]),
                row["rack"] or "-",
                state,
                str(row["leaders"]),
                "-" if ideal is None else f"{ideal:.1f}",
                str(row["preferred"]),
                imbalance,
            )
        if len(rows) > max_brokers:
            table.caption = f"the {max_brokers} most imbalanced of {len(rows)} brokers"
        write(table)
        racks = Table(title="leaders per rack")
        for column in ("rack", "brokers", "leaders", "preferred"):
            racks.add_column(column, justify="left" if column == "rack" else "right")
        for entry in cluster["leaders_per_rack"]:
            racks.add_row(
                entry["rack"] or "-",
                str(entry["brokers"]),
                str(entry["leaders"]),
                str(entry["preferred"]),
            )
        write(racks)
        above = cluster["brokers_above_threshold"]
        plan = cluster["election_plan"]
        events = cluster["events"]
        write(
            f"brokers above {threshold}%: {_ids(above)}; under-replicated "
            f"{cluster['under_replicated']['count']}, under min ISR "
            f"{cluster['under_min_isr']['count']}, leaderless {cluster['leaderless']['count']}"
        )
        write(
            f"eligible leader replicas: led from the ELR {cluster['led_from_elr']['count']}, "
            f"only an unclean election left {cluster['unclean_only']['count']}"
        )
        write(
            f"election plan: {plan['count']} partitions; brokers above {threshold}% after it: "
            f"{_ids(plan['brokers_above_threshold_after'])}"
        )
        _render_replica_balance(cluster["replica_balance"], threshold, write, max_brokers)
        elections = ", ".join(
            f"{kind} {count}" for kind, count in events["elections_by_type"].items()
        )
        write(
            f"log: {events['records']} records; elections: {elections or 'none'}; unclean "
            f"{events['unclean_elections']['count']}; fencing events {events['fencing_events']}"
        )


def _render_replica_balance(
    section: dict[str, Any], threshold: float, write: Callable[..., None], max_brokers: int
) -> None:
    """The replica-balance table (brokers furthest from the ideal first) and its summary."""
    from rich.table import Table

    ideal = section["ideal_replicas"]
    bounds = section["bounds"]
    title = f"replicas per broker (threshold {threshold}%"
    title += ")" if bounds is None else f": {bounds[0]} to {bounds[1]})"
    table = Table(title=title)
    for column in ("broker", "rack", "active", "replicas", "ideal", "after plan"):
        table.add_column(column, justify="left" if column in ("rack", "active") else "right")
    rows = sorted(
        section["broker_table"],
        key=lambda row: (-abs(row["replicas"] - (row["ideal_replicas"] or 0.0)), row["broker_id"]),
    )
    for row in rows[:max_brokers]:
        count = str(row["replicas"])
        if row["within_threshold"] is False:
            count = f"[red]{count}[/red]"
        table.add_row(
            str(row["broker_id"]),
            row["rack"] or "-",
            "yes" if row["active"] else "no",
            count,
            "-" if row["ideal_replicas"] is None else f"{row['ideal_replicas']:.1f}",
            str(row["replicas_after"]),
        )
    if len(rows) > max_brokers:
        table.caption = f"the {max_brokers} furthest from the ideal of {len(rows)} brokers"
    write(table)
    plan = section["plan"]
    shown = "-" if ideal is None else f"{ideal:.1f}"
    stopped = {
        "max_moves": "; stopped at --max-moves",
        "rack_spread": "; no further move keeps rack spread",
    }.get(plan["stopped"] or "", "")
    write(
        f"replicas: ideal {shown} per active broker; outside the threshold "
        f"{_ids(section['brokers_outside_threshold'])}; replicas sharing a rack needlessly "
        f"{section['rack_shared']['count']}, below the topic's replication factor "
        f"{section['below_replication_factor']['count']}"
    )
    write(
        f"reassignment plan: {plan['replicas_moved']} replica moves in "
        f"{plan['partitions_moved']} partitions (at most {plan['max_moves']}); outside the "
        f"threshold after it: {_ids(plan['brokers_outside_threshold_after'])}{stopped}"
    )


def _ids(values: list[int]) -> str:
    if not values:
        return "none"
    shown = ", ".join(str(value) for value in values[:20])
    return shown + (f" and {len(values) - 20} more" if len(values) > 20 else "")
