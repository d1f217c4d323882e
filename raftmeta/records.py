"""Metadata records: the only truth about the cluster; the image is a replay of them.

Type ids and versions are KRaft's api keys and schema versions, so a log dump reads the same
as Kafka's. Each class carries the fields of the Kafka version named by its ``version``: fields
Kafka added later for features raftmeta does not model (ZooKeeper migration, log directories)
are left out, and a class gains them by moving to that later version. A class that moved keeps
a decoder for its older versions (:data:`LEGACY_DECODERS`), so logs and snapshots written
before the move still load: the new fields take their defaults.

Encoding is msgpack, one array per record: ``[type, version, field, field, ...]`` in the order
the dataclass declares its fields. A positional array is smaller and faster to pack and unpack
than a map, and msgpack arrays are self-delimiting, so records concatenate without framing.
An unknown type or version is a :class:`RecordDecodeError`: skipping a record would leave an
image that silently differs from the one the controller holds.

Ids (topic ids, incarnation ids) are 16 raw bytes rather than :class:`uuid.UUID`: msgpack
packs and unpacks bytes natively, bytes hash and compare in C, and a bytes object costs 49
bytes against about 100 for a UUID and the int inside it. :func:`uuid_to_str` gives Kafka's
printed form.

Replica lists are tuples of ints: immutable, hashable, and what msgpack returns when told
``use_list=False``, so decoding builds them without a copy.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, ClassVar, TypeAlias, TypeVar

import msgpack

Uuid: TypeAlias = bytes
"""16 raw bytes, big-endian like Kafka's (most significant bits first)."""

TopicId: TypeAlias = Uuid

ZERO_UUID: Uuid = bytes(16)

NO_LEADER = -1
"""``leader`` of a partition that has none."""

LEADER_UNCHANGED = -2
"""``PartitionChangeRecord.leader`` that leaves the leader and its epoch alone."""

LEADER_RECOVERY_UNCHANGED = -1
"""``PartitionChangeRecord.leader_recovery_state`` that leaves the state alone."""


class LeaderRecoveryState(enum.IntEnum):
    RECOVERED = 0
    RECOVERING = 1
    """Set by an unclean election until the new leader reports its log recovered."""


class FencingChange(enum.IntEnum):
    """Values of ``BrokerRegistrationChangeRecord.fenced``."""

    UNFENCE = -1
    NONE = 0
    FENCE = 1


class ControlledShutdownChange(enum.IntEnum):
    """Values of ``BrokerRegistrationChangeRecord.in_controlled_shutdown``.

    There is no "leave": a broker leaves controlled shutdown by registering again.
    """

    NONE = 0
    IN_CONTROLLED_SHUTDOWN = 1


class ConfigResourceType(enum.IntEnum):
    """Kafka's ``ConfigResource.Type`` ids; cluster-wide defaults are BROKER with name ``""``."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class QuotaEntityType(enum.StrEnum):
    """Kafka's client quota entity types."""

    USER = "user"
    CLIENT_ID = "client-id"
    IP = "ip"


class SecurityProtocol(enum.IntEnum):
    PLAINTEXT = 0
    SSL = 1
    SASL_PLAINTEXT = 2
    SASL_SSL = 3


class AclResourceType(enum.IntEnum):
    """Kafka's ``ResourceType`` ids as ACLs use them; UNKNOWN and ANY only in filters."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class AclPatternType(enum.IntEnum):
    """Kafka's ``PatternType`` ids: an ACL is LITERAL or PREFIXED; ANY and MATCH are filters."""

    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(enum.IntEnum):
    """Kafka's ``AclOperation`` ids; UNKNOWN and ANY only in filters."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(enum.IntEnum):
    """Kafka's ``AclPermissionType`` ids; UNKNOWN and ANY only in filters."""

    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


