"""``raftmeta demo``: the end-to-end run, its failure line, and that Ctrl-C leaves nothing behind.

The demo runs as a subprocess, as ``make demo`` runs it. Each run carries a marker in its
environment, which every process it starts inherits (the nodes, the brokers, Spark's JVM), so
the tests can find any survivor in ``/proc`` whether or not the demo recorded its pid.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from raftmeta.devkit.demo.errors import StepFailed
from raftmeta.devkit.demo.replica_outcome import replica_balance_of
from raftmeta.devkit.demo.runner import run_live_demo
from raftmeta.devkit.demo.simulated import run_simulated_demo
from raftmeta.devkit.demo.steps import Step, start_quorum
from tests.process.helpers import DEADLINE_S
from tests.support.waiting import wait_until

MARKER_VARIABLE = "RAFTMETA_DEMO_TEST_MARKER"
END_TO_END_TIMEOUT_S = 900.0
"""Generous: the demo takes under two minutes on an idle machine, far longer on a loaded one."""


def _marked(marker: str) -> list[int]:
    """Pids of live processes whose environment carries ``marker``."""
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _recorded_pids(root: Path) -> list[int]:
    listed = json.loads((root / "processes.json").read_text())["processes"]
    return [entry["pid"] for entry in listed]


def _assert_nothing_left(root: Path, marker: str) -> None:
    pids = _recorded_pids(root)
    assert pids, "the demo recorded no process"
    # The processes are gone when the demo exits; a JVM notices its parent is gone a moment later.
    wait_until(
        lambda: not [p for p in pids if _alive(p)], "the recorded processes to be gone", DEADLINE_S
    )
    wait_until(lambda: not _marked(marker), "every process of the run to be gone", DEADLINE_S)


def _spawn(args: list[str], marker: str) -> subprocess.Popen[str]:
    env = dict(os.environ, **{MARKER_VARIABLE: marker})
    return subprocess.Popen(
        [sys.executable, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parent.parent,
    )


def _steps_done(root: Path) -> list[str]:
    try:
        state = json.loads((root / "demo.json").read_text())
    except (OSError, ValueError):
        return []
    return [step["title"] for step in state["steps"]]


HOLD_SCRIPT = """
import sys, time
from pathlib import Path
from typing import Any
from raftmeta.devkit.demo.runner import run_live_demo
from raftmeta.devkit.demo.steps import Step, start_quorum

def hold(ctx):
    while True:
        time.sleep(0.05)

