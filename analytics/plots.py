"""The audit's plots, drawn on matplotlib figures of their own and saved as PNG.

Figures are made without pyplot, so drawing them needs no display and leaves the backend of
a notebook or an application alone (pyplot's global state is never touched).
"""

from __future__ import annotations

import datetime
from collections import defaultdict
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

MAX_LINES = 10
"""Leadership over time shows the brokers whose leadership moved most."""


def leadership_series(
    cluster: dict[str, Any], bucket_ms: int = 0
) -> dict[int, list[tuple[int, int]]]:
    """Leaders per broker over time: (bucket start ms, leaders at the end of the bucket).

    The log gives changes, the state gives today's counts, so the series is rebuilt backwards
    from the state: each bucket's count is the next bucket's minus what changed in between.
    With ``bucket_ms``, each series also starts one bucket before the first change, at the count
    before it, so a leadership that left shows where it stood first.
    """
    current = {row["broker_id"]: row["leaders"] for row in cluster["broker_table"]}
    changes: defaultdict[int, dict[int, int]] = defaultdict(dict)
    for entry in cluster["events"]["leadership_changes"]:
        changes[entry["broker_id"]][entry["time_ms"]] = entry["change"]
    series: dict[int, list[tuple[int, int]]] = {}
    for broker_id, by_time in changes.items():
        count = current.get(broker_id, 0)
        points = []
        for time_ms in sorted(by_time, reverse=True):
            points.append((time_ms, count))
            count -= by_time[time_ms]
        if bucket_ms > 0 and points:
            points.append((points[-1][0] - bucket_ms, count))
        series[broker_id] = sorted(points)
    return series


def _title(axes: Any, what: str, name: str, width_inches: float) -> None:
    """``what`` on the first line, the cluster on the second, each cut to fit the width: a
    cluster id or a long folder name must not push the title off the figure."""
    characters = max(20, int(width_inches * 12))

    def fit(text: str) -> str:
        return text if len(text) <= characters else text[: characters - 1] + "…"

    axes.set_title(f"{fit(what)}\n{fit(name)}", fontsize="medium")


def plot_cluster(
    name: str,
    cluster: dict[str, Any],
    threshold_percent: float,
    directory: Path,
    bucket_ms: int = 0,
) -> list[Path]:
    rows = cluster["broker_table"]
    brokers = [str(row["broker_id"]) for row in rows]
    positions = list(range(len(rows)))
    width = max(6.0, min(24.0, 0.25 * len(rows) + 2))
    written = []

    figure = Figure(figsize=(width, 4))
    axes = figure.add_subplot()
    axes.bar([p - 0.2 for p in positions], [row["leaders"] for row in rows], 0.4, label="leaders")
    axes.bar(
        [p + 0.2 for p in positions], [row["preferred"] for row in rows], 0.4, label="preferred"
    )
    ideal = [row["ideal_leaders"] for row in rows if row["ideal_leaders"]]
    if ideal:
        axes.axhline(max(ideal), color="grey", linestyle="--", label="ideal")
    _broker_axis(axes, positions, brokers)
    axes.set_ylabel("partitions")
    _title(axes, "leaders per broker, actual and preferred", name, width)
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    written.append(_save(figure, directory / "leaders.png"))

    figure = Figure(figsize=(width, 4))
    axes = figure.add_subplot()
    values = [100 * (row["imbalance"] or 0.0) for row in rows]
    colours = ["tab:red" if row["above_threshold"] else "tab:blue" for row in rows]
    axes.bar(positions, values, color=colours)
    axes.axhline(threshold_percent, color="tab:red", linestyle="--", label="threshold")
    _broker_axis(axes, positions, brokers)
    axes.set_ylabel("imbalance %")
    _title(axes, "leader imbalance per broker (Kafka's ratio)", name, width)
    axes.set_ylim(0, max([threshold_percent * 1.5, *values]) * 1.05 or 1)
    if not any(row["above_threshold"] for row in rows):
        axes.text(
            0.5,
            0.8,
            f"all brokers within the threshold ({threshold_percent:g}%)",
            transform=axes.transAxes,
            ha="center",
            va="center",
            color="tab:green",
            fontsize="large",
        )
    axes.legend(loc="upper right")
    written.append(_save(figure, directory / "imbalance.png"))

    figure = Figure(figsize=(10, 4))
    axes = figure.add_subplot()
    series = leadership_series(cluster, bucket_ms)
    moved = sorted(series, key=lambda broker: (-len(series[broker]), broker))[:MAX_LINES]
    if moved:
        start = min(points[0][0] for points in series.values())
        end = max(points[-1][0] for points in series.values()) + max(bucket_ms, 1)
        for broker_id in sorted(moved):
            points = [*series[broker_id], (end, series[broker_id][-1][1])]
            axes.step(
                [(time_ms - start) / 1000 for time_ms, _ in points],
                [count for _, count in points],
                where="post",
                label=f"broker {broker_id}",
            )
        axes.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.0, 0.5))
        began = datetime.datetime.fromtimestamp(start / 1000, datetime.UTC)
        axes.set_xlabel(f"seconds after {began:%Y-%m-%d %H:%M:%S} UTC (batch time)")
    else:
        axes.text(0.5, 0.5, "no leadership changes in the log", ha="center", va="center")
    axes.set_ylabel("leaders")
    _title(axes, "leadership over time", name, 10)
    written.append(_save(figure, directory / "leadership.png"))
    return written


def _broker_axis(axes: Any, positions: list[int], brokers: list[str]) -> None:
    axes.set_xlabel("broker")
    step = max(1, len(brokers) // 40)
    axes.set_xticks(positions[::step], brokers[::step], fontsize="small")


def _save(figure: Figure, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, dpi=80)
    return path