class RecordType(enum.IntEnum):
    """KRaft api keys of the metadata records raftmeta writes."""

    REGISTER_BROKER = 0
    UNREGISTER_BROKER = 1
    TOPIC = 2
    PARTITION = 3
    CONFIG = 4
    PARTITION_CHANGE = 5
    REMOVE_TOPIC = 9
    USER_SCRAM_CREDENTIAL = 11
    FEATURE_LEVEL = 12
    CLIENT_QUOTA = 14
    BROKER_REGISTRATION_CHANGE = 17
    ACCESS_CONTROL_ENTRY = 18
    REMOVE_ACCESS_CONTROL_ENTRY = 19
    NO_OP = 20
    REMOVE_USER_SCRAM_CREDENTIAL = 22
    REGISTER_CONTROLLER = 27
    CLEAR_ELR = 28
    # raftmeta's own records, at 200 and above, far from Kafka's keys.
    REQUEST_OUTCOME = 200


class RecordDecodeError(ValueError):
    """Bytes that are not a record this build can read; replay must stop, not skip."""


def uuid_to_str(value: Uuid) -> str:
    """Kafka prints ids as unpadded URL-safe base64; matching it lets users paste ids across."""
    return base64.urlsafe_b64encode(value).rstrip(b"=").decode("ascii")


def uuid_from_str(text: str) -> Uuid:
    try:
        value = base64.urlsafe_b64decode(text + "==")
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a base64 id") from exc
    if len(value) != 16:
        raise ValueError(f"{text!r} decodes to {len(value)} bytes; an id has 16")
    return value


# --- record types --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BrokerEndpoint:
    name: str
    """Listener name, unique within one registration."""
    host: str
    port: int
    security_protocol: int


@dataclass(frozen=True, slots=True)
class BrokerFeature:
    name: str
    min_supported_version: int
    max_supported_version: int


@dataclass(frozen=True, slots=True)
class RegisterBrokerRecord:
    """Creates or replaces a registration; ``broker_epoch`` is this record's log offset."""

    record_type: ClassVar[RecordType] = RecordType.REGISTER_BROKER
    version: ClassVar[int] = 1

    broker_id: int
    incarnation_id: Uuid
    broker_epoch: int
    endpoints: tuple[BrokerEndpoint, ...] = ()
    features: tuple[BrokerFeature, ...] = ()
    rack: str | None = None
    fenced: bool = True
    """A new registration is fenced until the broker has caught up with the log."""
    in_controlled_shutdown: bool = False


@dataclass(frozen=True, slots=True)
class UnregisterBrokerRecord:
    record_type: ClassVar[RecordType] = RecordType.UNREGISTER_BROKER
    version: ClassVar[int] = 0

    broker_id: int
    broker_epoch: int
    """Must match the registration, so a stale unregister cannot remove a newer incarnation."""


@dataclass(frozen=True, slots=True)
class BrokerRegistrationChangeRecord:
    record_type: ClassVar[RecordType] = RecordType.BROKER_REGISTRATION_CHANGE
    version: ClassVar[int] = 1

    broker_id: int
    broker_epoch: int
    fenced: int = 0
    """A :class:`FencingChange` value: -1 unfence, 0 no change, 1 fence."""
    in_controlled_shutdown: int = 0
    """A :class:`ControlledShutdownChange` value: 0 no change, 1 entering."""


@dataclass(frozen=True, slots=True)
class TopicRecord:
    record_type: ClassVar[RecordType] = RecordType.TOPIC
    version: ClassVar[int] = 0

    name: str
    topic_id: TopicId


@dataclass(frozen=True, slots=True)
class PartitionRecord:
    """The whole state of one partition: written at creation and in snapshots."""

    record_type: ClassVar[RecordType] = RecordType.PARTITION
    version: ClassVar[int] = 2
    """Kafka's v2, less v1's log directories; v0 (no ELR fields) still decodes."""

    partition_id: int
    topic_id: TopicId
    replicas: tuple[int, ...]
    """In preference order: ``replicas[0]`` is the preferred leader."""
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    leader: int = NO_LEADER
    leader_recovery_state: int = 0
    leader_epoch: int = 0
    partition_epoch: int = 0
    eligible_leader_replicas: tuple[int, ...] = ()
    """KIP-966: replicas that left the ISR while it was below min ISR and still hold every
    committed write, so a clean election may pick one once the ISR is empty."""
    last_known_elr: tuple[int, ...] = ()
    """KIP-966: the last leader before the ISR became empty; electing it counts as unclean."""


