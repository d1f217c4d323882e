"""Which adding replicas of a partition move have caught up with their leader.

In Kafka a replica a reassignment adds joins the ISR once it has fetched the leader's log up to
its end; the leader sees that and reports the ISR expansion (AlterPartition), and the move
completes when the last target replica is in. An embedded broker holds no data, so the process
that embeds it says when a replica has caught up (:meth:`CatchUp.mark`, through
:meth:`raftmeta.broker.Broker.mark_replica_caught_up`); a broker given a delay (the stand-in
``raftmeta broker`` process, ``replica.catch.up.delay.ms``) marks every adding replica itself
once it has seen it live for that long.

A mark lasts while the replica is being added and its broker is live: a replica whose broker is
fenced or gone must catch up again once it is back, as a Kafka follower that restarted must.
"""

from __future__ import annotations

from raftmeta.image import MetadataImage, PartitionKey

ReplicaKey = tuple[PartitionKey, int]
"""(partition, replica broker id)."""


class CatchUp:
    """The adding replicas marked caught up, and (with a delay) when each was first seen live.

    ``version`` moves whenever a mark is added or dropped, so the ISR keeper knows to look
    again even when the image has not changed."""

    __slots__ = ("_first_seen", "_marked", "delay_ms", "version")

    def __init__(self, delay_ms: int | None = None) -> None:
        self.delay_ms = delay_ms
        """None: only :meth:`mark` says a replica caught up."""
        self._marked: set[ReplicaKey] = set()
        self._first_seen: dict[ReplicaKey, int] = {}
        self.version = 0

    def mark(self, partition: PartitionKey, replica: int) -> None:
        """``replica`` of ``partition`` has caught up with the leader's log."""
        key = (partition, replica)
        if key not in self._marked:
            self._marked.add(key)
            self.version += 1

    def is_caught_up(self, partition: PartitionKey, replica: int) -> bool:
        return (partition, replica) in self._marked

    def observe(self, image: MetadataImage, broker_id: int, now_ms: int) -> int | None:
        """Drop marks (and first sightings) of replicas no longer added or no longer live;
        with a delay, note the live adding replicas of the partitions ``broker_id`` leads and
        mark those seen for the delay. Returns the milliseconds until the next one is due
        (None: none pending)."""
        for key in [k for k in self._marked if not _adding_and_live(image, *k)]:
            self._marked.discard(key)
            self.version += 1
        for key in [k for k in self._first_seen if not _adding_and_live(image, *k)]:
            del self._first_seen[key]
        delay = self.delay_ms
        if delay is None:
            return None
        next_due: int | None = None
        for partition_key in image.partitions_with_isr_member(broker_id):
            partition = image.partition(*partition_key)
            if partition is None or partition.leader != broker_id:
                continue
            for replica in partition.adding_replicas:
                key = (partition_key, replica)
                if key in self._marked or replica in partition.isr:
                    continue
                if not _live(image, replica):
                    continue
                seen = self._first_seen.setdefault(key, now_ms)
                wait = seen + delay - now_ms
                if wait <= 0:
                    del self._first_seen[key]
                    self.mark(partition_key, replica)
                elif next_due is None or wait < next_due:
                    next_due = wait
        return next_due


def _live(image: MetadataImage, broker_id: int) -> bool:
    registration = image.broker(broker_id)
    return registration is not None and registration.is_active


def _adding_and_live(image: MetadataImage, partition_key: PartitionKey, replica: int) -> bool:
    partition = image.partition(*partition_key)
    return partition is not None and replica in partition.adding_replicas and _live(image, replica)
