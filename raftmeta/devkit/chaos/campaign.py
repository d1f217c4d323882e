"""One fault campaign: a dev cluster under a steady stream of admin writes, faults injected
one after another for a set time, then the history checked against every node's files.

The seed picks the faults, their targets and their lengths, so a failing campaign can be run
again on the same schedule (process timing still varies, as on any real cluster).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from raftmeta.broker.status import STATUS_FILE
from raftmeta.devkit.chaos.checker import Verdict, judge
from raftmeta.devkit.chaos.faults import HEAL_DEADLINE_S, FaultRecord, HealError, Injector
from raftmeta.devkit.chaos.history import Operation, Outcome, write_history
from raftmeta.devkit.chaos.proxy import FaultProxy
from raftmeta.devkit.chaos.workload import Workload, monotonic_since
from raftmeta.devkit.cluster import NODE_IDS, DevCluster
from raftmeta.devkit.ports import free_port_run, free_ports

BROKERS = 3


@dataclass(frozen=True, slots=True)
class Plan:
    directory: Path
    seed: int
    duration_s: float
    kinds: Sequence[str]
    workers: int = 4
    min_faults: int = 0
    """Faults to inject even if the duration has passed: a loaded machine heals slowly, and a
    campaign that must exercise several faults should not end after one or two."""


@dataclass(frozen=True, slots=True)
class Result:
    faults: list[FaultRecord]
    operations: list[Operation]
    verdict: Verdict
    heal_failure: str | None
    relayed: dict[tuple[int, int], int]
    """Bytes the proxy delivered on each directed Raft link (source, destination)."""
    dropped_bytes: int
    """Bytes the proxy dropped on cut links."""
    brokers_caught_up_s: float | None = None
    """Seconds from the voters converging to every broker's image holding their log; None
    when they did not (``heal_failure`` says which broker stayed behind) or never converged."""

    @property
    def passed(self) -> bool:
        return not self.verdict.violations and self.heal_failure is None


def unavailability(fault: FaultRecord, operations: Sequence[Operation]) -> float | None:
    """Seconds from the fault to the first success of a write sent after it began."""
    done = [
        op.completed_s
        for op in operations
        if op.outcome is Outcome.OK and op.invoked_s >= fault.began_s
    ]
    return min(done) - fault.began_s if done else None


def report_lines(result: Result, plan: Plan) -> list[str]:
    lines = [f"seed {plan.seed}, {plan.duration_s:.0f} s, faults: {', '.join(plan.kinds)}"]
    by_kind: dict[str, list[float | None]] = defaultdict(list)
    for fault in result.faults:
        by_kind[fault.kind].append(unavailability(fault, result.operations))
    lines.append(f"{'fault':<16}{'count':>6}{'writes stopped, median':>24}{'max':>8}")
    for kind in sorted(by_kind):
        measured = [value for value in by_kind[kind] if value is not None]
        median = f"{statistics.median(measured):.2f} s" if measured else "-"
        longest = f"{max(measured):.2f} s" if measured else "-"
        lines.append(f"{kind:<16}{len(by_kind[kind]):>6}{median:>24}{longest:>8}")
    verdict = result.verdict
    outcomes = {outcome: 0 for outcome in Outcome}
    for op in result.operations:
        outcomes[op.outcome] += 1
    lines.append(
        f"writes: {len(result.operations)} sent, {verdict.acknowledged} acknowledged, "
        f"{outcomes[Outcome.FAILED]} refused, {outcomes[Outcome.UNKNOWN]} unknown "
        f"({verdict.unknown_present} of them happened), lost {len(verdict.lost)}, "
        f"echoes {len(verdict.echoes)}; every node's files read up to offset {verdict.end_offset}"
    )
    lines.append(
        f"proxy: {sum(result.relayed.values()) / 1e6:.1f} MB relayed on "
        f"{len(result.relayed)} directed Raft links, {result.dropped_bytes / 1e3:.0f} kB dropped "
        "by cuts"
    )
    if result.brokers_caught_up_s is not None:
        lines.append(
            f"brokers: every one held the converged log {result.brokers_caught_up_s:.2f} s "
            "after the voters"
        )
    if result.heal_failure:
        lines.append(f"FAILED TO HEAL: {result.heal_failure}")
    for violation in verdict.violations:
        lines.append(f"VIOLATION: {violation}")
    lines.append("passed" if result.passed else "FAILED")
    return lines


def proxied_cluster(directory: Path) -> tuple[DevCluster, FaultProxy]:
    """A dev cluster whose controllers serve the Raft stream on pinned ports and advertise
    the proxy's instead, so every Raft message between nodes passes the proxy."""
    base_port = free_port_run(3)
    raft_ports = free_ports(2 * len(NODE_IDS))
    upstream = dict(zip(NODE_IDS, raft_ports[: len(NODE_IDS)], strict=True))
    relayed = dict(zip(NODE_IDS, raft_ports[len(NODE_IDS) :], strict=True))
    settings = {
        node_id: {
            "listeners": f"CONTROLLER://127.0.0.1:{base_port + index},"
            f"RAFT://127.0.0.1:{upstream[node_id]}",
            "advertised.listeners": f"RAFT://127.0.0.1:{relayed[node_id]}",
        }
        for index, node_id in enumerate(NODE_IDS)
    }
    cluster = DevCluster(directory, base_port, brokers=BROKERS, racks=0, node_overrides=settings)
    return cluster, FaultProxy(upstream, relayed)


