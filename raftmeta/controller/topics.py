"""CreateTopics, CreatePartitions and DeleteTopics as pure functions of the latest image.

Each function checks one item against the image (committed plus this controller's pending
records) and returns the records that make it so, or raises :class:`KafkaError` with Kafka's
code and message for that item. Nothing here appends or waits: the replication manager
(:mod:`raftmeta.controller.replication`) calls these, and the queue appends what they return.

The checks and their order follow Kafka's controller (reference §4.3), because the first
failing check decides what the user reads.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence

from placement import (
    CapacityAwarePlacer,
    ClusterCounts,
    ClusterView,
    EmptiestBrokerPlacer,
    KafkaStripedReplicaPlacer,
    PlacementError,
    PlacementSpec,
    ReplicaPlacer,
    StripedReplicaPlacer,
    UsableBroker,
    check_assignment,
)
from raftmeta.common.topics import NewPartitions, NewTopic
from raftmeta.controller.configs import check_topic_config
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import BrokerRegistration, MetadataImage, TopicImage
from raftmeta.records import (
    ConfigRecord,
    ConfigResourceType,
    PartitionRecord,
    Record,
    RemoveTopicRecord,
    TopicId,
    TopicRecord,
)

MAX_TOPIC_NAME_LENGTH = 249
EXCESSIVE_PARTITIONS_MESSAGE = "Excessively large number of partitions per request."
"""Kafka's message when a CreateTopics request asks for more partitions than one batch holds."""
_LEGAL_TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")


def check_topic_name(name: str) -> None:
    """INVALID_TOPIC_EXCEPTION unless ``name`` is a name Kafka allows."""
    if not name:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is illegal, it is empty")
    if name in (".", ".."):
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, 'Topic name cannot be "." or ".."')
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"Topic name is illegal, it is longer than {MAX_TOPIC_NAME_LENGTH} characters, "
            f"topic name: {name}",
        )
    if _LEGAL_TOPIC_NAME.fullmatch(name) is None:
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f'Topic name "{name}" is illegal, it contains a character other than '
            "ASCII alphanumerics, '.', '_' and '-'",
        )


def check_partition_total(topics: Iterable[NewTopic], default_partitions: int, limit: int) -> None:
    """POLICY_VIOLATION if the request asks for more than ``limit`` partitions in all.

    Kafka's ``validateTotalNumberOfPartitions``: checked on the request as sent, before any
    topic is placed, so a count of 2^31 - 1 is refused at once instead of being built. -1
    counts as ``num.partitions``; a manual assignment counts its partitions; an invalid count
    counts nothing (the topic's own check refuses it).
    """
    total = 0
    for topic in topics:
        if topic.assignments is not None:
            total += len(topic.assignments)
        elif topic.num_partitions == -1:
            total += default_partitions
        elif topic.num_partitions > 0:
            total += topic.num_partitions
        if total > limit:
            raise KafkaError(ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS_MESSAGE)


class _UsableBrokersCache:
    """The usable brokers of the last broker set seen, handed out as one tuple until it changes,
    and the ids of the active ones (unfenced, not shutting down) as one set.

    Every CreateTopics asks for them, while the set changes only when a broker registers,
    fences, unfences or shuts down. The key is the image's registrations themselves: they are
    frozen values, replaced on every change, so comparing the tuple of them (by identity first,
    then by value) is exact and costs a pass over the brokers in C. Handing out the same tuple
    also lets a placer recognise the set in O(1) and keep what it derived from it.
    """

    __slots__ = ("_entry",)

    def __init__(self) -> None:
        # One tuple, replaced whole: a reader never pairs one set's key with another's answer.
        self._entry: (
            tuple[tuple[BrokerRegistration, ...], tuple[UsableBroker, ...], frozenset[int]] | None
        ) = None

    def usable(self, image: MetadataImage) -> tuple[UsableBroker, ...]:
        return self._current(image)[1]

    def active_ids(self, image: MetadataImage) -> frozenset[int]:
        """The brokers that may lead a partition and join an ISR."""
        return self._current(image)[2]

    def _current(
        self, image: MetadataImage
    ) -> tuple[tuple[BrokerRegistration, ...], tuple[UsableBroker, ...], frozenset[int]]:
        registrations = tuple(image.brokers.values())
        entry = self._entry
        if entry is not None and entry[0] == registrations:
            return entry
        usable = tuple(
            UsableBroker(broker.broker_id, broker.rack, broker.fenced)
            for broker in registrations
            if not broker.in_controlled_shutdown
        )
        active = frozenset(broker.broker_id for broker in registrations if broker.is_active)
        entry = self._entry = (registrations, usable, active)
        return entry


_USABLE_BROKERS = _UsableBrokersCache()


