"""A stream of admin writes while the leader is paused (SIGSTOP) or killed, on real processes.

Three ``raftmeta serve`` controllers; one writer creates topics one after another through an
AsyncAdminClient and notes when each is acknowledged. Once the stream runs, the leader gets
the signal; the stall is the longest time without an acknowledgement from the signal on. At
the end every acknowledged topic must exist, and no write may have failed (an echo, a lost
write or a timeout would all show here).

Run as a script it measures the stall, median over runs, side by side:

    python -m tests.process.paused_writes [--runs 3]

* paused: SIGSTOP, with the channel's leader check (it asks the other servers who leads);
* paused, keepalive only: SIGSTOP with the check off and the quorum's 2 s + 5 s keepalive, as
  the AdminClient behaved before the check;
* killed: kill -9, for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import signal
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import raftmeta.channel as controller_channel  # the module the patch below targets
from raftmeta.admin import AsyncAdminClient, NewTopic
from raftmeta.admin.quorum import wait_for_leader
from raftmeta.channel import ControllerChannel
from raftmeta.devkit.cluster import DevCluster
from raftmeta.rpc.options import CLIENT_CHANNEL_OPTIONS
from tests.admin.brokers import register_unfenced
from tests.process.helpers import DEADLINE_S, free_base_port
from tests.support.waiting import wait_until_async

WRITES_BEFORE = 5
WRITES_AFTER = 5
REQUEST_TIMEOUT_MS = 60_000
"""Far above any failover: a write that waited on the paused node would show as a long stall,
never as a failure."""


@dataclass(frozen=True, slots=True)
class Outcome:
    stall_s: float
    """The longest time without an acknowledgement from the signal on (a write answered
    just as the signal went out does not hide the gap after it)."""
    acknowledged: int
    lost: list[str]


async def _writer(admin: AsyncAdminClient, acked: list[tuple[str, float]]) -> None:
    loop = asyncio.get_running_loop()
    for n in range(1_000_000):
        name = f"t{n}"
        await admin.create_topics([NewTopic(name, 1, 1)])[name]
        acked.append((name, loop.time()))


async def writes_through(root: Path, signum: int) -> Outcome:
    """Run the scenario once in ``root``; the node is left stopped or killed, and the whole
    cluster stopped, before this returns."""
    cluster = DevCluster(root, free_base_port(), {"broker.session.timeout.ms": "600000"})
    cluster.prepare()
    try:
        cluster.start()
        await asyncio.to_thread(
            wait_for_leader, cluster.bootstrap_servers, cluster.cluster_id, DEADLINE_S
        )
        async with ControllerChannel(cluster.bootstrap_servers) as lifecycle:
            await register_unfenced(lifecycle, [1], cluster_id=cluster.cluster_id)
        config = {
            "bootstrap.servers": cluster.bootstrap_servers,
            "request.timeout.ms": REQUEST_TIMEOUT_MS,
        }
        async with AsyncAdminClient(config) as admin:
            acked: list[tuple[str, float]] = []
            writer = asyncio.ensure_future(_writer(admin, acked))
            try:
                await wait_until_async(
                    lambda: len(acked) >= WRITES_BEFORE or writer.done(), "writes", DEADLINE_S
                )
                leader_id = (await admin.describe_cluster()).controller_id
                leader = cluster.nodes[leader_id]
                loop = asyncio.get_running_loop()
                leader.signal(signum)
                signalled_at = loop.time()
                before = len(acked)
                try:
                    await wait_until_async(
                        lambda: len(acked) >= before + WRITES_AFTER or writer.done(),
                        "writes after the signal",
                        REQUEST_TIMEOUT_MS / 1000,
                    )
                finally:
                    if signum == signal.SIGSTOP:
                        leader.signal(signal.SIGCONT)
                if writer.done():
                    writer.result()  # a failed write fails the scenario here
                writer.cancel()
                await asyncio.gather(writer, return_exceptions=True)
                times = [at for _, at in acked]
                stall_s = max(
                    later - max(earlier, signalled_at)
                    for earlier, later in itertools.pairwise(times)
                    if later > signalled_at
                )
                existing = await admin.describe_topics()
            finally:
                writer.cancel()
        lost = [name for name, _ in acked if name not in existing]
        return Outcome(stall_s, len(acked), lost)
    finally:
        cluster.stop()


@contextmanager
def keepalive_only() -> Iterator[None]:
    """The channel as it was before the leader check: keepalive pings alone find a frozen
    controller."""
    saved = (controller_channel.LEADER_CHECK_AFTER_S, controller_channel.CONTROLLER_CHANNEL_OPTIONS)
    controller_channel.LEADER_CHECK_AFTER_S = 1e9
    controller_channel.CONTROLLER_CHANNEL_OPTIONS = CLIENT_CHANNEL_OPTIONS
    try:
        yield
    finally:
        controller_channel.LEADER_CHECK_AFTER_S, controller_channel.CONTROLLER_CHANNEL_OPTIONS = (
            saved
        )


def main() -> None:
    from benchmarks.machine import describe_machine, load_average

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"machine: {describe_machine()}; load average {load_average()}")
    stalls: dict[str, list[float]] = {"paused": [], "paused, keepalive only": [], "killed": []}
    with tempfile.TemporaryDirectory() as scratch:
        for run in range(args.runs):
            for mode in stalls:
                root = Path(scratch) / f"{run}-{mode.replace(' ', '').replace(',', '-')}"
                signum = signal.SIGKILL if mode == "killed" else signal.SIGSTOP
                if mode == "paused, keepalive only":
                    with keepalive_only():
                        outcome = asyncio.run(writes_through(root, signum))
                else:
                    outcome = asyncio.run(writes_through(root, signum))
                assert not outcome.lost, outcome
                stalls[mode].append(outcome.stall_s)
                print(f"run {run + 1} {mode}: writes stalled {outcome.stall_s:.2f} s", flush=True)
    print(f"writes stalled by the leader's fault, median of {args.runs} runs (max):")
    for mode, values in stalls.items():
        print(f"  {mode:24} {statistics.median(values):5.2f} s  ({max(values):.2f} s)")
    print(f"load average at end: {load_average()}")


if __name__ == "__main__":
    main()
