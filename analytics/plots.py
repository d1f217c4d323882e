"""The audit's plots, drawn on matplotlib figures of their own and saved as PNG.

Figures are made without pyplot, so drawing them needs no display and leaves the backend of
a notebook or an application alone (pyplot's global state is never touched).

Each plot must stay readable from six brokers to thousands, and must not hide a broker:

- ``leaders.png`` and ``imbalance.png`` draw one bar group per broker up to
  :data:`FULL_DETAIL_BROKERS`; beyond that a histogram of every broker beside the brokers
  furthest from the ideal (or most imbalanced), named. Bars of zero still show a mark, the
  ideal share is a mark of its own per broker (a fenced broker's ideal is 0) that stays
  visible when a bar reaches it, and the threshold is a labelled line.
- ``leadership.png`` draws each broker whose leadership changed in a panel of its own (small
  multiples, so equal lines cannot hide each other) up to :data:`SMALL_MULTIPLES`, and a
  heatmap of all of them beyond; changes sit at their exact batch times. Without a log (a bare
  snapshot) or without a change in it, the figure says so and what it does hold.
"""

from __future__ import annotations

import datetime
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from matplotlib import patheffects
from matplotlib.figure import Figure

FULL_DETAIL_BROKERS = 48
"""Up to this many brokers, one bar group each; beyond, a histogram and the extremes."""
EXTREMES = 15
"""Brokers named on each side in the summary of a large cluster."""
SMALL_MULTIPLES = 12
"""Up to this many brokers with leadership changes, one panel each; beyond, a heatmap."""
DPI = 100

_FENCED = "tab:red"
_OUTLINE = [patheffects.withStroke(linewidth=4, foreground="white")]


def leadership_series(
    cluster: dict[str, Any], bucket_ms: int = 0
) -> dict[int, list[tuple[int, int]]]:
    """Leaders per broker over time: (time ms, leaders from then on).

    The log gives changes, the state gives today's counts, so the series is rebuilt backwards
    from the state: each point's count is the next one's minus what changed in between.
    With ``bucket_ms``, each series also starts ``bucket_ms`` before the first change, at the
    count before it, so a leadership that left shows where it stood first.
    """
    current = {row["broker_id"]: row["leaders"] for row in cluster["broker_table"]}
    changes: defaultdict[int, dict[int, int]] = defaultdict(dict)
    for entry in cluster["events"]["leadership_changes"]:
        by_time = changes[entry["broker_id"]]
        by_time[entry["time_ms"]] = by_time.get(entry["time_ms"], 0) + entry["change"]
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


def _title(figure: Figure, what: str, name: str, width_inches: float) -> None:
    """``what`` on the first line, the cluster on the second, each cut to fit the width: a
    cluster id or a long folder name must not push the title off the figure."""
    characters = max(20, int(width_inches * 11))

    def fit(text: str) -> str:
        return text if len(text) <= characters else text[: characters - 1] + "…"

    figure.suptitle(f"{fit(what)}\n{fit(name)}", fontsize="medium")


def _state(row: dict[str, Any]) -> str:
    if not row["registered"]:
        return "unregistered"
    if row["fenced"]:
        return "fenced"
    if row["in_controlled_shutdown"]:
        return "shutting down"
    return "active"


def _inactive(row: dict[str, Any]) -> bool:
    return _state(row) != "active"


def plot_cluster(
    name: str,
    cluster: dict[str, Any],
    threshold_percent: float,
    directory: Path,
    bucket_ms: int = 0,
) -> list[Path]:
    """Writes leaders.png, imbalance.png and leadership.png for one cluster's report.

    ``bucket_ms`` is accepted for callers of the earlier signature; leadership changes are
    drawn at their exact times."""
    del bucket_ms
    return [
        _save(leaders_figure(name, cluster), directory / "leaders.png"),
        _save(imbalance_figure(name, cluster, threshold_percent), directory / "imbalance.png"),
        _save(leadership_figure(name, cluster), directory / "leadership.png"),
    ]


# --- leaders per broker ---------------------------------------------------------------------


def _bar_width(count: int) -> float:
    return max(8.0, min(16.0, 0.3 * count + 3))


