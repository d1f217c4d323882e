"""The counting stripe as it was before the small-cluster scan and the cached broker layout.

Kept for tests/placement/test_same_placements.py, which pins that today's placers give the same
replicas as this one for the same brokers, counts and random state, and for the "before" rows of
benchmarks/placement_bench.py. Not imported by the library; do not change it, or the pin means
nothing.
"""

from __future__ import annotations

import heapq
import itertools
import random
import sys
from collections import Counter
from collections.abc import Mapping, Sequence

from placement.api import (
    ClusterView,
    PlacementError,
    PlacementSpec,
    UsableBroker,
)
from placement.checks import check_replication_factor, distinct_brokers


class NoCandidateError(Exception):
    """The budget left no broker for a replica; callers turn this into a PlacementError."""

    def __init__(self, partition: int, needed: int, found: int, leader: bool) -> None:
        super().__init__(partition, needed, found, leader)
        self.partition = partition
        self.needed = needed
        self.found = found
        self.leader = leader


_UNLIMITED = sys.maxsize


class BalancedStripe:
    """Placement state for one ``place`` call: counts, budgets and the current random order.

    Each rack keeps two lazy heaps, one ordering its possible leaders and one its possible
    followers. Counts only grow, so a heap entry whose counts no longer match the broker's is
    stale and is dropped when it reaches the top; a broker that changes is pushed again. That
    makes a partition cost a pass over the racks plus a few heap operations, not a pass over
    every broker, which matters because placement runs on the controller's event thread.
    """

    __slots__ = (
        "_fenced",
        "_follow_heaps",
        "_ids",
        "_lead_heaps",
        "_leaders",
        "_members",
        "_rack_follow_order",
        "_rack_lead_load",
        "_rack_leaders",
        "_rack_of",
        "_rack_open",
        "_rack_open_unfenced",
        "_rack_rank",
        "_rack_replicas",
        "_rack_tie_replicas",
        "_rack_weight",
        "_rank",
        "_replicas",
        "_rng",
        "_room",
        "_since_shuffle",
        "_tie_leaders",
        "_tie_replicas",
        "_unfenced_count",
    )

    def __init__(
        self,
        brokers: Sequence[UsableBroker],
        rng: random.Random,
        leaders: Mapping[int, int],
        replicas: Mapping[int, int],
        room: Mapping[int, int] | None = None,
        *,
        tie_leaders: Mapping[int, int] | None = None,
        tie_replicas: Mapping[int, int] | None = None,
    ) -> None:
        """``brokers`` distinct and sorted by id; ``room`` absent means no budget.

        ``leaders`` and ``replicas`` are the counts to balance; ``tie_leaders`` and
        ``tie_replicas`` (usually cluster-wide counts) only break ties between brokers that
        those leave equal, ahead of the random order.
        """
        self._rng = rng
        self._ids = [broker.id for broker in brokers]
        self._fenced = [broker.fenced for broker in brokers]
        self._unfenced_count = sum(not fenced for fenced in self._fenced)
        rack_names = sorted({broker.rack for broker in brokers}, key=rack_order_key)
        rack_index = {name: index for index, name in enumerate(rack_names)}
        self._rack_of = [rack_index[broker.rack] for broker in brokers]
        self._members: list[list[int]] = [[] for _ in rack_names]
        for index, rack in enumerate(self._rack_of):
            self._members[rack].append(index)
        self._leaders = [leaders.get(broker_id, 0) for broker_id in self._ids]
        self._replicas = [replicas.get(broker_id, 0) for broker_id in self._ids]
        tie_leaders = tie_leaders or {}
        tie_replicas = tie_replicas or {}
        self._tie_leaders = [tie_leaders.get(broker_id, 0) for broker_id in self._ids]
        self._tie_replicas = [tie_replicas.get(broker_id, 0) for broker_id in self._ids]
        if room is None:
            self._room = [_UNLIMITED] * len(self._ids)
        else:
            self._room = [max(0, room.get(broker_id, 0)) for broker_id in self._ids]
        rack_count = len(rack_names)
        self._rank: list[int] = []
        self._rack_rank: list[int] = []
        self._rack_leaders = [0] * rack_count
        self._rack_replicas = [0] * rack_count
        self._rack_tie_replicas = [0] * rack_count
        self._rack_open = [0] * rack_count
        self._rack_open_unfenced = [0] * rack_count
        unfenced_per_rack = [0] * rack_count
        for index, rack in enumerate(self._rack_of):
            self._rack_leaders[rack] += self._leaders[index]
            self._rack_replicas[rack] += self._replicas[index]
            self._rack_tie_replicas[rack] += self._tie_replicas[index]
            if not self._fenced[index]:
                unfenced_per_rack[rack] += 1
            if self._room[index] > 0:
                self._rack_open[rack] += 1
                if not self._fenced[index]:
                    self._rack_open_unfenced[rack] += 1
        # Racks are compared per unfenced broker: fenced brokers take replicas only as a last
        # resort, so counting them would send a rack's share to its few live brokers.
        self._rack_weight = [float(max(count, 1)) for count in unfenced_per_rack]
        # Filled in by _reshuffle, which also draws the rack order they end with.
        self._rack_lead_load = [0.0] * rack_count
        self._rack_follow_order = [(0.0, 0.0, 0.0, 0)] * rack_count
        self._lead_heaps: list[list[tuple[int, int, int, int, int]]] = []
        self._follow_heaps: list[list[tuple[bool, int, int, int, int, int]]] = []
        self._since_shuffle = 0
        self._reshuffle()

    @classmethod
    def from_assignment(
        cls,
        brokers: Sequence[UsableBroker],
        assignment: Sequence[Sequence[int]],
        rng: random.Random,
        room: Mapping[int, int] | None = None,
        cluster: ClusterView | None = None,
    ) -> BalancedStripe:
        """Start from a topic's existing partitions, so new ones even out the whole topic.

        With ``cluster``, its per-broker counts break ties, so that many small topics, each
        balanced on its own, also add up to a balanced cluster.
        """
        # Counter counts in C: this runs over the whole topic on every CreatePartitions.
        leaders = Counter(partition[0] for partition in assignment if partition)
        replicas = Counter(itertools.chain.from_iterable(assignment))
        tie_leaders: dict[int, int] | None = None
        tie_replicas: dict[int, int] | None = None
        if cluster is not None:
            tie_leaders = {broker.id: cluster.leader_count(broker.id) for broker in brokers}
            tie_replicas = {broker.id: cluster.replica_count(broker.id) for broker in brokers}
        return cls(
            brokers,
            rng,
            leaders,
            replicas,
            room,
            tie_leaders=tie_leaders,
            tie_replicas=tie_replicas,
        )

    def place_many(self, spec: PlacementSpec) -> list[list[int]]:
        return [
            self.place(spec.start_partition + offset, spec.replication_factor)
            for offset in range(spec.partition_count)
        ]

    def place(self, partition: int, replication_factor: int) -> list[int]:
        """Choose one partition's replicas, leader first, and count them."""
        if self._unfenced_count > 1 and self._since_shuffle == self._unfenced_count:
            self._reshuffle()
        self._since_shuffle += 1
        leader = self._choose_leader()
        if leader is None:
            raise NoCandidateError(partition, replication_factor, 0, leader=True)
        # The leadership counts at once: a rack that has just been given this leader has had its
        # turn, which is what the followers' "most leaders" rule asks about.
        self._count_leader(leader)
        chosen = [leader]
        presence = [0] * len(self._members)
        presence_unfenced = [0] * len(self._members)
        presence[self._rack_of[leader]] = 1
        presence_unfenced[self._rack_of[leader]] = 1
        while len(chosen) < replication_factor:
            follower = self._choose_follower(chosen, presence, presence_unfenced)
            if follower is None:
                raise NoCandidateError(partition, replication_factor, len(chosen), leader=False)
            chosen.append(follower)
            rack = self._rack_of[follower]
            presence[rack] += 1
            if not self._fenced[follower]:
                presence_unfenced[rack] += 1
        self._count(chosen)
        return [self._ids[index] for index in chosen]

    def _reshuffle(self) -> None:
        self._rank = _random_ranks(len(self._ids), self._rng)
        self._rack_rank = _random_ranks(len(self._members), self._rng)
        self._since_shuffle = 0
        for rack in range(len(self._members)):
            self._update_rack_loads(rack)
        self._lead_heaps = [[] for _ in self._members]
        self._follow_heaps = [[] for _ in self._members]
        for index in range(len(self._ids)):
            self._push(index)

    def _push(self, index: int) -> None:
        if self._room[index] <= 0:
            return
        rack = self._rack_of[index]
        fenced = self._fenced[index]
        leaders = self._leaders[index]
        replicas = self._replicas[index]
        rank = self._rank[index]
        if not fenced:
            heapq.heappush(
                self._lead_heaps[rack],
                (leaders, replicas, self._tie_leaders[index], rank, index),
            )
        heapq.heappush(
            self._follow_heaps[rack],
            (fenced, replicas, -leaders, self._tie_replicas[index], rank, index),
        )

    def _update_rack_loads(self, rack: int) -> None:
        weight = self._rack_weight[rack]
        self._rack_lead_load[rack] = self._rack_leaders[rack] / weight
        # Among racks equally full, prefer the one that has already led more: its brokers have
        # had their leader replicas, while the others will get theirs soon.
        self._rack_follow_order[rack] = (
            self._rack_replicas[rack] / weight,
            -self._rack_leaders[rack] / weight,
            self._rack_tie_replicas[rack] / weight,
            self._rack_rank[rack],
        )

    def _choose_leader(self) -> int | None:
        leaders = self._leaders
        replicas = self._replicas
        best_index: int | None = None
        best_key: tuple[int, float, int, int, int] | None = None
        for rack, heap in enumerate(self._lead_heaps):
            while heap:
                lead_count, replica_count, tie_leaders, rank, index = heap[0]
                if lead_count == leaders[index] and replica_count == replicas[index]:
                    key = (
                        lead_count,
                        self._rack_lead_load[rack],
                        replica_count,
                        tie_leaders,
                        rank,
                    )
                    if best_key is None or key < best_key:
                        best_index, best_key = index, key
                    break
                heapq.heappop(heap)
        return best_index

    def _choose_follower(
        self, chosen: list[int], presence: list[int], presence_unfenced: list[int]
    ) -> int | None:
        # Rack spread first: only racks this partition uses least, and of those the ones that can
        # still offer an unfenced broker, are candidates; their standing order breaks the tie.
        best_level = -1
        candidates: list[int] = []
        for rack in range(len(self._members)):
            # Every chosen broker had room, so these differences are what the rack still offers.
            if self._rack_open[rack] <= presence[rack]:
                continue
            level = 2 * presence[rack]
            if self._rack_open_unfenced[rack] <= presence_unfenced[rack]:
                level += 1
            if best_level < 0 or level < best_level:
                best_level = level
                candidates = [rack]
            elif level == best_level:
                candidates.append(rack)
        if not candidates:
            return None
        best_rack = min(candidates, key=self._rack_follow_order.__getitem__)
        heap = self._follow_heaps[best_rack]
        leaders = self._leaders
        replicas = self._replicas
        set_aside = []
        found: int | None = None
        while heap:
            _, replica_count, negative_leaders, _, _, index = heap[0]
            if replica_count != replicas[index] or -negative_leaders != leaders[index]:
                heapq.heappop(heap)
            elif index in chosen:
                set_aside.append(heapq.heappop(heap))
            else:
                found = index
                break
        for entry in set_aside:
            heapq.heappush(heap, entry)
        return found

    def _count_leader(self, leader: int) -> None:
        rack = self._rack_of[leader]
        self._leaders[leader] += 1
        self._tie_leaders[leader] += 1
        self._rack_leaders[rack] += 1
        self._update_rack_loads(rack)

    def _count(self, chosen: list[int]) -> None:
        for index in chosen:
            rack = self._rack_of[index]
            self._replicas[index] += 1
            self._tie_replicas[index] += 1
            self._rack_replicas[rack] += 1
            self._rack_tie_replicas[rack] += 1
            self._room[index] -= 1
            if self._room[index] == 0:
                self._rack_open[rack] -= 1
                if not self._fenced[index]:
                    self._rack_open_unfenced[rack] -= 1
            self._update_rack_loads(rack)
            self._push(index)


