"""Rack-striped placement: Kafka's algorithm as it ships, and raftmeta's default.

Both keep the priorities of Kafka's controller (reference §4.2): spread each partition over as
many racks as possible, then spread replicas over brokers, then use fenced brokers only when
nothing else will do, and never make a fenced broker the leader.

:class:`KafkaStripedReplicaPlacer` follows Kafka's cursors step by step, as the version our
reference describes them. It is kept so the benchmark can show what the default changes, and so
that version's two known weaknesses stay reproducible: leaders are spread evenly over racks but
can pile up on one broker per rack (KAFKA-15354), and every call starts from a random point, so
CreatePartitions ignores the layout it extends (KAFKA-14437).

:class:`StripedReplicaPlacer`, the default, reaches the same stripe by counting instead of by
cursor position: each leader goes to an unfenced broker with the fewest leaders, each follower to
the least-filled rack the partition does not use yet and, in it, the broker with the fewest
replicas. Counting per broker fixes the first weakness; seeding the counts from the topic's
existing assignment fixes the second.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from placement import _config
from placement._balance import TopicCounts, place_balanced
from placement._layout import LayoutCache, rack_order_key
from placement.api import ClusterDescriber, ClusterView, PlacementSpec, UsableBroker
from placement.checks import check_replication_factor, distinct_brokers

SEED_KEY = "replica.placer.random.seed"
"""Seeds the random source of the built-in placers, for clusters that must place reproducibly."""


class _BrokerCursor:
    """One rack's fenced or unfenced brokers, each handed out at most once per partition.

    The cursor's start moves on by one each time a new partition first draws from it, which is
    what rotates the broker chosen in a rack from one partition to the next.
    """

    __slots__ = ("_brokers", "_drawn", "_epoch", "_start")

    def __init__(self, brokers: list[int], rng: random.Random) -> None:
        self._brokers = sorted(brokers)
        self._start = rng.randrange(len(brokers)) if brokers else 0
        self._epoch = 0
        self._drawn = 0

    def draw(self, epoch: int) -> int | None:
        size = len(self._brokers)
        if size == 0:
            return None
        if epoch != self._epoch:
            self._epoch = epoch
            self._drawn = 0
            self._start = (self._start + 1) % size
        if self._drawn >= size:
            return None
        broker = self._brokers[(self._start + self._drawn) % size]
        self._drawn += 1
        return broker

    def shuffle(self, rng: random.Random) -> None:
        rng.shuffle(self._brokers)


class _KafkaRack:
    __slots__ = ("fenced", "unfenced")

    def __init__(self, unfenced: list[int], fenced: list[int], rng: random.Random) -> None:
        self.unfenced = _BrokerCursor(unfenced, rng)
        self.fenced = _BrokerCursor(fenced, rng)

    def draw(self, epoch: int) -> int | None:
        broker = self.unfenced.draw(epoch)
        return broker if broker is not None else self.fenced.draw(epoch)


class _KafkaStripe:
    """The state of one ``place`` call of Kafka's algorithm; rebuilt on every call."""

    __slots__ = ("_epoch", "_next_rack", "_racks", "_rng", "_since_shuffle", "_unfenced_count")

    def __init__(self, brokers: Sequence[UsableBroker], rng: random.Random) -> None:
        self._rng = rng
        members: dict[str | None, tuple[list[int], list[int]]] = {}
        for broker in brokers:
            unfenced, fenced = members.setdefault(broker.rack, ([], []))
            (fenced if broker.fenced else unfenced).append(broker.id)
        self._racks = [
            _KafkaRack(*members[name], rng) for name in sorted(members, key=rack_order_key)
        ]
        self._next_rack = rng.randrange(len(self._racks)) if self._racks else 0
        self._unfenced_count = sum(not broker.fenced for broker in brokers)
        # Kafka resets its epoch to 0 on every reshuffle; a counter that only grows gives every
        # partition a fresh epoch without the stale-epoch corner that the reset allows.
        self._epoch = 0
        self._since_shuffle = 0

    def place(self, replication_factor: int) -> list[int]:
        if self._since_shuffle == self._unfenced_count and self._unfenced_count > 1:
            self._rng.shuffle(self._racks)
            for rack in self._racks:
                rack.unfenced.shuffle(self._rng)
                rack.fenced.shuffle(self._rng)
            self._since_shuffle = 0
        rack_count = len(self._racks)
        epoch = self._epoch
        # The leader: the first rack from the stripe position that has an unfenced broker left.
        leader_rack = self._next_rack
        while True:
            leader = self._racks[leader_rack].unfenced.draw(epoch)
            if leader is not None:
                break
            leader_rack = (leader_rack + 1) % rack_count
        replicas = [leader]
        # Followers: round-robin from the stripe position, passing the leader's rack once so the
        # first lap gives every other rack a replica before any rack gets a second.
        rack_index = self._next_rack
        skip_rack: int | None = leader_rack
        while len(replicas) < replication_factor:
            broker: int | None = None
            if rack_index == skip_rack:
                skip_rack = None
            else:
                broker = self._racks[rack_index].draw(epoch)
            rack_index = (rack_index + 1) % rack_count
            if broker is not None:
                replicas.append(broker)
        self._epoch += 1
        self._since_shuffle += 1
        self._next_rack = (self._next_rack + 1) % rack_count
        return replicas


