"""Run many seeded simulations: ``python -m raftmeta.sim.soak --start 0 --count 100000``.

A failure prints its seed, the invariant, the last events before it, and the one command that
replays it. Runs are spread over processes; progress is printed as they finish.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from raftmeta.sim.cluster import Simulation
from raftmeta.sim.invariants import InvariantViolation


@dataclass(frozen=True, slots=True)
class SeedOutcome:
    seed: int
    violation: str | None
    simulated_ms: int
    acknowledged: int
    events: int
    changes_voters: bool = False
    """The schedule changes the voters (operator changes or replacing a wiped voter)."""
    voter_changes: int = 0


def run_seed(seed: int) -> SeedOutcome:
    simulation = Simulation(seed)
    plan = simulation.plan
    changes_voters = plan.spare_controllers > 0 or plan.has_wipe
    try:
        result = simulation.run()
    except InvariantViolation as violation:
        return SeedOutcome(
            seed, str(violation), simulation.now_ms, 0, simulation.events, changes_voters
        )
    return SeedOutcome(
        seed,
        None,
        result.simulated_ms,
        result.acknowledged,
        result.events,
        changes_voters,
        result.voter_changes,
    )


def run_range(seeds: range) -> list[SeedOutcome]:
    return [run_seed(seed) for seed in seeds]


def replay_command(seed: int) -> str:
    return f"python -m raftmeta.sim.soak --seed {seed} --trace"


def soak(
    start: int, count: int, workers: int, *, progress: bool = True, chunk: int = 50
) -> list[SeedOutcome]:
    """Run ``count`` seeds from ``start``, ``chunk`` seeds at a time over ``workers`` spawned
    processes; the outcomes come back in seed order. A run that fits one chunk (or one
    worker) runs here: a spawned process would only add its start-up to it."""
    ranges = [range(s, min(s + chunk, start + count)) for s in range(start, start + count, chunk)]
    outcomes: list[SeedOutcome] = []
    began = time.monotonic()

    def collect(batch: list[SeedOutcome]) -> None:
        outcomes.extend(batch)
        for failure in (o for o in batch if o.violation):
            print(
                f"\nseed {failure.seed}: {failure.violation}\n"
                f"  replay: {replay_command(failure.seed)}",
                file=sys.stderr,
            )
        if progress:
            failed = sum(1 for o in outcomes if o.violation)
            rate = len(outcomes) / max(time.monotonic() - began, 1e-9)
            print(
                f"\r{len(outcomes)}/{count} schedules, {failed} failed, {rate:.1f}/s",
                end="",
                file=sys.stderr,
                flush=True,
            )

    if workers <= 1 or len(ranges) <= 1:
        for seeds in ranges:
            collect(run_range(seeds))
    else:
        # Spawned, not forked: a parent that has started gRPC's threads (a test run does) can
        # leave a forked child spinning in gRPC's fork handlers.
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            for batch in pool.map(run_range, ranges):
                collect(batch)
    if progress:
        print(file=sys.stderr)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m raftmeta.sim.soak", description=__doc__)
    parser.add_argument("--start", type=int, default=0, help="first seed")
    parser.add_argument("--count", type=int, default=1000, help="how many seeds")
    parser.add_argument("--seed", type=int, help="replay one seed")
    parser.add_argument("--trace", action="store_true", help="print the event trace")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args(argv)
    if args.seed is not None:
        simulation = Simulation(args.seed, trace_size=2000 if args.trace else 300)
        try:
            result = simulation.run()
        except InvariantViolation as violation:
            if args.trace:
                print(simulation.format_trace())
            print(f"seed {args.seed}: VIOLATION {violation}")
            return 1
        if args.trace:
            print(simulation.format_trace())
        print(f"seed {args.seed}: ok {result}")
        return 0
    began = time.monotonic()
    outcomes = soak(args.start, args.count, args.workers)
    failures = [o for o in outcomes if o.violation]
    simulated = sum(o.simulated_ms for o in outcomes) / 1000
    wall = time.monotonic() - began
    membership = sum(1 for o in outcomes if o.changes_voters)
    changes = sum(o.voter_changes for o in outcomes)
    print(
        f"{len(outcomes)} schedules, {simulated:.0f} simulated s in {wall:.1f} s wall "
        f"({simulated / wall:.0f} simulated s per wall s), {len(failures)} failed; "
        f"{membership} change the voters ({changes} changes accepted)"
    )
    for failure in failures[:20]:
        print(f"seed {failure.seed}: {failure.violation}\n  replay: {replay_command(failure.seed)}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
