"""Builders that put a core into a named situation, so each role test reads as one claim.

``CoreCluster``, the consensus layer's fixture, runs a few cores with instant, lossless
delivery and instant persistence; tests then poke single cores with hand-made messages and
look at what comes out.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from raftmeta.raft.batch import Batch, SnapshotId
from raftmeta.raft.config import RaftConfig
from raftmeta.raft.core import RaftCore
from raftmeta.raft.log import RaftLog
from raftmeta.raft.messages import Message, Request
from raftmeta.raft.ready import Outbound, Ready
from raftmeta.raft.roles import Role
from raftmeta.raft.state import ElectionState
from raftmeta.raft.voters import ReplicaKey, VoterSet

CONFIG = RaftConfig(
    election_timeout_ms=300,
    fetch_timeout_ms=500,
    election_backoff_max_ms=300,
    fetch_max_wait_ms=250,
)


def new_core(
    node_id: int = 1,
    voters: frozenset[int] | VoterSet = frozenset({1, 2, 3}),
    *,
    directory_id: str | None = None,
    kraft_version: int = 0,
    election: ElectionState | None = None,
    log: RaftLog | None = None,
    now_ms: int = 0,
    seed: int = 7,
    config: RaftConfig = CONFIG,
) -> RaftCore:
    return RaftCore(
        node_id,
        voters,
        config,
        election_state=election or ElectionState(),
        log=log or RaftLog(),
        now_ms=now_ms,
        rng=random.Random(seed),
        directory_id=directory_id,
        kraft_version=kraft_version,
    )


@dataclass
class Drained:
    """Everything a core produced, with persistence taken as instant."""

    readies: list[Ready] = field(default_factory=list)

    @property
    def sent(self) -> list[Outbound]:
        return [m for r in self.readies for m in (*r.messages, *r.messages_after_persist)]

    def sent_to(self, destination: int) -> list[Message]:
        return [m.message for m in self.sent if m.destination == destination]

    def of_type(self, kind: type) -> list[Outbound]:
        return [m for m in self.sent if isinstance(m.message, kind)]

    @property
    def committed(self) -> list[Batch]:
        return [b for r in self.readies for b in r.committed]


def drain(core: RaftCore, now_ms: int = 0) -> Drained:
    """Take every Ready, pretend it was made durable, and advance."""
    out = Drained()
    while (ready := core.ready()) is not None:
        out.readies.append(ready)
        core.advance(ready, now_ms)
    return out


class CoreCluster:
    """Cores wired together with instant delivery, for reaching a state quickly."""

    def __init__(
        self,
        voters: int = 3,
        observers: int = 0,
        seed: int = 1,
        *,
        dynamic: bool = False,
        config: RaftConfig = CONFIG,
    ) -> None:
        """``dynamic``: voters keyed by directory ids (node i on directory "d<i>") in a
        kraft.version 1 quorum, as ``format --initial-controllers`` sets one up."""
        self.voter_ids = frozenset(range(1, voters + 1))
        self.now_ms = 0
        voter_set: frozenset[int] | VoterSet = self.voter_ids
        if dynamic:
            voter_set = VoterSet.of(ReplicaKey(i, f"d{i}") for i in sorted(self.voter_ids))
        self.cores = {
            i: new_core(
                i,
                voter_set,
                seed=seed * 100 + i,
                directory_id=f"d{i}" if dynamic else None,
                kraft_version=1 if dynamic else 0,
                config=config,
            )
            for i in range(1, voters + observers + 1)
        }
        self.down: set[int] = set()
        self.lost_requests: set[tuple[int, int]] = set()
        """(sender, destination) pairs whose requests are lost while answers still flow: the
        destination's connection to the sender works, the sender's to it does not (yet)."""
        self.refuse_when_down = False
        """Report a request to a down node back to its sender as ``unreachable`` with
        ``peer_down``, as the stream transport does when the node's port refuses it."""

    def pump(self, rounds: int = 10_000) -> None:
        """Deliver messages until every core is quiet."""
        for _ in range(rounds):
            moved = False
            for node_id, core in self.cores.items():
                if node_id in self.down:
                    continue
                ready = core.ready()
                if ready is None:
                    continue
                moved = True
                core.advance(ready, self.now_ms)
                for outbound in (*ready.messages, *ready.messages_after_persist):
                    if (
                        self.refuse_when_down
                        and outbound.destination in self.down
                        and isinstance(outbound.message, Request)
                    ):
                        core.unreachable(
                            outbound.destination, outbound.message, self.now_ms, peer_down=True
                        )
                        continue
                    if outbound.destination in self.down or node_id in self.down:
                        continue
                    if isinstance(outbound.message, Request) and (
                        (node_id, outbound.destination) in self.lost_requests
                    ):
                        continue
                    self.cores[outbound.destination].step(node_id, outbound.message, self.now_ms)
            if not moved:
                return
        raise AssertionError("the cluster never went quiet")

    def advance_time(self, to_ms: int) -> None:
        """Move the clock forward, firing every deadline on the way, and settle."""
        while True:
            live = [c for i, c in self.cores.items() if i not in self.down]
            next_deadline = min(c.next_deadline_ms() for c in live)
            if next_deadline > to_ms:
                break
            self.now_ms = max(self.now_ms, next_deadline)
            for core in live:
                core.tick(self.now_ms)
            self.pump()
        self.now_ms = to_ms
        for node_id, core in self.cores.items():
            if node_id not in self.down:
                core.tick(to_ms)
        self.pump()

    def leader(self) -> RaftCore:
        leaders = [c for i, c in self.cores.items() if c.role is Role.LEADER and i not in self.down]
        assert len(leaders) == 1, [(c.node_id, c.role) for c in self.cores.values()]
        return leaders[0]

    def elect(self) -> RaftCore:
        """Run time forward until a leader has committed its epoch start."""
        for _ in range(100):
            self.advance_time(self.now_ms + 100)
            leaders = [
                c for i, c in self.cores.items() if c.role is Role.LEADER and i not in self.down
            ]
            if leaders and leaders[0].high_watermark > 0:
                return leaders[0]
        raise AssertionError("no leader was elected")


def with_elected_leader(seed: int = 1, config: RaftConfig = CONFIG) -> CoreCluster:
    cluster = CoreCluster(seed=seed, config=config)
    cluster.elect()
    return cluster


def with_snapshot(records: int = 20) -> tuple[CoreCluster, SnapshotId]:
    """A leader that has committed records and compacted its log behind a snapshot."""
    cluster = with_elected_leader()
    leader = cluster.leader()
    for i in range(records):
        leader.propose([f"r{i}".encode()], cluster.now_ms)
        cluster.pump()
    high_watermark = leader.high_watermark
    snapshot = SnapshotId(high_watermark, leader.log.epoch_at(high_watermark - 1))
    leader.snapshot_taken(snapshot, 100)
    cluster.pump()
    return cluster, snapshot
