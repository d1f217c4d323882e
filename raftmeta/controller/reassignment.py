"""Partition reassignment (KIP-455): moving a partition's replicas to another broker list.

Kafka's controller runs a move in three steps, and so does this one:

1. AlterPartitionReassignments writes one PartitionChangeRecord per partition: the replicas
   become the target followed by the current replicas it drops (``removing``), and ``adding``
   lists the target's new brokers. The ISR is left alone, so nobody new leads yet: a replica
   joins the ISR only once its broker has caught up, and only ISR members are elected.
2. The partition leader's broker adds each caught-up adding replica to the ISR through
   AlterPartition (:mod:`raftmeta.broker.isr`).
3. The change that brings the last target replica into the ISR also completes the move, in
   the same record: the replicas become the target, the ISR keeps only target replicas,
   ``adding`` and ``removing`` are emptied, a leader being removed is replaced by the first
   target replica in the ISR whose broker may lead, and the leader epoch is bumped because
   replicas left. A leader whose own AlterPartition removed it hears NEW_LEADER_ELECTED.

A null target cancels: the replicas and ISR lose the adding replicas, and the partition is back
where it started. A new target while a move is under way starts again from the original
replicas (the current ones less those being added), as Kafka does. A fenced target broker
leaves the ISR like any other and the move waits for it; a deleted topic takes its moves with
it. The move lives only in the partition's own fields, so snapshots and controller failover
keep it as they keep the partition.

Pure functions of the image handed in, as every manager is; the queue stages and appends.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

from elections import (
    ElrSettings,
    active_brokers,
    choose_leader,
    effective_min_isr,
    unclean_election_enabled,
)
from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.common.features import elr_enabled
from raftmeta.common.items import OK, ItemError
from raftmeta.common.reassignments import (
    PartitionReassignment,
    ReassignmentResult,
    ReassignmentTarget,
)
from raftmeta.controller.result import ControllerResult
from raftmeta.controller.settings import ControllerSettings
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage, PartitionRegistration
from raftmeta.records import LEADER_UNCHANGED, PartitionChangeRecord, TopicId


def reassignment_of(partition: PartitionRegistration) -> PartitionReassignment | None:
    """The move under way on ``partition``, or None if it is not moving."""
    if not partition.adding_replicas and not partition.removing_replicas:
        return None
    return PartitionReassignment(
        partition.replicas, partition.adding_replicas, partition.removing_replicas
    )


class ReassignmentControlManager:
    """AlterPartitionReassignments and ListPartitionReassignments of the active controller."""

    def __init__(self, settings: ControllerSettings) -> None:
        self.settings = settings

    def alter_partition_reassignments(
        self,
        image: MetadataImage,
        targets: Sequence[ReassignmentTarget],
        allow_replication_factor_change: bool = True,
    ) -> Iterator[ControllerResult[ReassignmentResult]]:
        """One result per partition, in request order; each partition's record is staged
        before the next is judged, so a partition named twice sees its first change."""
        for target in targets:
            try:
                record = self._change(image, target, allow_replication_factor_change)
            except KafkaError as error:
                yield ControllerResult(
                    (), ReassignmentResult(target.partition, ItemError(error.code, error.message))
                )
                continue
            yield ControllerResult(
                () if record is None else (record,), ReassignmentResult(target.partition, OK)
            )

    def list_partition_reassignments(
        self, image: MetadataImage, partitions: Sequence[TopicPartition] | None
    ) -> ControllerResult[dict[TopicPartition, PartitionReassignment]]:
        """The moves under way among ``partitions`` (all of them for None), by partition in
        topic then partition order; unknown or idle partitions are left out, as in Kafka."""
        found: dict[TopicPartition, PartitionReassignment] = {}
        if partitions is None:
            for (topic_id, partition_id), registration in image.partitions():
                moving = reassignment_of(registration)
                topic = image.topic(topic_id)
                if moving is not None and topic is not None:
                    found[TopicPartition(topic.name, partition_id)] = moving
        else:
            for named in partitions:
                topic = image.topic_by_name(named.topic)
                named_one = None if topic is None else topic.partitions.get(named.partition)
                moving = None if named_one is None else reassignment_of(named_one)
                if moving is not None:
                    found[named] = moving
        return ControllerResult((), dict(sorted(found.items())))

    def _change(
        self, image: MetadataImage, target: ReassignmentTarget, allow_rf_change: bool
    ) -> PartitionChangeRecord | None:
        """The record that starts, redirects or cancels one partition's move (None: nothing
        to change); raises KafkaError with the partition's code."""
        named = target.partition
        topic = image.topic_by_name(named.topic)
        current = None if topic is None else topic.partitions.get(named.partition)
        if topic is None or current is None:
            raise KafkaError(
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                f"Unable to find partition {named}.",
            )
        if target.replicas is None:
            return self._cancel(image, topic.topic_id, named, current)
        replicas = target.replicas
        check_target(image, replicas)
        original, isr = self._reverted(image, named, current)
        if not allow_rf_change and len(replicas) != len(original):
            raise KafkaError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"The replication factor of partition {named} would change from "
                f"{len(original)} to {len(replicas)}, and the request does not allow it.",
            )
        removing = tuple(sorted(set(original) - set(replicas)))
        adding = tuple(sorted(set(replicas) - set(original)))
        return build_change(
            image,
            topic.topic_id,
            named.partition,
            current,
            replicas=(*replicas, *removing),
            isr=isr,
            adding=adding,
            removing=removing,
            elr=elr_settings(image, named.topic, self.settings.min_insync_replicas),
        )

    def _cancel(
        self,
        image: MetadataImage,
        topic_id: TopicId,
        named: TopicPartition,
        current: PartitionRegistration,
    ) -> PartitionChangeRecord | None:
        if reassignment_of(current) is None:
            raise KafkaError(
                ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
                f"Partition {named} has no ongoing reassignment.",
            )
        original, isr = self._reverted(image, named, current)
        return build_change(
            image,
            topic_id,
            named.partition,
            current,
            replicas=original,
            isr=isr,
            elr=elr_settings(image, named.topic, self.settings.min_insync_replicas),
        )

    def _reverted(
        self, image: MetadataImage, named: TopicPartition, current: PartitionRegistration
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The replicas and ISR the partition had before its move: less the adding replicas.

        An ISR of adding replicas only would leave no original replica in sync; the first
        original replica is then forced in, which loses data and so needs the topic's
        ``unclean.leader.election.enable``."""
        adding = set(current.adding_replicas)
        replicas = tuple(r for r in current.replicas if r not in adding)
        isr = tuple(r for r in current.isr if r not in adding)
        if not isr and replicas:
            if not unclean_election_enabled(
                image, named.topic, self.settings.unclean_leader_election_enable
            ):
                raise KafkaError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"Unable to revert partition assignment for {named} because it would "
                    "require an unclean leader election.",
                )
            isr = (replicas[0],)
        return replicas, isr


def elr_settings(image: MetadataImage, topic: str, min_isr_default: int) -> ElrSettings | None:
    """The KIP-966 settings for ``topic`` when the image has eligible leader replicas on."""
    if not elr_enabled(image.features):
        return None
    return ElrSettings(effective_min_isr(image, topic, min_isr_default))


def check_target(image: MetadataImage, replicas: Sequence[int]) -> None:
    """A target must be non-empty, name each broker once, and name registered brokers only
    (fenced ones are allowed: the move waits for them); INVALID_REPLICA_ASSIGNMENT else."""
    if not replicas:
        raise KafkaError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes an empty replica list.",
        )
    seen: set[int] = set()
    for broker_id in replicas:
        if broker_id in seen:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes the broker {broker_id} more than once.",
            )
        seen.add(broker_id)
        if image.broker(broker_id) is None:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes broker {broker_id}, but no such "
                "broker is registered.",
            )


def is_complete(replicas: Sequence[int], isr: Sequence[int], removing: Sequence[int]) -> bool:
    """Whether a move with these fields is done: every target replica (the replicas less
    those being removed) is in the ISR less those being removed, neither empty."""
    dropped = set(removing)
    target = {r for r in replicas if r not in dropped}
    in_sync = {r for r in isr if r not in dropped}
    return bool(target) and bool(in_sync) and target <= in_sync


def build_change(
    image: MetadataImage,
    topic_id: TopicId,
    partition_id: int,
    current: PartitionRegistration,
    *,
    replicas: tuple[int, ...],
    isr: tuple[int, ...],
    adding: tuple[int, ...] = (),
    removing: tuple[int, ...] = (),
    elr: ElrSettings | None = None,
) -> PartitionChangeRecord | None:
    """The record taking ``current`` to the given fields, in the order of Kafka's
    ``PartitionChangeBuilder``: complete the move if the ISR now covers the target, elect a
    leader from the ISR if the current one is not in it (or may no longer lead), bump the
    leader epoch if replicas left, then write the fields that changed. None if none did.

    With eligible leader replicas on (``elr``), the election keeps the two KIP-966 lists as it
    does everywhere else, and neither may name a broker that is no longer a replica."""
    if (adding or removing) and is_complete(replicas, isr, removing):
        dropped = set(removing)
        replicas = tuple(r for r in replicas if r not in dropped)
        isr = tuple(r for r in isr if r in set(replicas))
        adding = removing = ()
    proposed = dataclasses.replace(current, replicas=replicas)
    election = choose_leader(
        proposed, ElectionType.ONLINE, active_brokers(image), target_isr=isr, elr=elr
    )
    leader = LEADER_UNCHANGED
    new_isr: tuple[int, ...] | None = isr if isr != current.isr else None
    recovery = -1
    if election is not None:
        if election.leader is not None:
            leader = election.leader
        if election.isr is not None:
            new_isr = election.isr if election.isr != current.isr else None
        if election.leader_recovery_state is not None:
            recovery = int(election.leader_recovery_state)
    if leader == LEADER_UNCHANGED and not set(current.replicas) <= set(replicas):
        leader = current.leader  # followers must see that replicas left
    kept = set(replicas)
    new_elr = tuple(
        r
        for r in (current.elr if election is None or election.elr is None else election.elr)
        if r in kept
    )
    new_last_known = tuple(
        r
        for r in (
            current.last_known_elr
            if election is None or election.last_known_elr is None
            else election.last_known_elr
        )
        if r in kept
    )
    record = PartitionChangeRecord(
        partition_id=partition_id,
        topic_id=topic_id,
        isr=new_isr,
        leader=leader,
        replicas=replicas if replicas != current.replicas else None,
        removing_replicas=removing if removing != current.removing_replicas else None,
        adding_replicas=adding if adding != current.adding_replicas else None,
        leader_recovery_state=recovery,
        eligible_leader_replicas=new_elr if new_elr != current.elr else None,
        last_known_elr=new_last_known if new_last_known != current.last_known_elr else None,
    )
    if record == PartitionChangeRecord(partition_id=partition_id, topic_id=topic_id):
        return None
    return record


def complete_on_isr_change(
    image: MetadataImage,
    topic_id: TopicId,
    current: PartitionRegistration,
    change: PartitionChangeRecord,
    *,
    min_isr_default: int = 1,
) -> PartitionChangeRecord:
    """An AlterPartition ``change`` to a moving partition, with the move completed in the same
    record if the new ISR covers the target; ``change`` itself otherwise (or if the partition
    is not moving). The leader recovery state the leader reported is kept."""
    if reassignment_of(current) is None:
        return change
    state = current.merge(change)
    if not is_complete(state.replicas, state.isr, state.removing_replicas):
        return change
    completed = build_change(
        image,
        topic_id,
        change.partition_id,
        current,
        replicas=state.replicas,
        isr=state.isr,
        adding=state.adding_replicas,
        removing=state.removing_replicas,
        elr=_topic_elr(image, topic_id, min_isr_default),
    )
    assert completed is not None  # the adding and removing fields at least are emptied
    return dataclasses.replace(completed, leader_recovery_state=change.leader_recovery_state)


def _topic_elr(image: MetadataImage, topic_id: TopicId, min_isr_default: int) -> ElrSettings | None:
    topic = image.topic(topic_id)
    return elr_settings(image, "" if topic is None else topic.name, min_isr_default)