class ImageClusterView(ClusterCounts):
    """The :class:`ClusterView` a placer gets, answered from the image's indexes without a scan.

    ``replica_count`` counts ISR memberships, the per-broker index the image keeps; it equals
    the replica count whenever every replica is in sync, and is only a tie-breaker anyway.
    """

    def __init__(self, image: MetadataImage, topic: TopicImage | None = None) -> None:
        self._image = image
        self._topic = topic
        self._preferred_counts = image.preferred_counts
        self._isr_partitions = image.partitions_with_isr_member

    def usable_brokers(self) -> Iterable[UsableBroker]:
        return _USABLE_BROKERS.usable(self._image)

    def replica_count(self, broker_id: int) -> int:
        return len(self._isr_partitions(broker_id))

    def leader_count(self, broker_id: int) -> int:
        return self._preferred_counts.get(broker_id, 0)

    def leader_counts_of(self, broker_ids: Sequence[int]) -> list[int]:
        get = self._preferred_counts.get
        return [get(broker_id, 0) for broker_id in broker_ids]

    def replica_counts_of(self, broker_ids: Sequence[int]) -> list[int]:
        isr_partitions = self._isr_partitions
        return [len(isr_partitions(broker_id)) for broker_id in broker_ids]

    def existing_assignment(self) -> Sequence[Sequence[int]]:
        if self._topic is None:
            return []
        partitions = self._topic.partitions
        return [partitions[partition_id].replicas for partition_id in sorted(partitions)]


_CORRECT_BY_CONSTRUCTION: frozenset[type[ReplicaPlacer]] = frozenset(
    {StripedReplicaPlacer, EmptiestBrokerPlacer, CapacityAwarePlacer, KafkaStripedReplicaPlacer}
)
"""Built-in placers whose answers the placement tests prove well formed on every cluster (see
tests/placement/test_properties.py); checking each of their answers again cost the controller
a pass over every replica per request. Exact types only: a subclass may override ``place``."""


def place_checked(placer: ReplicaPlacer, spec: PlacementSpec, view: ClusterView) -> list[list[int]]:
    """Calls the placer and checks its answer; any failure is a :class:`KafkaError`."""
    try:
        answer = placer.place(spec, view)
        if type(placer) in _CORRECT_BY_CONSTRUCTION:
            return answer
        return check_assignment(spec, view.usable_brokers(), answer)
    except PlacementError:
        raise
    except Exception as error:
        raise PlacementError(
            f"The replica placer failed with {type(error).__name__}: {error}"
        ) from None


def _replicate_prefix(replication_factor: int) -> str:
    return f"Unable to replicate the partition {replication_factor} time(s): "


def _is_active(image: MetadataImage) -> Callable[[int], bool]:
    def active(broker_id: int) -> bool:
        broker = image.broker(broker_id)
        return broker is not None and broker.is_active

    return active


def _check_manual_assignments(
    image: MetadataImage, assignments: Mapping[int, Sequence[int]], first_partition: int
) -> list[tuple[int, ...]]:
    """INVALID_REPLICA_ASSIGNMENT unless the lists are well formed; returns them in order."""
    expected = list(range(first_partition, first_partition + len(assignments)))
    if sorted(assignments) != expected:
        raise KafkaError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"Partitions should be a consecutive {first_partition}-based integer sequence",
        )
    active = _is_active(image)
    checked: list[tuple[int, ...]] = []
    replication_factor: int | None = None
    for partition_id in expected:
        replicas = tuple(assignments[partition_id])
        if not replicas:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment for partition {partition_id} is empty.",
            )
        if len(set(replicas)) != len(replicas):
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment for partition {partition_id} lists a "
                f"broker more than once: {list(replicas)}.",
            )
        if replication_factor is not None and len(replicas) != replication_factor:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment for partition {partition_id} has "
                f"{len(replicas)} replica(s), but earlier partitions have {replication_factor}.",
            )
        replication_factor = len(replicas)
        for broker_id in replicas:
            if image.broker(broker_id) is None:
                raise KafkaError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment includes broker {broker_id}, but no "
                    "such broker is registered.",
                )
        if not any(active(broker_id) for broker_id in replicas):
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"All brokers specified in the manual partition assignment for partition "
                f"{partition_id} are fenced or in controlled shutdown.",
            )
        checked.append(replicas)
    return checked


def _partition_records(
    image: MetadataImage,
    topic_id: TopicId,
    first_partition: int,
    assignment: Sequence[Sequence[int]],
    replication_factor: int,
) -> list[PartitionRecord]:
    """PartitionRecords with ISR = active replicas and leader = the first of them."""
    active = _USABLE_BROKERS.active_ids(image)
    records: list[PartitionRecord] = []
    for offset, replicas in enumerate(assignment):
        isr = tuple(broker_id for broker_id in replicas if broker_id in active)
        if not isr:
            raise KafkaError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                _replicate_prefix(replication_factor)
                + "All brokers are currently fenced or in controlled shutdown.",
            )
        records.append(
            PartitionRecord(
                partition_id=first_partition + offset,
                topic_id=topic_id,
                replicas=tuple(replicas),
                isr=isr,
                leader=isr[0],
            )
        )
    return records


