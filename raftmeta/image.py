"""The metadata image: what the committed records say the cluster looks like.

Every voter and observer builds its image by replaying the same records in the same order, so
replay must be deterministic and must refuse what it cannot apply: a record that names a topic,
partition or broker registration that does not exist, or that would give a topic name a second
id, raises :class:`ReplayError` and leaves the node to stop rather than diverge.

Besides the state itself the image keeps the indexes the controller asks for on every fence,
election and rebalance, updated on each replay so no question costs a scan of a million
partitions: broker → partitions whose ISR holds it, leaderless partitions, partitions not led
by their preferred replica, and per-broker leader and preferred-replica counts.

Partitions dominate memory, so a registration is a slotted object of tuples and ints, about
100 bytes, and its ISR tuple is the replica tuple itself whenever the two are equal, as they
usually are. With its key, index entries and its topic's dict slot a partition costs about
half a kilobyte: a million partitions on 100 brokers fit in about 540 MiB.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Set
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeAlias

from raftmeta.records import (
    LEADER_RECOVERY_UNCHANGED,
    LEADER_UNCHANGED,
    NO_LEADER,
    AccessControlEntryRecord,
    AclOperation,
    AclPatternType,
    AclPermissionType,
    AclResourceType,
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ClearElrRecord,
    ConfigRecord,
    ConfigResourceType,
    ControlledShutdownChange,
    FeatureLevelRecord,
    FencingChange,
    NoOpRecord,
    PartitionChangeRecord,
    PartitionRecord,
    Record,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    RemoveAccessControlEntryRecord,
    RemoveTopicRecord,
    RequestOutcomeRecord,
    TopicId,
    TopicRecord,
    UnregisterBrokerRecord,
    Uuid,
    encode_each,
    encode_record,
    fast_constructor,
    uuid_to_str,
)

PartitionKey: TypeAlias = tuple[TopicId, int]
"""(topic id, partition id): names a partition independent of its topic's current name."""

ConfigResource: TypeAlias = tuple[int, str]
"""(:class:`ConfigResourceType` id, resource name)."""

AclResourceKey: TypeAlias = tuple[int, int, str]
"""(:class:`AclResourceType` id, :class:`AclPatternType` id, resource name) of an ACL."""

AclBindingKey: TypeAlias = tuple[int, str, int, str, str, int, int]
"""An ACL's fields without its id: two ACLs with equal keys grant or deny the same thing."""

WILDCARD_RESOURCE = "*"
"""A LITERAL resource name matching every resource of its type, as in Kafka."""

_ACL_RESOURCE_TYPES = frozenset(int(kind) for kind in AclResourceType if kind > AclResourceType.ANY)
_ACL_PATTERN_TYPES = frozenset((int(AclPatternType.LITERAL), int(AclPatternType.PREFIXED)))
_ACL_OPERATIONS = frozenset(int(op) for op in AclOperation if op > AclOperation.ANY)
_ACL_PERMISSIONS = frozenset((int(AclPermissionType.DENY), int(AclPermissionType.ALLOW)))

_EMPTY_KEYS: frozenset[PartitionKey] = frozenset()
_FULL_RECOVERY_STATES = (0, 1)
_FENCING_CHANGES = frozenset(int(change) for change in FencingChange)
_SHUTDOWN_CHANGES = frozenset(int(change) for change in ControlledShutdownChange)
_KNOWN_RESOURCE_TYPES = frozenset(
    int(kind) for kind in ConfigResourceType if kind is not ConfigResourceType.UNKNOWN
)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
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


def topic_collision_key(name: str) -> str:
    """Kafka's metric names turn '.' into '_', so names differing only there would collide."""
    return name.replace(".", "_")


