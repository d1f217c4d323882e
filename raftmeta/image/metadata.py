"""The metadata image as a whole: the parts composed, each record replayed into the part that owns
it, and the image read, copied, compared and written as one."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Set
from typing import Any

from raftmeta.image.acls import AclIndex
from raftmeta.image.cluster import BrokerRegistration, ClusterImage
from raftmeta.image.configs import ConfigResource, ConfigurationsImage
from raftmeta.image.errors import ReplayError
from raftmeta.image.features import FeaturesImage
from raftmeta.image.partitions import PartitionKey, PartitionRegistration, TopicImage
from raftmeta.image.quotas import ClientQuotasImage, QuotaEntity, client_precedence, ip_precedence
from raftmeta.image.requests_seen import RequestsSeen
from raftmeta.image.scram import ScramImage
from raftmeta.image.snapshot_content import SnapshotContent, collector_paused
from raftmeta.image.topics import TopicsImage
from raftmeta.records import (
    AccessControlEntryRecord,
    BrokerRegistrationChangeRecord,
    ClearElrRecord,
    ClientQuotaRecord,
    ConfigRecord,
    ConfigResourceType,
    FeatureLevelRecord,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    RemoveAccessControlEntryRecord,
    RemoveTopicRecord,
    RemoveUserScramCredentialRecord,
    RequestOutcomeRecord,
    TopicId,
    TopicRecord,
    UnregisterBrokerRecord,
    UserScramCredentialRecord,
    encode_each,
    encode_record,
)

Replay = Callable[[Any], None]
"""Applies one record of the type it is filed under to the part that owns that type."""


class MetadataImage:
    """The cluster as of ``offset``, the log offset of the last record applied (-1: none)."""

    def __init__(self) -> None:
        self._offset = -1
        self._features = FeaturesImage()
        self._cluster = ClusterImage()
        self._topics = TopicsImage()
        self._configs = ConfigurationsImage()
        self._acls = AclIndex()
        self._quotas = ClientQuotasImage()
        self._requests_seen = RequestsSeen()
        self._scram = ScramImage()
        self._replay_by_type = self._replay_table()

    def _replay_table(self) -> dict[type[Any], Replay]:
        """Each record type's replay, bound to the part that owns it.

        Only the parts' methods are bound here, never the image's own: the image holds the
        table, so a method bound to the image would tie it into a reference cycle, leaving a
        million-partition image to wait for the cycle collector instead of being freed when
        dropped. Replay looks the record's type up here and calls the part directly.
        """
        cluster, topics, configs, acls = self._cluster, self._topics, self._configs, self._acls
        topic_resource = int(ConfigResourceType.TOPIC)

        def remove_topic(record: RemoveTopicRecord) -> None:
            configs.forget((topic_resource, topics.replay_remove_topic(record)))

        return {
            RegisterBrokerRecord: cluster.replay_register_broker,
            UnregisterBrokerRecord: cluster.replay_unregister_broker,
            BrokerRegistrationChangeRecord: cluster.replay_broker_change,
            TopicRecord: topics.replay_topic,
            PartitionRecord: topics.replay_partition,
            PartitionChangeRecord: topics.replay_partition_change,
            RemoveTopicRecord: remove_topic,
            ConfigRecord: configs.replay_config,
            FeatureLevelRecord: self._features.replay_feature_level,
            ClearElrRecord: topics.replay_clear_elr,
            AccessControlEntryRecord: acls.add,
            RemoveAccessControlEntryRecord: acls.replay_remove,
            RegisterControllerRecord: cluster.replay_register_controller,
            NoOpRecord: _ignore,
            RequestOutcomeRecord: self._requests_seen.add,
            UserScramCredentialRecord: self._scram.replay_credential,
            RemoveUserScramCredentialRecord: self._scram.replay_remove,
            ClientQuotaRecord: self._quotas.replay_client_quota,
        }

    def copy(self) -> MetadataImage:
        """An independent image in the same state.

        The active controller forks its committed image on every leadership change, on its
        event loop: a round trip through ``to_records`` would cost seconds at 100k partitions,
        past the Raft fetch timeout. Registrations are frozen, so both images share them; the
        topics and the ISR index's per-broker sets are shared until either image changes one
        (copy on write: they are most of the image); every other container is copied. 2 ms
        at 40,000 topics, where copying every topic took 0.3 s and a controller under steady
        CreateTopics, forking at each leadership change, fell into a cycle of fetch timeouts
        and elections.
        """
        other = MetadataImage.__new__(MetadataImage)
        other._offset = self._offset
        other._features = self._features.copy()
        other._cluster = self._cluster.copy()
        other._topics = self._topics.copy()
        other._configs = self._configs.copy()
        other._acls = self._acls.copy()
        other._quotas = self._quotas.copy()
        other._requests_seen = self._requests_seen.copy()
        other._scram = self._scram.copy()
        other._replay_by_type = other._replay_table()
        return other

    def __getstate__(self) -> dict[str, Any]:
        """The state without the replay table: it holds a closure, which pickle cannot take,
        and is rebuilt from the parts on the other side."""
        state = dict(self.__dict__)
        del state["_replay_by_type"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._replay_by_type = self._replay_table()

    # --- replay --------------------------------------------------------------------------

    def apply(self, record: Record, offset: int) -> None:
        """Applies one committed record found at ``offset``; offsets must increase."""
        if offset <= self._offset:
            raise ReplayError(f"already at offset {self._offset}", offset)
        replay = self._replay_by_type.get(type(record))
        if replay is None:
            raise ReplayError(f"{type(record).__name__} is not a metadata record", offset)
        try:
            replay(record)
        except ReplayError as exc:
            exc.offset = offset
            raise
        self._offset = offset

    def apply_batch(self, records: Iterable[Record], base_offset: int) -> None:
        """Applies records found at ``base_offset``, ``base_offset + 1``, and so on."""
        if base_offset <= self._offset:
            raise ReplayError(f"already at offset {self._offset}", base_offset)
        replay_by_type = self._replay_by_type
        offset = base_offset - 1
        try:
            for record in records:
                offset += 1
                replay = replay_by_type.get(type(record))
                if replay is None:
                    raise ReplayError(f"{type(record).__name__} is not a metadata record")
                replay(record)
        except ReplayError as exc:
            exc.offset = offset
            self._offset = offset - 1
            raise
        if offset >= base_offset:
            self._offset = offset

    @classmethod
    def from_records(cls, records: Iterable[Record], offset: int) -> MetadataImage:
        """Loads a snapshot: the records of :meth:`to_records` from an image at ``offset``.

        ``offset`` is the last log offset the snapshot covers, one below its end offset; the
        log is replayed on from the next one.
        """
        image = cls()
        replay_by_type = image._replay_by_type
        with collector_paused():
            for position, record in enumerate(records):
                replay = replay_by_type.get(type(record))
                try:
                    if replay is None:
                        raise ReplayError(f"{type(record).__name__} is not a metadata record")
                    replay(record)
                except ReplayError as exc:
                    exc.reason = f"snapshot record {position}: {exc.reason}"
                    raise
        image._offset = offset
        return image

    # --- reading -------------------------------------------------------------------------

    # The lookups the controller makes per partition or per broker (elections, fencing,
    # AlterPartition) read the parts' containers themselves rather than call the part's
    # reader: the extra call cost a lookup half as much again.

    @property
    def offset(self) -> int:
        return self._offset

    @property
    def features(self) -> Mapping[str, int]:
        return self._features.features

    @property
    def brokers(self) -> Mapping[int, BrokerRegistration]:
        return self._cluster.brokers

    def broker(self, broker_id: int) -> BrokerRegistration | None:
        return self._cluster._brokers.get(broker_id)

    @property
    def controllers(self) -> Mapping[int, RegisterControllerRecord]:
        """Each registered controller's latest registration, by controller id."""
        return self._cluster.controllers

    @property
    def topics(self) -> Mapping[TopicId, TopicImage]:
        return self._topics.topics

    @property
    def topic_ids_by_name(self) -> Mapping[str, TopicId]:
        return self._topics.topic_ids_by_name

    def topic(self, topic_id: TopicId) -> TopicImage | None:
        return self._topics._topics.get(topic_id)

    def colliding_topic(self, name: str) -> str | None:
        """Another topic whose name differs from ``name`` only by '.' against '_'."""
        return self._topics.colliding_topic(name)

    def topic_by_name(self, name: str) -> TopicImage | None:
        return self._topics.topic_by_name(name)

    def partition(self, topic_id: TopicId, partition_id: int) -> PartitionRegistration | None:
        topic = self._topics._topics.get(topic_id)
        return None if topic is None else topic._partitions.get(partition_id)

    @property
    def partition_count(self) -> int:
        return self._topics.partition_count

    def partitions(self) -> Iterator[tuple[PartitionKey, PartitionRegistration]]:
        return self._topics.partitions()

    def configs(self, resource_type: int, resource_name: str) -> Mapping[str, str]:
        return self._configs.configs(resource_type, resource_name)

    @property
    def config_resources(self) -> Set[ConfigResource]:
        return self._configs.resources

    @property
    def client_quotas(self) -> ClientQuotasImage:
        """The client quotas by entity. Read it; only replay changes it."""
        return self._quotas

    def effective_client_quotas(self, user: str, client_id: str) -> dict[str, float]:
        """The quotas of ``user`` connecting as ``client_id``, each key from the most
        specific of Kafka's eight levels that sets it; a key none sets is absent."""
        return self._quotas.effective(client_precedence(user, client_id))

    def effective_ip_quotas(self, ip: str) -> dict[str, float]:
        """The quotas of connections from ``ip``: its own, else the default ip's."""
        return self._quotas.effective(ip_precedence(ip))

    def quotas_of(self, entity: QuotaEntity) -> Mapping[str, float]:
        return self._quotas.quotas(entity)

    @property
    def requests_seen(self) -> RequestsSeen:
        """Outcomes of recent admin requests that carried a request id."""
        return self._requests_seen

    @property
    def scram(self) -> ScramImage:
        """The SCRAM credentials, by user and mechanism. Read it; only replay changes it."""
        return self._scram

    @property
    def acls(self) -> AclIndex:
        """The ACLs, indexed for the authorizer. Read it; only replay changes it."""
        return self._acls

    # The sets below are live: copy one before applying more records while iterating it.

    def partitions_with_isr_member(self, broker_id: int) -> Set[PartitionKey]:
        """What fencing or shutting down ``broker_id`` must take it out of."""
        return self._topics.partitions_with_isr_member(broker_id)

    @property
    def leaderless_partitions(self) -> Set[PartitionKey]:
        """Candidates for an election when a broker unfences or unclean election is enabled."""
        return self._topics.leaderless_partitions

    @property
    def partitions_not_led_by_preferred(self) -> Set[PartitionKey]:
        """What a preferred-leader rebalance walks; leaderless partitions are included."""
        return self._topics.partitions_not_led_by_preferred

    def leader_count(self, broker_id: int) -> int:
        return self._topics.leader_count(broker_id)

    def preferred_count(self, broker_id: int) -> int:
        """Partitions whose preferred replica (``replicas[0]``) is ``broker_id``."""
        return self._topics.preferred_count(broker_id)

    def preferred_and_leading_count(self, broker_id: int) -> int:
        """Of :meth:`preferred_count`, those ``broker_id`` leads: the leader-imbalance ratio is
        ``1 - preferred_and_leading_count / preferred_count``."""
        return self._topics.preferred_and_leading_count(broker_id)

    @property
    def leader_counts(self) -> Mapping[int, int]:
        return self._topics.leader_counts

    @property
    def preferred_counts(self) -> Mapping[int, int]:
        return self._topics.preferred_counts

    @property
    def preferred_and_leading_counts(self) -> Mapping[int, int]:
        return self._topics.preferred_and_leading_counts

    # --- snapshots and comparison --------------------------------------------------------

    def snapshot_work(self) -> Callable[[], list[bytes]]:
        """This image's encoded records, to be made later on another thread.

        The image is copied now (0.4 s at a million partitions) and the copy encoded when the
        work runs (seconds at that size), so the owner can go on applying commits meanwhile.
        """
        # Only what the records are made of is copied, not the indexes: the copy is the part
        # that still holds the event loop, and the indexes would double it.
        topics = self._topics
        frozen = SnapshotContent(
            dict(self._features._features),
            dict(self._cluster._brokers),
            {topic_id: topic.copy() for topic_id, topic in topics._topics.items()},
            dict(topics._topic_ids_by_name),
            {resource: dict(entries) for resource, entries in self._configs._configs.items()},
            dict(self._acls._by_id),
            dict(self._cluster._controllers),
            self._requests_seen.records(),
            tuple(self._scram.records()),
            {entity: dict(values) for entity, values in self._quotas._quotas.items()},
        )
        return lambda: encode_each(frozen.records())

    def to_records(self) -> Iterator[Record]:
        """The image as records, in a canonical order so equal images write equal snapshots.

        Order: feature levels, brokers, controllers, then per topic (by name) its TopicRecord,
        its configs and its partitions (by id), then every other config, then the ACLs by id,
        then the SCRAM credentials by user and mechanism, then the client quotas by entity, then
        the request outcomes.
        """
        topics = self._topics
        return SnapshotContent(
            self._features._features,
            self._cluster._brokers,
            topics._topics,
            topics._topic_ids_by_name,
            self._configs._configs,
            self._acls._by_id,
            self._cluster._controllers,
            self._requests_seen.records(),
            tuple(self._scram.records()),
            self._quotas._quotas,
        ).records()

    def digest(self) -> str:
        """A hash of the content (not the offset); equal images at one offset give equal digests.

        It hashes the canonical snapshot encoding, so it is stable across processes and
        releases as long as the record encoding is.
        """
        hasher = hashlib.blake2b(digest_size=32)
        update = hasher.update
        for record in self.to_records():
            update(encode_record(record))
        return hasher.hexdigest()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MetadataImage):
            return NotImplemented
        # The small parts first: the topics are most of the image and the slowest to compare.
        return (
            self._offset == other._offset
            and self._features == other._features
            and self._cluster == other._cluster
            and self._configs == other._configs
            and self._acls == other._acls
            and self._scram == other._scram
            and self._quotas == other._quotas
            and self._topics == other._topics
            and self._requests_seen == other._requests_seen
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"MetadataImage(offset={self._offset}, brokers={len(self._cluster._brokers)}, "
            f"topics={len(self._topics._topics)}, partitions={self._topics.partition_count})"
        )


def _ignore(_record: Record) -> None:
    """NoOpRecord's replay: the leader writes one to commit in a new epoch; it changes nothing."""
