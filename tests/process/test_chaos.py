"""A short fault campaign on real processes, in the suite: every default fault kind against three
controllers and three brokers under writes, then every node's files checked against what
the clients were told (``raftmeta chaos`` runs it at any length)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from raftmeta.devkit.chaos.campaign import Plan, report_lines, run_campaign
from raftmeta.devkit.chaos.faults import DEFAULT_KINDS
from raftmeta.devkit.chaos.history import read_history

DURATION_S = 25.0


def test_a_short_campaign_loses_nothing_and_echoes_nothing(tmp_path: Path) -> None:
    plan = Plan(tmp_path / "campaign", seed=11, duration_s=DURATION_S, kinds=DEFAULT_KINDS)
    lines: list[str] = []
    result = asyncio.run(run_campaign(plan, lines.append))
    report = "\n".join(lines + report_lines(result, plan))
    assert result.heal_failure is None, report
    assert result.verdict.violations == [], report
    assert len(result.faults) >= 4, report
    assert result.verdict.acknowledged >= 100, report
    # Every Raft link between controllers went through the proxy (brokers' too).
    controllers = [3000, 3001, 3002]
    assert all(
        result.relayed.get((source, destination), 0) > 0
        for source in controllers
        for destination in controllers
        if source != destination
    ), result.relayed
    # The history on disk is the one the checker judged.
    assert len(read_history(plan.directory / "history.jsonl")) == len(result.operations)