class ReplayError(Exception):
    """A record the image cannot apply. Fatal: continuing would diverge from the quorum."""

    def __init__(self, reason: str, offset: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset

    def __str__(self) -> str:
        if self.offset is None:
            return self.reason
        return f"record at offset {self.offset}: {self.reason}"


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    broker_id: int
    incarnation_id: Uuid
    broker_epoch: int
    endpoints: tuple[BrokerEndpoint, ...]
    features: tuple[BrokerFeature, ...]
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool

    @property
    def is_active(self) -> bool:
        """Whether the broker may lead partitions and be added to an ISR."""
        return not self.fenced and not self.in_controlled_shutdown

    @classmethod
    def from_record(cls, record: RegisterBrokerRecord) -> BrokerRegistration:
        return cls(
            record.broker_id,
            record.incarnation_id,
            record.broker_epoch,
            record.endpoints,
            record.features,
            record.rack,
            bool(record.fenced),
            bool(record.in_controlled_shutdown),
        )

    def to_record(self) -> RegisterBrokerRecord:
        return RegisterBrokerRecord(
            self.broker_id,
            self.incarnation_id,
            self.broker_epoch,
            self.endpoints,
            self.features,
            self.rack,
            self.fenced,
            self.in_controlled_shutdown,
        )


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
        elif recovery_state not in _FULL_RECOVERY_STATES:
            raise ReplayError(f"PartitionChangeRecord leader_recovery_state {recovery_state}")
        replicas = self.replicas if change.replicas is None else change.replicas
        isr = self.isr if change.isr is None else change.isr
        if isr is not replicas and isr == replicas:
            isr = replicas
        elr = change.eligible_leader_replicas
        last_known_elr = change.last_known_elr
        return _build_partition(
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


_build_partition = fast_constructor(PartitionRegistration)
_build_partition_record = fast_constructor(PartitionRecord)


def _partition_from_record(record: PartitionRecord) -> PartitionRegistration:
    if record.leader < NO_LEADER:
        raise ReplayError(f"PartitionRecord leader {record.leader} is below {NO_LEADER}")
    if record.leader_recovery_state not in _FULL_RECOVERY_STATES:
        raise ReplayError(f"PartitionRecord leader_recovery_state {record.leader_recovery_state}")
    replicas = record.replicas
    isr = record.isr
    if isr == replicas:
        isr = replicas
    return _build_partition(
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
    ``MetadataImage._writable_topic``); others only read it."""

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


def acl_binding_key(acl: AccessControlEntryRecord) -> AclBindingKey:
    return (
        acl.resource_type,
        acl.resource_name,
        acl.pattern_type,
        acl.principal,
        acl.host,
        acl.operation,
        acl.permission_type,
    )


def acl_problem(acl: AccessControlEntryRecord) -> str | None:
    """Why ``acl`` cannot be an ACL (a filter-only or unknown enum value, an empty name), or
    ``None``. Replay refuses such a record; the controller never writes one."""
    if acl.resource_type not in _ACL_RESOURCE_TYPES:
        return f"Invalid resourceType {acl.resource_type}"
    if acl.pattern_type not in _ACL_PATTERN_TYPES:
        return f"Invalid patternType {acl.pattern_type}"
    if acl.operation not in _ACL_OPERATIONS:
        return f"Invalid operation {acl.operation}"
    if acl.permission_type not in _ACL_PERMISSIONS:
        return f"Invalid permissionType {acl.permission_type}"
    if not acl.resource_name:
        return "Resource name should not be empty"
    return None


class AclIndex:
    """The ACLs of an image, by id and by resource pattern.

    The authorizer asks, for one resource, every ACL that could apply: the LITERAL ACLs on its
    name and on ``*``, and the PREFIXED ACLs on each prefix of its name. Each is a dict lookup,
    so a check costs the length of the name, never a scan of every ACL.
    """

    __slots__ = ("_by_id", "_by_key", "_by_resource")

    def __init__(self) -> None:
        self._by_id: dict[Uuid, AccessControlEntryRecord] = {}
        self._by_key: dict[AclBindingKey, Uuid] = {}
        self._by_resource: dict[AclResourceKey, dict[Uuid, AccessControlEntryRecord]] = {}

    def copy(self) -> AclIndex:
        other = AclIndex()
        other._by_id = dict(self._by_id)
        other._by_key = dict(self._by_key)
        other._by_resource = {key: dict(acls) for key, acls in self._by_resource.items()}
        return other

    def add(self, acl: AccessControlEntryRecord) -> None:
        problem = acl_problem(acl)
        if problem is not None:
            raise ReplayError(f"AccessControlEntryRecord {uuid_to_str(acl.acl_id)}: {problem}")
        if acl.acl_id in self._by_id:
            raise ReplayError(f"an ACL with id {uuid_to_str(acl.acl_id)} already exists")
        key = acl_binding_key(acl)
        if key in self._by_key:
            raise ReplayError(
                f"ACL {uuid_to_str(acl.acl_id)} repeats ACL {uuid_to_str(self._by_key[key])}"
            )
        self._by_id[acl.acl_id] = acl
        self._by_key[key] = acl.acl_id
        resource = (acl.resource_type, acl.pattern_type, acl.resource_name)
        self._by_resource.setdefault(resource, {})[acl.acl_id] = acl

    def remove(self, acl_id: Uuid) -> None:
        acl = self._by_id.pop(acl_id, None)
        if acl is None:
            raise ReplayError(f"no ACL with id {uuid_to_str(acl_id)}")
        del self._by_key[acl_binding_key(acl)]
        resource = (acl.resource_type, acl.pattern_type, acl.resource_name)
        same = self._by_resource[resource]
        del same[acl_id]
        if not same:
            del self._by_resource[resource]

    @property
    def by_id(self) -> Mapping[Uuid, AccessControlEntryRecord]:
        return MappingProxyType(self._by_id)

    def find(self, acl: AccessControlEntryRecord) -> Uuid | None:
        """The id of an ACL equal to ``acl`` but for its id, if there is one."""
        return self._by_key.get(acl_binding_key(acl))

    def applicable(self, resource_type: int, name: str) -> Iterator[AccessControlEntryRecord]:
        """Every ACL whose resource pattern matches resource ``name`` of ``resource_type``."""
        by_resource = self._by_resource
        if not by_resource:
            return
        literal = int(AclPatternType.LITERAL)
        names = (name,) if name == WILDCARD_RESOURCE else (name, WILDCARD_RESOURCE)
        for literal_name in names:
            found = by_resource.get((resource_type, literal, literal_name))
            if found:
                yield from found.values()
        prefixed = int(AclPatternType.PREFIXED)
        for end in range(1, len(name) + 1):
            found = by_resource.get((resource_type, prefixed, name[:end]))
            if found:
                yield from found.values()

    def __len__(self) -> int:
        return len(self._by_id)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AclIndex):
            return NotImplemented
        return self._by_id == other._by_id

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class _Content:
    """The parts of an image its records are made from (the indexes are derived from them)."""

    features: Mapping[str, int]
    brokers: Mapping[int, BrokerRegistration]
    topics: Mapping[TopicId, TopicImage]
    topic_ids_by_name: Mapping[str, TopicId]
    configs: Mapping[ConfigResource, Mapping[str, str]]
    acls: Mapping[Uuid, AccessControlEntryRecord]
    controllers: Mapping[int, RegisterControllerRecord]
    requests_seen: tuple[RequestOutcomeRecord, ...] = ()

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
            yield from _config_records(topic_resource, name, configs.get((topic_resource, name)))
            partitions = topic._partitions
            to_record = PartitionRegistration.to_record
            for partition_id in sorted(partitions):
                yield to_record(partitions[partition_id], topic_id, partition_id)
        for resource in sorted(configs):
            resource_type, resource_name = resource
            if resource_type == topic_resource and resource_name in topic_ids_by_name:
                continue
            yield from _config_records(resource_type, resource_name, configs[resource])
        acls = self.acls
        for acl_id in sorted(acls):
            yield acls[acl_id]
        # Last, and in the order they were applied, which replaying them keeps.
        yield from self.requests_seen


class MetadataImage:
    """The cluster as of ``offset``, the log offset of the last record applied (-1: none)."""

    def __init__(self) -> None:
        self._offset = -1
        self._features: dict[str, int] = {}
        self._brokers: dict[int, BrokerRegistration] = {}
        self._topics: dict[TopicId, TopicImage] = {}
        self._topic_ids_by_name: dict[str, TopicId] = {}
        self._names_by_collision_key: dict[str, frozenset[str]] = {}
        """Topic names by :func:`topic_collision_key`, so CreateTopics checks in one lookup."""
        self._configs: dict[ConfigResource, dict[str, str]] = {}
        self._acls = AclIndex()
        self._controllers: dict[int, RegisterControllerRecord] = {}
        """The latest registration (KIP-919) of each controller, by controller id."""
        self._partition_count = 0
        # Indexes, derived from the partitions and kept in step on every replay. Empty sets and
        # zero counts are dropped, so two images with equal state hold equal indexes.
        self._isr_partitions: dict[int, set[PartitionKey]] = {}
        self._isr_owned: set[int] = set()
        """Brokers whose set in ``_isr_partitions`` this image may change in place; the others'
        are shared with a copy and are copied before their first change."""
        self._topics_owned: set[TopicId] = set()
        """Topics whose ``TopicImage`` this image may change in place; the others are shared
        with a copy and are copied before their first change (copy on write, as the ISR
        index's sets)."""
        self._leaderless: set[PartitionKey] = set()
        self._not_led_by_preferred: set[PartitionKey] = set()
        self._leader_counts: dict[int, int] = {}
        self._preferred_counts: dict[int, int] = {}
        self._preferred_leader_counts: dict[int, int] = {}
        self._requests_seen = RequestsSeen()

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
        other._features = dict(self._features)
        other._brokers = dict(self._brokers)
        # Topics are shared until either image changes one: copying each cost 0.3 s at 40,000
        # topics, on the controller's loop at every leadership change and discarded request.
        other._topics = dict(self._topics)
        other._topics_owned = set()
        self._topics_owned = set()
        other._topic_ids_by_name = dict(self._topic_ids_by_name)
        # Frozen sets, replaced on change: a plain copy of the dict keeps the images apart.
        other._names_by_collision_key = dict(self._names_by_collision_key)
        other._configs = {resource: dict(entries) for resource, entries in self._configs.items()}
        other._acls = self._acls.copy()
        other._controllers = dict(self._controllers)
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
        other._requests_seen = self._requests_seen.copy()
        return other

    # --- replay --------------------------------------------------------------------------

    def apply(self, record: Record, offset: int) -> None:
        """Applies one committed record found at ``offset``; offsets must increase."""
        if offset <= self._offset:
            raise ReplayError(f"already at offset {self._offset}", offset)
        replay = _REPLAY_BY_TYPE.get(type(record))
        if replay is None:
            raise ReplayError(f"{type(record).__name__} is not a metadata record", offset)
        try:
            replay(self, record)
        except ReplayError as exc:
            exc.offset = offset
            raise
        self._offset = offset

    def apply_batch(self, records: Iterable[Record], base_offset: int) -> None:
        """Applies records found at ``base_offset``, ``base_offset + 1``, and so on."""
        if base_offset <= self._offset:
            raise ReplayError(f"already at offset {self._offset}", base_offset)
        replay_by_type = _REPLAY_BY_TYPE
        offset = base_offset - 1
        try:
            for record in records:
                offset += 1
                replay = replay_by_type.get(type(record))
                if replay is None:
                    raise ReplayError(f"{type(record).__name__} is not a metadata record")
                replay(self, record)
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
        replay_by_type = _REPLAY_BY_TYPE
        with _collector_paused():
            for position, record in enumerate(records):
                replay = replay_by_type.get(type(record))
                try:
                    if replay is None:
                        raise ReplayError(f"{type(record).__name__} is not a metadata record")
                    replay(image, record)
                except ReplayError as exc:
                    exc.reason = f"snapshot record {position}: {exc.reason}"
                    raise
        image._offset = offset
        return image

    def _replay_register_broker(self, record: RegisterBrokerRecord) -> None:
        self._brokers[record.broker_id] = BrokerRegistration.from_record(record)

    def _replay_register_controller(self, record: RegisterControllerRecord) -> None:
        self._controllers[record.controller_id] = record

    def _registration_at_epoch(self, broker_id: int, broker_epoch: int) -> BrokerRegistration:
        registration = self._brokers.get(broker_id)
        if registration is None:
            raise ReplayError(f"no registration for broker {broker_id}")
        if registration.broker_epoch != broker_epoch:
            raise ReplayError(
                f"broker {broker_id} is registered at epoch {registration.broker_epoch}, "
                f"not {broker_epoch}"
            )
        return registration

    def _replay_unregister_broker(self, record: UnregisterBrokerRecord) -> None:
        self._registration_at_epoch(record.broker_id, record.broker_epoch)
        del self._brokers[record.broker_id]

    def _replay_broker_change(self, record: BrokerRegistrationChangeRecord) -> None:
        registration = self._registration_at_epoch(record.broker_id, record.broker_epoch)
        if record.fenced not in _FENCING_CHANGES:
            raise ReplayError(f"fenced value {record.fenced} is not -1, 0 or 1")
        if record.in_controlled_shutdown not in _SHUTDOWN_CHANGES:
            raise ReplayError(
                f"in_controlled_shutdown value {record.in_controlled_shutdown} is not 0 or 1"
            )
        fenced = registration.fenced
        if record.fenced == FencingChange.FENCE:
            fenced = True
        elif record.fenced == FencingChange.UNFENCE:
            fenced = False
        in_controlled_shutdown = (
            registration.in_controlled_shutdown
            or record.in_controlled_shutdown == ControlledShutdownChange.IN_CONTROLLED_SHUTDOWN
        )
        self._brokers[record.broker_id] = BrokerRegistration(
            registration.broker_id,
            registration.incarnation_id,
            registration.broker_epoch,
            registration.endpoints,
            registration.features,
            registration.rack,
            fenced,
            in_controlled_shutdown,
        )

    def _replay_topic(self, record: TopicRecord) -> None:
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

    def _replay_partition(self, record: PartitionRecord) -> None:
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
        if recovery_state not in _FULL_RECOVERY_STATES:
            raise ReplayError(f"PartitionRecord leader_recovery_state {recovery_state}")
        replicas = record.replicas
        isr = record.isr
        if isr == replicas:
            isr = replicas
        registration = _build_partition(
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
        partition_id = record.partition_id
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

    def _replay_partition_change(self, record: PartitionChangeRecord) -> None:
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

    def _replay_remove_topic(self, record: RemoveTopicRecord) -> None:
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
        self._configs.pop((int(ConfigResourceType.TOPIC), topic._name), None)
        topic_id = topic._topic_id
        for partition_id, registration in topic._partitions.items():
            self._unindex_partition((topic_id, partition_id), registration)
        self._partition_count -= len(topic._partitions)

    def _replay_config(self, record: ConfigRecord) -> None:
        if record.resource_type not in _KNOWN_RESOURCE_TYPES:
            raise ReplayError(f"unknown config resource type {record.resource_type}")
        resource = (record.resource_type, record.resource_name)
        if record.value is None:
            configs = self._configs.get(resource)
            if configs is not None:
                configs.pop(record.name, None)
                if not configs:
                    del self._configs[resource]
        else:
            configs = self._configs.get(resource)
            if configs is None:
                self._configs[resource] = {record.name: record.value}
            else:
                configs[record.name] = record.value

    def _replay_acl(self, record: AccessControlEntryRecord) -> None:
        self._acls.add(record)

    def _replay_remove_acl(self, record: RemoveAccessControlEntryRecord) -> None:
        self._acls.remove(record.acl_id)

    def _replay_request_outcome(self, record: RequestOutcomeRecord) -> None:
        self._requests_seen.add(record)

    def _replay_clear_elr(self, record: ClearElrRecord) -> None:
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

    def _replay_feature_level(self, record: FeatureLevelRecord) -> None:
        if record.feature_level == 0:
            self._features.pop(record.name, None)
        else:
            self._features[record.name] = record.feature_level

    # --- indexes -------------------------------------------------------------------------

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
    def offset(self) -> int:
        return self._offset

    @property
    def features(self) -> Mapping[str, int]:
        return MappingProxyType(self._features)

    @property
    def brokers(self) -> Mapping[int, BrokerRegistration]:
        return MappingProxyType(self._brokers)

    def broker(self, broker_id: int) -> BrokerRegistration | None:
        return self._brokers.get(broker_id)

    @property
    def controllers(self) -> Mapping[int, RegisterControllerRecord]:
        """Each registered controller's latest registration, by controller id."""
        return MappingProxyType(self._controllers)

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

    def configs(self, resource_type: int, resource_name: str) -> Mapping[str, str]:
        configs = self._configs.get((resource_type, resource_name))
        return MappingProxyType({} if configs is None else configs)

    @property
    def config_resources(self) -> Set[ConfigResource]:
        return self._configs.keys()

    @property
    def requests_seen(self) -> RequestsSeen:
        """Outcomes of recent admin requests that carried a request id."""
        return self._requests_seen

    @property
    def acls(self) -> AclIndex:
        """The ACLs, indexed for the authorizer. Read it; only replay changes it."""
        return self._acls

    # The sets below are live: copy one before applying more records while iterating it.

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

    # --- snapshots and comparison --------------------------------------------------------

    def snapshot_work(self) -> Callable[[], list[bytes]]:
        """This image's encoded records, to be made later on another thread.

        The image is copied now (0.4 s at a million partitions) and the copy encoded when the
        work runs (seconds at that size), so the owner can go on applying commits meanwhile.
        """
        # Only what the records are made of is copied, not the indexes: the copy is the part
        # that still holds the event loop, and the indexes would double it.
        frozen = _Content(
            dict(self._features),
            dict(self._brokers),
            {topic_id: topic.copy() for topic_id, topic in self._topics.items()},
            dict(self._topic_ids_by_name),
            {resource: dict(entries) for resource, entries in self._configs.items()},
            dict(self._acls._by_id),
            dict(self._controllers),
            self._requests_seen.records(),
        )
        return lambda: encode_each(frozen.records())

    def to_records(self) -> Iterator[Record]:
        """The image as records, in a canonical order so equal images write equal snapshots.

        Order: feature levels, brokers, controllers, then per topic (by name) its TopicRecord,
        its configs and its partitions (by id), then every other config, then the ACLs by id.
        """
        return _Content(
            self._features,
            self._brokers,
            self._topics,
            self._topic_ids_by_name,
            self._configs,
            self._acls._by_id,
            self._controllers,
            self._requests_seen.records(),
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
        return (
            self._offset == other._offset
            and self._features == other._features
            and self._brokers == other._brokers
            and self._topic_ids_by_name == other._topic_ids_by_name
            and self._configs == other._configs
            and self._acls == other._acls
            and self._controllers == other._controllers
            and self._topics == other._topics
            and self._requests_seen == other._requests_seen
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"MetadataImage(offset={self._offset}, brokers={len(self._brokers)}, "
            f"topics={len(self._topics)}, partitions={self._partition_count})"
        )


def _ignore(_image: MetadataImage, _record: Record) -> None:
    pass


# Functions, not bound methods stored on each image: a dict of bound methods would tie every
# image into a reference cycle, leaving a million-partition image to wait for the cycle
# collector instead of being freed when dropped.
_REPLAY_BY_TYPE: dict[type[Any], Callable[[MetadataImage, Any], None]] = {
    RegisterBrokerRecord: MetadataImage._replay_register_broker,
    UnregisterBrokerRecord: MetadataImage._replay_unregister_broker,
    BrokerRegistrationChangeRecord: MetadataImage._replay_broker_change,
    TopicRecord: MetadataImage._replay_topic,
    PartitionRecord: MetadataImage._replay_partition,
    PartitionChangeRecord: MetadataImage._replay_partition_change,
    RemoveTopicRecord: MetadataImage._replay_remove_topic,
    ConfigRecord: MetadataImage._replay_config,
    FeatureLevelRecord: MetadataImage._replay_feature_level,
    ClearElrRecord: MetadataImage._replay_clear_elr,
    AccessControlEntryRecord: MetadataImage._replay_acl,
    RemoveAccessControlEntryRecord: MetadataImage._replay_remove_acl,
    RegisterControllerRecord: MetadataImage._replay_register_controller,
    NoOpRecord: _ignore,
    RequestOutcomeRecord: MetadataImage._replay_request_outcome,
}


def _decrement(counts: dict[int, int], broker_id: int) -> None:
    count = counts[broker_id]
    if count == 1:
        del counts[broker_id]
    else:
        counts[broker_id] = count - 1


def _config_records(
    resource_type: int, resource_name: str, configs: Mapping[str, str] | None
) -> Iterator[ConfigRecord]:
    if configs:
        for name in sorted(configs):
            yield ConfigRecord(resource_type, resource_name, name, configs[name])


# --- outcomes of admin requests that carried a request id ----------------------------------

REQUEST_IDS_KEPT = 10_000
"""How many request outcomes an image keeps at most; the oldest go first."""

REQUEST_OUTCOME_BYTES_KEPT = 32 * 1024 * 1024
"""How many outcome bytes an image keeps at most (every node holds them); the oldest go first."""

REQUEST_ID_RETENTION_MS = 10 * 60 * 1000
"""How long an outcome is kept after it was written, by the writers' clocks: far longer than a
client retries one call (its request.timeout.ms, 30 s by default)."""


class RequestsSeen:
    """Recent :class:`RequestOutcomeRecord`\\ s by request id, in the order they were applied.

    Bounded by count and bytes, and expiring: an outcome is dropped once a later record carries
    a time more than :data:`REQUEST_ID_RETENTION_MS` past its own. The controller writes times
    that never go back (a new leader whose clock is behind writes the newest time it has seen),
    so the table is in time order and the oldest entry is always the first to go. Every
    decision reads only record fields and the order of replay, so every node, and a node that
    loads a snapshot of this table, holds the same entries at the same offset.
    """

    __slots__ = ("_by_id", "_bytes", "_newest_ms")

    def __init__(self) -> None:
        self._by_id: dict[Uuid, RequestOutcomeRecord] = {}
        self._bytes = 0
        self._newest_ms = 0

    @property
    def newest_ms(self) -> int:
        """The latest time an applied outcome carried: the least the next one may carry."""
        return self._newest_ms

    def copy(self) -> RequestsSeen:
        other = RequestsSeen()
        other._by_id = dict(self._by_id)
        other._bytes = self._bytes
        other._newest_ms = self._newest_ms
        return other

    def add(self, record: RequestOutcomeRecord) -> None:
        if len(record.request_id) != 16:
            raise ReplayError(f"request id of {len(record.request_id)} bytes; an id has 16")
        by_id = self._by_id
        previous = by_id.pop(record.request_id, None)
        if previous is not None:
            self._bytes -= len(previous.outcome)
        by_id[record.request_id] = record
        self._bytes += len(record.outcome)
        if record.written_at_ms > self._newest_ms:
            self._newest_ms = record.written_at_ms
        self._expire()

    def _expire(self) -> None:
        by_id = self._by_id
        oldest_kept_ms = self._newest_ms - REQUEST_ID_RETENTION_MS
        while by_id:
            oldest = next(iter(by_id.values()))
            if (
                len(by_id) <= REQUEST_IDS_KEPT
                and self._bytes <= REQUEST_OUTCOME_BYTES_KEPT
                and oldest.written_at_ms >= oldest_kept_ms
            ):
                return
            del by_id[oldest.request_id]
            self._bytes -= len(oldest.outcome)

    def get(self, request_id: Uuid) -> RequestOutcomeRecord | None:
        """The outcome kept for ``request_id``, unless it has expired."""
        record = self._by_id.get(request_id)
        if record is None or record.written_at_ms < self._newest_ms - REQUEST_ID_RETENTION_MS:
            return None
        return record

    def records(self) -> tuple[RequestOutcomeRecord, ...]:
        """The kept outcomes in the order they were applied (a snapshot replays them so)."""
        return tuple(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RequestsSeen):
            return NotImplemented
        return self.records() == other.records() and self._newest_ms == other._newest_ms

    __hash__ = None  # type: ignore[assignment]
