"""Fault plans: what goes wrong, and when, during the first part of a simulated run.

A plan is a list of timed actions, drawn from a seeded ``random.Random`` (for soaks) or from
Hypothesis (for shrinking). Each action is undone within the plan or by the final heal, so a
run always ends with a period in which the quorum must recover (the liveness check).
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Partition:
    groups: tuple[frozenset[int], ...]
    """Nodes in different groups cannot reach each other."""


@dataclass(frozen=True, slots=True)
class OneWayCut:
    source: int
    destination: int


@dataclass(frozen=True, slots=True)
class IsolateLeader:
    """Cut whoever leads at that moment off from everyone, both ways."""


@dataclass(frozen=True, slots=True)
class Flap:
    a: int
    b: int
    period_ms: int
    duration_ms: int


@dataclass(frozen=True, slots=True)
class FlapLeaderLink:
    """Flap the link between whoever leads at that moment and its lowest-numbered follower:
    each time it goes down both ends see the connection reset (a ``peer_down`` hint) while
    the leader is alive. Pre-vote must keep such a leader in office."""

    period_ms: int
    duration_ms: int


@dataclass(frozen=True, slots=True)
class NetworkQuality:
    loss: float
    duplication: float
    max_extra_delay_ms: float
    """Random extra delay per message; messages overtake each other, so it also reorders."""


@dataclass(frozen=True, slots=True)
class Heal:
    """Remove every partition, cut and flap."""


@dataclass(frozen=True, slots=True)
class Crash:
    node: int
    down_ms: int
    wipe: bool = False
    """Restart with an empty disk: breaks durability by design, so some checks relax."""


@dataclass(frozen=True, slots=True)
class Pause:
    node: int
    duration_ms: int


@dataclass(frozen=True, slots=True)
class GracefulStop:
    """The leader resigns (EndQuorumEpoch), keeps running for ``linger_ms``, flushes, stops,
    and comes back after ``down_ms``: a planned restart."""

    linger_ms: int
    down_ms: int


@dataclass(frozen=True, slots=True)
class FullRestart:
    down_ms: int


@dataclass(frozen=True, slots=True)
class LoseTail:
    """A follower (the one with the longest log, likely to have acknowledged the latest
    commits) crashes and comes back after ``down_ms`` with its last ``batches`` batches
    gone, as after a start-up repair cut at a flipped bit: records it acknowledged are lost,
    outside Raft's fault model. Its core starts with ``log_repaired``."""

    batches: int
    down_ms: int


@dataclass(frozen=True, slots=True)
class Reconfigure:
    """An operator asks the leader to add a controller that is not a voter (``add``) or to
    remove a voter (``remove``), retrying while the leader says to (REQUEST_TIMED_OUT, no
    leader), as ``raftmeta quorum add-controller`` / ``remove-controller`` would."""

    kind: str
    pick: int = 0
    """Which candidate to choose, modulo how many there are then (the plan cannot know)."""


Fault = (
    Partition
    | OneWayCut
    | IsolateLeader
    | Flap
    | FlapLeaderLink
    | NetworkQuality
    | Heal
    | Crash
    | Pause
    | GracefulStop
    | FullRestart
    | LoseTail
    | Reconfigure
)


@dataclass(frozen=True, slots=True)
class FaultPlan:
    actions: tuple[tuple[int, Fault], ...] = ()
    """(time in ms, fault) pairs, in time order."""
    fault_phase_ms: int = 8000
    min_run_ms: int = 10000
    liveness_bound_ms: int = 6000
    """After the fault phase, a leader must commit a new append within this long."""
    snapshot_every_batches: int = 40
    leader_stays_dead: bool = False
    """When the faults stop, kill the leader for good: the rest must carry on without it."""
    spare_controllers: int = 0
    """Extra non-voting controllers that ``Reconfigure`` can add (a dynamic quorum's spares)."""

    @property
    def has_wipe(self) -> bool:
        return any(isinstance(f, Crash) and f.wipe for _, f in self.actions)


def random_fault_plan(
    rng: random.Random,
    node_ids: list[int],
    voter_ids: list[int],
    *,
    fault_phase_ms: int = 8000,
    allow_wipe: bool = True,
) -> FaultPlan:
    actions: list[tuple[int, Fault]] = []
    count = rng.randint(2, 10)
    for _ in range(count):
        at = rng.randrange(0, fault_phase_ms - 500)
        kind = rng.random()
        fault: Fault
        if kind < 0.15:
            shuffled = list(node_ids)
            rng.shuffle(shuffled)
            cut = rng.randint(1, len(shuffled) - 1)
            fault = Partition((frozenset(shuffled[:cut]), frozenset(shuffled[cut:])))
        elif kind < 0.25:
            a, b = rng.sample(node_ids, 2)
            fault = OneWayCut(a, b)
        elif kind < 0.35:
            fault = IsolateLeader()
        elif kind < 0.42:
            a, b = rng.sample(node_ids, 2)
            fault = Flap(a, b, rng.randint(50, 600), rng.randint(500, 3000))
        elif kind < 0.55:
            fault = NetworkQuality(
                loss=rng.choice([0.0, 0.01, 0.05, 0.2]),
                duplication=rng.choice([0.0, 0.01, 0.05]),
                max_extra_delay_ms=rng.choice([0.0, 2.0, 20.0, 100.0]),
            )
        elif kind < 0.65:
            fault = Heal()
        elif kind < 0.85:
            wipe = allow_wipe and rng.random() < 0.04
            fault = Crash(rng.choice(node_ids), rng.randint(10, 2500), wipe)
        elif kind < 0.90:
            fault = Pause(rng.choice(node_ids), rng.randint(100, 2500))
        elif kind < 0.95:
            fault = GracefulStop(rng.randint(0, 1500), rng.randint(10, 2000))
        else:
            fault = FullRestart(rng.randint(10, 1500))
        actions.append((at, fault))
    actions.sort(key=lambda item: item[0])
    return FaultPlan(
        tuple(actions),
        fault_phase_ms=fault_phase_ms,
        snapshot_every_batches=rng.choice([5, 20, 80, 1_000_000]),
        leader_stays_dead=rng.random() < 0.3,
    )


MEMBERSHIP_SHARE = 0.3
"""The share of random plans that change the voters (the CI run's 2,000 hold about 600)."""


def with_membership_changes(plan: FaultPlan, rng: random.Random) -> FaultPlan:
    """``plan`` plus voter changes among its faults: sometimes 3 -> 5 -> 3 in four steps,
    otherwise a few adds and removes at random moments. One spare controller joins the
    observers (which such a plan also counts as controllers), so there are two to add."""
    phase = plan.fault_phase_ms
    changes: list[tuple[int, Fault]] = []
    if rng.random() < 0.4:
        at = rng.randrange(200, phase // 3)
        for kind in ("add", "add", "remove", "remove"):
            changes.append((at, Reconfigure(kind, rng.randrange(8))))
            at += rng.randrange(100, phase // 6)
    else:
        for _ in range(rng.randint(1, 5)):
            kind = rng.choice(("add", "remove"))
            changes.append((rng.randrange(0, phase - 500), Reconfigure(kind, rng.randrange(8))))
    actions = tuple(sorted((*plan.actions, *changes), key=lambda item: item[0]))
    return dataclasses.replace(plan, actions=actions, spare_controllers=1)
