"""Which ISRs a partition leader should widen again: the leader's half of ISR management.

In Kafka a partition leader adds a follower back to the ISR (AlterPartition) once the follower
has fetched up to the leader's log end, and, after an unclean election, marks the partition
RECOVERED once its own log is consistent. An embedded broker replicates no data: a replica is
caught up as soon as its broker is registered, unfenced and not shutting down, and a recovering
leader has nothing to recover. Without this step a broker that restarts stays out of every ISR
for good, and no preferred election can ever give its leaderships back.

A replica a reassignment is adding is the exception: it has never held the partition, so it
joins the ISR only once it is said to have caught up (:mod:`raftmeta.broker.catch_up`), and the
expansion that brings the last one in is the one that completes the move.

Pure: reads the image, returns the changes to propose; ``RefusedAsStale`` remembers which of
them the controller refused as made from old metadata, so they wait for newer metadata.
"""

from __future__ import annotations

from collections.abc import Callable

from raftmeta.common.brokers import IsrMember, PartitionIsrChange
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage, PartitionKey
from raftmeta.records import LeaderRecoveryState, TopicId

WAIT_FOR_NEW_METADATA: frozenset[ErrorCode] = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.FENCED_LEADER_EPOCH,
        ErrorCode.INVALID_UPDATE_VERSION,
        ErrorCode.INVALID_REQUEST,
    }
)
"""AlterPartition errors that say the proposal was built from metadata the controller has moved
past (the topic deleted, another leader or leader epoch, a newer partition epoch) or that it
does not fit the partition as the controller knows it. Sending it again cannot succeed; only
newer metadata for the partition can make a proposal worth sending, as Kafka's partition
leaders wait for it. Other errors (NOT_CONTROLLER, a timeout, INELIGIBLE_REPLICA for a member
whose registration changes) are worth a retry."""


CaughtUp = Callable[[PartitionKey, int], bool]
"""Whether an adding replica (partition, broker id) has caught up with the leader's log."""


def _never(_partition: PartitionKey, _replica: int) -> bool:
    return False


def isr_expansions(
    image: MetadataImage, broker_id: int, caught_up: CaughtUp = _never
) -> dict[TopicId, list[PartitionIsrChange]]:
    """For each partition ``broker_id`` leads whose ISR lacks a live replica, or which is still
    RECOVERING, the AlterPartition change that fixes it, grouped by topic. A replica being
    added by a reassignment counts only once ``caught_up`` says so."""
    changes: dict[TopicId, list[PartitionIsrChange]] = {}
    for topic_id, partition_id in sorted(image.partitions_with_isr_member(broker_id)):
        partition = image.partition(topic_id, partition_id)
        if partition is None or partition.leader != broker_id:
            continue
        adding = partition.adding_replicas
        missing = [
            replica
            for replica in partition.replicas
            if replica not in partition.isr
            and _is_live(image, replica)
            and (replica not in adding or caught_up((topic_id, partition_id), replica))
        ]
        recovering = partition.leader_recovery_state == LeaderRecoveryState.RECOVERING
        if not missing and not recovering:
            continue
        members = [*partition.isr, *missing]
        changes.setdefault(topic_id, []).append(
            PartitionIsrChange(
                partition_id=partition_id,
                leader_epoch=partition.leader_epoch,
                new_isr=tuple(IsrMember(member, _epoch_of(image, member)) for member in members),
                partition_epoch=partition.partition_epoch,
                leader_recovery_state=int(LeaderRecoveryState.RECOVERED),
            )
        )
    return changes


class RefusedAsStale:
    """The partitions whose ISR change the controller refused with a ``WAIT_FOR_NEW_METADATA``
    error, and the (leader epoch, partition epoch) each proposal was made at.

    While the image still holds a partition at those epochs, nothing new is known about it, so
    no change is proposed for it, whatever else the image learns meanwhile (a replica's new
    broker epoch, another replica coming back): a broker whose metadata lags would otherwise
    resend a refused proposal at every step of its catch-up. Once the image shows newer epochs
    for the partition, or no longer holds it (its topic deleted), the entry goes.
    """

    __slots__ = ("_epochs",)

    def __init__(self) -> None:
        self._epochs: dict[tuple[TopicId, int], tuple[int, int]] = {}

    def __len__(self) -> int:
        return len(self._epochs)

    def note(self, topic_id: TopicId, change: PartitionIsrChange) -> None:
        """``change`` was refused as stale: hold its partition until newer metadata."""
        self._epochs[(topic_id, change.partition_id)] = (
            change.leader_epoch,
            change.partition_epoch,
        )

    def holds(self, topic_id: TopicId, change: PartitionIsrChange) -> bool:
        """Whether ``change`` is made at epochs a proposal was already refused at."""
        refused = self._epochs.get((topic_id, change.partition_id))
        return refused == (change.leader_epoch, change.partition_epoch)

    def forget_moved(self, image: MetadataImage) -> None:
        """Drop the partitions ``image`` holds at newer epochs, or no longer holds."""
        for key, epochs in list(self._epochs.items()):
            partition = image.partition(*key)
            if partition is None or (partition.leader_epoch, partition.partition_epoch) != epochs:
                del self._epochs[key]


def _is_live(image: MetadataImage, broker_id: int) -> bool:
    registration = image.broker(broker_id)
    return registration is not None and registration.is_active


def _epoch_of(image: MetadataImage, broker_id: int) -> int:
    registration = image.broker(broker_id)
    return -1 if registration is None else registration.broker_epoch