sys.exit(run_live_demo(Path(sys.argv[1]), steps=(Step("quorum", start_quorum), Step("hold", hold))))
"""
"""The demo's runner with the real quorum step followed by one that waits until interrupted,
so a signal lands at a known point whatever the later steps do."""


def test_simulated_demo_reports_a_new_leader_and_agreeing_logs() -> None:
    lines: list[str] = []
    assert run_simulated_demo(2026, lines.append) == 0
    assert any("committed logs agree on every node: yes" in line for line in lines)
    assert sum(line.strip().startswith("epoch ") for line in lines) >= 2


def test_the_replica_section_reads_who_is_outside_and_what_the_plan_leaves(tmp_path: Path) -> None:
    def row(broker_id: int, replicas: int, within: bool | None, after: int) -> dict[str, Any]:
        return {
            "broker_id": broker_id,
            "rack": f"rack-{broker_id}",
            "replicas": replicas,
            "within_threshold": within,
            "replicas_after": after,
        }

    cluster = {
        "replica_balance": {
            "ideal_replicas": 4.0,
            "bounds": [3, 5],
            "broker_table": [row(2, 6, False, 4), row(1, 6, False, 5), row(3, 0, False, 3)],
            "plan": {
                "partitions_moved": 3,
                "replicas_moved": 4,
                "brokers_outside_threshold_after": [],
            },
        }
    }
    balance = replica_balance_of(cluster, tmp_path)
    assert balance.plan == tmp_path / "reassignment-plan.json"
    assert [b.broker_id for b in balance.brokers] == [1, 2, 3]
    assert balance.outside() == [1, 2, 3]
    assert (balance.replicas_of(3), balance.after_plan(3), balance.after_plan(9)) == (0, 3, 0)
    assert balance.bounds == (3, 5) and balance.outside_after == ()
    assert balance.as_json()["replicas"] == {"1": 6, "2": 6, "3": 0}


def test_a_non_empty_data_dir_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "something").write_text("x")
    result = subprocess.run(
        [sys.executable, "-m", "raftmeta", "demo", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"raftmeta demo: --data-dir {tmp_path} is not an empty directory"
    ]


def test_a_failed_step_is_one_line_naming_it_and_stops_the_quorum(tmp_path: Path) -> None:
    def broken(ctx: object) -> str:
        raise StepFailed("the cluster said no")

    root = tmp_path / "demo"
    errors = io.StringIO()
    steps = (Step("start a three-node quorum", start_quorum), Step("break", broken))
    console = Console(file=io.StringIO())
    status = run_live_demo(root, console=console, errors=Console(file=errors), steps=steps)
    assert status == 1
    assert errors.getvalue().splitlines() == [
        f"raftmeta demo failed at step 'break': the cluster said no; logs in {root.resolve()}"
    ]
    pids = _recorded_pids(root)
    assert len(pids) == 3
    assert not [p for p in pids if _alive(p)]
    state = json.loads((root / "demo.json").read_text())
    assert state["status"] == "failed"
    assert [s["title"] for s in state["steps"]] == ["start a three-node quorum"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_after_the_quorum_is_up_stops_every_process(
    tmp_path: Path, signum: signal.Signals
) -> None:
    marker = uuid.uuid4().hex
    root = tmp_path / "demo"
    demo = _spawn(["-c", HOLD_SCRIPT, str(root)], marker)
    try:
        wait_until(lambda: "quorum" in _steps_done(root), "the quorum step to finish", 60)
        assert len(_marked(marker)) >= 4  # the demo and its three nodes
        demo.send_signal(signum)
        _, stderr = demo.communicate(timeout=30)
    finally:
        demo.kill()
        demo.communicate()
    assert demo.returncode == 130, stderr
    assert "raftmeta demo interrupted during 'hold'; stopped 3 processes" in stderr
    assert "Traceback" not in stderr
    _assert_nothing_left(root, marker)
    assert json.loads((root / "demo.json").read_text())["status"] == "interrupted"


def test_ctrl_c_while_the_quorum_starts_stops_every_process(tmp_path: Path) -> None:
    marker = uuid.uuid4().hex
    root = tmp_path / "demo"
    demo = _spawn(["-m", "raftmeta", "demo", "--data-dir", str(root)], marker)
    try:
        wait_until(
            lambda: (root / "processes.json").exists() and len(_recorded_pids(root)) == 3,
            "three controllers to start",
            60,
        )
        demo.send_signal(signal.SIGINT)
        _, stderr = demo.communicate(timeout=30)
    finally:
        demo.kill()
        demo.communicate()
    assert demo.returncode == 130, stderr
    assert "interrupted during 'start a three-node quorum'" in stderr
    _assert_nothing_left(root, marker)


def _missing_parts() -> list[str]:
    needed = (
        "raftmeta.cli.broker",
        "raftmeta.cli.leader_election",
        "raftmeta.cli.reassign_partitions",
        "analytics.audit",
    )
    return [name for name in needed if importlib.util.find_spec(name) is None]


@pytest.mark.skipif(bool(_missing_parts()), reason=f"not built yet: {_missing_parts()}")
def test_the_demo_runs_end_to_end_over_mutual_tls_and_ends_balanced(tmp_path: Path) -> None:
    """The whole demo, with ``--tls``: every step a plaintext run takes, each controller, broker
    and tool with its own certificate, so one run proves both (the plaintext quorum step is
    covered by the tests above, and the demo's steps differ only in the credentials they pass).
    One end-to-end run keeps the suite's time; the TLS run is the one with more to go wrong."""
    marker = uuid.uuid4().hex
    root = tmp_path / "demo"
    demo = _spawn(["-m", "raftmeta", "demo", "--tls", "--data-dir", str(root)], marker)
    try:
        stdout, stderr = demo.communicate(timeout=END_TO_END_TIMEOUT_S)
    finally:
        demo.kill()
        demo.communicate()
    assert demo.returncode == 0, f"{stdout}\n{stderr}"
    state = json.loads((root / "demo.json").read_text())
    assert state["status"] == "ok"
    assert state["tls"] is True and "over mutual TLS" in stdout
    for name in ("node-3000", "broker-1"):
        config = (root / f"{name}.properties").read_text()
        assert "listener.security.protocol.map=CONTROLLER\\:SSL" in config, config
    assert "--admin.config " in (root / "leader-election.log").read_text()
    for node_id in (3000, 3001, 3002):
        log = (root / f"node-{node_id}.log").read_text()
        assert "plaintext and unauthenticated" not in log, f"node {node_id} says plaintext"
        assert "refused from" not in log, f"node {node_id} refused one of the demo's own calls"
    assert state["audits"]["skewed"]["over_threshold"] == [state["victim"]]
    skewed = json.loads((root / "audit-skewed" / "report.json").read_text())
    assert _brokers_over_threshold(skewed) == [state["victim"]]
    report = json.loads((root / "audit-balanced" / "report.json").read_text())
    assert _brokers_over_threshold(report) == []
    # The audit read the exported history: the victim's leaderships leave, then come back.
    (cluster,) = report["clusters"].values()
    victim_changes = [
        entry["change"]
        for entry in cluster["events"]["leadership_changes"]
        if entry["broker_id"] == state["victim"]
    ]
    assert victim_changes and victim_changes[0] < 0 and victim_changes[-1] > 0, victim_changes
    assert len(_broker_rows(report)) == 7
    assert str(root / "audit-balanced" / "report.json") in stdout
    _assert_moved_onto_the_new_broker(root, state, stdout)
    _assert_nothing_left(root, marker)


NEW_BROKER = 7


def _assert_moved_onto_the_new_broker(root: Path, state: dict[str, Any], stdout: str) -> None:
    """The seventh broker joined empty on rack-4; the audit flagged it and planned moves;
    ``reassign-partitions`` ran them; the last audit finds every broker within the threshold."""
    joined = json.loads((root / "audit-balanced" / "report.json").read_text())
    assert _replica_counts(joined)[NEW_BROKER] == 0
    assert NEW_BROKER in _brokers_outside_replica_threshold(joined)
    assert NEW_BROKER in state["audits"]["balanced"]["replicas"]["outside_threshold"]
    plan = json.loads((root / "audit-balanced" / "reassignment-plan.json").read_text())
    moves = plan["partitions"]
    assert plan["version"] == 1 and moves, plan
    assert sum(NEW_BROKER in entry["replicas"] for entry in moves) >= 1
    racks = {row["broker_id"]: row["rack"] for row in _broker_rows(joined)}
    assert racks[NEW_BROKER] == "rack-4"
    for entry in moves:  # every partition keeps three replicas on three racks
        assert len({racks[b] for b in entry["replicas"]}) == 3, entry
    transcript = (root / "reassign-partitions.log").read_text()
    assert "--execute --command-config " in transcript
    assert "Successfully started partition reassignments for " in transcript
    last_verify = transcript.rsplit("$ raftmeta reassign-partitions", 1)[1]
    assert "--verify" in last_verify.splitlines()[0]
    assert last_verify.count(" is completed.") == len(moves), last_verify
    assert "still in progress" not in last_verify
    assert "$ raftmeta reassign-partitions --execute" in stdout
    moved = json.loads((root / "audit-moved" / "report.json").read_text())
    assert _brokers_outside_replica_threshold(moved) == []
    assert _brokers_over_threshold(moved) == []
    counts = _replica_counts(moved)
    assert counts[NEW_BROKER] > 0
    assert sum(counts.values()) == 3 * 50 * 3
    assert state["audits"]["moved"]["replicas"]["outside_threshold"] == []
    assert str(root / "audit-moved" / "replicas.png") in stdout


def _replica_counts(report: dict[str, Any]) -> dict[int, int]:
    (cluster,) = report["clusters"].values()
    return {row["broker_id"]: row["replicas"] for row in cluster["replica_balance"]["broker_table"]}


def _brokers_outside_replica_threshold(report: dict[str, Any]) -> list[int]:
    """Active brokers whose replica count lies outside the audit's bounds, recomputed from each
    row's count."""
    (cluster,) = report["clusters"].values()
    section = cluster["replica_balance"]
    low, high = section["bounds"]
    outside = [
        row["broker_id"]
        for row in section["broker_table"]
        if row["active"] and not low <= row["replicas"] <= high
    ]
    assert outside == section["brokers_outside_threshold"]
    return outside


def _broker_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    (cluster,) = report["clusters"].values()
    rows: list[dict[str, Any]] = cluster["broker_table"]
    return rows


def _brokers_over_threshold(report: dict[str, Any]) -> list[int]:
    """Brokers whose imbalance is above the threshold, recomputed from each row's figures."""
    threshold = float(report["threshold_percent"]) / 100
    (cluster,) = report["clusters"].values()
    over = [row["broker_id"] for row in _broker_rows(report) if (row["imbalance"] or 0) > threshold]
    assert over == cluster["brokers_above_threshold"]
    return over