def leaders_figure(name: str, cluster: dict[str, Any]) -> Figure:
    rows = cluster["broker_table"]
    if len(rows) > FULL_DETAIL_BROKERS:
        return _leaders_summary(name, cluster)
    width = _bar_width(len(rows))
    figure = Figure(figsize=(width, 5), dpi=DPI)
    axes = figure.add_subplot()
    positions = list(range(len(rows)))
    after = {row["broker_id"]: row["leaders"] for row in cluster["election_plan"]["predicted"]}
    inactive = [_inactive(row) for row in rows]
    leaders = axes.bar(
        [p - 0.2 for p in positions], [row["leaders"] for row in rows], 0.4, label="leaders now"
    )
    preferred = axes.bar(
        [p + 0.2 for p in positions],
        [row["preferred"] for row in rows],
        0.4,
        color="tab:orange",
        alpha=0.6,
        label="preferred leader of",
    )
    for bar_pair, flagged in zip(zip(leaders, preferred, strict=True), inactive, strict=True):
        if flagged:
            for bar in bar_pair:
                bar.set_hatch("//")
                bar.set_edgecolor(_FENCED)
    ideal_rows = [(p, row["ideal_leaders"]) for p, row in zip(positions, rows, strict=True)]
    ideal_shown = [(p, value) for p, value in ideal_rows if value is not None]
    if ideal_shown:
        axes.hlines(
            [value for _, value in ideal_shown],
            [p - 0.45 for p, _ in ideal_shown],
            [p + 0.45 for p, _ in ideal_shown],
            color="black",
            linewidth=2.5,
            zorder=4,
            path_effects=_OUTLINE,
            label=f"ideal share ({max(v for _, v in ideal_shown):.1f}; 0 if not active)",
        )
    axes.scatter(
        [p - 0.2 for p in positions],
        [after.get(row["broker_id"], row["leaders"]) for row in rows],
        marker="D",
        s=28,
        facecolor="white",
        edgecolor="tab:green",
        linewidth=1.5,
        zorder=5,
        label="leaders after the election plan",
    )
    top = max([1.0, *(row["leaders"] for row in rows), *(row["preferred"] for row in rows)])
    axes.set_ylim(0, top * 1.18)
    _broker_axis(axes, positions, rows)
    axes.set_ylabel("partitions")
    fenced_leading = [row for row in rows if _inactive(row) and row["leaders"] > 0]
    what = "leaders per broker: actual, preferred and ideal"
    if fenced_leading:
        what = f"leaders per broker ({len(fenced_leading)} not active but leading: red, hatched)"
    _title(figure, what, name, width)
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure


def _leaders_summary(name: str, cluster: dict[str, Any]) -> Figure:
    rows = cluster["broker_table"]
    figure = Figure(figsize=(14, 6), dpi=DPI)
    histogram, extremes = figure.subplots(1, 2, width_ratios=(1, 1.2))
    counts = [row["leaders"] for row in rows]
    histogram.hist(counts, bins=min(40, max(5, len(set(counts)))), color="tab:blue")
    ideal_values = [row["ideal_leaders"] for row in rows if row["ideal_leaders"]]
    if ideal_values:
        ideal = max(ideal_values)
        histogram.axvline(ideal, color="black", linestyle="--", label=f"ideal share {ideal:.1f}")
        histogram.legend(fontsize="small")
    histogram.set_xlabel("leaders per broker")
    histogram.set_ylabel("brokers")
    histogram.set_title(f"all {len(rows)} brokers", fontsize="small")

    def off_ideal(row: dict[str, Any]) -> float:
        return float(row["leaders"] - (row["ideal_leaders"] or 0.0))

    ranked = sorted(rows, key=lambda row: (off_ideal(row), row["broker_id"]))
    above = [row for row in ranked if off_ideal(row) >= 0.5][-EXTREMES:][::-1]
    below = [row for row in ranked if off_ideal(row) <= -0.5][:EXTREMES][::-1]
    picked = above + below
    values = [row["leaders"] - (row["ideal_leaders"] or 0.0) for row in picked]
    colours = [
        _FENCED if _inactive(row) else ("tab:orange" if value > 0 else "tab:blue")
        for row, value in zip(picked, values, strict=True)
    ]
    positions = list(range(len(picked)))[::-1]
    extremes.barh(positions, values, color=colours)
    extremes.scatter(values, positions, marker="|", s=60, color="black", zorder=3)
    extremes.axvline(0, color="black", linewidth=1)
    extremes.set_yticks(
        positions,
        [
            f"{row['broker_id']} ({_state(row)})" if _inactive(row) else str(row["broker_id"])
            for row in picked
        ],
        fontsize="small",
    )
    for label, row in zip(extremes.get_yticklabels(), picked, strict=True):
        if _inactive(row):
            label.set_color(_FENCED)
    extremes.set_xlabel("leaders minus the ideal share")
    level = len(rows) - sum(1 for row in rows if abs(off_ideal(row)) >= 0.5)
    extremes.set_title(
        f"the {len(above)} furthest above and {len(below)} furthest below the ideal "
        f"({level} within half a leader of it; red: not active)",
        fontsize="small",
    )
    if not picked:
        extremes.text(0.5, 0.5, "every broker leads its ideal share", ha="center", va="center")
    inactive_leading = sum(1 for row in rows if _inactive(row) and row["leaders"] > 0)
    what = f"leaders per broker, {len(rows)} brokers"
    if inactive_leading:
        what += f" ({inactive_leading} not active but leading)"
    _title(figure, what, name, 14)
    return figure


