"""Kafka's topic configs and dynamic broker configs, as one table of data.

Each topic config carries its type, default, the check a value must pass, a line of
documentation and the broker configs (its *synonyms*) that supply its default when a topic
does not set it, most specific first: ``retention.ms`` falls back to ``log.retention.ms``, then
``log.retention.minutes``, then ``log.retention.hours``. Each broker config carries how it may
be updated while the cluster runs (:class:`UpdateMode`). Names, types, defaults and ranges are
those of Kafka 4.x, so a client, a Terraform provider or a UI that sets them is understood.

Validation (the controller's), DescribeConfigs (types, documentation, defaults, synonyms) and
the embedded broker's effective config all read this table, so they cannot drift apart. It is
data only: which level a value comes from is :mod:`raftmeta.common.config_levels`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from raftmeta.common.configs import ConfigType

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
INT16 = (-(2**15), 2**15 - 1)
LONG_MAX = str(INT64[1])
INT_MAX = str(INT32[1])
MS_PER_MINUTE = 60_000
MS_PER_HOUR = 3_600_000
MAX_CONFIG_VALUE_LENGTH = 1024
"""The longest config value accepted. Every value is short (a number, a flag, a list of a few
names); anything longer is refused before it is parsed, so a request cannot make every node
replay and keep a megabyte-long value forever."""


# --- checks ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Range:
    """A number within bounds (either may be open); ``also`` lists single values allowed
    outside them, as ``compression.gzip.level`` allows -1 beside 1 to 9."""

    minimum: float | None = None
    maximum: float | None = None
    also: tuple[float, ...] = ()

    def reason(self, number: float) -> str | None:
        if number in self.also:
            return None
        if self.minimum is not None and number < self.minimum:
            return f"must be at least {_number(self.minimum)}{self._besides()}"
        if self.maximum is not None and number > self.maximum:
            return f"must be at most {_number(self.maximum)}{self._besides()}"
        return None

    def describe(self) -> str:
        low = "" if self.minimum is None else _number(self.minimum)
        high = "" if self.maximum is None else _number(self.maximum)
        shown = f"[{low},...]" if self.maximum is None else f"[{low},...,{high}]"
        return shown + "".join(f" or {_number(value)}" for value in self.also)

    def _besides(self) -> str:
        return "".join(f" (or {_number(value)})" for value in self.also)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


@dataclass(frozen=True, slots=True)
class OneOf:
    """A string among fixed choices (case-sensitive, as Kafka's are)."""

    choices: tuple[str, ...]

    def reason(self, value: str) -> str | None:
        if value in self.choices:
            return None
        return f"must be one of {', '.join(self.choices)}"

    def describe(self) -> str:
        return ", ".join(self.choices)


@dataclass(frozen=True, slots=True)
class ListOf:
    """A comma-separated list whose items are among ``choices``; ``non_empty`` refuses an
    empty list."""

    choices: tuple[str, ...]
    non_empty: bool = True

    def reason(self, items: Sequence[str]) -> str | None:
        if self.non_empty and not items:
            return f"must be a non-empty list of {', '.join(self.choices)}"
        for item in items:
            if item not in self.choices:
                return f"must be a list of {', '.join(self.choices)}"
        return None

    def describe(self) -> str:
        return f"[{', '.join(self.choices)}]"


@dataclass(frozen=True, slots=True)
class ThrottledReplicas:
    """``*`` for every replica, or a list of ``partition:broker`` pairs."""

    def reason(self, items: Sequence[str]) -> str | None:
        if list(items) == ["*"]:
            return None
        for item in items:
            partition, colon, broker = item.partition(":")
            if not colon or not partition.strip().isdigit() or not broker.strip().isdigit():
                return "must be * or a list of partition:broker pairs (for example 0:101,1:102)"
        return None

    def describe(self) -> str:
        return "[partitionId]:[brokerId],[partitionId]:[brokerId],... or *"


Check = Range | OneOf | ListOf | ThrottledReplicas
"""What a value must satisfy beyond its type."""


class UpdateMode(enum.Enum):
    """How a broker config may change while the cluster runs (Kafka's *update mode*)."""

    READ_ONLY = "read-only"
    """Only in a broker's file; a restart applies a change."""
    PER_BROKER = "per-broker"
    """Dynamic for one broker (resource name its id), never as the cluster-wide default."""
    CLUSTER_WIDE = "cluster-wide"
    """Dynamic for one broker or as the cluster-wide default (resource name "")."""


@dataclass(frozen=True, slots=True)
class BrokerSynonym:
    """A broker config that supplies a topic config's default; ``ms_per_unit`` converts its
    value to the topic config's unit (``log.retention.hours`` to ``retention.ms``)."""

    name: str
    ms_per_unit: int = 1


@dataclass(frozen=True, slots=True)
class ConfigDef:
    """One config: ``default`` is written as a request would carry it, ``None`` for none."""

    name: str
    type: ConfigType
    default: str | None
    doc: str
    check: Check | None = None
    synonyms: tuple[BrokerSynonym, ...] = ()
    """A topic config's broker synonyms, most specific first (empty for a broker config)."""
    mode: UpdateMode = UpdateMode.CLUSTER_WIDE
    """A broker config's update mode (a topic config is always dynamic)."""

    @property
    def sensitive(self) -> bool:
        """Passwords (and values of unknown type) are never shown, as Kafka hides them."""
        return self.type in (ConfigType.PASSWORD, ConfigType.UNKNOWN)


# --- values ---------------------------------------------------------------------------------


def list_items(value: str) -> list[str]:
    """A LIST value's items: split on commas, trimmed, empty items dropped."""
    return [item.strip() for item in value.split(",") if item.strip()]


_CLASS_NAME = re.compile(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*")


def check_value(definition: ConfigDef, value: str) -> str | None:
    """Why ``value`` is not acceptable for ``definition``, or ``None``."""
    if len(value) > MAX_CONFIG_VALUE_LENGTH:
        return f"longer than {MAX_CONFIG_VALUE_LENGTH} characters"
    kind, check, text = definition.type, definition.check, value.strip()
    if kind is ConfigType.BOOLEAN:
        return None if text.lower() in ("true", "false") else "must be true or false"
    if kind in (ConfigType.INT, ConfigType.LONG, ConfigType.SHORT):
        low, high = {ConfigType.INT: INT32, ConfigType.LONG: INT64, ConfigType.SHORT: INT16}[kind]
        try:
            number = int(text)
        except ValueError:
            return "must be an integer"
        if not low <= number <= high:
            return f"must be between {low} and {high}"
        return check.reason(number) if isinstance(check, Range) else None
    if kind is ConfigType.DOUBLE:
        try:
            real = float(text)
        except ValueError:
            return "must be a number"
        if real != real:  # NaN compares unequal to itself
            return "must be a number"
        return check.reason(real) if isinstance(check, Range) else None
    if kind is ConfigType.LIST:
        if isinstance(check, ListOf | ThrottledReplicas):
            return check.reason(list_items(value))
        return None
    if kind is ConfigType.CLASS:
        return None if _CLASS_NAME.fullmatch(text) else "must be a class name"
    if isinstance(check, OneOf):
        return check.reason(text)
    return None


def to_topic_unit(synonym: BrokerSynonym, value: str) -> str:
    """A broker synonym's value in its topic config's unit (hours and minutes to ms)."""
    if synonym.ms_per_unit == 1:
        return value
    try:
        return str(int(value.strip()) * synonym.ms_per_unit)
    except ValueError:
        return value


# --- the topic configs ----------------------------------------------------------------------

_B = BrokerSynonym
_COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
_TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
_AT_LEAST_0 = Range(0)
_AT_LEAST_1 = Range(1)

TOPIC_CONFIG_DEFS: Mapping[str, ConfigDef] = {
    definition.name: definition
    for definition in (
        ConfigDef(
            "cleanup.policy", ConfigType.LIST, "delete",
            "What happens to old segments: delete them, compact them to the last value per key, "
            "or both.",
            ListOf(("compact", "delete")), (_B("log.cleanup.policy"),),
        ),
        ConfigDef(
            "compression.type", ConfigType.STRING, "producer",
            "The codec batches are stored with; producer keeps the one each producer chose.",
            OneOf(_COMPRESSION_TYPES), (_B("compression.type"),),
        ),
        ConfigDef(
            "compression.gzip.level", ConfigType.INT, "-1",
            "The gzip level when the topic stores gzip batches; -1 picks the codec's own.",
            Range(1, 9, also=(-1,)), (_B("compression.gzip.level"),),
        ),
        ConfigDef(
            "compression.lz4.level", ConfigType.INT, "9",
            "The lz4 level when the topic stores lz4 batches.",
            Range(1, 17), (_B("compression.lz4.level"),),
        ),
        ConfigDef(
            "compression.zstd.level", ConfigType.INT, "3",
            "The zstd level when the topic stores zstd batches.",
            Range(-131072, 22), (_B("compression.zstd.level"),),
        ),
        ConfigDef(
            "delete.retention.ms", ConfigType.LONG, "86400000",
            "How long a compacted topic keeps delete markers, so slow readers still see them.",
            _AT_LEAST_0, (_B("log.cleaner.delete.retention.ms"),),
        ),
        ConfigDef(
            "file.delete.delay.ms", ConfigType.LONG, "60000",
            "The pause between marking a segment deleted and removing its files.",
            _AT_LEAST_0, (_B("log.segment.delete.delay.ms"),),
        ),
        ConfigDef(
            "flush.messages", ConfigType.LONG, LONG_MAX,
            "Force an fsync after this many messages; the default leaves it to the OS.",
            _AT_LEAST_1, (_B("log.flush.interval.messages"),),
        ),
        ConfigDef(
            "flush.ms", ConfigType.LONG, LONG_MAX,
            "Force an fsync when data has waited this long; the default leaves it to the OS.",
            _AT_LEAST_0,
            (_B("log.flush.interval.ms"), _B("log.flush.scheduler.interval.ms")),
        ),
        ConfigDef(
            "follower.replication.throttled.replicas", ConfigType.LIST, "",
            "The replicas whose follower fetches are throttled, or * for all of them.",
            ThrottledReplicas(),
        ),
        ConfigDef(
            "index.interval.bytes", ConfigType.INT, "4096",
            "How many bytes of log lie between two offset index entries.",
            _AT_LEAST_0, (_B("log.index.interval.bytes"),),
        ),
        ConfigDef(
            "leader.replication.throttled.replicas", ConfigType.LIST, "",
            "The replicas whose leader-side replication is throttled, or * for all of them.",
            ThrottledReplicas(),
        ),
        ConfigDef(
            "local.retention.bytes", ConfigType.LONG, "-2",
            "With tiered storage, the bytes a partition keeps on local disk; -2 means "
            "retention.bytes.",
            Range(-2), (_B("log.local.retention.bytes"),),
        ),
        ConfigDef(
            "local.retention.ms", ConfigType.LONG, "-2",
            "With tiered storage, how long segments stay on local disk; -2 means retention.ms.",
            Range(-2), (_B("log.local.retention.ms"),),
        ),
        ConfigDef(
            "max.compaction.lag.ms", ConfigType.LONG, LONG_MAX,
            "The longest a record may wait before its segment becomes eligible for compaction.",
            _AT_LEAST_1, (_B("log.cleaner.max.compaction.lag.ms"),),
        ),
        ConfigDef(
            "max.message.bytes", ConfigType.INT, "1048588",
            "The largest record batch the topic accepts, after compression.",
            _AT_LEAST_0, (_B("message.max.bytes"),),
        ),
        ConfigDef(
            "message.timestamp.after.max.ms", ConfigType.LONG, "3600000",
            "How far ahead of the broker's clock a CreateTime timestamp may be.",
            _AT_LEAST_0, (_B("log.message.timestamp.after.max.ms"),),
        ),
        ConfigDef(
            "message.timestamp.before.max.ms", ConfigType.LONG, LONG_MAX,
            "How far behind the broker's clock a CreateTime timestamp may be.",
            _AT_LEAST_0, (_B("log.message.timestamp.before.max.ms"),),
        ),
        ConfigDef(
            "message.timestamp.type", ConfigType.STRING, "CreateTime",
            "Whether a record keeps the producer's timestamp or takes the append time.",
            OneOf(_TIMESTAMP_TYPES), (_B("log.message.timestamp.type"),),
        ),
        ConfigDef(
            "min.cleanable.dirty.ratio", ConfigType.DOUBLE, "0.5",
            "The share of uncompacted log that makes the cleaner compact a partition.",
            Range(0, 1), (_B("log.cleaner.min.cleanable.ratio"),),
        ),
        ConfigDef(
            "min.compaction.lag.ms", ConfigType.LONG, "0",
            "The shortest a record stays uncompacted in the log.",
            _AT_LEAST_0, (_B("log.cleaner.min.compaction.lag.ms"),),
        ),
        ConfigDef(
            "min.insync.replicas", ConfigType.INT, "1",
            "The in-sync replicas an acks=all write needs; fewer refuses the write.",
            _AT_LEAST_1, (_B("min.insync.replicas"),),
        ),
        ConfigDef(
            "preallocate", ConfigType.BOOLEAN, "false",
            "Whether a new segment's file is allocated in full when it is created.",
            None, (_B("log.preallocate"),),
        ),
        ConfigDef(
            "remote.log.copy.disable", ConfigType.BOOLEAN, "false",
            "With tiered storage on, stop copying new segments to remote storage.",
        ),
        ConfigDef(
            "remote.log.delete.on.disable", ConfigType.BOOLEAN, "false",
            "Whether turning tiered storage off deletes the topic's remote segments.",
        ),
        ConfigDef(
            "remote.storage.enable", ConfigType.BOOLEAN, "false",
            "Whether the topic moves old segments to remote (tiered) storage.",
        ),
        ConfigDef(
            "retention.bytes", ConfigType.LONG, "-1",
            "The largest a partition grows before old segments go; -1 for no size limit.",
            None, (_B("log.retention.bytes"),),
        ),
        ConfigDef(
            "retention.ms", ConfigType.LONG, "604800000",
            "How long segments are kept before deletion; -1 keeps them forever.",
            Range(-1),
            (
                _B("log.retention.ms"),
                _B("log.retention.minutes", MS_PER_MINUTE),
                _B("log.retention.hours", MS_PER_HOUR),
            ),
        ),
        ConfigDef(
            "segment.bytes", ConfigType.INT, "1073741824",
            "The size at which the active segment is closed and a new one started.",
            Range(1048576), (_B("log.segment.bytes"),),
        ),
        ConfigDef(
            "segment.index.bytes", ConfigType.INT, "10485760",
            "The size of a segment's offset and time index files.",
            Range(4), (_B("log.index.size.max.bytes"),),
        ),
        ConfigDef(
            "segment.jitter.ms", ConfigType.LONG, "0",
            "A random amount taken off segment.ms so segments do not all roll at once.",
            _AT_LEAST_0,
            (_B("log.roll.jitter.ms"), _B("log.roll.jitter.hours", MS_PER_HOUR)),
        ),
        ConfigDef(
            "segment.ms", ConfigType.LONG, "604800000",
            "The age at which the active segment is closed even if it is not full.",
            _AT_LEAST_1, (_B("log.roll.ms"), _B("log.roll.hours", MS_PER_HOUR)),
        ),
        ConfigDef(
            "unclean.leader.election.enable", ConfigType.BOOLEAN, "false",
            "Whether a replica outside the ISR may become leader when no ISR member is left, "
            "at the cost of losing writes.",
            None, (_B("unclean.leader.election.enable"),),
        ),
    )
}  # fmt: skip


# --- the broker configs ---------------------------------------------------------------------

_RO, _PB, _CW = UpdateMode.READ_ONLY, UpdateMode.PER_BROKER, UpdateMode.CLUSTER_WIDE

_SYNONYM_OVERRIDES: Mapping[str, ConfigDef] = {
    definition.name: definition
    for definition in (
        ConfigDef("log.retention.ms", ConfigType.LONG, None,
                  "How long segments are kept, in ms; unset, the minutes or hours setting "
                  "applies.", Range(-1)),
        ConfigDef("log.retention.minutes", ConfigType.INT, None,
                  "How long segments are kept, in minutes, when log.retention.ms is unset.",
                  None, mode=_RO),
        ConfigDef("log.retention.hours", ConfigType.INT, "168",
                  "How long segments are kept, in hours, when neither ms nor minutes is set.",
                  None, mode=_RO),
        ConfigDef("log.roll.ms", ConfigType.LONG, None,
                  "The age in ms at which a segment rolls; unset, log.roll.hours applies.",
                  _AT_LEAST_1),
        ConfigDef("log.roll.hours", ConfigType.INT, "168",
                  "The age in hours at which a segment rolls when log.roll.ms is unset.",
                  _AT_LEAST_1, mode=_RO),
        ConfigDef("log.roll.jitter.ms", ConfigType.LONG, None,
                  "The roll jitter in ms; unset, log.roll.jitter.hours applies.", _AT_LEAST_0),
        ConfigDef("log.roll.jitter.hours", ConfigType.INT, "0",
                  "The roll jitter in hours when log.roll.jitter.ms is unset.",
                  _AT_LEAST_0, mode=_RO),
        ConfigDef("log.flush.interval.ms", ConfigType.LONG, None,
                  "Force an fsync when data has waited this long; unset, the scheduler's "
                  "interval applies.", _AT_LEAST_0),
        ConfigDef("log.flush.scheduler.interval.ms", ConfigType.LONG, LONG_MAX,
                  "How often the flusher checks whether a log needs an fsync.", None, mode=_RO),
    )
}  # fmt: skip


def _synonym_defs() -> dict[str, ConfigDef]:
    """The broker configs that supply topic defaults: typed and checked as their topic
    config unless :data:`_SYNONYM_OVERRIDES` says otherwise, all dynamic cluster-wide."""
    found: dict[str, ConfigDef] = {}
    for topic_def in TOPIC_CONFIG_DEFS.values():
        for synonym in topic_def.synonyms:
            found[synonym.name] = _SYNONYM_OVERRIDES.get(synonym.name) or ConfigDef(
                synonym.name,
                topic_def.type,
                topic_def.default,
                f"The cluster's default for the topic config {topic_def.name}.",
                topic_def.check,
            )
    return found


_SSL_AND_SASL: tuple[ConfigDef, ...] = (
    ConfigDef(
        "ssl.keystore.type", ConfigType.STRING, "JKS", "The format of the key store file.", mode=_PB
    ),
    ConfigDef(
        "ssl.keystore.location",
        ConfigType.STRING,
        None,
        "The path of the key store holding the listener's certificate.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.keystore.password", ConfigType.PASSWORD, None, "The key store's password.", mode=_PB
    ),
    ConfigDef(
        "ssl.key.password",
        ConfigType.PASSWORD,
        None,
        "The private key's password inside the key store.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.keystore.key",
        ConfigType.PASSWORD,
        None,
        "The private key itself, PEM-encoded, instead of a key store file.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.keystore.certificate.chain",
        ConfigType.PASSWORD,
        None,
        "The certificate chain, PEM-encoded, instead of a key store file.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.truststore.type",
        ConfigType.STRING,
        "JKS",
        "The format of the trust store file.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.truststore.location",
        ConfigType.STRING,
        None,
        "The path of the trust store of accepted certificate authorities.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.truststore.password",
        ConfigType.PASSWORD,
        None,
        "The trust store's password.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.truststore.certificates",
        ConfigType.PASSWORD,
        None,
        "Trusted certificates, PEM-encoded, instead of a trust store file.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.protocol",
        ConfigType.STRING,
        "TLSv1.3",
        "The TLS protocol the SSL context is created for.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.enabled.protocols",
        ConfigType.LIST,
        "TLSv1.2,TLSv1.3",
        "The TLS versions a connection may use.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.cipher.suites",
        ConfigType.LIST,
        "",
        "The cipher suites allowed; empty allows the platform's.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.client.auth",
        ConfigType.STRING,
        "none",
        "Whether clients must, may or need not present a certificate.",
        OneOf(("required", "requested", "none")),
        mode=_PB,
    ),
    ConfigDef(
        "ssl.endpoint.identification.algorithm",
        ConfigType.STRING,
        "https",
        "How a peer's host name is checked against its certificate.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.keymanager.algorithm",
        ConfigType.STRING,
        "SunX509",
        "The key manager factory's algorithm.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.trustmanager.algorithm",
        ConfigType.STRING,
        "PKIX",
        "The trust manager factory's algorithm.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.secure.random.implementation",
        ConfigType.STRING,
        None,
        "The random source for TLS; unset, the platform's default.",
        mode=_PB,
    ),
    ConfigDef(
        "ssl.engine.factory.class",
        ConfigType.CLASS,
        None,
        "A custom factory for the TLS engine.",
        mode=_PB,
    ),
    ConfigDef(
        "sasl.enabled.mechanisms",
        ConfigType.LIST,
        "GSSAPI",
        "The SASL mechanisms the listener offers.",
        mode=_PB,
    ),
    ConfigDef(
        "sasl.jaas.config",
        ConfigType.PASSWORD,
        None,
        "The JAAS login section for the listener's SASL mechanisms.",
        mode=_PB,
    ),
)
"""Security configs, dynamic per broker (also as ``listener.name.NAME.`` + one of them)."""

_OTHER_BROKER_DEFS: tuple[ConfigDef, ...] = (
    ConfigDef("listeners", ConfigType.STRING, "PLAINTEXT://:9092",
              "The addresses the broker listens on, as NAME://host:port.", mode=_PB),
    ConfigDef("advertised.listeners", ConfigType.STRING, None,
              "The addresses clients are told to connect to, if not the listeners.", mode=_PB),
    ConfigDef("listener.security.protocol.map", ConfigType.STRING,
              "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
              "The security protocol of each listener name.", mode=_PB),
    ConfigDef("log.cleaner.threads", ConfigType.INT, "1",
              "How many threads compact logs.", _AT_LEAST_0),
    ConfigDef("log.cleaner.dedupe.buffer.size", ConfigType.LONG, "134217728",
              "The memory all cleaner threads use to find the last value of each key."),
    ConfigDef("log.cleaner.io.buffer.load.factor", ConfigType.DOUBLE, "0.9",
              "How full the cleaner's dedupe buffer may get."),
    ConfigDef("log.cleaner.io.buffer.size", ConfigType.INT, "524288",
              "The memory all cleaner threads use for reading and writing.", _AT_LEAST_0),
    ConfigDef("log.cleaner.io.max.bytes.per.second", ConfigType.DOUBLE, "1.7976931348623157E308",
              "The I/O rate the cleaner threads may use together."),
    ConfigDef("log.cleaner.backoff.ms", ConfigType.LONG, "15000",
              "How long a cleaner thread sleeps when there is no log to clean.", _AT_LEAST_0),
    ConfigDef("num.io.threads", ConfigType.INT, "8",
              "How many threads serve requests, disk I/O included.", _AT_LEAST_1),
    ConfigDef("num.network.threads", ConfigType.INT, "3",
              "How many threads read requests from and write answers to the network.",
              _AT_LEAST_1),
    ConfigDef("num.replica.fetchers", ConfigType.INT, "1",
              "How many fetcher threads replicate from each source broker.", _AT_LEAST_1),
    ConfigDef("num.recovery.threads.per.data.dir", ConfigType.INT, "2",
              "How many threads per log directory recover logs at startup and flush them at "
              "shutdown.", _AT_LEAST_1),
    ConfigDef("background.threads", ConfigType.INT, "10",
              "How many threads run background tasks.", _AT_LEAST_1),
    ConfigDef("max.connections", ConfigType.INT, INT_MAX,
              "The most connections the broker accepts at once.", _AT_LEAST_0),
    ConfigDef("max.connections.per.ip", ConfigType.INT, INT_MAX,
              "The most connections one address may hold.", _AT_LEAST_0),
    ConfigDef("max.connections.per.ip.overrides", ConfigType.STRING, "",
              "Per-address exceptions to max.connections.per.ip, as host:count pairs."),
    ConfigDef("max.connection.creation.rate", ConfigType.INT, INT_MAX,
              "The most new connections the broker accepts per second.", _AT_LEAST_0),
    ConfigDef("metric.reporters", ConfigType.LIST, "org.apache.kafka.common.metrics.JmxReporter",
              "The classes metrics are reported through."),
    ConfigDef("producer.id.expiration.ms", ConfigType.INT, "86400000",
              "How long a producer id is kept after its last write.", _AT_LEAST_1),
    ConfigDef("transaction.partition.verification.enable", ConfigType.BOOLEAN, "true",
              "Whether a transactional write checks the partition was added to its "
              "transaction."),
    ConfigDef("leader.replication.throttled.rate", ConfigType.LONG, LONG_MAX,
              "Bytes per second leaders may send to throttled replicas.", _AT_LEAST_0),
    ConfigDef("follower.replication.throttled.rate", ConfigType.LONG, LONG_MAX,
              "Bytes per second followers may fetch for throttled replicas.", _AT_LEAST_0),
    ConfigDef("replica.alter.log.dirs.io.max.bytes.per.second", ConfigType.LONG, LONG_MAX,
              "Bytes per second moving replicas between log directories may use.",
              _AT_LEAST_0),
    ConfigDef("remote.log.manager.copy.max.bytes.per.second", ConfigType.LONG, LONG_MAX,
              "Bytes per second copied to remote storage.", _AT_LEAST_1),
    ConfigDef("remote.log.manager.fetch.max.bytes.per.second", ConfigType.LONG, LONG_MAX,
              "Bytes per second read back from remote storage.", _AT_LEAST_1),
    ConfigDef("remote.log.index.file.cache.total.size.bytes", ConfigType.LONG, "1073741824",
              "The disk the cache of remote segments' indexes may use.", _AT_LEAST_1),
    ConfigDef("node.id", ConfigType.INT, "-1",
              "The node's id, fixed by its file.", mode=_RO),
    ConfigDef("broker.id", ConfigType.INT, "-1",
              "The broker's id, the same as node.id.", mode=_RO),
    ConfigDef("process.roles", ConfigType.LIST, "",
              "Whether the node is a broker, a controller or both.", mode=_RO),
    ConfigDef("log.dirs", ConfigType.LIST, None,
              "The directories partition data is kept in.", mode=_RO),
    ConfigDef("controller.quorum.voters", ConfigType.LIST, "",
              "The controller quorum's voters, as id@host:port.", mode=_RO),
    ConfigDef("controller.listener.names", ConfigType.LIST, None,
              "The listeners the controllers are reached on.", mode=_RO),
    ConfigDef("inter.broker.listener.name", ConfigType.STRING, None,
              "The listener brokers replicate over.", mode=_RO),
    ConfigDef("num.partitions", ConfigType.INT, "1",
              "The partition count of a topic created without one.", _AT_LEAST_1, mode=_RO),
    ConfigDef("default.replication.factor", ConfigType.INT, "1",
              "The replication factor of a topic created without one.", mode=_RO),
    ConfigDef("auto.create.topics.enable", ConfigType.BOOLEAN, "true",
              "Whether a request for a missing topic creates it.", mode=_RO),
    ConfigDef("auto.leader.rebalance.enable", ConfigType.BOOLEAN, "true",
              "Whether leadership moves back to preferred replicas on its own.", mode=_RO),
)  # fmt: skip

BROKER_CONFIG_DEFS: Mapping[str, ConfigDef] = {
    **_synonym_defs(),
    **{definition.name: definition for definition in _SSL_AND_SASL + _OTHER_BROKER_DEFS},
}
"""Every broker config raftmeta knows: the topic configs' synonyms, the other dynamic ones
(per broker or cluster-wide) and a few read-only ones, so that setting one is refused as
read-only rather than as unknown."""

LISTENER_PREFIX = "listener.name."
_SECURITY_DEFS = {definition.name: definition for definition in _SSL_AND_SASL}


def broker_config_def(name: str) -> ConfigDef | None:
    """The broker config ``name`` names, including a security config for one listener
    (``listener.name.NAME.ssl.keystore.location``), which is dynamic per broker only."""
    found = BROKER_CONFIG_DEFS.get(name)
    if found is not None or not name.startswith(LISTENER_PREFIX):
        return found
    listener, dot, key = name[len(LISTENER_PREFIX) :].partition(".")
    base = _SECURITY_DEFS.get(key) if listener and dot else None
    if base is None:
        # A SASL config may also be set for one mechanism of the listener
        # (``listener.name.NAME.plain.sasl.jaas.config``).
        mechanism, dot, sasl_key = key.partition(".")
        if mechanism and dot and sasl_key.startswith("sasl."):
            base = _SECURITY_DEFS.get(sasl_key)
    if base is None:
        return None
    return ConfigDef(name, base.type, None, base.doc, base.check, mode=UpdateMode.PER_BROKER)


def static_broker_configs(originals: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The broker configs a node's file sets (its STATIC_BROKER_CONFIG level), sorted: the
    keys of ``originals`` that are dynamic broker configs or a topic config's synonym. The
    other read-only ones (``node.id``, ``log.dirs``) are the node's own settings, read as
    such, not levels under a dynamic value."""
    found: list[tuple[str, str]] = []
    for key, value in originals.items():
        definition = broker_config_def(key)
        if definition is not None and (
            definition.mode is not UpdateMode.READ_ONLY or key in TOPIC_SYNONYM_NAMES
        ):
            found.append((key, value))
    return tuple(sorted(found))


TOPIC_SYNONYM_NAMES = frozenset(
    synonym.name for definition in TOPIC_CONFIG_DEFS.values() for synonym in definition.synonyms
)
"""The broker configs that supply some topic config's default."""


def docs_table(definitions: Mapping[str, ConfigDef], *, topic: bool) -> str:
    """A Markdown table of ``definitions``: name, type, default, valid values, the broker
    synonyms (``topic``) or the update mode, and the line of documentation."""
    lines = [
        "| Name | Type | Default | Valid values | Synonyms / update mode | Meaning |",
        "|---|---|---|---|---|---|",
    ]
    for definition in sorted(definitions.values(), key=lambda item: item.name):
        default = "" if definition.default is None else definition.default
        valid = "" if definition.check is None else definition.check.describe()
        where = (
            ", ".join(synonym.name for synonym in definition.synonyms)
            if topic
            else definition.mode.value
        )
        lines.append(
            f"| `{definition.name}` | {definition.type.name.lower()} | {default} | {valid} "
            f"| {where} | {definition.doc} |"
        )
    return "\n".join(lines)
