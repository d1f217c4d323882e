"""Topics and their partitions (Kafka's TopicsImage), with the indexes the controller asks for.

Besides the topics themselves this part keeps the indexes the controller asks for on every
fence, election and rebalance, updated on each replay so no question costs a scan of a million
partitions: broker → partitions whose ISR holds it, leaderless partitions, partitions not led
by their preferred replica, and per-broker leader and preferred-replica counts. With its key,
index entries and its topic's dict slot a partition costs about half a kilobyte: a million
partitions on 100 brokers fit in about 540 MiB.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Set
from types import MappingProxyType

from raftmeta.image.errors import ReplayError
from raftmeta.image.partitions import (
    FULL_RECOVERY_STATES,
    PartitionKey,
    PartitionRegistration,
    TopicImage,
    build_partition,
    topic_collision_key,
)
from raftmeta.records import (
    NO_LEADER,
    ClearElrRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicId,
    TopicRecord,
    uuid_to_str,
)

_EMPTY_KEYS: frozenset[PartitionKey] = frozenset()
_SHARED_IDS: dict[int, int] = {}
"""One int object per broker id and per partition id, shared by every partition naming it.

A decoded record brings new int objects, and CPython shares only those up to 256: with broker
ids above that, a partition at RF 3 held three of its own (plus its leader's), and with more
than 256 partitions in a topic its id too, 28 bytes each: about 130 of the 570 bytes a
partition took with 1,000-broker ids. Ints are immutable, so sharing them across images and
threads is safe; the table holds one entry per id ever seen (brokers, and partition ids up to
the largest topic's partition count)."""
share_id = _SHARED_IDS.setdefault
"""``share_id(value, value)``: the shared int equal to ``value`` (see ``_SHARED_IDS``)."""


class TopicsImage:
    """Every topic by id and by name, their partitions, and the indexes derived from them."""

    __slots__ = (
        "_isr_owned",
        "_isr_partitions",
        "_leader_counts",
        "_leaderless",
        "_names_by_collision_key",
        "_not_led_by_preferred",
        "_partition_count",
        "_preferred_counts",
        "_preferred_leader_counts",
        "_topic_ids_by_name",
        "_topics",
        "_topics_owned",
    )

    def __init__(self) -> None:
        self._topics: dict[TopicId, TopicImage] = {}
        self._topic_ids_by_name: dict[str, TopicId] = {}
        self._names_by_collision_key: dict[str, frozenset[str]] = {}
        """Topic names by :func:`topic_collision_key`, so CreateTopics checks in one lookup."""
        self._partition_count = 0
        # Indexes, derived from the partitions and kept in step on every replay. Empty sets and
        # zero counts are dropped, so two images with equal state hold equal indexes.
        self._isr_partitions: dict[int, set[PartitionKey]] = {}
        self._isr_owned: set[int] = set()
        """Brokers whose set in ``_isr_partitions`` this part may change in place; the others'
        are shared with a copy and are copied before their first change."""
        self._topics_owned: set[TopicId] = set()
        """Topics whose ``TopicImage`` this part may change in place; the others are shared
        with a copy and are copied before their first change (copy on write, as the ISR
        index's sets)."""
        self._leaderless: set[PartitionKey] = set()
        self._not_led_by_preferred: set[PartitionKey] = set()
        self._leader_counts: dict[int, int] = {}
        self._preferred_counts: dict[int, int] = {}
        self._preferred_leader_counts: dict[int, int] = {}

    def copy(self) -> TopicsImage:
        """An independent part in the same state; see :meth:`MetadataImage.copy` for why the
        topics and the ISR index's sets are shared until either copy changes one."""
        other = TopicsImage.__new__(TopicsImage)
        # Topics are shared until either image changes one: copying each cost 0.3 s at 40,000
        # topics, on the controller's loop at every leadership change and discarded request.
        other._topics = dict(self._topics)
        other._topics_owned = set()
        self._topics_owned = set()
        other._topic_ids_by_name = dict(self._topic_ids_by_name)
        # Frozen sets, replaced on change: a plain copy of the dict keeps the images apart.
        other._names_by_collision_key = dict(self._names_by_collision_key)
        other._partition_count = self._partition_count
        # The ISR index is most of the image's size (3M keys at 1M partitions, 0.27 s to copy):
        # both images share its sets until either changes one.
        other._isr_partitions = dict(self._isr_partitions)
        other._isr_owned = set()
        self._isr_owned = set()
        other._leaderless = set(self._leaderless)
        other._not_led_by_preferred = set(self._not_led_by_preferred)
        other._leader_counts = dict(self._leader_counts)
        other._preferred_counts = dict(self._preferred_counts)
        other._preferred_leader_counts = dict(self._preferred_leader_counts)
        return other

    # --- replay --------------------------------------------------------------------------

    def replay_topic(self, record: TopicRecord) -> None:
        name = record.name
        topic_id = record.topic_id
        existing_id = self._topic_ids_by_name.get(name)
        if existing_id is not None:
            raise ReplayError(f"topic {name!r} already exists with id {uuid_to_str(existing_id)}")
        topics = self._topics
        existing = topics.get(topic_id)
        if existing is not None:
            raise ReplayError(
                f"topic id {uuid_to_str(topic_id)} already names topic {existing.name!r}"
            )
        topics[topic_id] = TopicImage(name, topic_id)
        self._topics_owned.add(topic_id)
        self._topic_ids_by_name[name] = topic_id
        key = name.replace(".", "_")  # topic_collision_key, without the call
        names_by_key = self._names_by_collision_key
        colliding = names_by_key.get(key)
        names_by_key[key] = frozenset((name,)) if colliding is None else colliding | {name}

    def _topic(self, topic_id: TopicId) -> TopicImage:
        topic = self._topics.get(topic_id)
        if topic is None:
            raise ReplayError(f"no topic with id {uuid_to_str(topic_id)}")
        return topic

    def replay_partition(self, record: PartitionRecord) -> None:
        # Every CreateTopics replays one of these per partition, on the leader twice (staged,
        # then committed) and on every follower once, so the checks of _partition_from_record
        # and the indexing of a new partition (the inverse of _unindex_partition: the ISR
        # index, then what _add_leadership counts) are written out here, without the calls.
        record_topic_id = record.topic_id
        leader = record.leader
        recovery_state = record.leader_recovery_state
        topic = self._topics.get(record_topic_id)
        if topic is None:
            raise ReplayError(f"no topic with id {uuid_to_str(record_topic_id)}")
        if leader < NO_LEADER:
            raise ReplayError(f"PartitionRecord leader {leader} is below {NO_LEADER}")
        if recovery_state not in FULL_RECOVERY_STATES:
            raise ReplayError(f"PartitionRecord leader_recovery_state {recovery_state}")
        shared_id = _SHARED_IDS.setdefault
        replicas = tuple(map(shared_id, record.replicas, record.replicas))
        isr = record.isr
        isr = replicas if isr == replicas else tuple(map(shared_id, isr, isr))
        leader = shared_id(leader, leader)
        registration = build_partition(
            replicas,
            isr,
            record.removing_replicas,
            record.adding_replicas,
            leader,
            recovery_state,
            record.leader_epoch,
            record.partition_epoch,
            record.eligible_leader_replicas,
            record.last_known_elr,
        )
        topic_id = topic._topic_id
        if topic_id not in self._topics_owned:
            topic = self._writable_topic(topic)
        partitions = topic._partitions
        partition_id = shared_id(record.partition_id, record.partition_id)
        previous = partitions.get(partition_id)
        partitions[partition_id] = registration
        # The key holds the topic's own id object, not the decoded record's copy of it.
        key = (topic_id, partition_id)
        if previous is not None:
            self._reindex_partition(key, previous, registration)
            return
        self._partition_count += 1
        self._isr_add(isr, key)
        self._add_leadership(key, leader, replicas[0] if replicas else NO_LEADER)

    def _writable_topic(self, topic: TopicImage) -> TopicImage:
        """``topic`` as this image may change it: a private copy if a copy of the image still
        shares it."""
        topic_id = topic._topic_id
        if topic_id in self._topics_owned:
            return topic
        own = topic.copy()
        self._topics[topic_id] = own
        self._topics_owned.add(topic_id)
        return own

    def replay_partition_change(self, record: PartitionChangeRecord) -> None:
        topic = self._topics.get(record.topic_id)
        if topic is None:
            raise ReplayError(f"no topic with id {uuid_to_str(record.topic_id)}")
        partition_id = record.partition_id
        previous = topic._partitions.get(partition_id)
        if previous is None:
            raise ReplayError(f"topic {topic._name!r} has no partition {partition_id}")
        registration = previous.merge(record)
        self._writable_topic(topic)._partitions[partition_id] = registration
        self._reindex_partition((topic._topic_id, partition_id), previous, registration)

    def replay_remove_topic(self, record: RemoveTopicRecord) -> str:
        """Removes the topic and its partitions; returns its name, whose configs go with it."""
        topic = self._topic(record.topic_id)
        del self._topics[topic._topic_id]
        self._topics_owned.discard(topic._topic_id)
        del self._topic_ids_by_name[topic._name]
        key = topic_collision_key(topic._name)
        names = self._names_by_collision_key[key] - {topic._name}
        if names:
            self._names_by_collision_key[key] = names
        else:
            del self._names_by_collision_key[key]
        topic_id = topic._topic_id
        for partition_id, registration in topic._partitions.items():
            self._unindex_partition((topic_id, partition_id), registration)
        self._partition_count -= len(topic._partitions)
        return topic._name

    def replay_clear_elr(self, record: ClearElrRecord) -> None:
        # The ELR lists are in no index, so clearing them touches the partitions alone.
        if record.topic_name:
            topic_id = self._topic_ids_by_name.get(record.topic_name)
            if topic_id is None:
                raise ReplayError(f"ClearElrRecord names no topic: {record.topic_name!r}")
            topics: Iterable[TopicImage] = (self._topics[topic_id],)
        else:
            topics = self._topics.values()
        for topic in list(topics):
            cleared = {
                partition_id: registration.without_elr()
                for partition_id, registration in topic._partitions.items()
                if registration.elr or registration.last_known_elr
            }
            if cleared:
                self._writable_topic(topic)._partitions.update(cleared)

    # --- indexes -------------------------------------------------------------------------

    def install_indexes(
        self,
        partition_count: int,
        isr_partitions: dict[int, set[PartitionKey]],
        leaderless: set[PartitionKey],
        not_led_by_preferred: set[PartitionKey],
        leader_counts: dict[int, int],
        preferred_counts: dict[int, int],
        preferred_leader_counts: dict[int, int],
    ) -> None:
        """Takes indexes made elsewhere from this part's partitions, replacing its own.

        For a snapshot loaded in bulk (``raftmeta.image.snapshot_load``), which places the
        partitions and gathers their indexes in one pass rather than replay each partition
        here; the containers become this part's own. They must hold what replay would have
        kept: empty sets and zero counts left out, the counts in order of first appearance.
        """
        self._partition_count = partition_count
        self._isr_partitions = isr_partitions
        self._isr_owned = set(isr_partitions)
        self._leaderless = leaderless
        self._not_led_by_preferred = not_led_by_preferred
        self._leader_counts = leader_counts
        self._preferred_counts = preferred_counts
        self._preferred_leader_counts = preferred_leader_counts

    def _own_isr_set(self, broker_id: int, shared: set[PartitionKey]) -> set[PartitionKey]:
        members = set(shared)
        self._isr_partitions[broker_id] = members
        self._isr_owned.add(broker_id)
        return members

    def _isr_add(self, broker_ids: Iterable[int], key: PartitionKey) -> None:
        """Index ``key`` under each of ``broker_ids`` (one call for a partition's brokers:
        replay runs it for every partition, so the loop stays inside)."""
        isr_partitions = self._isr_partitions
        owned = self._isr_owned
        for broker_id in broker_ids:
            members = isr_partitions.get(broker_id)
            if members is None:
                isr_partitions[broker_id] = {key}
                owned.add(broker_id)
            elif broker_id in owned:
                members.add(key)
            else:
                self._own_isr_set(broker_id, members).add(key)

    def _isr_discard(self, broker_id: int, key: PartitionKey) -> None:
        members = self._isr_partitions.get(broker_id)
        if members is None or key not in members:
            return
        if broker_id not in self._isr_owned:
            members = self._own_isr_set(broker_id, members)
        members.discard(key)
        if not members:
            del self._isr_partitions[broker_id]
            self._isr_owned.discard(broker_id)

    def _unindex_partition(self, key: PartitionKey, registration: PartitionRegistration) -> None:
        for broker_id in registration.isr:
            self._isr_discard(broker_id, key)
        replicas = registration.replicas
        self._remove_leadership(key, registration.leader, replicas[0] if replicas else NO_LEADER)

    def _reindex_partition(
        self, key: PartitionKey, previous: PartitionRegistration, current: PartitionRegistration
    ) -> None:
        previous_isr = previous.isr
        current_isr = current.isr
        if previous_isr is not current_isr and previous_isr != current_isr:
            for broker_id in previous_isr:
                if broker_id not in current_isr:
                    self._isr_discard(broker_id, key)
            self._isr_add(
                [broker_id for broker_id in current_isr if broker_id not in previous_isr], key
            )
        previous_replicas = previous.replicas
        current_replicas = current.replicas
        previous_preferred = previous_replicas[0] if previous_replicas else NO_LEADER
        current_preferred = current_replicas[0] if current_replicas else NO_LEADER
        if previous.leader != current.leader or previous_preferred != current_preferred:
            self._remove_leadership(key, previous.leader, previous_preferred)
            self._add_leadership(key, current.leader, current_preferred)

    def _add_leadership(self, key: PartitionKey, leader: int, preferred: int) -> None:
        if leader == NO_LEADER:
            self._leaderless.add(key)
        else:
            counts = self._leader_counts
            counts[leader] = counts.get(leader, 0) + 1
        if preferred != NO_LEADER:
            counts = self._preferred_counts
            counts[preferred] = counts.get(preferred, 0) + 1
        if leader != preferred:
            self._not_led_by_preferred.add(key)
        elif leader != NO_LEADER:
            counts = self._preferred_leader_counts
            counts[leader] = counts.get(leader, 0) + 1

    def _remove_leadership(self, key: PartitionKey, leader: int, preferred: int) -> None:
        if leader == NO_LEADER:
            self._leaderless.discard(key)
        else:
            _decrement(self._leader_counts, leader)
        if preferred != NO_LEADER:
            _decrement(self._preferred_counts, preferred)
        if leader != preferred:
            self._not_led_by_preferred.discard(key)
        elif leader != NO_LEADER:
            _decrement(self._preferred_leader_counts, leader)

    # --- reading -------------------------------------------------------------------------

    @property
    def topics(self) -> Mapping[TopicId, TopicImage]:
        return MappingProxyType(self._topics)

    @property
    def topic_ids_by_name(self) -> Mapping[str, TopicId]:
        return MappingProxyType(self._topic_ids_by_name)

    def topic(self, topic_id: TopicId) -> TopicImage | None:
        return self._topics.get(topic_id)

    def colliding_topic(self, name: str) -> str | None:
        """Another topic whose name differs from ``name`` only by '.' against '_'."""
        for existing in sorted(self._names_by_collision_key.get(topic_collision_key(name), ())):
            if existing != name:
                return existing
        return None

    def topic_by_name(self, name: str) -> TopicImage | None:
        topic_id = self._topic_ids_by_name.get(name)
        return None if topic_id is None else self._topics[topic_id]

    def partition(self, topic_id: TopicId, partition_id: int) -> PartitionRegistration | None:
        topic = self._topics.get(topic_id)
        return None if topic is None else topic._partitions.get(partition_id)

    @property
    def partition_count(self) -> int:
        return self._partition_count

    def partitions(self) -> Iterator[tuple[PartitionKey, PartitionRegistration]]:
        for topic_id, topic in self._topics.items():
            for partition_id, registration in topic._partitions.items():
                yield (topic_id, partition_id), registration

    def partitions_with_isr_member(self, broker_id: int) -> Set[PartitionKey]:
        """What fencing or shutting down ``broker_id`` must take it out of."""
        return self._isr_partitions.get(broker_id, _EMPTY_KEYS)

    @property
    def leaderless_partitions(self) -> Set[PartitionKey]:
        """Candidates for an election when a broker unfences or unclean election is enabled."""
        return self._leaderless

    @property
    def partitions_not_led_by_preferred(self) -> Set[PartitionKey]:
        """What a preferred-leader rebalance walks; leaderless partitions are included."""
        return self._not_led_by_preferred

    def leader_count(self, broker_id: int) -> int:
        return self._leader_counts.get(broker_id, 0)

    def preferred_count(self, broker_id: int) -> int:
        """Partitions whose preferred replica (``replicas[0]``) is ``broker_id``."""
        return self._preferred_counts.get(broker_id, 0)

    def preferred_and_leading_count(self, broker_id: int) -> int:
        """Of :meth:`preferred_count`, those ``broker_id`` leads: the leader-imbalance ratio is
        ``1 - preferred_and_leading_count / preferred_count``."""
        return self._preferred_leader_counts.get(broker_id, 0)

    @property
    def leader_counts(self) -> Mapping[int, int]:
        return MappingProxyType(self._leader_counts)

    @property
    def preferred_counts(self) -> Mapping[int, int]:
        return MappingProxyType(self._preferred_counts)

    @property
    def preferred_and_leading_counts(self) -> Mapping[int, int]:
        return MappingProxyType(self._preferred_leader_counts)

    def __eq__(self, other: object) -> bool:
        """Equal topics and partitions; the indexes are derived from them."""
        if not isinstance(other, TopicsImage):
            return NotImplemented
        return self._topic_ids_by_name == other._topic_ids_by_name and self._topics == other._topics

    __hash__ = None  # type: ignore[assignment]


def _decrement(counts: dict[int, int], broker_id: int) -> None:
    count = counts[broker_id]
    if count == 1:
        del counts[broker_id]
    else:
        counts[broker_id] = count - 1