def _broker_axis(axes: Any, positions: list[int], rows: list[dict[str, Any]]) -> None:
    axes.set_xlabel("broker")
    step = max(1, math.ceil(len(rows) / 30))
    axes.set_xticks(
        positions[::step], [str(row["broker_id"]) for row in rows][::step], fontsize="small"
    )
    for label, row in zip(axes.get_xticklabels(), rows[::step], strict=True):
        if _inactive(row):
            label.set_color(_FENCED)
            label.set_fontweight("bold")
    axes.set_xlim(-0.7, len(rows) - 0.3)


# --- imbalance ------------------------------------------------------------------------------


def imbalance_figure(name: str, cluster: dict[str, Any], threshold_percent: float) -> Figure:
    rows = cluster["broker_table"]
    if len(rows) > FULL_DETAIL_BROKERS:
        return _imbalance_summary(name, cluster, threshold_percent)
    width = _bar_width(len(rows))
    figure = Figure(figsize=(width, 5), dpi=DPI)
    axes = figure.add_subplot()
    positions = list(range(len(rows)))
    values = [None if row["imbalance"] is None else 100 * row["imbalance"] for row in rows]
    colours = ["tab:red" if row["above_threshold"] else "tab:blue" for row in rows]
    axes.bar(positions, [value or 0.0 for value in values], 0.7, color=colours)
    # A bar of zero has no height: a mark at its value shows it is there and is zero.
    known = [
        (p, v, c)
        for p, v, c in zip(positions, values, colours, strict=True)
        if v is not None and v < threshold_percent / 10
    ]
    axes.scatter(
        [p for p, _, _ in known],
        [v for _, v, _ in known],
        marker="_",
        s=220,
        linewidth=3,
        color=[c for _, _, c in known],
        zorder=3,
    )
    unknown = [p for p, v in zip(positions, values, strict=True) if v is None]
    if unknown:
        axes.scatter(
            unknown,
            [0.0] * len(unknown),
            marker="x",
            color="grey",
            zorder=3,
            label="nobody's preferred leader (no ratio)",
        )
    top = max([threshold_percent * 1.5, *(v for v in values if v is not None), 1.0]) * 1.1
    axes.set_ylim(-top * 0.04, top)
    axes.axhline(
        threshold_percent,
        color="tab:red",
        linestyle="--",
        linewidth=1.5,
        label=f"threshold {threshold_percent:g}%",
    )
    axes.annotate(
        f"threshold {threshold_percent:g}%",
        (1.0, threshold_percent),
        xycoords=("axes fraction", "data"),
        xytext=(-4, 3),
        textcoords="offset points",
        ha="right",
        va="bottom",
        color="tab:red",
        fontsize="small",
    )
    _broker_axis(axes, positions, rows)
    axes.set_ylabel("imbalance %")
    above = sum(1 for row in rows if row["above_threshold"])
    verdict = (
        f"{above} of {len(rows)} brokers above the threshold"
        if above
        else f"all {len(rows)} brokers within the threshold"
    )
    _title(figure, f"leader imbalance per broker (Kafka's ratio): {verdict}", name, width)
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure


def _imbalance_summary(name: str, cluster: dict[str, Any], threshold_percent: float) -> Figure:
    rows = cluster["broker_table"]
    figure = Figure(figsize=(14, 6), dpi=DPI)
    histogram, worst_axes = figure.subplots(1, 2, width_ratios=(1, 1.2))
    values = [100 * row["imbalance"] for row in rows if row["imbalance"] is not None]
    top = max([threshold_percent * 1.5, *values, 1.0])
    histogram.hist(values, bins=40, range=(0, top), color="tab:blue")
    histogram.axvline(
        threshold_percent,
        color="tab:red",
        linestyle="--",
        label=f"threshold {threshold_percent:g}%",
    )
    histogram.legend(fontsize="small")
    histogram.set_xlabel("imbalance %")
    histogram.set_ylabel("brokers")
    histogram.set_title(
        f"all {len(values)} brokers with a ratio"
        + (
            f" ({len(rows) - len(values)} are nobody's preferred leader)"
            if len(values) < len(rows)
            else ""
        ),
        fontsize="small",
    )
    ranked = sorted(
        (row for row in rows if row["imbalance"]),
        key=lambda row: (-row["imbalance"], row["broker_id"]),
    )[: 2 * EXTREMES]
    positions = list(range(len(ranked)))[::-1]
    shown = [100 * row["imbalance"] for row in ranked]
    worst_axes.barh(
        positions,
        shown,
        color=["tab:red" if row["above_threshold"] else "tab:blue" for row in ranked],
    )
    worst_axes.scatter(shown, positions, marker="|", s=60, color="black", zorder=3)
    worst_axes.axvline(threshold_percent, color="tab:red", linestyle="--")
    worst_axes.set_xlim(-top * 0.02, top * 1.05)
    worst_axes.set_yticks(positions, [str(row["broker_id"]) for row in ranked], fontsize="small")
    worst_axes.set_xlabel("imbalance %")
    worst_axes.set_title(
        f"the {len(ranked)} most imbalanced brokers (the rest are at 0%)", fontsize="small"
    )
    if not ranked:
        worst_axes.text(0.5, 0.5, "no broker is imbalanced", ha="center", va="center")
    above = sum(1 for row in rows if row["above_threshold"])
    _title(
        figure,
        f"leader imbalance, {len(rows)} brokers: {above} above the threshold "
        f"({threshold_percent:g}%)",
        name,
        14,
    )
    return figure


# --- leadership over time -------------------------------------------------------------------


