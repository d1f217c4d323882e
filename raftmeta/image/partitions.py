"""Partitions and the topics that hold them: the registrations every part of the topics image is
made of.

Partitions dominate memory, so a registration is a slotted object of tuples and ints, about
100 bytes, and its ISR tuple is the replica tuple itself whenever the two are equal, as they
usually are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeAlias

from raftmeta.image.errors import ReplayError
from raftmeta.records import (
    LEADER_RECOVERY_UNCHANGED,
    LEADER_UNCHANGED,
    NO_LEADER,
    PartitionChangeRecord,
    PartitionRecord,
    TopicId,
    fast_constructor,
    uuid_to_str,
)

PartitionKey: TypeAlias = tuple[TopicId, int]
"""(topic id, partition id): names a partition independent of its topic's current name."""

FULL_RECOVERY_STATES = (0, 1)
"""The leader recovery states a partition can be in (RECOVERED, RECOVERING)."""


def topic_collision_key(name: str) -> str:
    """Kafka's metric names turn '.' into '_', so names differing only there would collide."""
    return name.replace(".", "_")


@dataclass(frozen=True, slots=True)
class PartitionRegistration:
    """One partition's state. Immutable, so a reader holding one never sees it half-changed."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    leader: int
    leader_recovery_state: int
    leader_epoch: int
    partition_epoch: int
    elr: tuple[int, ...] = ()
    """Eligible leader replicas (KIP-966); empty unless the feature is on."""
    last_known_elr: tuple[int, ...] = ()

    @property
    def preferred_leader(self) -> int:
        return self.replicas[0] if self.replicas else NO_LEADER

    @property
    def is_led_by_preferred(self) -> bool:
        """True too for a leaderless partition with no replicas: it has no preference to miss."""
        return self.leader == self.preferred_leader

    @classmethod
    def from_record(cls, record: PartitionRecord) -> PartitionRegistration:
        return _partition_from_record(record)

    def merge(self, change: PartitionChangeRecord) -> PartitionRegistration:
        """The state after ``change``; raises :class:`ReplayError` for an out-of-range field."""
        leader = change.leader
        if leader == LEADER_UNCHANGED:
            leader, leader_epoch = self.leader, self.leader_epoch
        elif leader >= NO_LEADER:
            leader_epoch = self.leader_epoch + 1
        else:
            raise ReplayError(f"PartitionChangeRecord leader {leader} is below {LEADER_UNCHANGED}")
        recovery_state = change.leader_recovery_state
        if recovery_state == LEADER_RECOVERY_UNCHANGED:
            recovery_state = self.leader_recovery_state
        elif recovery_state not in FULL_RECOVERY_STATES:
            raise ReplayError(f"PartitionChangeRecord leader_recovery_state {recovery_state}")
        replicas = self.replicas if change.replicas is None else change.replicas
        isr = self.isr if change.isr is None else change.isr
        if isr is not replicas and isr == replicas:
            isr = replicas
        elr = change.eligible_leader_replicas
        last_known_elr = change.last_known_elr
        return build_partition(
            replicas,
            isr,
            self.removing_replicas
            if change.removing_replicas is None
            else change.removing_replicas,
            self.adding_replicas if change.adding_replicas is None else change.adding_replicas,
            leader,
            recovery_state,
            leader_epoch,
            self.partition_epoch + 1,
            self.elr if elr is None else elr,
            self.last_known_elr if last_known_elr is None else last_known_elr,
        )

    def without_elr(self) -> PartitionRegistration:
        """This state with both KIP-966 lists emptied (ClearElrRecord; no epoch bump)."""
        if not self.elr and not self.last_known_elr:
            return self
        return dataclasses.replace(self, elr=(), last_known_elr=())

    def to_record(self, topic_id: TopicId, partition_id: int) -> PartitionRecord:
        return _build_partition_record(
            partition_id,
            topic_id,
            self.replicas,
            self.isr,
            self.removing_replicas,
            self.adding_replicas,
            self.leader,
            self.leader_recovery_state,
            self.leader_epoch,
            self.partition_epoch,
            self.elr,
            self.last_known_elr,
        )


build_partition = fast_constructor(PartitionRegistration)
_build_partition_record = fast_constructor(PartitionRecord)


def _partition_from_record(record: PartitionRecord) -> PartitionRegistration:
    if record.leader < NO_LEADER:
        raise ReplayError(f"PartitionRecord leader {record.leader} is below {NO_LEADER}")
    if record.leader_recovery_state not in FULL_RECOVERY_STATES:
        raise ReplayError(f"PartitionRecord leader_recovery_state {record.leader_recovery_state}")
    replicas = record.replicas
    isr = record.isr
    if isr == replicas:
        isr = replicas
    return build_partition(
        replicas,
        isr,
        record.removing_replicas,
        record.adding_replicas,
        record.leader,
        record.leader_recovery_state,
        record.leader_epoch,
        record.partition_epoch,
        record.eligible_leader_replicas,
        record.last_known_elr,
    )


class TopicImage:
    """A topic and its partitions. The image that owns it changes it in place (see
    ``TopicsImage._writable_topic``); others only read it."""

    __slots__ = ("_name", "_partitions", "_topic_id")

    def __init__(self, name: str, topic_id: TopicId) -> None:
        self._name = name
        self._topic_id = topic_id
        self._partitions: dict[int, PartitionRegistration] = {}

    @property
    def name(self) -> str:
        return self._name

    @property
    def topic_id(self) -> TopicId:
        return self._topic_id

    @property
    def partitions(self) -> Mapping[int, PartitionRegistration]:
        return MappingProxyType(self._partitions)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TopicImage):
            return NotImplemented
        return (
            self._name == other._name
            and self._topic_id == other._topic_id
            and self._partitions == other._partitions
        )

    def copy(self) -> TopicImage:
        other = TopicImage(self._name, self._topic_id)
        other._partitions = dict(self._partitions)
        return other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"TopicImage({self._name!r}, {uuid_to_str(self._topic_id)}, "
            f"{len(self._partitions)} partitions)"
        )
