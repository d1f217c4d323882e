"""The audit's plots at 6, 100 and 1,000 brokers, and of a bare snapshot, for looking at.

Each cluster is a log with history (:func:`analytics.synthetic.failover_story`: brokers fenced
in turn, back, a partial preferred election) in a node directory, audited by the plain engine;
the PNGs land in ``benchmarks/results/audit_plots/<case>/``.

    .venv/bin/python benchmarks/audit_plots.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analytics.plain_audit import audit_path
from analytics.plots import plot_cluster
from analytics.synthetic import build_image, failover_story, write_node_directory, write_snapshot

RESULTS = Path(__file__).resolve().parent / "results" / "audit_plots"

CASES = {
    "6-brokers": dict(brokers=6, racks=3, topics=4, partitions_per_topic=30, failed=(1, 4)),
    "100-brokers": dict(brokers=100, racks=10, topics=50, partitions_per_topic=60, failed=(7, 42)),
    "1000-brokers": dict(
        brokers=1000,
        racks=20,
        topics=100,
        partitions_per_topic=100,
        failed=tuple(range(5, 1000, 50)),
    ),
}


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="audit-plots-") as scratch:
        for case, shape in CASES.items():
            node = write_node_directory(
                Path(scratch) / case,
                cluster_id=case,
                batches=failover_story(**shape),  # type: ignore[arg-type]
            )
            report = audit_path(node)
            out = RESULTS / case
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir(parents=True)
            for written in plot_cluster(case, report["clusters"][case], 10, out):
                print(written.relative_to(RESULTS.parent))
        image = build_image(
            brokers=12, racks=3, topics=20, partitions_per_topic=50, skew=0.33, seed=7, fenced=(11,)
        )
        snapshot = write_snapshot(image, scratch, cluster_id="bare", name="bare.checkpoint")
        report = audit_path(snapshot)
        out = RESULTS / "bare-snapshot"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        for written in plot_cluster("bare", report["clusters"]["bare"], 10, out):
            print(written.relative_to(RESULTS.parent))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