class KafkaStripedReplicaPlacer:
    """Kafka's StripedReplicaPlacer, weaknesses included; compare against, don't deploy.

    Only ``usable_brokers()`` is read: like Kafka's, it knows nothing of existing partitions.
    """

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng if rng is not None else random.Random()

    def configure(self, config: Mapping[str, str]) -> None:
        seed = _config.optional_int(config, SEED_KEY)
        if seed is not None:
            self._rng.seed(seed)

    def place(self, spec: PlacementSpec, cluster: ClusterDescriber) -> list[list[int]]:
        brokers = distinct_brokers(cluster.usable_brokers())
        check_replication_factor(spec.replication_factor, brokers)
        stripe = _KafkaStripe(brokers, self._rng)
        return [stripe.place(spec.replication_factor) for _ in range(spec.partition_count)]


class StripedReplicaPlacer:
    """The default placer: Kafka's stripe, with leaders balanced per broker and continuation.

    Within the topic, after every partition: leaders per unfenced broker differ by at most one;
    each partition spans min(RF, racks) racks; followers go to the emptiest broker of the
    least-used rack. CreatePartitions starts from the counts of the partitions that already
    exist, so the whole topic ends up as even as if it had been created at once.

    Ties are broken first by the cluster-wide counts (``leader_count``/``replica_count``), so
    that many small topics, each even on its own, also add up to an even cluster; then by a
    random order drawn from the injected source and redrawn after every round of as many
    partitions as there are unfenced brokers, so that large topics do not repeat the same replica
    sets (Kafka reshuffles for the same reason). Same seed, same view: same answer.

    Cost: a pass over the racks and a few heap operations per partition (a pass over the
    brokers on small clusters), plus one pass over the topic's existing partitions per call.
    What depends only on the broker set is kept between calls until the set changes.
    """

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng if rng is not None else random.Random()
        self._layouts = LayoutCache()

    def configure(self, config: Mapping[str, str]) -> None:
        seed = _config.optional_int(config, SEED_KEY)
        if seed is not None:
            self._rng.seed(seed)

    def place(self, spec: PlacementSpec, cluster: ClusterView) -> list[list[int]]:
        layout = self._layouts.layout(cluster.usable_brokers())
        layout.check_replication_factor(spec.replication_factor)
        counts = TopicCounts.of_topic(layout, cluster.existing_assignment(), cluster)
        return place_balanced(layout, spec, self._rng, counts)