def create_topic_records(
    image: MetadataImage,
    topic: NewTopic,
    topic_id: TopicId,
    placer: ReplicaPlacer,
    *,
    default_partitions: int,
    default_replication_factor: int,
) -> tuple[list[Record], int, int]:
    """The records creating ``topic``: TopicRecord, its ConfigRecords, its PartitionRecords.

    Returns them with the partition count and replication factor used. The name is checked
    by the caller, which also sees the other topics of the request.
    """
    if image.topic_by_name(topic.name) is not None:
        raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{topic.name}' already exists.")
    existing = image.colliding_topic(topic.name)
    if existing is not None:
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"Topic '{topic.name}' collides with existing topic: {existing}",
        )
    if topic.assignments is not None:
        if topic.num_partitions != -1 or topic.replication_factor != -1:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST,
                "A manual partition assignment was given, but the partition count or "
                "replication factor was not -1.",
            )
        if not topic.assignments:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment is empty."
            )
    else:
        if topic.num_partitions < -1 or topic.num_partitions == 0:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS,
                "Number of partitions was set to an invalid non-positive value.",
            )
        if topic.replication_factor < -1 or topic.replication_factor == 0:
            raise KafkaError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                "Replication factor must be larger than 0, or -1 to use the default value.",
            )
    for name, value in topic.configs.items():
        check_topic_config(name, value)

    if topic.assignments is not None:
        assignment: Sequence[Sequence[int]] = _check_manual_assignments(image, topic.assignments, 0)
        replication_factor = len(assignment[0])
    else:
        partition_count = default_partitions if topic.num_partitions == -1 else topic.num_partitions
        replication_factor = (
            default_replication_factor
            if topic.replication_factor == -1
            else topic.replication_factor
        )
        spec = PlacementSpec(0, partition_count, replication_factor)
        try:
            assignment = place_checked(placer, spec, ImageClusterView(image))
        except PlacementError as error:
            if error.code is ErrorCode.INVALID_REPLICATION_FACTOR:
                raise KafkaError(
                    error.code, _replicate_prefix(replication_factor) + error.message
                ) from None
            raise
    partitions = _partition_records(image, topic_id, 0, assignment, replication_factor)
    records: list[Record] = [TopicRecord(topic.name, topic_id)]
    records.extend(
        ConfigRecord(int(ConfigResourceType.TOPIC), topic.name, name, value)
        for name, value in topic.configs.items()
    )
    records.extend(partitions)
    return records, len(assignment), replication_factor


def create_partitions_records(
    image: MetadataImage,
    request: NewPartitions,
    placer: ReplicaPlacer,
    *,
    max_new_partitions: int,
) -> list[Record]:
    """PartitionRecords growing a topic, placed to continue its existing assignment.

    POLICY_VIOLATION, before anything is placed, if the topic would gain more than
    ``max_new_partitions`` (what is left of the request's record cap).
    """
    topic = image.topic_by_name(request.topic)
    if topic is None:
        raise KafkaError(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic '{request.topic}' does not exist."
        )
    current = len(topic.partitions)
    if request.count < current:
        raise KafkaError(
            ErrorCode.INVALID_PARTITIONS,
            f"Topic currently has {current} partitions, which is higher than the requested "
            f"{request.count}.",
        )
    if request.count == current:
        raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partitions.")
    added = request.count - current
    if added > max_new_partitions:
        raise KafkaError(
            ErrorCode.POLICY_VIOLATION,
            f"Adding {added} partition(s) to topic '{request.topic}' exceeds the "
            f"{max(max_new_partitions, 0)} new partition(s) this request may still create.",
        )
    replication_factor = len(topic.partitions[0].replicas) if current else 1
    if request.assignments is not None:
        if len(request.assignments) != added:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Attempted to add {added} additional partition(s), but only "
                f"{len(request.assignments)} assignment(s) were specified.",
            )
        assignment: Sequence[Sequence[int]] = _check_manual_assignments(
            image,
            {current + index: replicas for index, replicas in enumerate(request.assignments)},
            current,
        )
        for index, replicas in enumerate(assignment):
            if len(replicas) != replication_factor:
                raise KafkaError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                    f"The manual partition assignment for partition {current + index} has "
                    f"{len(replicas)} replica(s); the topic's replication factor is "
                    f"{replication_factor}.",
                )
    else:
        spec = PlacementSpec(current, added, replication_factor)
        try:
            assignment = place_checked(placer, spec, ImageClusterView(image, topic))
        except PlacementError as error:
            if error.code is ErrorCode.INVALID_REPLICATION_FACTOR:
                raise KafkaError(
                    error.code, _replicate_prefix(replication_factor) + error.message
                ) from None
            raise
    return list(_partition_records(image, topic.topic_id, current, assignment, replication_factor))


def delete_topic_records(image: MetadataImage, name: str) -> list[Record]:
    topic = image.topic_by_name(name)
    if topic is None:
        raise KafkaError(
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "This server does not host this topic-partition.",
        )
    return [RemoveTopicRecord(topic.topic_id)]
