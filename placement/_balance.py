"""The counting stripe behind the default, emptiest-broker and capacity placers.

One engine serves three placers because they differ only in what the counts start from and which
brokers may still take replicas: the topic's existing assignment (default), the whole cluster's
counts (emptiest broker), or the topic's assignment plus a replica budget per broker (capacity).
A second set of counts, normally the cluster-wide ones, only breaks ties; that keeps every topic
balanced on its own while many small topics still add up to a balanced cluster.

Choices, in priority order, each later rule only breaking ties of the earlier ones:

* Leader: an unfenced broker with room; fewest leaders; the rack with the fewest leaders per
  unfenced broker; fewest replicas; fewest tie-break leaders; the round's random order.
* Each follower's rack: one with a broker left for this partition; fewest replicas of this
  partition so far (this alone gives maximal rack spread); able to offer an unfenced broker;
  fewest replicas per unfenced broker; most leaders per unfenced broker; fewest tie-break
  replicas per unfenced broker; random order.
* The follower in that rack: unfenced first; fewest replicas; most leaders; fewest tie-break
  replicas; random order.

"Most leaders" looks backwards but is what keeps replicas even: a broker with fewer leaders is
about to get a leader, and a replica with it, so its follower slot is better given to a broker
that has already had its turn. With it, leaders and replicas per broker both stay within one of
each other on racks of equal size (the property tests check both).

The random order is redrawn after every round of as many partitions as there are unfenced
brokers, so ties do not keep pairing the same brokers.

Two engines find the best broker and give the same answer, because every rule above is a total
order (the random ranks are distinct): :class:`HeapStripe`, lazy heaps per rack, for many
partitions on a large cluster; and a scan over the brokers (:func:`_scan_one_rack`,
:func:`_scan_racks`) for everything else, where filling the heaps cost more than the whole
placement of a small topic. :func:`place_balanced` chooses; the counts are lists by
:class:`~placement._layout.BrokerLayout` index, which the engines take over and change.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections import Counter
from collections.abc import Mapping, Sequence

from placement._layout import BrokerLayout
from placement.api import ClusterCounts, ClusterView, PlacementSpec

SCAN_MAX_BROKERS = 24
"""Up to this many usable brokers a partition's replicas are found by scanning them; beyond it
by the heaps, unless the call places at most SCAN_MAX_PARTITIONS partitions. Both ways give the
same placement; these only say which is cheaper (see benchmarks/placement_bench.py)."""
SCAN_MAX_PARTITIONS = 8
"""Filling the heaps costs about as much as scanning every broker for this many partitions."""


class NoCandidateError(Exception):
    """The budget left no broker for a replica; callers turn this into a PlacementError."""

    def __init__(self, partition: int, needed: int, found: int, leader: bool) -> None:
        super().__init__(partition, needed, found, leader)
        self.partition = partition
        self.needed = needed
        self.found = found
        self.leader = leader


def place_balanced(
    layout: BrokerLayout,
    spec: PlacementSpec,
    rng: random.Random,
    counts: TopicCounts,
    room: list[int] | None = None,
) -> list[list[int]]:
    """Replicas for every partition of ``spec`` by the rules above, leader first.

    ``counts`` (taken over and changed) are the counts to balance and the tie-breaking ones;
    ``room`` (taken over too) is each broker's budget of new replicas, None for no budget.
    Raises :class:`NoCandidateError` when a budget leaves no broker for a replica.
    """
    if len(layout.ids) > SCAN_MAX_BROKERS and spec.partition_count > SCAN_MAX_PARTITIONS:
        return HeapStripe(
            layout,
            rng,
            counts.leaders,
            counts.replicas,
            room,
            counts.tie_leaders,
            counts.tie_replicas,
        ).place_many(spec)
    if len(layout.members) == 1:
        return _scan_one_rack(layout, spec, rng, counts, room)
    return _scan_racks(layout, spec, rng, counts, room)


class TopicCounts:
    """The four counts per broker (by layout index) that one placement call balances."""

    __slots__ = ("leaders", "replicas", "tie_leaders", "tie_replicas")

    def __init__(
        self,
        leaders: list[int],
        replicas: list[int],
        tie_leaders: list[int],
        tie_replicas: list[int],
    ) -> None:
        self.leaders = leaders
        """Preferred leaders to balance (usually the topic's)."""
        self.replicas = replicas
        """Replicas to balance (usually the topic's)."""
        self.tie_leaders = tie_leaders
        """Leaders that only break ties (usually the cluster's)."""
        self.tie_replicas = tie_replicas
        """Replicas that only break ties (usually the cluster's)."""

    @classmethod
    def of_topic(
        cls,
        layout: BrokerLayout,
        assignment: Sequence[Sequence[int]],
        cluster: ClusterView | None,
    ) -> TopicCounts:
        """A topic's own counts from its existing partitions, the cluster's to break ties.

        New partitions then even out the whole topic, and many small topics, each balanced on
        its own, also add up to a balanced cluster.
        """
        ids = layout.ids
        if assignment:
            # Counter counts in C: this runs over the whole topic on every CreatePartitions.
            leader_counts = Counter(partition[0] for partition in assignment if partition)
            replica_counts = Counter(itertools.chain.from_iterable(assignment))
            leaders = [leader_counts.get(broker_id, 0) for broker_id in ids]
            replicas = [replica_counts.get(broker_id, 0) for broker_id in ids]
        else:
            # A new topic, the common case: nothing to count.
            leaders = [0] * len(ids)
            replicas = [0] * len(ids)
        if cluster is None:
            return cls(leaders, replicas, [0] * len(ids), [0] * len(ids))
        return cls(leaders, replicas, *cluster_counts(cluster, ids))


def cluster_counts(cluster: ClusterView, broker_ids: list[int]) -> tuple[list[int], list[int]]:
    """Leaders and replicas per broker across the cluster, in one call each if the view can."""
    if isinstance(cluster, ClusterCounts):
        return cluster.leader_counts_of(broker_ids), cluster.replica_counts_of(broker_ids)
    return list(map(cluster.leader_count, broker_ids)), list(map(cluster.replica_count, broker_ids))


def budget(layout: BrokerLayout, room: Mapping[int, int]) -> list[int]:
    """Room per broker by layout index; a broker absent from ``room`` has none."""
    return [max(0, room.get(broker_id, 0)) for broker_id in layout.ids]


def _scan_one_rack(
    layout: BrokerLayout,
    spec: PlacementSpec,
    rng: random.Random,
    counts: TopicCounts,
    room: list[int] | None,
) -> list[list[int]]:
    """The scan on a cluster of one rack, the commonest small cluster.

    Every broker shares the rack's load and every follower comes from the one rack, so those
    rules drop out; and no follower's key changes while a partition is placed (only the
    leader's count moves, and the leader is not a follower candidate), so the followers are the
    first of one sorted list instead of one search each.
    """
    replication_factor = spec.replication_factor
    ids = layout.ids
    fenced = layout.fenced
    leaders = counts.leaders
    replicas = counts.replicas
    tie_leaders = counts.tie_leaders
    tie_replicas = counts.tie_replicas
    unfenced_count = layout.unfenced_count
    leader_candidates = layout.unfenced
    eligible = layout.members[0]
    # The random order, redrawn after every round of as many partitions as unfenced brokers.
    # (One rack's rank is drawn too, as the heaps do; shuffling one item draws nothing.)
    rank = _random_ranks(len(ids), rng)
    since_shuffle = 0
    placed: list[list[int]] = []
    first = spec.start_partition
    for partition in range(first, first + spec.partition_count):
        if unfenced_count > 1 and since_shuffle == unfenced_count:
            rank = _random_ranks(len(ids), rng)
            since_shuffle = 0
        since_shuffle += 1
        if room is not None:
            leader_candidates = [index for index in layout.unfenced if room[index] > 0]
            eligible = [index for index in layout.members[0] if room[index] > 0]
        if not leader_candidates:
            raise NoCandidateError(partition, replication_factor, 0, leader=True)
        leader = min(
            (leaders[i], replicas[i], tie_leaders[i], rank[i], i) for i in leader_candidates
        )[-1]
        leaders[leader] += 1
        tie_leaders[leader] += 1
        chosen = [leader]
        if replication_factor > 1:
            if len(eligible) < replication_factor:
                # The leader is one of them: the rack ran out after the eligible ones.
                raise NoCandidateError(partition, replication_factor, len(eligible), leader=False)
            followers = sorted(
                (fenced[i], replicas[i], -leaders[i], tie_replicas[i], rank[i], i)
                for i in eligible
                if i != leader
            )
            chosen.extend(key[-1] for key in followers[: replication_factor - 1])
        for index in chosen:
            replicas[index] += 1
            tie_replicas[index] += 1
            if room is not None:
                room[index] -= 1
        placed.append([ids[index] for index in chosen])
    return placed


def _scan_racks(
    layout: BrokerLayout,
    spec: PlacementSpec,
    rng: random.Random,
    counts: TopicCounts,
    room: list[int] | None,
) -> list[list[int]]:
    """The scan on a cluster of several racks: each choice is the least key over the eligible
    brokers, the key the heaps order by, so both engines find the same broker."""
    replication_factor = spec.replication_factor
    ids = layout.ids
    fenced = layout.fenced
    rack_of = layout.rack_of
    members = layout.members
    rack_weight = layout.rack_weight
    rack_indexes = range(len(members))
    other_racks = layout.other_racks
    leaders = counts.leaders
    replicas = counts.replicas
    tie_leaders = counts.tie_leaders
    tie_replicas = counts.tie_replicas
    rack_leaders = _rack_sums(leaders, members)
    rack_replicas = _rack_sums(replicas, members)
    rack_tie_replicas = _rack_sums(tie_replicas, members)
    if room is None:
        # Without budgets these never change: the layout's own lists serve, uncopied.
        rack_open = layout.rack_sizes
        rack_open_unfenced = layout.unfenced_per_rack
    else:
        rack_open = [sum(room[index] > 0 for index in rack) for rack in members]
        rack_open_unfenced = [
            sum(room[index] > 0 and not fenced[index] for index in rack) for rack in members
        ]
    # Without budgets, the brokers that may lead and the racks that can take a follower are the
    # layout's own, so neither needs filtering.
    every_broker_leads = room is None and layout.all_unfenced
    every_rack_leads = room is None and layout.every_rack_unfenced
    leader_candidates = layout.unfenced
    unfenced_count = layout.unfenced_count
    # The random orders, redrawn after every round of as many partitions as unfenced brokers.
    rank = _random_ranks(len(ids), rng)
    rack_rank = _random_ranks(len(members), rng)
    since_shuffle = 0
    # Each rack's leaders per unfenced broker, the leader's second rule; only the rack that
    # gains a leader changes.
    loads = [count / weight for count, weight in zip(rack_leaders, rack_weight, strict=True)]
    placed: list[list[int]] = []
    first = spec.start_partition
    for partition in range(first, first + spec.partition_count):
        if unfenced_count > 1 and since_shuffle == unfenced_count:
            rank = _random_ranks(len(ids), rng)
            rack_rank = _random_ranks(len(members), rng)
            since_shuffle = 0
        since_shuffle += 1
        if room is not None:
            leader_candidates = [index for index in layout.unfenced if room[index] > 0]
        if not leader_candidates:
            raise NoCandidateError(partition, replication_factor, 0, leader=True)
        if every_broker_leads:
            # Every broker is a candidate: the same keys, built by zip in C.
            leader = min(
                zip(
                    leaders,
                    map(loads.__getitem__, rack_of),
                    replicas,
                    tie_leaders,
                    rank,
                    range(len(ids)),
                    strict=True,
                )
            )[-1]
        else:
            leader = min(
                (leaders[i], loads[rack_of[i]], replicas[i], tie_leaders[i], rank[i], i)
                for i in leader_candidates
            )[-1]
        leaders[leader] += 1
        tie_leaders[leader] += 1
        leader_rack = rack_of[leader]
        rack_leaders[leader_rack] += 1
        loads[leader_rack] = rack_leaders[leader_rack] / rack_weight[leader_rack]
        chosen = [leader]
        if replication_factor > 1:
            # The first lap: a rack not used yet always comes before a used one, and such a
            # rack's level (unable to offer an unfenced broker, or not) cannot change until it
            # is used, so the racks of the first lap are known at once, in order. No rack's
            # standing order moves while the partition is placed: the leader has been counted
            # already, the followers are counted after.
            if every_rack_leads:
                others = other_racks[leader_rack]
                if len(others) == 2:
                    # Three racks, the commonest case: one comparison, not a sort.
                    first_rack, second_rack = others
                    first_weight = rack_weight[first_rack]
                    second_weight = rack_weight[second_rack]
                    if (
                        rack_replicas[first_rack] / first_weight,
                        -rack_leaders[first_rack] / first_weight,
                        rack_tie_replicas[first_rack] / first_weight,
                        rack_rank[first_rack],
                    ) > (
                        rack_replicas[second_rack] / second_weight,
                        -rack_leaders[second_rack] / second_weight,
                        rack_tie_replicas[second_rack] / second_weight,
                        rack_rank[second_rack],
                    ):
                        first_rack, second_rack = second_rack, first_rack
                    lap = [first_rack, second_rack]
                else:
                    lap = [
                        key[-1]
                        for key in sorted(
                            [
                                (
                                    rack_replicas[rack] / rack_weight[rack],
                                    -rack_leaders[rack] / rack_weight[rack],
                                    rack_tie_replicas[rack] / rack_weight[rack],
                                    rack_rank[rack],
                                    rack,
                                )
                                for rack in others
                            ]
                        )
                    ]
            else:
                orders = _rack_orders(
                    rack_replicas, rack_leaders, rack_tie_replicas, rack_weight, rack_rank
                )
                lap = [
                    rack
                    for _, _, rack in sorted(
                        (rack_open_unfenced[rack] <= 0, orders[rack], rack)
                        for rack in rack_indexes
                        if rack != leader_rack and rack_open[rack] > 0
                    )
                ]
            for rack in lap[: replication_factor - 1]:
                # Nobody in this rack is chosen yet, and it has a broker with room.
                if room is None:
                    follower = min(
                        (fenced[i], replicas[i], -leaders[i], tie_replicas[i], rank[i], i)
                        for i in members[rack]
                    )[-1]
                else:
                    follower = min(
                        (fenced[i], replicas[i], -leaders[i], tie_replicas[i], rank[i], i)
                        for i in members[rack]
                        if room[i] > 0
                    )[-1]
                chosen.append(follower)
            if len(chosen) < replication_factor:
                # More replicas than racks offer in one lap: rack spread by level, then order.
                orders = _rack_orders(
                    rack_replicas, rack_leaders, rack_tie_replicas, rack_weight, rack_rank
                )
                presence = [0] * len(members)
                presence_unfenced = [0] * len(members)
                for index in chosen:
                    presence[rack_of[index]] += 1
                    if not fenced[index]:
                        presence_unfenced[rack_of[index]] += 1
                while len(chosen) < replication_factor:
                    best_rack = min(
                        (
                            (
                                2 * presence[rack]
                                + (rack_open_unfenced[rack] <= presence_unfenced[rack]),
                                orders[rack],
                                rack,
                            )
                            for rack in rack_indexes
                            if rack_open[rack] > presence[rack]
                        ),
                        default=None,
                    )
                    if best_rack is None:
                        raise NoCandidateError(
                            partition, replication_factor, len(chosen), leader=False
                        )
                    rack = best_rack[-1]
                    # Non-empty: the rack has more brokers with room than this partition took.
                    follower = min(
                        (fenced[i], replicas[i], -leaders[i], tie_replicas[i], rank[i], i)
                        for i in members[rack]
                        if i not in chosen and (room is None or room[i] > 0)
                    )[-1]
                    chosen.append(follower)
                    presence[rack] += 1
                    if not fenced[follower]:
                        presence_unfenced[rack] += 1
        for index in chosen:
            rack = rack_of[index]
            replicas[index] += 1
            tie_replicas[index] += 1
            rack_replicas[rack] += 1
            rack_tie_replicas[rack] += 1
            if room is not None:
                room[index] -= 1
                if room[index] == 0:
                    rack_open[rack] -= 1
                    if not fenced[index]:
                        rack_open_unfenced[rack] -= 1
        placed.append([ids[index] for index in chosen])
    return placed


def _rack_orders(
    rack_replicas: list[int],
    rack_leaders: list[int],
    rack_tie_replicas: list[int],
    rack_weight: list[float],
    rack_rank: list[int],
) -> list[tuple[float, float, float, int]]:
    """Every rack's standing order for followers, as :meth:`HeapStripe._follow_order`."""
    return [
        (replica_count / weight, -leader_count / weight, tie_count / weight, rank)
        for replica_count, leader_count, tie_count, weight, rank in zip(
            rack_replicas, rack_leaders, rack_tie_replicas, rack_weight, rack_rank, strict=True
        )
    ]


class HeapStripe:
    """The heaps' engine: state for one ``place`` call of many partitions on a large cluster.

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
        "_unfenced",
        "_unfenced_count",
    )

    def __init__(
        self,
        layout: BrokerLayout,
        rng: random.Random,
        leaders: list[int],
        replicas: list[int],
        room: list[int] | None,
        tie_leaders: list[int],
        tie_replicas: list[int],
    ) -> None:
        """Counts are lists by layout index, which the stripe takes over and changes.

        ``leaders`` and ``replicas`` are the counts to balance; ``tie_leaders`` and
        ``tie_replicas`` (usually cluster-wide counts) only break ties between brokers that
        those leave equal, ahead of the random order. ``room`` None means no budget.
        """
        self._rng = rng
        self._ids = layout.ids
        self._fenced = layout.fenced
        self._unfenced = layout.unfenced
        self._unfenced_count = layout.unfenced_count
        self._rack_of = layout.rack_of
        self._members = layout.members
        self._rack_weight = layout.rack_weight
        self._leaders = leaders
        self._replicas = replicas
        self._tie_leaders = tie_leaders
        self._tie_replicas = tie_replicas
        self._room = room
        members = layout.members
        self._rack_leaders = _rack_sums(leaders, members)
        self._rack_replicas = _rack_sums(replicas, members)
        self._rack_tie_replicas = _rack_sums(tie_replicas, members)
        if room is None:
            # Without budgets these never change: the layout's own lists serve, uncopied.
            self._rack_open = layout.rack_sizes
            self._rack_open_unfenced = layout.unfenced_per_rack
        else:
            fenced = layout.fenced
            self._rack_open = [sum(room[index] > 0 for index in rack) for rack in members]
            self._rack_open_unfenced = [
                sum(room[index] > 0 and not fenced[index] for index in rack) for rack in members
            ]
        # Filled in by _reshuffle, which also draws the rack order they end with.
        self._rank: list[int] = []
        self._rack_rank: list[int] = []
        self._rack_follow_order: list[tuple[float, float, float, int]] = []
        """Each rack's _follow_order, kept up to date while the heaps are in use."""
        self._lead_heaps: list[list[tuple[int, int, int, int, int]]] = []
        self._follow_heaps: list[list[tuple[bool, int, int, int, int, int]]] = []
        self._since_shuffle = 0
        self._reshuffle()

    def place_many(self, spec: PlacementSpec) -> list[list[int]]:
        return [
            self._place_one(spec.start_partition + offset, spec.replication_factor)
            for offset in range(spec.partition_count)
        ]

    def _place_one(self, partition: int, replication_factor: int) -> list[int]:
        """Choose one partition's replicas, leader first, and count them."""
        if self._unfenced_count > 1 and self._since_shuffle == self._unfenced_count:
            self._reshuffle()
        self._since_shuffle += 1
        leader = self._choose_leader_from_heaps()
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
            rack = self._choose_follower_rack(presence, presence_unfenced)
            follower = None if rack is None else self._choose_follower_from_heap(rack, chosen)
            if follower is None:
                raise NoCandidateError(partition, replication_factor, len(chosen), leader=False)
            chosen.append(follower)
            rack = self._rack_of[follower]
            presence[rack] += 1
            if not self._fenced[follower]:
                presence_unfenced[rack] += 1
        self._count(chosen)
        ids = self._ids
        return [ids[index] for index in chosen]

    def _reshuffle(self) -> None:
        self._rank = _random_ranks(len(self._ids), self._rng)
        self._rack_rank = _random_ranks(len(self._members), self._rng)
        self._since_shuffle = 0
        self._fill_heaps()

    def _fill_heaps(self) -> None:
        self._rack_follow_order = [self._follow_order(rack) for rack in range(len(self._members))]
        self._lead_heaps = [[] for _ in self._members]
        self._follow_heaps = [[] for _ in self._members]
        for index in range(len(self._ids)):
            self._push(index)

    def _push(self, index: int) -> None:
        if self._room is not None and self._room[index] <= 0:
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

    def _follow_order(self, rack: int) -> tuple[float, float, float, int]:
        weight = self._rack_weight[rack]
        # Among racks equally full, prefer the one that has already led more: its brokers have
        # had their leader replicas, while the others will get theirs soon.
        return (
            self._rack_replicas[rack] / weight,
            -self._rack_leaders[rack] / weight,
            self._rack_tie_replicas[rack] / weight,
            self._rack_rank[rack],
        )

    def _choose_leader_from_heaps(self) -> int | None:
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
                        self._rack_leaders[rack] / self._rack_weight[rack],
                        replica_count,
                        tie_leaders,
                        rank,
                    )
                    if best_key is None or key < best_key:
                        best_index, best_key = index, key
                    break
                heapq.heappop(heap)
        return best_index

    def _choose_follower_rack(
        self, presence: list[int], presence_unfenced: list[int]
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
        if len(candidates) == 1:
            return candidates[0]
        return min(candidates, key=self._rack_follow_order.__getitem__)

    def _choose_follower_from_heap(self, rack: int, chosen: list[int]) -> int | None:
        heap = self._follow_heaps[rack]
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
        self._rack_follow_order[rack] = self._follow_order(rack)

    def _count(self, chosen: list[int]) -> None:
        room = self._room
        for index in chosen:
            rack = self._rack_of[index]
            self._replicas[index] += 1
            self._tie_replicas[index] += 1
            self._rack_replicas[rack] += 1
            self._rack_tie_replicas[rack] += 1
            if room is not None:
                room[index] -= 1
                if room[index] == 0:
                    self._rack_open[rack] -= 1
                    if not self._fenced[index]:
                        self._rack_open_unfenced[rack] -= 1
            self._rack_follow_order[rack] = self._follow_order(rack)
            self._push(index)


def _rack_sums(counts: list[int], members: list[list[int]]) -> list[int]:
    """Each rack's total of ``counts``; in C, as this runs for every placement call."""
    if len(members) == 1:
        return [sum(counts)]
    if not any(counts):
        # A new topic's own counts: nothing to add up.
        return [0] * len(members)
    return [sum(map(counts.__getitem__, rack)) for rack in members]


def _random_ranks(count: int, rng: random.Random) -> list[int]:
    """Each index's place in a random order: ``rng.shuffle`` of the indexes, inverted."""
    order = list(range(count))
    if count > 1:
        # Shuffling one item draws nothing, so skipping it leaves the random state as it was.
        rng.shuffle(order)
    # The inverse permutation, sorted in C.
    return sorted(range(count), key=order.__getitem__)