@dataclass(frozen=True, slots=True)
class PartitionChangeRecord:
    """A delta on one partition; ``None`` and the sentinels mean "keep the current value".

    Replaying it always bumps the partition epoch, and bumps the leader epoch whenever
    ``leader`` is not :data:`LEADER_UNCHANGED`, even to the same broker: that is how the
    controller forces followers to notice a change.
    """

    record_type: ClassVar[RecordType] = RecordType.PARTITION_CHANGE
    version: ClassVar[int] = 2
    """Kafka's v2, less v1's log directories; v0 (no ELR fields) still decodes."""

    partition_id: int
    topic_id: TopicId
    isr: tuple[int, ...] | None = None
    leader: int = LEADER_UNCHANGED
    """:data:`LEADER_UNCHANGED` (-2), :data:`NO_LEADER` (-1) or a broker id."""
    replicas: tuple[int, ...] | None = None
    removing_replicas: tuple[int, ...] | None = None
    adding_replicas: tuple[int, ...] | None = None
    leader_recovery_state: int = LEADER_RECOVERY_UNCHANGED
    eligible_leader_replicas: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class RemoveTopicRecord:
    """Deletes the topic with its partitions and its configs."""

    record_type: ClassVar[RecordType] = RecordType.REMOVE_TOPIC
    version: ClassVar[int] = 0

    topic_id: TopicId


@dataclass(frozen=True, slots=True)
class ConfigRecord:
    record_type: ClassVar[RecordType] = RecordType.CONFIG
    version: ClassVar[int] = 0

    resource_type: int
    """A :class:`ConfigResourceType` id."""
    resource_name: str
    """Topic name or broker id as text; ``""`` with BROKER is the cluster-wide default."""
    name: str
    value: str | None
    """``None`` deletes the config, falling back to the next level's default."""


@dataclass(frozen=True, slots=True)
class QuotaEntityData:
    """One part of a client quota entity: its type (``user``, ``client-id`` or ``ip``) and
    name; a ``None`` name is that type's default entity."""

    entity_type: str
    entity_name: str | None


@dataclass(frozen=True, slots=True)
class ClientQuotaRecord:
    """Sets (or with ``remove`` deletes) one quota ``key`` of one client quota entity, as
    Kafka's record of the same name. ``entity`` is sorted by type, so one entity is always
    written the same way."""

    record_type: ClassVar[RecordType] = RecordType.CLIENT_QUOTA
    version: ClassVar[int] = 0

    entity: tuple[QuotaEntityData, ...]
    key: str
    value: float
    remove: bool = False


@dataclass(frozen=True, slots=True)
class FeatureLevelRecord:
    record_type: ClassVar[RecordType] = RecordType.FEATURE_LEVEL
    version: ClassVar[int] = 0

    name: str
    feature_level: int
    """Level 0 means the feature is not finalized, so replay removes it."""


@dataclass(frozen=True, slots=True)
class ClearElrRecord:
    """Empties the ELR and last known ELR of one topic's partitions, or of every partition
    when ``topic_name`` is ``""``: written when ``min.insync.replicas`` changes, because an ELR
    is only sound against the min ISR it was built under."""

    record_type: ClassVar[RecordType] = RecordType.CLEAR_ELR
    version: ClassVar[int] = 0

    topic_name: str = ""


@dataclass(frozen=True, slots=True)
class AccessControlEntryRecord:
    """One ACL, as Kafka's record of the same name: who may (or may not) do what, on what.

    The enum fields hold Kafka's ids (:class:`AclResourceType`, :class:`AclPatternType`,
    :class:`AclOperation`, :class:`AclPermissionType`); replay refuses the filter-only values.
    """

    record_type: ClassVar[RecordType] = RecordType.ACCESS_CONTROL_ENTRY
    version: ClassVar[int] = 0

    acl_id: Uuid
    resource_type: int
    resource_name: str
    """``*`` with LITERAL matches every resource of the type."""
    pattern_type: int
    principal: str
    """``Type:name``; ``User:*`` matches every user."""
    host: str
    """``*`` for any host."""
    operation: int
    permission_type: int


