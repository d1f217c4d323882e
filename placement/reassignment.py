"""Planning replica moves: proposals from a placer, draining a broker, balancing replicas.

Three plans an operator asks for before a partition reassignment (KIP-455), each a pure function
of the assignment and the brokers, so that ``raftmeta reassign-partitions`` and the audit (both of
its engines) compute exactly the same moves from the same facts:

* :func:`propose_assignment` (the tool's ``--generate``): a whole new assignment of some topics
  onto a list of brokers, from the configured :class:`~placement.api.ReplicaPlacer` (KIP-660),
  keeping each topic's replication factor. Every replica may move; it is the placer's layout.
* :func:`drain_plan` (``--generate --drain-broker``): every replica off some brokers, one move
  per replica held there, which is the fewest possible. The replacement takes the drained
  replica's position (so a drained preferred leader is replaced by its successor as preferred
  leader), comes from a rack that keeps the partition's rack spread whenever one can, and is the
  least loaded such broker, so the drained replicas spread evenly.
* :func:`balance_plan` (the audit): replicas per active broker against the ideal share, and the
  fewest moves that bring every active broker within the threshold without lowering any
  partition's rack spread, at most ``max_moves`` of them, with the counts predicted after.

The threshold is the audit's ``leader.imbalance.per.broker.percentage``, applied to replica
counts: a broker is within it when its count lies between ``floor(ideal * (1 - t))`` and
``ceil(ideal * (1 + t))``. Rounding outward keeps the target reachable: the counts are whole, and
``floor(ideal)`` and ``ceil(ideal)`` always lie inside.

A partition's *rack spread* is the number of distinct known racks among its replicas; a move
keeps it when the spread after is not lower. A replica on a broker with no rack, or on a broker no
longer registered, contributes no rack.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from placement.api import PlacementSpec, ReplicaPlacer, StaticClusterView, UsableBroker

DEFAULT_MAX_MOVES = 1000
"""Replica moves one balance plan may hold: a reassignment copies each moved replica's data, so
a plan is kept to what a cluster can absorb at once; run the audit again for the rest."""


@dataclass(frozen=True, slots=True)
class PartitionReplicas:
    """A partition and its replicas in order (the first is the preferred leader)."""

    topic: str
    partition: int
    replicas: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PlanBroker:
    """A registered broker as the planners see it. ``active``: unfenced and not shutting down,
    so it may receive replicas and counts towards the ideal share."""

    id: int
    rack: str | None
    active: bool


@dataclass(frozen=True, slots=True)
class Move:
    """One replica of a partition moving from ``source`` to ``target``."""

    topic: str
    partition: int
    source: int
    target: int


class DrainError(Exception):
    """A drain cannot be planned: no broker may take one of the replicas; one-line message."""


@dataclass(frozen=True)
class DrainPlan:
    """The new replica lists of every partition that held a drained broker."""

    reassignments: dict[tuple[str, int], tuple[int, ...]]
    """(topic, partition) to its target replicas, in (topic, partition) order."""
    spread_reduced: tuple[tuple[str, int], ...] = ()
    """Partitions whose rack spread no remaining broker could keep (a rack with no other
    broker); they keep their replication factor but span fewer racks."""


@dataclass(frozen=True)
class BalancePlan:
    """A balance plan and the figures before and after it, for the active brokers."""

    threshold_percent: float
    ideal: float | None
    """Replicas on active brokers over the number of active brokers; ``None`` without any."""
    lower: int | None
    upper: int | None
    """The bounds a count must lie within (inclusive); ``None`` without active brokers."""
    before: dict[int, int]
    """Replicas per broker now: every registered broker and every broker a partition names."""
    after: dict[int, int]
    """Replicas per broker once the plan has run (same keys as ``before``)."""
    moves: tuple[Move, ...]
    reassignments: dict[tuple[str, int], tuple[int, ...]]
    """(topic, partition) to its target replicas, in (topic, partition) order."""
    max_moves: int
    stopped: str | None = None
    """Why the plan stops short of every broker within the threshold, or ``None``:
    ``"max_moves"`` or ``"rack_spread"`` (no further move keeps every partition's rack spread)."""
    active: frozenset[int] = field(default_factory=frozenset)

    def within(self, count: int) -> bool:
        """Whether an active broker holding ``count`` replicas is within the threshold."""
        if self.lower is None or self.upper is None:
            return False
        return self.lower <= count <= self.upper

    def outside_before(self) -> list[int]:
        """Active brokers outside the threshold now, by id."""
        return sorted(b for b in self.active if not self.within(self.before[b]))

    def outside_after(self) -> list[int]:
        """Active brokers outside the threshold once the plan has run, by id."""
        return sorted(b for b in self.active if not self.within(self.after[b]))


# --- shared measures ---------------------------------------------------------------------------


def replica_bounds(ideal: Fraction | float, threshold_percent: float) -> tuple[int, int]:
    """The inclusive range of replica counts within ``threshold_percent`` of ``ideal``, rounded
    outward; computed in exact fractions so that 10 replicas at 10% allow 9 to 11, not 12."""
    exact_ideal = Fraction(ideal).limit_denominator(10**9)
    share = Fraction(threshold_percent).limit_denominator(10**6) / 100
    lower = math.floor(exact_ideal * (1 - share))
    upper = math.ceil(exact_ideal * (1 + share))
    return max(0, lower), upper


def rack_spread(replicas: Iterable[int], racks: Mapping[int, str | None]) -> int:
    """Distinct known racks among ``replicas``."""
    return len({racks[b] for b in replicas if racks.get(b) is not None})


def racks_of(brokers: Iterable[PlanBroker]) -> dict[int, str | None]:
    return {broker.id: broker.rack for broker in brokers}


def topic_replication_factor(replica_counts: Iterable[int]) -> int:
    """A topic's replication factor read from its partitions: the most common replica count,
    the larger on a tie. A partition mid-reassignment holds more replicas and one that lost a
    replica fewer; neither should decide what the topic's factor is."""
    counted = Counter(replica_counts)
    if not counted:
        return 0
    return max(counted.items(), key=lambda item: (item[1], item[0]))[0]


def plan_document(reassignments: Mapping[tuple[str, int], Sequence[int]]) -> dict[str, object]:
    """Kafka's reassignment JSON (``kafka-reassign-partitions.sh``): version 1, one entry per
    partition, ``log_dirs`` "any" for every replica."""
    return {
        "version": 1,
        "partitions": [
            {
                "topic": topic,
                "partition": partition,
                "replicas": list(replicas),
                "log_dirs": ["any"] * len(replicas),
            }
            for (topic, partition), replicas in sorted(reassignments.items())
        ],
    }


# --- --generate --------------------------------------------------------------------------------


def propose_assignment(
    placer: ReplicaPlacer,
    topics: Mapping[str, Sequence[Sequence[int]]],
    brokers: Sequence[UsableBroker],
) -> dict[tuple[str, int], tuple[int, ...]]:
    """A new assignment of every partition of ``topics`` (replica lists by partition id) onto
    ``brokers``, as the placer lays out a new topic of the same size and replication factor
    (the first partition's replica count, as Kafka's tool reads it). Raises the placer's
    :class:`~placement.api.PlacementError` when it cannot place."""
    proposed: dict[tuple[str, int], tuple[int, ...]] = {}
    view = StaticClusterView(brokers=tuple(brokers))
    for topic in sorted(topics):
        partitions = topics[topic]
        if not partitions:
            continue
        spec = PlacementSpec(0, len(partitions), len(partitions[0]))
        for partition, replicas in enumerate(placer.place(spec, view)):
            proposed[topic, partition] = tuple(replicas)
    return proposed


# --- draining a broker -------------------------------------------------------------------------


def drain_plan(
    partitions: Iterable[PartitionReplicas],
    brokers: Iterable[PlanBroker],
    drained: Collection[int],
) -> DrainPlan:
    """Moves every replica off the ``drained`` brokers (see the module's description).

    Candidates are the active brokers that are not drained and not already a replica of the
    partition. Raises :class:`DrainError` when a partition has no candidate at all.
    """
    known = list(brokers)
    racks = racks_of(known)
    drained_ids = frozenset(drained)
    receivers = sorted(b.id for b in known if b.active and b.id not in drained_ids)
    ordered = sorted(partitions, key=lambda p: (p.topic, p.partition))
    load: Counter[int] = Counter()
    for entry in ordered:
        load.update(entry.replicas)
    reassignments: dict[tuple[str, int], tuple[int, ...]] = {}
    reduced: list[tuple[str, int]] = []
    for entry in ordered:
        if drained_ids.isdisjoint(entry.replicas):
            continue
        replicas = list(entry.replicas)
        spread_before = rack_spread(replicas, racks)
        for position, broker_id in enumerate(entry.replicas):
            if broker_id not in drained_ids:
                continue
            candidates = [b for b in receivers if b not in replicas]
            if not candidates:
                raise DrainError(
                    f"Partition {entry.topic}-{entry.partition} cannot leave broker {broker_id}: "
                    "every remaining active broker already holds one of its replicas"
                )
            spread = rack_spread(replicas, racks)
            others = [b for b in replicas if b != broker_id]
            keeping = [b for b in candidates if rack_spread([*others, b], racks) >= spread]
            chosen = min(keeping or candidates, key=lambda b: (load[b], b))
            replicas[position] = chosen
            load[broker_id] -= 1
            load[chosen] += 1
        if rack_spread(replicas, racks) < spread_before:
            reduced.append((entry.topic, entry.partition))
        reassignments[entry.topic, entry.partition] = tuple(replicas)
    return DrainPlan(reassignments, tuple(reduced))


# --- balancing replicas ------------------------------------------------------------------------


def balance_plan(
    partitions: Iterable[PartitionReplicas],
    brokers: Iterable[PlanBroker],
    *,
    threshold_percent: float,
    max_moves: int = DEFAULT_MAX_MOVES,
) -> BalancePlan:
    """The fewest replica moves, at most ``max_moves``, bringing every active broker within the
    threshold without lowering any partition's rack spread (see the module's description).

    While some broker holds more than the upper bound, a replica moves from the most loaded such
    broker to the least loaded active broker that can take it; then (or when rack spread allows
    no such move), while some broker holds fewer than the lower bound, a replica moves to the
    least loaded from the most loaded broker that stays within the bound. Each move takes one
    replica off the excess or the shortfall, so the plan has max(excess, shortfall) moves, the
    least any plan can have, unless rack spread forbids a move to a broker short of replicas
    (then at most excess + shortfall). A replica the plan has placed is not moved again. Ties
    go to the lower broker id and the first (topic, partition), so the plan is a function of
    its inputs alone.
    """
    known = list(brokers)
    racks = racks_of(known)
    active = frozenset(b.id for b in known if b.active)
    ordered = sorted(partitions, key=lambda p: (p.topic, p.partition))
    current = [list(p.replicas) for p in ordered]
    before: Counter[int] = Counter({b.id: 0 for b in known})
    holding: dict[int, list[int]] = {}
    for index, replicas in enumerate(current):
        for broker_id in replicas:
            before[broker_id] += 1
            holding.setdefault(broker_id, []).append(index)
    count = Counter(before)
    if not active:
        return BalancePlan(
            threshold_percent,
            None,
            None,
            None,
            dict(before),
            dict(count),
            (),
            {},
            max_moves,
            active=active,
        )
    ideal = Fraction(sum(before[b] for b in active), len(active))
    lower, upper = replica_bounds(ideal, threshold_percent)
    placed: list[set[int]] = [set() for _ in current]
    moves: list[Move] = []
    stopped: str | None = None

    def find(sources: list[int], targets: list[int]) -> tuple[int, int, int] | None:
        for source in sources:
            for target in targets:
                if target == source:
                    continue
                for index in holding.get(source, ()):
                    replicas = current[index]
                    if source not in replicas or source in placed[index] or target in replicas:
                        continue
                    others = [b for b in replicas if b != source]
                    if rack_spread([*others, target], racks) >= rack_spread(replicas, racks):
                        return source, index, target
        return None

    while True:
        over = [b for b in active if count[b] > upper]
        under = [b for b in active if count[b] < lower]
        if not over and not under:
            break
        if len(moves) >= max_moves:
            stopped = "max_moves"
            break
        found = None
        if over:
            sources = sorted(over, key=lambda b: (-count[b], b))
            targets = sorted(
                (b for b in active if count[b] + 1 <= upper), key=lambda b: (count[b], b)
            )
            # A broker short of the lower bound first, from any source: that move takes one
            # replica off the excess and one off the shortfall.
            found = find(sources, [b for b in targets if count[b] < lower]) or find(
                sources, [b for b in targets if count[b] >= lower]
            )
        if found is None and under:
            # No move off the excess keeps rack spread (or there is none): the shortfall can
            # still be filled from any broker that stays within the lower bound.
            sources = sorted(
                (b for b in active if count[b] - 1 >= lower), key=lambda b: (-count[b], b)
            )
            found = find(sources, sorted(under, key=lambda b: (count[b], b)))
        if found is None:
            stopped = "rack_spread"
            break
        source, index, target = found
        replicas = current[index]
        replicas[replicas.index(source)] = target
        placed[index].add(target)
        holding.setdefault(target, []).append(index)
        count[source] -= 1
        count[target] += 1
        entry = ordered[index]
        moves.append(Move(entry.topic, entry.partition, source, target))
    reassignments = {
        (ordered[i].topic, ordered[i].partition): tuple(current[i])
        for i in sorted({i for i, p in enumerate(placed) if p})
    }
    return BalancePlan(
        threshold_percent=threshold_percent,
        ideal=float(ideal),
        lower=lower,
        upper=upper,
        before=dict(before),
        after=dict(count),
        moves=tuple(moves),
        reassignments=reassignments,
        max_moves=max_moves,
        stopped=stopped,
        active=active,
    )
