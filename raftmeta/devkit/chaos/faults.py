"""The faults a campaign injects into a running dev cluster, one at a time.

Each fault acts on real processes, real files and real connections: ``kill -9``,
SIGSTOP/SIGCONT, a graceful restart, a torn write left at the end of a segment while its node
is down, the loss of the quorum's majority, every node killed at once (``full-restart``, a
power cut), and, through the :class:`~raftmeta.devkit.chaos.proxy.FaultProxy` on every Raft
link, a node partitioned from all others, a link between two controllers cut, the leader's
sends or receives cut one way, and latency added to every link.

``bit-flip`` flips one bit of a follower's acknowledged records, which is outside the fault
model of Raft and of Kafka: the node truncates its log at the damage and fetches the rest
again, and until it has, its vote could let a candidate that lacks records it had
acknowledged win, losing committed records. A voter whose start-up repair cut its log
therefore grants no votes until a leader has brought it up to date (``RaftCore.abstaining``),
which makes the fault safe to draw. A torn write (a crash in the middle of a write leaves a
partial batch after everything the node had acknowledged) is inside the model.

Each fault returns a :class:`FaultRecord` the report groups by kind. Only one fault is active
at a time, and the campaign waits for the cluster to heal in between.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from raftmeta.admin.quorum import DescribeError, QuorumInfo, describe_quorum
from raftmeta.broker.status import STATUS_FILE, read_status
from raftmeta.devkit.chaos.proxy import FaultProxy
from raftmeta.devkit.cluster import BrokerProcess, DevCluster, NodeProcess
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR

log = logging.getLogger(__name__)

NETWORK_KINDS = ("partition", "cut-link", "one-way-cut", "latency")
"""Faults made by the proxy on the Raft links."""
KINDS = (
    "kill-leader",
    "kill-follower",
    "kill-broker",
    "pause-leader",
    "restart-leader",
    "torn-tail",
    "bit-flip",
    "quorum-loss",
    "full-restart",
    *NETWORK_KINDS,
)
DEFAULT_KINDS = KINDS
"""What a campaign draws unless told otherwise: every fault."""
NETWORK_HOLD_S = (2.0, 5.0)
"""How long a network fault lasts, drawn between these."""
LATENCY_S = (0.05, 0.2)
"""The one-way delay the latency fault adds to every link, drawn between these: up to a
round trip of 400 ms, close to the 500 ms fetch timeout."""
BROKER_CATCH_UP_DEADLINE_S = 15.0
"""How long every broker may take, once the voters have converged, to hold the log up to
their high watermark: brokers that stay behind after faults heal are a finding."""
HEAL_DEADLINE_S = 60.0
"""How long the cluster may take to have a leader and every voter caught up after a fault;
longer is reported as a failure to heal, itself a finding."""
STOP_DEADLINE_S = 10.0


@dataclass(frozen=True, slots=True)
class FaultRecord:
    kind: str
    target: str
    """Which node, e.g. ``controller 3001``, and for disk faults which file and byte."""
    began_s: float
    healed_s: float
    """When the fault was undone (the node restarted or resumed)."""


class HealError(Exception):
    """The cluster did not recover from a fault in time: a finding, not a tool failure."""


class Injector:
    """Injects faults into ``cluster`` using ``rng`` for every choice, so a seed replays the
    same sequence of faults and targets (the timing of the processes themselves varies)."""

    def __init__(
        self,
        cluster: DevCluster,
        rng: random.Random,
        clock: Callable[[], float],
        proxy: FaultProxy | None = None,
    ):
        """``proxy`` carries every Raft link of ``cluster``; without one the network
        faults cannot be injected."""
        self.cluster = cluster
        self.rng = rng
        self.clock = clock
        self.proxy = proxy

    async def describe(self) -> QuorumInfo | None:
        try:
            return await asyncio.to_thread(
                describe_quorum,
                self.cluster.bootstrap_servers,
                self.cluster.cluster_id,
                timeout_s=1.0,
            )
        except DescribeError:
            return None

    async def leader(self) -> int:
        info = await self._until(self._leader_known, "a leader")
        return info.leader_id

    async def _leader_known(self) -> QuorumInfo | None:
        info = await self.describe()
        return info if info is not None and info.leader_id >= 0 else None

    async def healed(self) -> None:
        """Every process running, a leader, and every voter's log end at or past the high
        watermark the leader reported once all were running."""
        for process in self._processes():
            if not process.running:
                raise HealError(f"{process_name(process)} is not running: {process.log_tail()}")
        first = await self._until(self._leader_known, "a leader after the fault")
        target = first.high_watermark

        async def caught_up() -> QuorumInfo | None:
            info = await self.describe()
            if info is None or info.leader_id < 0:
                return None
            ends = [voter.log_end_offset for voter in info.voters]
            return info if min(ends) >= target else None

        await self._until(caught_up, f"every voter at offset {target} or later")

    async def converged(self) -> int:
        """The leader's whole log committed and held by every voter: nothing is in flight,
        so the nodes' files can be compared below the offset returned (the log end then)."""

        async def settled() -> QuorumInfo | None:
            info = await self.describe()
            leader = None if info is None else info.leader
            if info is None or leader is None:
                return None
            end = leader.log_end_offset
            same = all(voter.log_end_offset == end for voter in info.voters)
            return info if same and info.high_watermark == end else None

        info = await self._until(settled, "every voter holding the whole, committed log")
        return info.high_watermark

    async def brokers_caught_up(self, offset: int) -> float:
        """Seconds until every broker's image reached ``offset`` (as each publishes it in
        its status file); raises HealError naming the brokers still behind after
        ``BROKER_CATCH_UP_DEADLINE_S``."""
        started = self.clock()
        behind: dict[int, int | None] = {}
        while self.clock() < started + BROKER_CATCH_UP_DEADLINE_S:
            behind = {}
            for broker_id in self.cluster.brokers:
                status = read_status(self.cluster.broker_dir(broker_id) / STATUS_FILE)
                if status is None or status[0] < offset:
                    behind[broker_id] = None if status is None else status[0]
            if not behind:
                return self.clock() - started
            await asyncio.sleep(0.05)
        where = ", ".join(
            f"broker {broker_id} at {'no offset' if at is None else at}"
            for broker_id, at in sorted(behind.items())
        )
        raise HealError(
            f"brokers not at offset {offset} within {BROKER_CATCH_UP_DEADLINE_S:.0f} s of the "
            f"voters converging: {where}"
        )

    async def inject(self, kind: str) -> FaultRecord:
        action: dict[str, Callable[[], Awaitable[FaultRecord]]] = {
            "kill-leader": self._kill_leader,
            "kill-follower": self._kill_follower,
            "kill-broker": self._kill_broker,
            "pause-leader": self._pause_leader,
            "restart-leader": self._restart_leader,
            "torn-tail": lambda: self._damage_follower("torn-tail"),
            "bit-flip": lambda: self._damage_follower("bit-flip"),
            "quorum-loss": self._quorum_loss,
            "full-restart": self._full_restart,
            "partition": self._partition,
            "cut-link": self._cut_link,
            "one-way-cut": self._one_way_cut,
            "latency": self._latency,
        }
        if kind in NETWORK_KINDS and self.proxy is None:
            raise ValueError(f"{kind} needs the fault proxy on the cluster's links")
        return await action[kind]()

    # ------------------------------------------------------------------------ the faults

    async def _kill_leader(self) -> FaultRecord:
        node = self.cluster.nodes[await self.leader()]
        return await self._kill_and_restart("kill-leader", [node])

    async def _kill_follower(self) -> FaultRecord:
        return await self._kill_and_restart("kill-follower", [await self._follower()])

    async def _kill_broker(self) -> FaultRecord:
        brokers = list(self.cluster.brokers.values())
        return await self._kill_and_restart("kill-broker", [self.rng.choice(brokers)])

    async def _quorum_loss(self) -> FaultRecord:
        leader = self.cluster.nodes[await self.leader()]
        return await self._kill_and_restart("quorum-loss", [leader, await self._follower()])

    async def _full_restart(self) -> FaultRecord:
        """A power cut: every controller and broker killed at once, then all started again."""
        return await self._kill_and_restart("full-restart", self._processes())

    async def _partition(self) -> FaultRecord:
        """One controller (the leader half the time) cut off from every other node."""
        leader = await self.leader()
        node = leader if self.rng.random() < 0.5 else (await self._follower()).node_id
        others = [n for n in self._node_ids() if n != node]
        return await self._network_fault(
            "partition",
            f"controller {node} from all",
            lambda proxy: proxy.partition(node, others),
        )

    async def _cut_link(self) -> FaultRecord:
        first, second = self.rng.sample(sorted(self.cluster.nodes), 2)
        return await self._network_fault(
            "cut-link",
            f"controllers {first} and {second}",
            lambda proxy: proxy.cut_both_ways(first, second),
        )

    async def _one_way_cut(self) -> FaultRecord:
        """The leader can still hear every node but not reach any, or the other way."""
        leader = await self.leader()
        others = [n for n in self._node_ids() if n != leader]
        outbound = self.rng.random() < 0.5

        def cut(proxy: FaultProxy) -> None:
            for other in others:
                if outbound:
                    proxy.cut(leader, other)
                else:
                    proxy.cut(other, leader)

        where = "sends" if outbound else "receives"
        return await self._network_fault("one-way-cut", f"controller {leader}'s {where}", cut)

    async def _latency(self) -> FaultRecord:
        delay_s = self.rng.uniform(*LATENCY_S)
        nodes = self._node_ids()

        def slow(proxy: FaultProxy) -> None:
            for source in nodes:
                for destination in nodes:
                    if source != destination:
                        proxy.delay(source, destination, delay_s)

        return await self._network_fault(
            "latency", f"{delay_s * 1000:.0f} ms each way on every link", slow
        )

    async def _network_fault(
        self, kind: str, target: str, apply: Callable[[FaultProxy], None]
    ) -> FaultRecord:
        proxy = self.proxy
        assert proxy is not None
        began = self.clock()
        apply(proxy)
        try:
            await asyncio.sleep(self.rng.uniform(*NETWORK_HOLD_S))
        finally:
            proxy.heal()
        return FaultRecord(kind, target, began, self.clock())

    async def _pause_leader(self) -> FaultRecord:
        node = self.cluster.nodes[await self.leader()]
        began = self.clock()
        node.signal(signal.SIGSTOP)
        try:
            await asyncio.sleep(self.rng.uniform(2.0, 4.0))  # the length of the pause itself
        finally:
            node.signal(signal.SIGCONT)
        return FaultRecord("pause-leader", process_name(node), began, self.clock())

    async def _restart_leader(self) -> FaultRecord:
        node = self.cluster.nodes[await self.leader()]
        began = self.clock()
        node.signal(signal.SIGTERM)
        await asyncio.to_thread(node.wait, STOP_DEADLINE_S)
        if node.running:
            node.kill()
            await asyncio.to_thread(node.wait, STOP_DEADLINE_S)
        node.start()
        return FaultRecord("restart-leader", process_name(node), began, self.clock())

    async def _damage_follower(self, kind: str) -> FaultRecord:
        node = await self._follower()
        began = self.clock()
        node.kill()
        await asyncio.to_thread(node.wait, STOP_DEADLINE_S)
        where = damage_segment(self.cluster.data_dir(node.node_id), kind, self.rng)
        node.start()
        return FaultRecord(kind, f"{process_name(node)} ({where})", began, self.clock())

    async def _kill_and_restart(self, kind: str, nodes: list[NodeProcess]) -> FaultRecord:
        began = self.clock()
        for node in nodes:  # every signal first, so that the nodes die together
            node.signal(signal.SIGKILL)
        for node in nodes:
            await asyncio.to_thread(node.wait, STOP_DEADLINE_S)
        await asyncio.sleep(self.rng.uniform(0.5, 2.0))  # how long the nodes stay down
        for node in nodes:
            node.start()
        target = (
            "every controller and broker"
            if len(nodes) == len(self._processes())
            else ", ".join(process_name(node) for node in nodes)
        )
        return FaultRecord(kind, target, began, self.clock())

    # -------------------------------------------------------------------------- helpers

    async def _follower(self) -> NodeProcess:
        leader = await self.leader()
        followers = [node for node_id, node in self.cluster.nodes.items() if node_id != leader]
        return self.rng.choice(followers)

    def _node_ids(self) -> list[int]:
        return [*self.cluster.nodes, *self.cluster.brokers]

    def _processes(self) -> list[NodeProcess]:
        return [*self.cluster.nodes.values(), *self.cluster.brokers.values()]

    async def _until(
        self, probe: Callable[[], Awaitable[QuorumInfo | None]], what: str
    ) -> QuorumInfo:
        deadline = self.clock() + HEAL_DEADLINE_S
        while self.clock() < deadline:
            found = await probe()
            if found is not None:
                return found
            await asyncio.sleep(0.05)
        states = ", ".join(
            f"{process_name(p)} {'running' if p.running else f'exited {p.exit_status}'}"
            for p in self._processes()
        )
        raise HealError(f"not {what} within {HEAL_DEADLINE_S:.0f} s ({states})")