@dataclass(frozen=True, slots=True)
class RemoveAccessControlEntryRecord:
    """Deletes the ACL with ``acl_id``; replay refuses an id it does not hold."""

    record_type: ClassVar[RecordType] = RecordType.REMOVE_ACCESS_CONTROL_ENTRY
    version: ClassVar[int] = 0

    acl_id: Uuid


@dataclass(frozen=True, slots=True)
class UserScramCredentialRecord:
    """One user's SCRAM credential under one mechanism, as Kafka's record of the same name:
    salted and iterated, never the password. Replaces the user's credential of that mechanism.

    ``stored_key`` and ``server_key`` let a server check a login and answer it; they are as
    good as the password against this cluster, so nothing prints them (see ``log dump``).
    """

    record_type: ClassVar[RecordType] = RecordType.USER_SCRAM_CREDENTIAL
    version: ClassVar[int] = 0

    name: str
    mechanism: int
    """Kafka's SCRAM mechanism id: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512."""
    salt: bytes = dataclasses.field(repr=False)
    stored_key: bytes = dataclasses.field(repr=False)
    server_key: bytes = dataclasses.field(repr=False)
    iterations: int


@dataclass(frozen=True, slots=True)
class RemoveUserScramCredentialRecord:
    """Deletes one user's credential of one mechanism; replay refuses one it does not hold."""

    record_type: ClassVar[RecordType] = RecordType.REMOVE_USER_SCRAM_CREDENTIAL
    version: ClassVar[int] = 0

    name: str
    mechanism: int


@dataclass(frozen=True, slots=True)
class RegisterControllerRecord:
    """A controller's registration (KIP-919): its listeners, so clients bootstrapped to any
    controller learn where every controller, the active one included, is reached.

    Replaces the controller's previous registration; a restarted controller registers again
    under a new ``incarnation_id``. Kafka's ``ZkMigrationReady`` is left out (no ZooKeeper).
    """

    record_type: ClassVar[RecordType] = RecordType.REGISTER_CONTROLLER
    version: ClassVar[int] = 0

    controller_id: int
    incarnation_id: Uuid
    endpoints: tuple[BrokerEndpoint, ...] = ()
    features: tuple[BrokerFeature, ...] = ()


@dataclass(frozen=True, slots=True)
class NoOpRecord:
    """Written by an idle controller so the high watermark and staleness checks keep moving."""

    record_type: ClassVar[RecordType] = RecordType.NO_OP
    version: ClassVar[int] = 0


# --- raftmeta's own records --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RequestOutcomeRecord:
    """The outcome of one admin request that carried a client's request id, written in the
    same batch as the request's effects, so a retry of that request (the client lost the first
    answer) is answered with this outcome instead of running again (and failing, say, with
    TOPIC_ALREADY_EXISTS for the topic it created itself).

    ``outcome`` is the answer as the controller's caller encoded it; the image keeps it
    opaque. ``written_at_ms`` is the writing controller's wall clock, the only time replay
    reads: expiry compares record times with each other, never with the replaying node's clock.
    """

    record_type: ClassVar[RecordType] = RecordType.REQUEST_OUTCOME
    version: ClassVar[int] = 0

    request_id: Uuid
    operation: str
    """The admin operation ("CreateTopics"): a reused id with another operation is refused."""
    written_at_ms: int
    outcome: bytes


Record: TypeAlias = (
    RegisterBrokerRecord
    | UnregisterBrokerRecord
    | BrokerRegistrationChangeRecord
    | TopicRecord
    | PartitionRecord
    | PartitionChangeRecord
    | RemoveTopicRecord
    | ConfigRecord
    | FeatureLevelRecord
    | AccessControlEntryRecord
    | RemoveAccessControlEntryRecord
    | RegisterControllerRecord
    | NoOpRecord
    | RequestOutcomeRecord
    | ClearElrRecord
    | UserScramCredentialRecord
    | RemoveUserScramCredentialRecord
    | ClientQuotaRecord
)