def leadership_figure(name: str, cluster: dict[str, Any]) -> Figure:
    series = leadership_series(cluster)
    if not series:
        return _no_history(name, cluster)
    start = min(points[0][0] for points in series.values())
    end = max(points[-1][0] for points in series.values())
    margin = max(1_000, (end - start) // 20)
    first, last = start - margin, end + margin
    before = {
        broker_id: points[0][1] - _first_change(cluster, broker_id, points[0][0])
        for broker_id, points in series.items()
    }
    began = datetime.datetime.fromtimestamp(first / 1000, datetime.UTC)
    xlabel = f"seconds after {began:%Y-%m-%d %H:%M:%S} UTC (batch time)"
    if len(series) > SMALL_MULTIPLES:
        return _leadership_heatmap(name, cluster, series, before, first, last, xlabel)
    ordered = sorted(series)
    columns = min(3, len(ordered))
    rows = math.ceil(len(ordered) / columns)
    figure = Figure(figsize=(12, 1.0 + 2.1 * rows), dpi=DPI)
    grid = figure.subplots(rows, columns, sharex=True, sharey=True, squeeze=False)
    states = {row["broker_id"]: row for row in cluster["broker_table"]}
    for index, broker_id in enumerate(ordered):
        axes = grid[index // columns][index % columns]
        points = [(first, before[broker_id]), *series[broker_id], (last, series[broker_id][-1][1])]
        seconds = [(time_ms - first) / 1000 for time_ms, _ in points]
        counts = [count for _, count in points]
        axes.step(seconds, counts, where="post", color="tab:blue")
        axes.plot(seconds[1:-1], counts[1:-1], "o", color="tab:blue", markersize=4)
        row = states.get(broker_id)
        label = f"broker {broker_id}"
        if row is not None and _inactive(row):
            label += f" ({_state(row)})"
        axes.set_title(label, fontsize="small", color=_FENCED if "(" in label else "black")
        axes.grid(alpha=0.3)
    for index in range(len(ordered), rows * columns):
        grid[index // columns][index % columns].set_visible(False)
    for column in range(columns):
        # The lowest panel of each column carries the time axis, hidden cells below or not.
        lowest = max(index for index in range(len(ordered)) if index % columns == column)
        axes = grid[lowest // columns][column]
        axes.xaxis.set_tick_params(labelbottom=True)
        axes.set_xlabel(xlabel, fontsize="small")
    for line in grid:
        line[0].set_ylabel("leaders")
    for axes in grid.flat:
        axes.set_ylim(bottom=0)
    changes = len(cluster["events"]["leadership_changes"])
    _title(
        figure,
        f"leaders over time of the {len(ordered)} brokers whose leadership changed "
        f"({changes} changes, each at its batch time)",
        name,
        12,
    )
    return figure


def _first_change(cluster: dict[str, Any], broker_id: int, time_ms: int) -> int:
    return sum(
        entry["change"]
        for entry in cluster["events"]["leadership_changes"]
        if entry["broker_id"] == broker_id and entry["time_ms"] == time_ms
    )


def _leadership_heatmap(
    name: str,
    cluster: dict[str, Any],
    series: dict[int, list[tuple[int, int]]],
    before: dict[int, int],
    first: int,
    last: int,
    xlabel: str,
) -> Figure:
    times = sorted({time_ms for points in series.values() for time_ms, _ in points})
    edges = [first, *times, last]
    ordered = sorted(series)
    grid = []
    for broker_id in ordered:
        counts = dict(series[broker_id])
        level = before[broker_id]
        line = [level]
        for time_ms in times:
            level = counts.get(time_ms, level)
            line.append(level)
        grid.append(line)
    figure = Figure(figsize=(12, 7), dpi=DPI)
    axes = figure.add_subplot()
    mesh = axes.pcolormesh(
        [(time_ms - first) / 1000 for time_ms in edges],
        list(range(len(ordered) + 1)),
        grid,
        cmap="viridis",
        shading="flat",
    )
    figure.colorbar(mesh, ax=axes, label="leaders")
    step = max(1, math.ceil(len(ordered) / 40))
    axes.set_yticks(
        [index + 0.5 for index in range(0, len(ordered), step)],
        [str(broker_id) for broker_id in ordered[::step]],
        fontsize="small",
    )
    axes.set_ylabel("broker")
    axes.set_xlabel(xlabel, fontsize="small")
    for time_ms in times:
        axes.axvline((time_ms - first) / 1000, color="white", linewidth=0.3, alpha=0.5)
    changes = len(cluster["events"]["leadership_changes"])
    _title(
        figure,
        f"leaders over time of all {len(ordered)} brokers whose leadership changed "
        f"({changes} changes at {len(times)} batch times)",
        name,
        12,
    )
    return figure


def _no_history(name: str, cluster: dict[str, Any]) -> Figure:
    """A figure that says what the input holds when it holds no leadership change."""
    figure = Figure(figsize=(10, 4), dpi=DPI)
    axes = figure.add_subplot()
    axes.set_axis_off()
    records = cluster["events"]["records"]
    offset = cluster["snapshot_offset"]
    state = "no partitions" if offset is None else f"the state as of offset {offset}"
    if records:
        headline = f"The log's {records} records hold no leadership change."
    else:
        headline = f"No log: this is a bare snapshot ({state}), which holds no history."
    counts = [row["leaders"] for row in cluster["broker_table"]]
    lines = [headline]
    if counts:
        lines.append(
            f"Leaders per broker now, over {len(counts)} brokers: min {min(counts)}, "
            f"median {statistics.median(counts):g}, max {max(counts)} (see leaders.png)."
        )
    if not records:
        lines.append(
            "For history, audit a node's metadata directory or a `raftmeta log export` of it."
        )
    axes.text(0.5, 0.5, "\n\n".join(lines), ha="center", va="center", fontsize="large", wrap=True)
    _title(figure, "leadership over time", name, 10)
    return figure


def _save(figure: Figure, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, dpi=DPI)
    return path