async def run_campaign(plan: Plan, progress: Callable[[str], None]) -> Result:
    rng = random.Random(plan.seed)
    began = time.monotonic()
    clock = monotonic_since(began)
    cluster, proxy = proxied_cluster(plan.directory)
    await proxy.start()
    cluster.prepare()
    cluster.start()
    cluster.start_brokers()
    injector = Injector(cluster, rng, clock, proxy)
    workload = Workload(cluster.bootstrap_servers, plan.workers, clock, f"chaos{plan.seed}")
    faults: list[FaultRecord] = []
    heal_failure: str | None = None
    converged_at: int | None = None
    brokers_caught_up_s: float | None = None
    try:
        await injector.healed()
        await workload.ready(HEAL_DEADLINE_S)
        progress(f"cluster up in {clock():.1f} s; writing with {plan.workers} clients")
        workload.start()
        while clock() < plan.duration_s or len(faults) < plan.min_faults:
            await asyncio.sleep(rng.uniform(1.0, 2.0))  # a quiet spell between faults
            kind = rng.choice(list(plan.kinds))
            fault = await injector.inject(kind)
            faults.append(fault)
            await injector.healed()
            progress(
                f"{clock():6.1f} s  {fault.kind:<15} {fault.target}; healed, "
                f"{sum(op.outcome is Outcome.OK for op in workload.operations)} writes "
                "acknowledged so far"
            )
        await workload.stop()
        converged_at = await injector.converged()
        brokers_caught_up_s = await injector.brokers_caught_up(converged_at)
        progress(
            f"voters converged at offset {converged_at}; every broker there "
            f"{brokers_caught_up_s:.2f} s later"
        )
    except HealError as error:
        heal_failure = str(error)
        progress(f"the cluster did not heal: {error}")
        await workload.stop()
    finally:
        proxy.heal()
        await asyncio.to_thread(cluster.stop)
        await proxy.stop()
    write_history(plan.directory / "history.jsonl", workload.operations)
    verdict = judge(
        workload.operations,
        {f"controller {node_id}": cluster.data_dir(node_id) for node_id in cluster.nodes},
        {
            f"broker {broker_id}": cluster.broker_dir(broker_id) / STATUS_FILE
            for broker_id in cluster.brokers
        },
        converged_at=converged_at,
    )
    return Result(
        faults,
        list(workload.operations),
        verdict,
        heal_failure,
        dict(proxy.forwarded),
        sum(proxy.dropped.values()),
        brokers_caught_up_s,
    )
