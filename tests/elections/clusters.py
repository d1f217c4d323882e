"""Small metadata images for election tests, built by replaying records as a controller would."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from raftmeta.image import MetadataImage, PartitionRegistration
from raftmeta.records import (
    NO_LEADER,
    BrokerEndpoint,
    ConfigRecord,
    ConfigResourceType,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    TopicId,
    TopicRecord,
)

UNCLEAN_KEY = "unclean.leader.election.enable"


class BrokerState(Enum):
    ACTIVE = "active"
    FENCED = "fenced"
    SHUTDOWN = "shutdown"
    """Unfenced but in controlled shutdown."""


ACTIVE = BrokerState.ACTIVE
FENCED = BrokerState.FENCED
SHUTDOWN = BrokerState.SHUTDOWN


@dataclass(frozen=True)
class Part:
    """A partition to create. ISR defaults to the replicas, the leader to the first ISR member."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...] | None = None
    leader: int | None = None
    recovering: bool = False
    leader_epoch: int = 5
    partition_epoch: int = 9

    def record(self, topic_id: TopicId, partition_id: int) -> PartitionRecord:
        isr = self.replicas if self.isr is None else self.isr
        leader = self.leader
        if leader is None:
            leader = isr[0] if isr else NO_LEADER
        return PartitionRecord(
            partition_id=partition_id,
            topic_id=topic_id,
            replicas=self.replicas,
            isr=isr,
            leader=leader,
            leader_recovery_state=1 if self.recovering else 0,
            leader_epoch=self.leader_epoch,
            partition_epoch=self.partition_epoch,
        )


def topic_id(name: str) -> TopicId:
    return hashlib.blake2b(name.encode(), digest_size=16).digest()


def cluster(
    brokers: Mapping[int, BrokerState],
    topics: Mapping[str, Sequence[Part]],
    *,
    topic_configs: Mapping[str, Mapping[str, str]] | None = None,
    cluster_configs: Mapping[str, str] | None = None,
) -> MetadataImage:
    """An image with the brokers registered in the given states and the topics created."""
    records: list[Record] = []
    for broker_id, state in sorted(brokers.items()):
        records.append(
            RegisterBrokerRecord(
                broker_id=broker_id,
                incarnation_id=bytes([broker_id % 256]) * 16,
                broker_epoch=len(records),
                endpoints=(BrokerEndpoint("PLAINTEXT", f"b{broker_id}", 9092, 0),),
                fenced=state is FENCED,
                in_controlled_shutdown=state is SHUTDOWN,
            )
        )
    for name, value in (cluster_configs or {}).items():
        records.append(ConfigRecord(ConfigResourceType.BROKER, "", name, value))
    for name, parts in topics.items():
        records.append(TopicRecord(name, topic_id(name)))
        for key, value in ((topic_configs or {}).get(name) or {}).items():
            records.append(ConfigRecord(ConfigResourceType.TOPIC, name, key, value))
        records.extend(part.record(topic_id(name), index) for index, part in enumerate(parts))
    image = MetadataImage()
    image.apply_batch(records, 0)
    return image


def replayed(image: MetadataImage, records: Iterable[PartitionChangeRecord]) -> MetadataImage:
    """A copy of ``image`` with ``records`` applied after it, leaving ``image`` untouched."""
    copy = MetadataImage.from_records(image.to_records(), image.offset)
    copy.apply_batch(list(records), image.offset + 1)
    return copy


def partition(image: MetadataImage, topic: str, partition_id: int) -> PartitionRegistration:
    registration = image.partition(topic_id(topic), partition_id)
    assert registration is not None
    return registration
