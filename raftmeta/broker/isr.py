"""Which ISRs a partition leader should widen again: the leader's half of ISR management.

In Kafka a partition leader adds a follower back to the ISR (AlterPartition) once the follower
has fetched up to the leader's log end, and, after an unclean election, marks the partition
RECOVERED once its own log is consistent. An embedded broker replicates no data: a replica is
caught up as soon as its broker is registered, unfenced and not shutting down, and a recovering
leader has nothing to recover. Without this step a broker that restarts stays out of every ISR
for good, and no preferred election can ever give its leaderships back.

Pure: reads the image, returns the changes to propose.
"""

from __future__ import annotations

from raftmeta.common.brokers import IsrMember, PartitionIsrChange
from raftmeta.image import MetadataImage
from raftmeta.records import LeaderRecoveryState, TopicId


def isr_expansions(image: MetadataImage, broker_id: int) -> dict[TopicId, list[PartitionIsrChange]]:
    """For each partition ``broker_id`` leads whose ISR lacks a live replica, or which is still
    RECOVERING, the AlterPartition change that fixes it, grouped by topic."""
    changes: dict[TopicId, list[PartitionIsrChange]] = {}
    for topic_id, partition_id in sorted(image.partitions_with_isr_member(broker_id)):
        partition = image.partition(topic_id, partition_id)
        if partition is None or partition.leader != broker_id:
            continue
        missing = [
            replica
            for replica in partition.replicas
            if replica not in partition.isr and _is_live(image, replica)
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


def _is_live(image: MetadataImage, broker_id: int) -> bool:
    registration = image.broker(broker_id)
    return registration is not None and registration.is_active


def _epoch_of(image: MetadataImage, broker_id: int) -> int:
    registration = image.broker(broker_id)
    return -1 if registration is None else registration.broker_epoch