RECORD_CLASSES: tuple[type[Record], ...] = (
    RegisterBrokerRecord,
    UnregisterBrokerRecord,
    BrokerRegistrationChangeRecord,
    TopicRecord,
    PartitionRecord,
    PartitionChangeRecord,
    RemoveTopicRecord,
    ConfigRecord,
    FeatureLevelRecord,
    AccessControlEntryRecord,
    RemoveAccessControlEntryRecord,
    RegisterControllerRecord,
    NoOpRecord,
    RequestOutcomeRecord,
    ClearElrRecord,
    UserScramCredentialRecord,
    RemoveUserScramCredentialRecord,
    ClientQuotaRecord,
)


# --- construction without the frozen-dataclass toll ----------------------------------------

_T = TypeVar("_T")


def _generated(name: str, source: str, namespace: dict[str, Any]) -> Any:
    """The function ``name`` defined by ``source``, with ``namespace`` as its globals.

    Generated code lets the hot paths below name each field in place (a specialised slot load
    or store) rather than loop over field names or spread argument tuples; the names come from
    the dataclasses' own field lists, never from data.
    """
    exec(compile(source, f"<raftmeta.records {name}>", "exec"), namespace)
    return namespace[name]


def _twin(cls: type[Any]) -> type[Any]:
    """An unfrozen slotted class with ``cls``'s memory layout, to build instances in."""
    field_specs = [(field.name, Any) for field in dataclasses.fields(cls)]
    twin: type[Any] = dataclasses.make_dataclass(
        f"_Building{cls.__name__}", field_specs, slots=True, eq=False, repr=False
    )
    if twin.__slots__ != getattr(cls, "__slots__", None):
        raise TypeError(f"{cls.__name__} is not a slotted dataclass")
    return twin


def unfrozen_twin(cls: type[Any]) -> type[Any]:
    """The class a frozen slotted dataclass's instances can be built in with plain slot
    stores before ``__class__`` is set to ``cls`` (see :func:`fast_constructor`), for a
    bulk loader that builds millions in one loop, where even a constructor call counts."""
    return _twin(cls)


_BUILDER_NAMES = frozenset(("built", "new", "twin", "cls", "array", "_type", "_version"))


def _builder_source(name: str, parameters: str, names: Sequence[str]) -> str:
    """Source of ``def name(parameters)`` building the twin, storing ``names``, then giving it
    the real class, which Python allows because the memory layouts are identical."""
    clashing = _BUILDER_NAMES.intersection(names)
    if clashing:
        raise TypeError(f"field names {sorted(clashing)} clash with the builder's own names")
    stores = "".join(f"    built.{field} = {field}\n" for field in names)
    return (
        f"def {name}({parameters}):\n"
        "    built = new(twin)\n"
        f"{stores}"
        "    built.__class__ = cls\n"
        "    return built\n"
    )


def fast_constructor(cls: type[_T]) -> Callable[..., _T]:
    """A positional constructor for a frozen slotted dataclass, four to five times faster.

    A frozen dataclass ``__init__`` stores each field through ``object.__setattr__``, a slow
    generic call; decoding a million partitions pays that ten times each. This builds the
    object as an unfrozen twin with the same slots (plain, specialised attribute stores) and
    then gives it its real class. Every field must be passed, in declaration order, with no
    defaults, so a wrong count raises ``TypeError``. Only for values already known to be
    well-typed.
    """
    twin = _twin(cls)
    names = [field.name for field in dataclasses.fields(cls)]  # type: ignore[arg-type]
    build_name = f"build_{cls.__name__}"
    source = _builder_source(build_name, ", ".join(names), names)
    namespace = {"new": object.__new__, "twin": twin, "cls": cls}
    return _generated(build_name, source, namespace)  # type: ignore[no-any-return]


_INIT_NAMES = frozenset(("self", "cls", "twin", "frozen_init", "setattr_"))


