"""The demo's second act: a seventh broker joins empty, and the audit's reassignment plan moves
replicas onto it with ``raftmeta reassign-partitions``, as an operator would.

``--execute`` starts every move of the plan; ``--verify`` is then run until it reports every
partition completed (the stand-in brokers report a new replica caught up at once, so the moves
finish in a second or two). Each run's output goes to ``reassign-partitions.log``; the first
lines of each are shown, Kafka's messages as the tool prints them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from raftmeta.devkit.demo.context import NEW_BROKER, NEW_BROKER_RACK, DemoContext
from raftmeta.devkit.demo.errors import StepFailed, require_module
from raftmeta.devkit.demo.tools import ToolRun, run_tool
from raftmeta.devkit.demo.view import Partitions
from raftmeta.devkit.demo.waiting import wait_for

if TYPE_CHECKING:
    from raftmeta.devkit.demo.audit import AuditOutcome

WHY_A_NEW_RACK = (
    "broker 7 is on a new rack, rack-4: every partition already spans rack-1 to rack-3, so on "
    "one of those it could not take its share without breaking rack spread"
)
REASSIGNMENT_LOG = "reassign-partitions.log"
JOIN_DEADLINE_S = 30.0
VERIFY_DEADLINE_S = 60.0
"""The moves complete within seconds; a loaded machine gets more."""
SHOWN_LINES = 6
"""How much of a tool's output the demo shows: the first lines, each cut to the terminal's width
(the rollback JSON is one long line); the whole of it is in ``reassign-partitions.log``."""
STILL_MOVING = "is still in progress."
COMPLETED = "is completed."


def join_new_broker(ctx: DemoContext) -> str:
    """Start broker 7 on its new rack; wait until it is registered and unfenced."""
    require_module("the broker command", "raftmeta.cli.broker")
    broker = ctx.require_cluster().brokers[NEW_BROKER]
    broker.start()
    ctx.book.add(f"broker {NEW_BROKER}", "broker", broker, broker.log_path)
    ctx.display.show(Text(WHY_A_NEW_RACK, style="dim"))
    view = ctx.require_view()
    ctx.display.note(f"waiting for broker {NEW_BROKER} to register and be unfenced")

    def unfenced() -> bool:
        brokers = view.brokers()
        return NEW_BROKER in brokers and not brokers[NEW_BROKER].fenced

    wait_for(unfenced, f"broker {NEW_BROKER} unfenced", JOIN_DEADLINE_S, give_up=ctx.process_died)
    state = ctx.partitions()
    ctx.join_offset = state.metadata_offset
    hosted = len(state.hosted_by(NEW_BROKER))
    return f"broker {NEW_BROKER} on {NEW_BROKER_RACK} unfenced, holding {hosted} replicas"


def execute_reassignment(ctx: DemoContext) -> str:
    """``raftmeta reassign-partitions --execute --reassignment-json-file`` the audit's plan."""
    require_module("the reassign-partitions command", "raftmeta.cli.reassign_partitions")
    audit = _joined_audit(ctx)
    ctx.reassignment_log = ctx.root / REASSIGNMENT_LOG
    ctx.reassignment_log.write_text("")
    run = _reassign(ctx, "--execute", str(audit.replicas.plan))
    if run.status != 0:
        raise StepFailed(
            f"reassign-partitions --execute exited with {run.status}: {run.last_line()}"
        )
    moved = audit.replicas.partitions_moved
    return f"{moved} partitions started moving ({audit.replicas.replicas_moved} replicas)"


def verify_reassignment(ctx: DemoContext) -> str:
    """``reassign-partitions --verify`` until every partition of the plan is completed."""
    audit = _joined_audit(ctx)
    plan = str(audit.replicas.plan)
    moved = audit.replicas.partitions_moved
    runs: list[ToolRun] = []
    ctx.display.note("running --verify until every move is completed")

    def verified() -> ToolRun | None:
        run = _reassign(ctx, "--verify", plan, show=False)
        if run.status != 0:
            raise StepFailed(
                f"reassign-partitions --verify exited with {run.status}: {run.last_line()}"
            )
        runs.append(run)
        return run if _count(run, COMPLETED) == moved and not _count(run, STILL_MOVING) else None

    done = wait_for(verified, "every move completed", VERIFY_DEADLINE_S, give_up=ctx.process_died)
    if len(runs) > 1:
        _show(ctx, runs[0], "--verify (first)")
    _show(ctx, done, "--verify" if len(runs) == 1 else "--verify (last)")

    expected = audit.replicas.after_plan(NEW_BROKER)

    def settled() -> Partitions | None:
        state = ctx.partitions()
        hosted = len(state.hosted_by(NEW_BROKER))
        return state if hosted == expected and not state.under_replicated() else None

    state = wait_for(settled, f"broker {NEW_BROKER} in every ISR it joined", JOIN_DEADLINE_S)
    ctx.moves_offset = state.metadata_offset
    first = _count(runs[0], STILL_MOVING)
    waited = f"; the first of {len(runs)} runs found {first} still moving" if first else ""
    hosted = len(state.hosted_by(NEW_BROKER))
    return f"{moved} partitions completed{waited}; broker {NEW_BROKER} holds {hosted} replicas"


def _joined_audit(ctx: DemoContext) -> AuditOutcome:
    audit = ctx.audits.get("balanced")
    if audit is None:
        raise StepFailed("no audit of the cluster with the new broker")
    return audit


def _reassign(ctx: DemoContext, action: str, plan: str, *, show: bool = True) -> ToolRun:
    """One ``reassign-partitions`` run on ``plan``, appended to the log (and shown)."""
    argv = [
        "reassign-partitions",
        "--bootstrap-server",
        ctx.bootstrap_servers,
        "--reassignment-json-file",
        plan,
        action,
    ]
    if ctx.tls:
        argv += ["--command-config", str(ctx.require_cluster().client_config)]
    run = run_tool(argv)
    if ctx.reassignment_log is not None:
        with ctx.reassignment_log.open("a") as log:
            log.write(f"$ raftmeta {' '.join(argv)}\n{run.output}\n")
    if show:
        _show(ctx, run, action)
    return run


def _show(ctx: DemoContext, run: ToolRun, label: str) -> None:
    lines = run.output.rstrip().splitlines()
    shown = [f"  {line}" for line in lines[:SHOWN_LINES]]
    if len(lines) > SHOWN_LINES:
        shown.append(f"  ... {len(lines) - SHOWN_LINES} more lines in {REASSIGNMENT_LOG}")
    width = ctx.display.console.width
    for line in [f"$ raftmeta reassign-partitions {label}", *shown]:
        text = Text(line, style="dim")
        text.truncate(width, overflow="ellipsis")
        ctx.display.show(text)


def _count(run: ToolRun, ending: str) -> int:
    return sum(line.endswith(ending) for line in run.output.splitlines())
