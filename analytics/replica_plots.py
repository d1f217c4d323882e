"""``replicas.png``: replicas per broker before and after the reassignment plan.

Drawn from a report's ``replica_balance`` section (:mod:`analytics.replica_balance`). The
band of counts within the threshold is shaded and the ideal share is a line, so a broker
outside the band stands out before the plan and its move into the band shows after it.

Up to :data:`~analytics.plots.FULL_DETAIL_BROKERS` brokers, one bar pair per broker, named.
Beyond, every broker is one step of a profile sorted by today's count, with its count after
the plan as a second line over the same places: no broker is hidden, and the extremes are at
the ends. Brokers that are not active (fenced, shutting down, unregistered) are drawn in red
(hatched bars, or crosses on the profile): they are not judged and the plan leaves them alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from analytics.plots import (
    _FENCED,
    DPI,
    FULL_DETAIL_BROKERS,
    _bar_width,
    _broker_axis,
    _save,
    _title,
)

PLOT_FILE = "replicas.png"
_NOW = "tab:blue"
_AFTER = "tab:green"
_BAND = "tab:green"


def plot_replicas(
    name: str, cluster: dict[str, Any], threshold_percent: float, directory: Path
) -> Path:
    """Writes ``replicas.png`` for one cluster's report; returns its path."""
    return _save(replicas_figure(name, cluster, threshold_percent), directory / PLOT_FILE)


def _inactive(row: dict[str, Any]) -> bool:
    return not row["active"]


def _what(section: dict[str, Any], threshold_percent: float) -> str:
    plan = section["plan"]
    before = len(section["brokers_outside_threshold"])
    after = len(plan["brokers_outside_threshold_after"])
    return (
        f"replicas per broker: {before} outside {threshold_percent:g}% now, "
        f"{after} after {plan['replicas_moved']} moves"
    )


def replicas_figure(name: str, cluster: dict[str, Any], threshold: float) -> Figure:
    section = cluster["replica_balance"]
    rows = section["broker_table"]
    if len(rows) > FULL_DETAIL_BROKERS:
        return _profile(name, section, threshold)
    width = _bar_width(len(rows))
    figure = Figure(figsize=(width, 5), dpi=DPI)
    axes = figure.add_subplot()
    positions = list(range(len(rows)))
    _band(axes, section)
    now = axes.bar([p - 0.2 for p in positions], [row["replicas"] for row in rows], 0.4, color=_NOW)
    after = axes.bar(
        [p + 0.2 for p in positions],
        [row["replicas_after"] for row in rows],
        0.4,
        color=_AFTER,
        alpha=0.75,
    )
    for pair, row in zip(zip(now, after, strict=True), rows, strict=True):
        if _inactive(row):
            for bar in pair:
                bar.set_hatch("//")
                bar.set_edgecolor(_FENCED)
    for position, row in zip(positions, rows, strict=True):
        if row["within_threshold"] is False:
            axes.annotate(
                str(row["replicas"]),
                (position - 0.2, row["replicas"]),
                ha="center",
                va="bottom",
                fontsize="x-small",
                color="tab:red",
            )
    top = max([1, *(row["replicas"] for row in rows), *(row["replicas_after"] for row in rows)])
    axes.set_ylim(0, top * 1.18)
    _broker_axis(axes, positions, _axis_rows(rows))
    axes.set_ylabel("replicas")
    axes.legend(handles=_legend(section), fontsize="small", loc="upper left", bbox_to_anchor=(1, 1))
    _title(figure, _what(section, threshold), name, width)
    return figure


def _profile(name: str, section: dict[str, Any], threshold: float) -> Figure:
    rows = sorted(section["broker_table"], key=lambda row: (row["replicas"], row["broker_id"]))
    figure = Figure(figsize=(14, 5.5), dpi=DPI)
    axes = figure.add_subplot()
    positions = list(range(len(rows)))
    now = [row["replicas"] for row in rows]
    after = [row["replicas_after"] for row in rows]
    axes.fill_between(positions, now, step="mid", color=_NOW, alpha=0.3, linewidth=0)
    axes.step(positions, now, where="mid", color=_NOW, linewidth=1.5)
    axes.step(positions, after, where="mid", color=_AFTER, linewidth=2.5, zorder=5)
    _band(axes, section)
    inactive = [
        (p, row["replicas"]) for p, row in zip(positions, rows, strict=True) if _inactive(row)
    ]
    if inactive:
        axes.scatter(
            [p for p, _ in inactive],
            [count for _, count in inactive],
            marker="x",
            color=_FENCED,
            zorder=6,
        )
    top = max([1, *now, *after])
    axes.set_ylim(0, top * 1.12)
    axes.set_xlim(-0.7, len(rows) - 0.3)
    axes.set_xlabel(f"all {len(rows)} brokers, fewest replicas now on the left")
    axes.set_xticks([])
    axes.set_ylabel("replicas")
    axes.legend(handles=_legend(section), fontsize="small", loc="lower right")
    _title(figure, _what(section, threshold), name, 14)
    return figure


def _band(axes: Any, section: dict[str, Any]) -> None:
    bounds = section["bounds"]
    if bounds is None:
        return
    lower, upper = bounds
    axes.axhspan(lower - 0.5, upper + 0.5, color=_BAND, alpha=0.15, zorder=3)
    axes.axhline(section["ideal_replicas"], color="black", linestyle="--", linewidth=1.2)


def _legend(section: dict[str, Any]) -> list[Any]:
    from matplotlib.lines import Line2D

    handles: list[Any] = [
        Patch(color=_NOW, label="replicas now"),
        Patch(color=_AFTER, alpha=0.75, label="after the reassignment plan"),
    ]
    if any(not row["active"] for row in section["broker_table"]):
        handles.append(
            Patch(facecolor="white", edgecolor=_FENCED, hatch="//", label="not active (left alone)")
        )
    if section["bounds"] is not None:
        lower, upper = section["bounds"]
        handles.append(
            Patch(color=_BAND, alpha=0.15, label=f"within the threshold: {lower} to {upper}")
        )
        handles.append(
            Line2D(
                [],
                [],
                color="black",
                linestyle="--",
                label=f"ideal share {section['ideal_replicas']:.1f}",
            )
        )
    return handles


def _axis_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows in the shape the shared broker axis reads (it marks brokers not active)."""
    return [
        {
            "broker_id": row["broker_id"],
            "registered": row["registered"],
            "fenced": not row["active"] and row["registered"],
            "in_controlled_shutdown": False,
        }
        for row in rows
    ]