def _install_fast_init(cls: type[Any]) -> None:
    """Gives ``cls`` an ``__init__`` with the dataclass's own signature and defaults that
    stores the fields with plain slot stores: it lends the new object the unfrozen twin's class
    for the stores, then gives it back its own. About half the frozen ``__init__``'s cost, and
    the controller builds several records per request. A subclass keeps the dataclass one.
    """
    fields = dataclasses.fields(cls)
    if any(field.default_factory is not dataclasses.MISSING for field in fields):
        raise TypeError(f"{cls.__name__} has a default factory; its __init__ stays")
    names = [field.name for field in fields]
    clashing = _INIT_NAMES.intersection(names)
    if clashing:
        raise TypeError(f"field names {sorted(clashing)} clash with __init__'s own names")
    defaults = {
        f"_default_{field.name}": field.default
        for field in fields
        if field.default is not dataclasses.MISSING
    }
    parameters = ", ".join(
        f"{name}=_default_{name}" if f"_default_{name}" in defaults else name for name in names
    )
    arguments = ", ".join(names)
    stores = "".join(f"    self.{name} = {name}\n" for name in names)
    source = (
        f"def __init__(self, {parameters}):\n"
        "    if type(self) is not cls:\n"
        f"        return frozen_init(self, {arguments})\n"
        # The frozen class refuses even a __class__ store; the twin takes one.
        "    setattr_(self, '__class__', twin)\n"
        f"{stores}"
        "    self.__class__ = cls\n"
    )
    namespace = {
        "cls": cls,
        "twin": _twin(cls),
        "frozen_init": cls.__init__,
        "setattr_": object.__setattr__,
        **defaults,
    }
    init = _generated("__init__", source, namespace)
    init.__qualname__ = f"{cls.__name__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    type.__setattr__(cls, "__init__", init)


for _record_class in (*RECORD_CLASSES, BrokerEndpoint, BrokerFeature, QuotaEntityData):
    _install_fast_init(_record_class)


# --- encoding ------------------------------------------------------------------------------

# Packing tuples of ints, strings, bytes and None runs entirely in C, holding the GIL and never
# calling back into Python (no ``default`` hook), so one shared packer cannot interleave two
# threads' output; it resets itself after every pack, including a failed one. Reusing it saves
# allocating a buffer per record, a third of the cost of ``msgpack.packb``.
_packer = msgpack.Packer(use_bin_type=True)
_pack: Callable[[object], bytes] = _packer.pack

_endpoint_fields = attrgetter("name", "host", "port", "security_protocol")
_feature_fields = attrgetter("name", "min_supported_version", "max_supported_version")
_entity_fields = attrgetter("entity_type", "entity_name")


def _field_names(cls: type[Any]) -> tuple[str, ...]:
    return tuple(field.name for field in dataclasses.fields(cls))


def _encoder(cls: type[Any]) -> Callable[[Any], bytes]:
    """The record's ``[type, version, fields...]`` array, packed: one tuple built in place
    from the fields (a slot load each) and one call into msgpack."""
    values = "".join(f", record.{name}" for name in _field_names(cls))
    header = f"{int(cls.record_type)}, {int(cls.version)}"
    name = f"encode_{cls.__name__}"
    source = f"def {name}(record):\n    return pack(({header}{values}))\n"
    return _generated(name, source, {"pack": _pack})  # type: ignore[no-any-return]


def _register_broker_array(record: RegisterBrokerRecord) -> tuple[Any, ...]:
    return (
        RecordType.REGISTER_BROKER.value,
        RegisterBrokerRecord.version,
        record.broker_id,
        record.incarnation_id,
        record.broker_epoch,
        tuple(map(_endpoint_fields, record.endpoints)),
        tuple(map(_feature_fields, record.features)),
        record.rack,
        record.fenced,
        record.in_controlled_shutdown,
    )


def _register_controller_array(record: RegisterControllerRecord) -> tuple[Any, ...]:
    return (
        RecordType.REGISTER_CONTROLLER.value,
        RegisterControllerRecord.version,
        record.controller_id,
        record.incarnation_id,
        tuple(map(_endpoint_fields, record.endpoints)),
        tuple(map(_feature_fields, record.features)),
    )


