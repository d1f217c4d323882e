"""The plots hide no broker, keep exact change times, say what a bare snapshot holds, show
zero bars and the threshold, and stay readable at a thousand brokers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from analytics.plain_audit import audit_path
from analytics.plots import (
    EXTREMES,
    imbalance_figure,
    leaders_figure,
    leadership_figure,
    plot_cluster,
)
from analytics.synthetic import build_image, failover_story, write_node_directory, write_snapshot


def _story_report(tmp_path: Path, **shape: Any) -> dict[str, Any]:
    batches = failover_story(**shape)
    node = write_node_directory(tmp_path / "node", cluster_id="c", batches=batches)
    cluster: dict[str, Any] = audit_path(node)["clusters"]["c"]
    return cluster


def _texts(figure: Any) -> str:
    parts = [text.get_text() for text in figure.findobj(lambda artist: hasattr(artist, "get_text"))]
    return "\n".join(parts)


def test_brokers_with_equal_leadership_lines_each_get_a_panel_at_exact_times(
    tmp_path: Path,
) -> None:
    cluster = _story_report(
        tmp_path, brokers=6, racks=3, topics=4, partitions_per_topic=30, failed=(1, 4)
    )
    changes = cluster["events"]["leadership_changes"]
    moved = sorted({entry["broker_id"] for entry in changes})
    assert moved == [1, 2, 4, 5]
    # Brokers 1 and 4 (and 2 and 5) follow the same shape; each must be drawn.
    assert any(entry["time_ms"] % 60_000 for entry in changes), "times are exact, not buckets"
    figure = leadership_figure("c", cluster)
    panels = [axes for axes in figure.axes if axes.get_visible()]
    assert sorted(axes.get_title() for axes in panels) == [f"broker {b}" for b in moved]


def test_a_bare_snapshot_gets_a_chart_that_says_what_it_holds(tmp_path: Path) -> None:
    image = build_image(brokers=4, racks=2, topics=2, partitions_per_topic=10, fenced=(3,))
    report = audit_path(write_snapshot(image, tmp_path, cluster_id="bare"))
    cluster = report["clusters"]["bare"]
    text = _texts(leadership_figure("bare", cluster))
    assert "bare snapshot" in text and "Leaders per broker now, over 4 brokers" in text
    written = plot_cluster("bare", cluster, 10, tmp_path)
    assert [path.name for path in written] == ["leaders.png", "imbalance.png", "leadership.png"]


def test_zero_bars_are_marked_and_the_threshold_is_labelled(tmp_path: Path) -> None:
    cluster = _story_report(
        tmp_path, brokers=6, racks=3, topics=4, partitions_per_topic=30, failed=(1,)
    )
    zero = [row["broker_id"] for row in cluster["broker_table"] if row["imbalance"] == 0]
    assert zero
    figure = imbalance_figure("c", cluster, 10)
    (axes,) = figure.axes
    marks = {
        (float(x), float(y))
        for collection in axes.collections
        for x, y in np.asarray(collection.get_offsets()).tolist()
    }
    positions = {row["broker_id"]: index for index, row in enumerate(cluster["broker_table"])}
    assert {(float(positions[broker]), 0.0) for broker in zero} <= marks
    legend = axes.get_legend()
    assert legend is not None
    labels = [text.get_text() for text in legend.get_texts()]
    assert "threshold 10%" in labels


def test_a_fenced_leader_is_flagged_on_the_leaders_plot(tmp_path: Path) -> None:
    image = build_image(brokers=6, racks=2, topics=3, partitions_per_topic=20, fenced=(5,))
    cluster = audit_path(write_snapshot(image, tmp_path, cluster_id="f"))["clusters"]["f"]
    figure = leaders_figure("f", cluster)
    assert "1 not active but leading" in _texts(figure)
    (axes,) = figure.axes
    assert axes.get_xticklabels()[-1].get_color() == "tab:red"


def test_a_thousand_brokers_are_summarised_not_squeezed(tmp_path: Path) -> None:
    cluster = _story_report(
        tmp_path,
        brokers=1000,
        racks=20,
        topics=20,
        partitions_per_topic=150,
        failed=tuple(range(5, 1000, 50)),
    )
    for figure in (leaders_figure("c", cluster), imbalance_figure("c", cluster, 10)):
        histogram, extremes = figure.axes
        assert histogram.get_xlabel() in ("leaders per broker", "imbalance %")
        assert len(extremes.get_yticklabels()) <= 2 * EXTREMES
        width, height = figure.get_size_inches() * figure.dpi
        assert width <= 1400 and height >= 500
    heatmap = leadership_figure("c", cluster)
    assert "all 40 brokers whose leadership changed" in _texts(heatmap)