def rack_order_key(rack: str | None) -> tuple[bool, str]:
    """Brokers without a rack form one rack of their own, which sorts first, as in Kafka."""
    return (rack is not None, rack or "")


def _random_ranks(count: int, rng: random.Random) -> list[int]:
    order = list(range(count))
    rng.shuffle(order)
    ranks = [0] * count
    for position, index in enumerate(order):
        ranks[index] = position
    return ranks


def legacy_default(
    rng: random.Random, spec: PlacementSpec, cluster: ClusterView
) -> list[list[int]]:
    """StripedReplicaPlacer.place as it was."""
    brokers = distinct_brokers(cluster.usable_brokers())
    check_replication_factor(spec.replication_factor, brokers)
    stripe = BalancedStripe.from_assignment(
        brokers, cluster.existing_assignment(), rng, cluster=cluster
    )
    return stripe.place_many(spec)


def legacy_emptiest(
    rng: random.Random, spec: PlacementSpec, cluster: ClusterView
) -> list[list[int]]:
    """EmptiestBrokerPlacer.place as it was."""
    brokers = distinct_brokers(cluster.usable_brokers())
    check_replication_factor(spec.replication_factor, brokers)
    leaders = {broker.id: cluster.leader_count(broker.id) for broker in brokers}
    replicas = {broker.id: cluster.replica_count(broker.id) for broker in brokers}
    return BalancedStripe(brokers, rng, leaders, replicas).place_many(spec)


def legacy_capacity(
    rng: random.Random, limit: int, spec: PlacementSpec, cluster: ClusterView
) -> list[list[int]]:
    """CapacityAwarePlacer.place as it was, every broker at ``limit`` replicas, no headroom."""
    brokers = distinct_brokers(cluster.usable_brokers())
    check_replication_factor(spec.replication_factor, brokers)
    room = {broker.id: limit - cluster.replica_count(broker.id) for broker in brokers}
    stripe = BalancedStripe.from_assignment(
        brokers, cluster.existing_assignment(), rng, room, cluster
    )
    try:
        return stripe.place_many(spec)
    except NoCandidateError as failure:
        raise PlacementError(
            f"partition {failure.partition}: {failure.found} of {failure.needed}, "
            f"leader={failure.leader}"
        ) from None