def _client_quota_array(record: ClientQuotaRecord) -> tuple[Any, ...]:
    return (
        RecordType.CLIENT_QUOTA.value,
        ClientQuotaRecord.version,
        tuple(map(_entity_fields, record.entity)),
        record.key,
        float(record.value),
        record.remove,
    )


_ENCODER_OF: dict[type[Any], Callable[[Any], bytes]] = {
    cls: _encoder(cls) for cls in RECORD_CLASSES
}
_ENCODER_OF[RegisterBrokerRecord] = lambda record: _pack(_register_broker_array(record))
_ENCODER_OF[RegisterControllerRecord] = lambda record: _pack(_register_controller_array(record))
_ENCODER_OF[ClientQuotaRecord] = lambda record: _pack(_client_quota_array(record))


def encode_record(record: Record) -> bytes:
    try:
        encode = _ENCODER_OF[type(record)]
    except KeyError:
        raise TypeError(f"{type(record).__name__} is not a metadata record") from None
    return encode(record)


def encode_each(records: Iterable[Record]) -> list[bytes]:
    """Encodes many records, skipping the per-call lookups of :func:`encode_record`.

    (Not :func:`raftmeta.raft.batch.encode_records`, which packs encoded records into a batch.)
    """
    encoders = _ENCODER_OF
    try:
        return [encoders[type(record)](record) for record in records]
    except KeyError as exc:
        raise TypeError(f"{exc.args[0].__name__} is not a metadata record") from None


# --- decoding ------------------------------------------------------------------------------

_build_endpoint = fast_constructor(BrokerEndpoint)
_build_feature = fast_constructor(BrokerFeature)
_build_entity_data = fast_constructor(QuotaEntityData)


def _decoder_for(cls: type[Any]) -> Callable[[tuple[Any, ...]], Any]:
    """Builds the record from its decoded array in one step: the unpacking assignment checks
    the field count (``ValueError`` when it is wrong) and each field is stored in place."""
    names = _field_names(cls)
    name = f"decode_{cls.__name__}"
    if not names:
        instance = cls()
        source = f"def {name}(array):\n    _type, _version = array\n    return instance\n"
        return _generated(name, source, {"instance": instance})  # type: ignore[no-any-return]
    unpack = f"    _type, _version, {', '.join(names)} = array\n"
    source = _builder_source(name, "array", names).replace("\n", "\n" + unpack, 1)
    namespace = {"new": object.__new__, "twin": _twin(cls), "cls": cls}
    return _generated(name, source, namespace)  # type: ignore[no-any-return]


_build_register_broker = fast_constructor(RegisterBrokerRecord)


def _decode_register_broker(array: tuple[Any, ...]) -> RegisterBrokerRecord:
    (_, _, broker_id, incarnation_id, broker_epoch, endpoints, features, *rest) = array
    return _build_register_broker(
        broker_id,
        incarnation_id,
        broker_epoch,
        tuple(_build_endpoint(*endpoint) for endpoint in endpoints),
        tuple(_build_feature(*feature) for feature in features),
        *rest,
    )


_DECODERS: dict[tuple[int, int], Callable[[tuple[Any, ...]], Any]] = {
    (int(cls.record_type), cls.version): _decoder_for(cls) for cls in RECORD_CLASSES
}
_DECODERS[(RecordType.REGISTER_BROKER.value, RegisterBrokerRecord.version)] = (
    _decode_register_broker
)
_build_register_controller = fast_constructor(RegisterControllerRecord)


def _decode_register_controller(array: tuple[Any, ...]) -> RegisterControllerRecord:
    (_, _, controller_id, incarnation_id, endpoints, features) = array
    return _build_register_controller(
        controller_id,
        incarnation_id,
        tuple(_build_endpoint(*endpoint) for endpoint in endpoints),
        tuple(_build_feature(*feature) for feature in features),
    )


_DECODERS[(RecordType.REGISTER_CONTROLLER.value, RegisterControllerRecord.version)] = (
    _decode_register_controller
)

_build_client_quota = fast_constructor(ClientQuotaRecord)


