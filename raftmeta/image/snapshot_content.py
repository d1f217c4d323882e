"""The records an image is made of, in the canonical order every snapshot writes them."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from raftmeta.image.cluster import BrokerRegistration
from raftmeta.image.configs import ConfigResource, config_records
from raftmeta.image.partitions import PartitionRegistration, TopicImage
from raftmeta.image.quotas import QuotaEntity, client_quota_records, entity_order
from raftmeta.records import (
    AccessControlEntryRecord,
    ConfigResourceType,
    FeatureLevelRecord,
    Record,
    RegisterControllerRecord,
    RequestOutcomeRecord,
    TopicId,
    TopicRecord,
    UserScramCredentialRecord,
    Uuid,
)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a snapshot loads.

    Loading allocates millions of objects that all survive, and every few thousand
    allocations the collector would walk the ever-growing young generations for cycles that
    do not exist: a third of a million-partition load. Pass ``records`` as a generator that
    decodes as it goes, so decoding runs with the collector paused too.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True, slots=True)
class SnapshotContent:
    """The parts of an image its records are made from (the indexes are derived from them)."""

    features: Mapping[str, int]
    brokers: Mapping[int, BrokerRegistration]
    topics: Mapping[TopicId, TopicImage]
    topic_ids_by_name: Mapping[str, TopicId]
    configs: Mapping[ConfigResource, Mapping[str, str]]
    acls: Mapping[Uuid, AccessControlEntryRecord]
    controllers: Mapping[int, RegisterControllerRecord]
    requests_seen: tuple[RequestOutcomeRecord, ...] = ()
    scram: tuple[UserScramCredentialRecord, ...] = ()
    """In the canonical order (by user, then mechanism)."""
    client_quotas: Mapping[QuotaEntity, Mapping[str, float]] = field(
        default_factory=lambda: MappingProxyType({})
    )

    def records(self) -> Iterator[Record]:
        features, brokers, configs = self.features, self.brokers, self.configs
        topics, topic_ids_by_name = self.topics, self.topic_ids_by_name
        for name in sorted(features):
            yield FeatureLevelRecord(name, features[name])
        for broker_id in sorted(brokers):
            yield brokers[broker_id].to_record()
        controllers = self.controllers
        for controller_id in sorted(controllers):
            yield controllers[controller_id]
        topic_resource = int(ConfigResourceType.TOPIC)
        for name in sorted(topic_ids_by_name):
            topic = topics[topic_ids_by_name[name]]
            topic_id = topic._topic_id
            yield TopicRecord(name, topic_id)
            yield from config_records(topic_resource, name, configs.get((topic_resource, name)))
            partitions = topic._partitions
            to_record = PartitionRegistration.to_record
            for partition_id in sorted(partitions):
                yield to_record(partitions[partition_id], topic_id, partition_id)
        for resource in sorted(configs):
            resource_type, resource_name = resource
            if resource_type == topic_resource and resource_name in topic_ids_by_name:
                continue
            yield from config_records(resource_type, resource_name, configs[resource])
        acls = self.acls
        for acl_id in sorted(acls):
            yield acls[acl_id]
        yield from self.scram
        client_quotas = self.client_quotas
        for entity in sorted(client_quotas, key=entity_order):
            yield from client_quota_records(entity, client_quotas[entity])
        # Last, and in the order they were applied, which replaying them keeps.
        yield from self.requests_seen
