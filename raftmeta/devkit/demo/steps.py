"""The demo's steps, in order: each a small function of the shared ``DemoContext``.

A step does one thing, waits (with a deadline) until the cluster shows it happened, and returns
a few words for the closing table. It raises ``StepFailed`` with one line when it cannot; the
runner then names the step and where the logs are, and stops every process.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from raftmeta.devkit import ports
from raftmeta.devkit.cluster import DevCluster
from raftmeta.devkit.demo.audit import AuditOutcome, run_audit
from raftmeta.devkit.demo.context import NEW_BROKER, NEW_BROKER_RACK, TOPICS, DemoContext
from raftmeta.devkit.demo.errors import StepFailed, require_module
from raftmeta.devkit.demo.moves import (
    execute_reassignment,
    join_new_broker,
    verify_reassignment,
)
from raftmeta.devkit.demo.snapshots import copy_snapshot_after, export_history_after
from raftmeta.devkit.demo.spark import STARTER
from raftmeta.devkit.demo.tools import run_tool
from raftmeta.devkit.demo.view import ClusterView, Partitions
from raftmeta.devkit.demo.waiting import wait_for
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR

log = logging.getLogger(__name__)

PARTITIONS_PER_TOPIC = 50
REPLICATION_FACTOR = 3
BROKERS = 6
RACKS = 3
IMBALANCE_THRESHOLD_PERCENT = 10

SPARK_LOG = "spark.log"
SNAPSHOT_INTERVAL_MS = 1000
"""Snapshots every second (Kafka's default is an hour), so the demo waits a second, not an hour,
for a snapshot that holds the state it wants to audit."""
BROKER_HEARTBEAT_INTERVAL_MS = 500
BROKER_SESSION_TIMEOUT_MS = 3000
"""A killed broker is fenced, and its leaderships moved, 3 s after its last heartbeat (Kafka:
9 s); six missed heartbeats, so a busy machine does not fence a live one."""

CLUSTER_OVERRIDES = {
    # Read by the controllers and the brokers alike.
    "metadata.log.max.snapshot.interval.ms": str(SNAPSHOT_INTERVAL_MS),
    "broker.heartbeat.interval.ms": str(BROKER_HEARTBEAT_INTERVAL_MS),
    "broker.session.timeout.ms": str(BROKER_SESSION_TIMEOUT_MS),
    # The demo shows the skew and the operator's fix; an automatic rebalance would race it.
    "auto.leader.rebalance.enable": "false",
    "leader.imbalance.per.broker.percentage": str(IMBALANCE_THRESHOLD_PERCENT),
}

QUORUM_DEADLINE_S = 30.0
CLUSTER_DEADLINE_S = 30.0
SNAPSHOT_DEADLINE_S = 15.0
STOP_DEADLINE_S = 15.0
"""A graceful stop (a broker's controlled shutdown, a leader's handover) takes a second or
two; a loaded machine gets more before SIGKILL."""


@dataclass(frozen=True, slots=True)
class Step:
    title: str
    run: Callable[[DemoContext], str]
    """Does the step; returns a few words on what it found."""
    needs_spark: bool = False
    """The runner starts Spark in the background at once when a step will need it."""


def free_port_run(count: int) -> int:
    try:
        return ports.free_port_run(count)
    except RuntimeError as error:
        raise StepFailed(str(error)) from None


# --------------------------------------------------------------------------------- the steps


def start_quorum(ctx: DemoContext) -> str:
    from raftmeta.admin.quorum import DescribeError, wait_for_leader

    cluster = DevCluster(
        ctx.root,
        free_port_run(3),
        CLUSTER_OVERRIDES,
        brokers=BROKERS + 1,
        racks=RACKS,
        tls=ctx.tls,
        node_overrides={NEW_BROKER: {"broker.rack": NEW_BROKER_RACK}},
    )
    ctx.cluster = cluster
    try:
        cluster.prepare()
    except (OSError, ValueError) as error:
        raise StepFailed(f"cannot prepare {ctx.root}: {error}") from None
    for node_id, node in cluster.nodes.items():
        node.start()
        ctx.book.add(f"controller {node_id}", "controller", node, node.log_path)
    ctx.display.note("waiting for a leader")
    try:
        info = wait_for_leader(
            cluster.bootstrap_servers,
            cluster.cluster_id,
            QUORUM_DEADLINE_S,
            give_up=lambda: bool(cluster.exited()),
            tls=cluster.client_tls(),
        )
    except DescribeError as error:
        reason = ctx.process_died()
        raise StepFailed(reason or str(error)) from None
    ctx.view = ClusterView(cluster.bootstrap_servers, ctx.client_properties())
    # Spark warms up on the quorum's first snapshot while the brokers and topics come up.
    node_dirs = ctx.node_dirs()
    warm_up_copy = ctx.root / "snapshots" / "warm-up"
    STARTER.offer_warm_up(lambda: copy_snapshot_after(node_dirs, -1, warm_up_copy))
    ids = ", ".join(str(n) for n in cluster.nodes)
    over = "; mutual TLS" if ctx.tls else ""
    return f"controllers {ids}; leader {info.leader_id} in epoch {info.leader_epoch}{over}"


def start_brokers(ctx: DemoContext) -> str:
    require_module("the broker command", "raftmeta.cli.broker")
    cluster = ctx.require_cluster()
    first = ctx.first_brokers()
    for broker_id in first:
        broker = cluster.brokers[broker_id]
        broker.start()
        ctx.book.add(f"broker {broker_id}", "broker", broker, broker.log_path)
    view = ctx.require_view()
    ctx.display.note("waiting for every broker to register and be unfenced")

    def all_unfenced() -> bool:
        brokers = view.brokers()
        return all(b in brokers and not brokers[b].fenced for b in first)

    wait_for(all_unfenced, "every broker unfenced", CLUSTER_DEADLINE_S, give_up=ctx.process_died)
    racks = sorted({cluster.rack_of(b) or "no rack" for b in first})
    return f"brokers {', '.join(map(str, first))} on {', '.join(racks)}"


def create_topics(ctx: DemoContext) -> str:
    view = ctx.require_view()
    view.create_topics(TOPICS, PARTITIONS_PER_TOPIC, REPLICATION_FACTOR)
    ctx.display.note("waiting for every partition to have a leader and a full ISR")

    def settled() -> Partitions | None:
        state = ctx.partitions()
        ready = all(p.leader >= 0 for p in state.partitions) and not state.under_replicated()
        return state if ready else None

    state = wait_for(settled, "leaders on every partition", CLUSTER_DEADLINE_S)
    leaders = {b: len(state.led_by(b)) for b in ctx.first_brokers()}
    spread = f"{min(leaders.values())}-{max(leaders.values())}"
    return f"{len(state.partitions)} partitions; {spread} leaders per broker"


def kill_broker(ctx: DemoContext) -> str:
    """kill -9 the broker leading the most partitions; wait until the controller fences it."""
    view = ctx.require_view()
    state = ctx.partitions()
    broker_ids = ctx.first_brokers()
    victim = max(broker_ids, key=lambda b: (len(state.led_by(b)), -b))
    led = len(state.led_by(victim))
    ctx.victim = victim
    ctx.victim_down = True
    killed_at = time.monotonic()
    ctx.require_cluster().brokers[victim].kill()
    ctx.display.note(f"broker {victim} killed; waiting for the controller to fence it")

    def moved() -> bool:
        fenced = view.brokers()[victim].fenced
        return fenced and not ctx.partitions().led_by(victim)

    wait_for(moved, f"broker {victim} to be fenced", CLUSTER_DEADLINE_S, give_up=ctx.process_died)
    took = time.monotonic() - killed_at
    return f"broker {victim} (led {led}) fenced after {took:.1f} s; its leaderships moved"


def restart_broker(ctx: DemoContext) -> str:
    """Start the killed broker again; wait until it is unfenced and back in every ISR."""
    victim = ctx.victim
    if victim is None:
        raise StepFailed("no broker was killed")
    broker = ctx.require_cluster().brokers[victim]
    broker.start()
    ctx.book.add(f"broker {victim} (restarted)", "broker", broker, broker.log_path)
    ctx.victim_down = False
    view = ctx.require_view()
    ctx.display.note(f"waiting for broker {victim} to be unfenced")
    wait_for(
        lambda: not view.brokers()[victim].fenced,
        f"broker {victim} unfenced",
        CLUSTER_DEADLINE_S,
        give_up=ctx.process_died,
    )
    ctx.display.note(f"waiting for broker {victim} to rejoin every ISR")

    def in_sync() -> Partitions | None:
        state = ctx.partitions()
        return None if state.under_replicated() else state

    # The partition leaders put it back (raftmeta/broker/isr.py) once it is unfenced.
    state = wait_for(
        in_sync, f"broker {victim} back in sync", CLUSTER_DEADLINE_S, give_up=ctx.process_died
    )
    ctx.skew_offset = state.metadata_offset
    led = len(state.led_by(victim))
    hosted = len(state.hosted_by(victim))
    skewed = len(state.not_preferred())
    return f"broker {victim} follows {hosted} partitions, leads {led}; {skewed} not on preferred"


def snapshot_after_skew(ctx: DemoContext) -> str:
    return _await_snapshot(ctx, "skewed", ctx.skew_offset)


def audit_skewed(ctx: DemoContext) -> str:
    outcome = _audit(ctx, "skewed")
    over = outcome.over_threshold()
    if ctx.victim not in over:
        raise StepFailed(
            f"the audit did not find broker {ctx.victim} over the threshold; see {outcome.report}"
        )
    if outcome.plan_size == 0:
        raise StepFailed(f"the audit planned no election; see {outcome.plan}")
    names = ", ".join(str(b) for b in over)
    return f"over {outcome.threshold:g}%: broker {names}; plan: {outcome.plan_size} partitions"


def run_preferred_election(ctx: DemoContext) -> str:
    """``raftmeta leader-election --election-type PREFERRED --path-to-json-file plan``."""
    require_module("the leader-election command", "raftmeta.cli.leader_election")
    plan = ctx.audits["skewed"].plan
    ctx.election_log = ctx.root / "leader-election.log"
    argv = [
        "leader-election",
        "--bootstrap-server",
        ctx.bootstrap_servers,
        "--election-type",
        "PREFERRED",
        "--path-to-json-file",
        str(plan),
    ]
    if ctx.tls:
        argv += ["--admin.config", str(ctx.require_cluster().client_config)]
    election = run_tool(argv)
    ctx.election_log.write_text(f"$ raftmeta {' '.join(argv)}\n{election.output}")
    if election.status != 0:
        raise StepFailed(f"leader-election exited with {election.status}: {election.last_line()}")
    ctx.display.note("waiting for the preferred leaders to commit")

    def restored() -> Partitions | None:
        state = ctx.partitions()
        return None if state.not_preferred() else state

    state = wait_for(restored, "every partition on its preferred leader", CLUSTER_DEADLINE_S)
    ctx.election_offset = state.metadata_offset
    moved = ctx.audits["skewed"].plan_size
    return f"{moved} partitions moved back to their preferred leader"


def snapshot_after_join(ctx: DemoContext) -> str:
    return _await_snapshot(ctx, "balanced", max(ctx.election_offset, ctx.join_offset))


def audit_balanced(ctx: DemoContext) -> str:
    """Leadership is balanced again; the replicas are not: broker 7 holds none, and the audit
    plans the moves that bring every broker within the threshold."""
    outcome = _audit(ctx, "balanced", replicas=True)
    _require_leaders_balanced(outcome)
    replicas = outcome.replicas
    if NEW_BROKER not in replicas.outside():
        raise StepFailed(
            f"the audit did not find broker {NEW_BROKER} outside the threshold; "
            f"see {outcome.report}"
        )
    if replicas.partitions_moved == 0 or replicas.outside_after:
        raise StepFailed(
            f"the audit planned no moves that balance the replicas; see {replicas.plan}"
        )
    band = "" if replicas.bounds is None else f" {replicas.bounds[0]}-{replicas.bounds[1]}"
    return (
        f"leaders: every broker at or under {outcome.threshold:g}%; replicas: "
        f"{len(replicas.outside())} brokers outside{band} (broker {NEW_BROKER} has "
        f"{replicas.replicas_of(NEW_BROKER)}); plan: {replicas.replicas_moved} moves in "
        f"{replicas.partitions_moved} partitions"
    )


def snapshot_after_moves(ctx: DemoContext) -> str:
    return _await_snapshot(ctx, "moved", ctx.moves_offset)


def audit_moved(ctx: DemoContext) -> str:
    outcome = _audit(ctx, "moved", replicas=True)
    _require_leaders_balanced(outcome)
    replicas = outcome.replicas
    outside = replicas.outside()
    if outside:
        names = ", ".join(str(b) for b in outside)
        raise StepFailed(
            f"brokers {names} still hold too many or too few replicas; see {outcome.report}"
        )
    if replicas.bounds is None:
        raise StepFailed(f"the audit found no active broker; see {outcome.report}")
    low, high = replicas.bounds
    return (
        f"replicas: every broker within {outcome.threshold:g}% ({low}-{high}); broker "
        f"{NEW_BROKER} holds {replicas.replicas_of(NEW_BROKER)}"
    )


def stop_everything(ctx: DemoContext) -> str:
    if ctx.view is not None:
        ctx.view.close()
        ctx.view = None
    ctx.book.stop_everything(STOP_DEADLINE_S)
    statuses = ctx.book.exit_statuses()
    unclean = {label: status for label, status in statuses.items() if status != 0}
    if unclean:
        listed = ", ".join(f"{label} ({status})" for label, status in unclean.items())
        raise StepFailed(f"not every process stopped cleanly: {listed}")
    return f"{len(statuses)} processes stopped, each with exit status 0"


STEPS = (
    Step("start a three-node quorum", start_quorum),
    Step("start 6 brokers on 3 racks", start_brokers),
    Step("create 3 topics x 50 partitions, RF 3", create_topics),
    Step("kill -9 the busiest broker", kill_broker),
    Step("bring it back (as a follower only)", restart_broker),
    Step("export the history up to a snapshot of the skew", snapshot_after_skew),
    Step("audit the history with Spark", audit_skewed, needs_spark=True),
    Step("preferred election from the plan", run_preferred_election),
    Step("a 7th broker joins, empty, on a new rack", join_new_broker),
    Step("export the history again, past the election and the join", snapshot_after_join),
    Step("audit again: leaders balanced, replicas not", audit_balanced, needs_spark=True),
    Step("reassign-partitions --execute the plan", execute_reassignment),
    Step("reassign-partitions --verify until done", verify_reassignment),
    Step("export the history past the moves", snapshot_after_moves),
    Step("audit the replicas again", audit_moved, needs_spark=True),
    Step("stop everything", stop_everything),
)


# --------------------------------------------------------------------------------- shared parts


def _await_snapshot(ctx: DemoContext, label: str, offset: int) -> str:
    into = ctx.root / "history" / label
    ctx.display.note(f"waiting for a controller snapshot past offset {offset}")
    exported = wait_for(
        lambda: export_history_after(ctx.node_dirs(), offset, into),
        f"a snapshot past offset {offset}",
        SNAPSHOT_DEADLINE_S,
        give_up=ctx.process_died,
    )
    ctx.snapshots[label] = exported
    segments = sorted((exported / METADATA_PARTITION_DIR).glob("*.log"))
    snapshots = sorted((exported / METADATA_PARTITION_DIR).glob("*.checkpoint"))
    end = int(snapshots[-1].name.split("-")[0]) if snapshots else 0
    first = int(segments[0].stem) if segments else end
    return f"history exported: offsets {first} to {end}"


def _require_leaders_balanced(outcome: AuditOutcome) -> None:
    over = outcome.over_threshold()
    if over:
        names = ", ".join(str(b) for b in over)
        raise StepFailed(f"brokers {names} are still over the threshold; see {outcome.report}")


def _audit(ctx: DemoContext, label: str, *, replicas: bool = False) -> AuditOutcome:
    """The Spark audit of the history exported as ``label``; its leader table shown, and with
    ``replicas`` its replicas-per-broker table too."""
    snapshot = ctx.snapshots.get(label)
    if snapshot is None:
        raise StepFailed(f"no history to audit ({label})")
    ctx.display.note("running the Spark audit")
    outcome = run_audit(
        snapshot,
        ctx.root / f"audit-{label}",
        IMBALANCE_THRESHOLD_PERCENT,
        jvm_log=ctx.root / SPARK_LOG,
        progress=ctx.display.note,
    )
    ctx.audits[label] = outcome
    ctx.display.show(outcome.table(title=f"leaders per broker ({label})"))
    if replicas:
        title = f"replicas per broker ({label})"
        ctx.display.show(outcome.replicas.table(title, outcome.threshold))
    return outcome


def summary(ctx: DemoContext) -> dict[str, Any]:
    """What ``demo.json`` records beside the closing table."""
    return {
        "data_dir": str(ctx.root),
        "tls": ctx.tls,
        "victim": ctx.victim,
        "snapshots": {k: str(v) for k, v in ctx.snapshots.items()},
        "audits": {k: v.as_json() for k, v in ctx.audits.items()},
        "election_log": None if ctx.election_log is None else str(ctx.election_log),
        "reassignment_log": None if ctx.reassignment_log is None else str(ctx.reassignment_log),
    }


def write_json(path: Path, value: Any) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(value, indent=2) + "\n")
    temporary.replace(path)