def _decode_client_quota(array: tuple[Any, ...]) -> ClientQuotaRecord:
    (_, _, entity, key, value, remove) = array
    return _build_client_quota(
        tuple(_build_entity_data(*part) for part in entity), key, float(value), remove
    )


_DECODERS[(RecordType.CLIENT_QUOTA.value, ClientQuotaRecord.version)] = _decode_client_quota


def _legacy_decoder(cls: type[Any], field_count: int) -> Callable[[tuple[Any, ...]], Any]:
    """Decodes an older version holding the first ``field_count`` fields; the rest default."""
    build = fast_constructor(cls)
    defaults = tuple(field.default for field in dataclasses.fields(cls)[field_count:])

    def decode(array: tuple[Any, ...]) -> Any:
        if len(array) != field_count + 2:
            raise ValueError(f"{len(array) - 2} fields, expected {field_count}")
        return build(*array[2:], *defaults)

    return decode


LEGACY_DECODERS: dict[tuple[int, int], Callable[[tuple[Any, ...]], Any]] = {
    # v0 of both partition records ended before the two KIP-966 lists.
    (RecordType.PARTITION.value, 0): _legacy_decoder(PartitionRecord, 10),
    (RecordType.PARTITION_CHANGE.value, 0): _legacy_decoder(PartitionChangeRecord, 8),
}
_DECODERS.update(LEGACY_DECODERS)
_CLASS_BY_TYPE: dict[int, type[Any]] = {int(cls.record_type): cls for cls in RECORD_CLASSES}


def _unreadable(data: bytes, array: Any, cause: Exception) -> RecordDecodeError:
    if type(array) is not tuple or len(array) < 2:
        return RecordDecodeError(f"not a [type, version, fields...] array: {data[:32]!r}")
    record_type, version = array[0], array[1]
    known = _CLASS_BY_TYPE.get(record_type) if type(record_type) is int else None
    if known is None:
        return RecordDecodeError(f"unknown metadata record type {record_type!r}")
    if version != known.version and (record_type, version) not in LEGACY_DECODERS:
        return RecordDecodeError(
            f"{known.__name__} version {version!r} is not supported "
            f"(this build reads version {known.version})"
        )
    if version != known.version:
        return RecordDecodeError(f"{known.__name__} v{version} is malformed: {cause}")
    field_count, expected = len(array) - 2, len(_field_names(known))
    if field_count != expected:
        return RecordDecodeError(
            f"{known.__name__} v{version} has {field_count} fields, expected {expected}"
        )
    return RecordDecodeError(f"{known.__name__} v{version} has malformed fields: {cause}")


def decode_record(data: bytes) -> Record:
    try:
        array = msgpack.unpackb(data, use_list=False, raw=False)
    except Exception as exc:
        raise RecordDecodeError(f"not a msgpack record: {exc}") from exc
    try:
        return _DECODERS[array[0], array[1]](array)  # type: ignore[no-any-return]
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise _unreadable(data, array, exc) from exc


PARTITION_RECORD_TYPE = RecordType.PARTITION.value
"""The first element of an unpacked PartitionRecord's array; the second is its version."""


def unpack_records(encoded: Sequence[bytes]) -> list[Any]:
    """The ``[type, version, fields...]`` arrays of many encoded records, unpacked at once.

    For bulk loaders, which read the fields straight from the arrays (a snapshot's partitions)
    rather than build a record object each: one pass of msgpack over the records joined is a
    tenth cheaper than a call per record. Records concatenate without framing, so a malformed
    one may run into the next: the caller checks that it got one array per record, and reads
    the records one by one with :func:`decode_record` to have the error named.
    """
    unpacker = msgpack.Unpacker(use_list=False, raw=False, max_buffer_size=0)
    unpacker.feed(b"".join(encoded))
    return list(unpacker)


def record_from_array(array: Any) -> Record:
    """The record an array of :func:`unpack_records` holds; raises ``KeyError``,
    ``IndexError``, ``TypeError`` or ``ValueError`` where :func:`decode_record` would raise
    :class:`RecordDecodeError`."""
    return _DECODERS[array[0], array[1]](array)  # type: ignore[no-any-return]
