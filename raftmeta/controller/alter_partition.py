"""AlterPartition: a partition leader asks to change its ISR (reference §2.7).

The checks run in Kafka's order, because the first failing one decides the code the leader
acts on: NOT_CONTROLLER makes it retry elsewhere, FENCED_LEADER_EPOCH and
INVALID_UPDATE_VERSION make it wait for newer metadata, INELIGIBLE_REPLICA makes it drop the
replica from its proposal.
"""

from __future__ import annotations

import dataclasses

from elections import ElrSettings, active_brokers, choose_leader, effective_min_isr
from raftmeta.common.brokers import PartitionIsrChange
from raftmeta.common.elections import ElectionType
from raftmeta.common.features import elr_enabled
from raftmeta.common.items import ItemError
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage, PartitionRegistration
from raftmeta.records import (
    LEADER_RECOVERY_UNCHANGED,
    LeaderRecoveryState,
    PartitionChangeRecord,
    TopicId,
)


def check_isr_change(
    image: MetadataImage,
    sender: int,
    topic_id: TopicId,
    change: PartitionIsrChange,
    *,
    min_isr_default: int = 1,
) -> tuple[ItemError, PartitionChangeRecord | None]:
    """The error for one partition, or NONE with the record to write (``None``: no change).

    With eligible leader replicas on, the record also keeps the ELR (KIP-966): members the
    ISR sheds while below ``min.insync.replicas`` join it, members it takes back leave it, and
    it empties once the ISR is back at min ISR (``min_isr_default``: the static config).
    """
    partition_id = change.partition_id
    current = image.partition(topic_id, partition_id)
    if current is None:
        return ItemError(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            f"Partition {partition_id} of topic id {topic_id.hex()} does not exist.",
        ), None
    if (
        change.leader_epoch > current.leader_epoch
        or change.partition_epoch > current.partition_epoch
    ):
        return ItemError(
            ErrorCode.NOT_CONTROLLER,
            f"The request's epochs (leader {change.leader_epoch}, partition "
            f"{change.partition_epoch}) are ahead of this controller's (leader "
            f"{current.leader_epoch}, partition {current.partition_epoch}).",
        ), None
    if change.leader_epoch < current.leader_epoch:
        return ItemError(
            ErrorCode.FENCED_LEADER_EPOCH,
            f"Leader epoch {change.leader_epoch} is older than the current {current.leader_epoch}.",
        ), None
    if sender != current.leader:
        return ItemError(
            ErrorCode.INVALID_REQUEST,
            f"Broker {sender} is not the leader of partition {partition_id}; "
            f"broker {current.leader} is.",
        ), None
    if change.partition_epoch < current.partition_epoch:
        return ItemError(
            ErrorCode.INVALID_UPDATE_VERSION,
            f"Partition epoch {change.partition_epoch} is older than the current "
            f"{current.partition_epoch}.",
        ), None
    new_isr = tuple(member.broker_id for member in change.new_isr)
    shape_error = _check_shape(current, new_isr, change.leader_recovery_state)
    if shape_error is not None:
        return ItemError(ErrorCode.INVALID_REQUEST, shape_error), None
    ineligible = [
        member.broker_id
        for member in change.new_isr
        if not _eligible(image, member.broker_id, member.broker_epoch)
    ]
    if ineligible:
        return ItemError(
            ErrorCode.INELIGIBLE_REPLICA,
            f"The new ISR of partition {partition_id} has ineligible replicas {ineligible}: "
            "not registered, fenced, in controlled shutdown, or at another broker epoch.",
        ), None
    isr_changed = new_isr != current.isr
    recovery_changed = change.leader_recovery_state != current.leader_recovery_state
    if not isr_changed and not recovery_changed:
        return ItemError(), None
    record = PartitionChangeRecord(
        partition_id=partition_id,
        topic_id=topic_id,
        isr=new_isr if isr_changed else None,
        leader_recovery_state=(
            change.leader_recovery_state if recovery_changed else LEADER_RECOVERY_UNCHANGED
        ),
    )
    if isr_changed and elr_enabled(image.features):
        record = _with_elr(image, topic_id, current, new_isr, record, min_isr_default)
    return ItemError(), record


def _with_elr(
    image: MetadataImage,
    topic_id: TopicId,
    current: PartitionRegistration,
    new_isr: tuple[int, ...],
    record: PartitionChangeRecord,
    min_isr_default: int,
) -> PartitionChangeRecord:
    """``record`` with the ELR fields the leader-choice rules give for the new ISR; the leader
    is in it (checked above), so no election happens and only the two lists can change."""
    topic = image.topic(topic_id)
    min_isr = effective_min_isr(image, "" if topic is None else topic.name, min_isr_default)
    upkeep = choose_leader(
        current,
        ElectionType.ONLINE,
        active_brokers(image),
        target_isr=new_isr,
        elr=ElrSettings(min_isr),
    )
    if upkeep is None:
        return record
    return dataclasses.replace(
        record, eligible_leader_replicas=upkeep.elr, last_known_elr=upkeep.last_known_elr
    )


def _check_shape(
    current: PartitionRegistration, new_isr: tuple[int, ...], recovery_state: int
) -> str | None:
    if len(set(new_isr)) != len(new_isr):
        return f"The new ISR {list(new_isr)} lists a broker more than once."
    if not set(new_isr) <= set(current.replicas):
        return (
            f"The new ISR {list(new_isr)} is not a subset of the replicas {list(current.replicas)}."
        )
    if current.leader not in new_isr:
        return f"The new ISR {list(new_isr)} does not include the leader {current.leader}."
    if recovery_state not in (LeaderRecoveryState.RECOVERED, LeaderRecoveryState.RECOVERING):
        return f"Unknown leader recovery state {recovery_state}."
    if (
        recovery_state == LeaderRecoveryState.RECOVERING
        and current.leader_recovery_state == LeaderRecoveryState.RECOVERED
    ):
        return "A recovered partition cannot go back to RECOVERING."
    if recovery_state == LeaderRecoveryState.RECOVERING and len(new_isr) > 1:
        return "A partition still recovering may only have its leader in the ISR."
    return None


def _eligible(image: MetadataImage, broker_id: int, broker_epoch: int) -> bool:
    registration = image.broker(broker_id)
    return (
        registration is not None
        and registration.is_active
        and (broker_epoch == -1 or broker_epoch == registration.broker_epoch)
    )