def process_name(process: NodeProcess) -> str:
    kind = "broker" if isinstance(process, BrokerProcess) else "controller"
    return f"{kind} {process.node_id}"


def damage_segment(data_dir: Path, kind: str, rng: random.Random) -> str:
    """Leave a torn write at the end of the newest segment (``torn-tail``: the first bytes of
    a batch that never finished, as a crash in the middle of a write leaves them) or flip one
    bit in its last 4 KiB (``bit-flip``, a disk going bad). Returns the file and byte, for
    the report."""
    segments = sorted((data_dir / METADATA_PARTITION_DIR).glob("*.log"))
    if not segments:
        return "no segment to damage"
    segment = segments[-1]
    size = segment.stat().st_size
    if size == 0:
        return f"{segment.name} is empty"
    position = rng.randrange(max(0, size - 4096), size)
    with open(segment, "r+b") as file:
        if kind == "torn-tail":
            # A batch header's worth of the bytes just before, as a half-written copy of a
            # batch would look: plausible enough that recovery must check, not skip.
            position = size
            file.seek(max(0, size - 61))
            torn = file.read(rng.randrange(1, 61))
            file.seek(size)
            file.write(torn)
        else:
            file.seek(position)
            byte = file.read(1)[0]
            file.seek(position)
            file.write(bytes([byte ^ (1 << rng.randrange(8))]))
        file.flush()
        os.fsync(file.fileno())
    verb = "torn write appended at" if kind == "torn-tail" else "flipped a bit at"
    return f"{segment.name} {verb} byte {position} of {size}"
