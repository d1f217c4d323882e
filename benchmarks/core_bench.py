"""How fast the pure consensus core is, so we know it is never the bottleneck.

Three cores run in one process with instant delivery and instant persistence; the figure is
records committed (high watermark passed on the leader) per CPU-second of the whole process,
for 100-byte records in batches of 1, 10, 100 and 1,000. Then the simulator's speed:
simulated seconds per wall second over a range of fault schedules.

Run: ``.venv/bin/python benchmarks/core_bench.py [--runs 5]``
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import describe_machine
from raftmeta.raft.config import RaftConfig
from raftmeta.raft.core import RaftCore
from raftmeta.raft.log import RaftLog
from raftmeta.raft.roles import Role
from raftmeta.raft.state import ElectionState
from raftmeta.sim.cluster import Simulation


class InstantQuorum:
    def __init__(self, voters: int = 3) -> None:
        ids = frozenset(range(1, voters + 1))
        self.now_ms = 0
        self.cores = {
            i: RaftCore(
                i,
                ids,
                RaftConfig(),
                election_state=ElectionState(),
                log=RaftLog(),
                now_ms=0,
                rng=random.Random(i),
            )
            for i in ids
        }

    def pump(self) -> None:
        cores = self.cores
        moved = True
        while moved:
            moved = False
            for node_id, core in cores.items():
                ready = core.ready()
                if ready is None:
                    continue
                moved = True
                core.advance(ready, self.now_ms)
                for outbound in ready.messages:
                    cores[outbound.destination].step(node_id, outbound.message, self.now_ms)
                for outbound in ready.messages_after_persist:
                    cores[outbound.destination].step(node_id, outbound.message, self.now_ms)

    def elect(self) -> RaftCore:
        while True:
            self.now_ms += 10
            for core in self.cores.values():
                core.tick(self.now_ms)
            self.pump()
            leaders = [c for c in self.cores.values() if c.role is Role.LEADER]
            if leaders and leaders[0].high_watermark > 0:
                return leaders[0]


def records_per_cpu_second(batch_size: int, total_records: int, in_flight: int = 8) -> float:
    quorum = InstantQuorum()
    leader = quorum.elect()
    record = b"x" * 100
    batch = [record] * batch_size
    batches = max(1, total_records // batch_size)
    start_hw = leader.high_watermark
    began = time.process_time()
    proposed = 0
    while proposed < batches:
        for _ in range(min(in_flight, batches - proposed)):
            leader.propose(batch, quorum.now_ms)
            proposed += 1
        quorum.pump()
    elapsed = time.process_time() - began
    committed = leader.high_watermark - start_hw
    assert committed == batches * batch_size, (committed, batches * batch_size)
    return committed / elapsed


def simulator_speed(seeds: range) -> float:
    simulated = 0.0
    began = time.perf_counter()
    for seed in seeds:
        simulated += Simulation(seed).run().simulated_ms / 1000
    return simulated / (time.perf_counter() - began)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="runs per figure (median is shown)")
    args = parser.parse_args()
    print(f"machine: {describe_machine()}")
    print("three pure cores in one process, 100-byte records, instant network and disk")
    print(f"{'batch':>6} {'records/CPU-s (median)':>24} {'min':>12} {'max':>12}")
    for batch_size in (1, 10, 100, 1000):
        total = {1: 20_000, 10: 100_000, 100: 400_000, 1000: 1_000_000}[batch_size]
        figures = [records_per_cpu_second(batch_size, total) for _ in range(args.runs)]
        print(
            f"{batch_size:>6} {statistics.median(figures):>24,.0f} "
            f"{min(figures):>12,.0f} {max(figures):>12,.0f}"
        )
    speeds = [simulator_speed(range(run * 20, run * 20 + 20)) for run in range(args.runs)]
    print(
        f"simulator: {statistics.median(speeds):,.0f} simulated s per wall s (median of "
        f"{args.runs} runs of 20 fault schedules; 3 voters + 1 observer, one process)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
