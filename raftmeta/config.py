"""Node configuration: Kafka-style ``.properties`` files with Kafka's key names.

Operators moving from KRaft should be able to reuse their files and their habits, so the syntax
is Java's ``Properties`` format and the keys, meanings and defaults are Kafka's wherever Kafka has
the key. Every key the product reads is declared once, in :data:`CONFIG_KEYS`; parsing,
validation, the typed :class:`RaftmetaConfig` and the README's table are all driven from it, so
they cannot drift apart.

A bad file must stop a node before it joins a quorum, and must tell the operator exactly what to
fix: every problem raises :class:`ConfigError` with a one-line message naming the key. The
``raftmeta`` command prints that line alone and exits with status 2 (:data:`ConfigError.exit_code`),
never with a traceback.

Keys that are not in the table are kept, unparsed, so that plug-ins can read their own settings
(``replica.placer.*``, ``authorizer.*``) through :meth:`RaftmetaConfig.originals_with_prefix`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final, NamedTuple, Protocol, TypeVar

__all__ = [
    "CONFIG_KEYS",
    "REQUIRED",
    "ConfigError",
    "ConfigKey",
    "ConfigType",
    "ConfigValue",
    "HostPort",
    "Listener",
    "RaftmetaConfig",
    "config_table_markdown",
    "format_properties",
    "load_config",
    "parse_config",
    "parse_override",
    "parse_properties",
]


class ConfigError(ValueError):
    """A missing or invalid setting; the message is one line that names the key.

    The CLI relies on the message being complete and single-line: it prints it as is and exits
    with :attr:`exit_code`, the conventional status for a usage error.
    """

    exit_code: Final = 2

    def __init__(self, message: str) -> None:
        super().__init__(message.replace("\r", " ").replace("\n", " "))


# --------------------------------------------------------------------------------------------
# Java properties syntax
# --------------------------------------------------------------------------------------------

_WHITESPACE = " \t\f"
_NATURAL_LINES = re.compile(r"\r\n|\r|\n")
_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def parse_properties(text: str) -> dict[str, str]:
    """Parse text in Java's ``Properties.load`` syntax; a later duplicate key wins.

    Implemented here rather than with :mod:`configparser` because the two formats disagree on
    sections, separators, continuations and escapes, and an operator's file written for Kafka
    must mean the same thing here. Values keep trailing whitespace, as Java does; the typed layer
    strips it.
    """
    properties: dict[str, str] = {}
    lines = _NATURAL_LINES.split(text)
    index = 0
    while index < len(lines):
        line_number = index + 1
        chunk = lines[index].lstrip(_WHITESPACE)
        index += 1
        if not chunk or chunk[0] in "#!":
            continue
        logical = ""
        while _ends_with_line_continuation(chunk):
            logical += chunk[:-1]
            if index >= len(lines):
                chunk = ""
                break
            chunk = lines[index].lstrip(_WHITESPACE)
            index += 1
        logical += chunk
        raw_key, raw_value = _split_key_value(logical)
        key = _unescape(raw_key, line_number, None)
        properties[key] = _unescape(raw_value, line_number, key)
    return properties


def _ends_with_line_continuation(chunk: str) -> bool:
    """An odd run of trailing backslashes continues the line; an even run is escaped ones."""
    run = len(chunk) - len(chunk.rstrip("\\"))
    return run % 2 == 1


def _split_key_value(logical: str) -> tuple[str, str]:
    position = 0
    while position < len(logical):
        char = logical[position]
        if char == "\\":
            position += 2
            continue
        if char in "=:" or char in _WHITESPACE:
            break
        position += 1
    key = logical[:position]
    seen_separator = False
    while position < len(logical):
        char = logical[position]
        if char in _WHITESPACE:
            position += 1
        elif char in "=:" and not seen_separator:
            seen_separator = True
            position += 1
        else:
            break
    return key, logical[position:]


def _unescape(raw: str, line_number: int, key: str | None) -> str:
    if "\\" not in raw:
        return raw
    out: list[str] = []
    position = 0
    while position < len(raw):
        char = raw[position]
        if char != "\\":
            out.append(char)
            position += 1
            continue
        if position + 1 >= len(raw):
            break  # a lone backslash at the end of the file escapes nothing, as in Java
        escaped = raw[position + 1]
        if escaped == "u":
            digits = raw[position + 2 : position + 6]
            if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                where = "a key" if key is None else f"the value of {key}"
                raise ConfigError(
                    f"Malformed \\uXXXX escape in {where} on line {line_number} "
                    "of the configuration"
                )
            out.append(chr(int(digits, 16)))
            position += 6
            continue
        out.append(_SIMPLE_ESCAPES.get(escaped, escaped))
        position += 2
    return "".join(out)


def format_properties(properties: Mapping[str, str]) -> str:
    """Write properties so that :func:`parse_properties` (and Java) read back the same mapping.

    Shared with the storage layer's ``meta.properties`` so that one escaping rule serves both.
    """
    return "".join(
        f"{_escape(key, is_key=True)}={_escape(value, is_key=False)}\n"
        for key, value in properties.items()
    )


def _escape(text: str, *, is_key: bool) -> str:
    out: list[str] = []
    for position, char in enumerate(text):
        if char == "\\":
            out.append("\\\\")
        elif char in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[char])
        elif char == " " and (is_key or position == 0):
            out.append("\\ ")
        elif char in "=:#!":
            out.append("\\" + char)
        elif ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)


# --------------------------------------------------------------------------------------------
# Value types
# --------------------------------------------------------------------------------------------


class ConfigType(enum.Enum):
    INT = "int"
    LONG = "long"
    BOOLEAN = "boolean"
    STRING = "string"
    LIST = "list"
    CLASS = "class"
    VOTERS = "voters"
    LISTENERS = "listeners"


class HostPort(NamedTuple):
    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


class Listener(NamedTuple):
    """One ``NAME://host:port`` entry; an empty host means every interface, as in Kafka."""

    name: str
    host: str
    port: int

    @property
    def address(self) -> HostPort:
        return HostPort(self.host, self.port)


_T = TypeVar("_T")


class _BadValue(Exception):
    """Raised by parsers and validators with the problem only; the caller adds key and value."""


_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_INTEGER = re.compile(r"[+-]?[0-9]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LISTENER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_HOST = re.compile(r"[A-Za-z0-9._-]+")
_HOST_PORT = re.compile(r"(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?P<host>[^:\[\]]*)):(?P<port>[0-9]+)")


def _parse_integer(raw: str, low: int, high: int, kind: str) -> int:
    if not _INTEGER.fullmatch(raw):
        raise _BadValue(f"not {kind}")
    value = int(raw)
    if not low <= value <= high:
        raise _BadValue(f"out of range for {kind} ({low} to {high})")
    return value


def _parse_boolean(raw: str) -> bool:
    lowered = raw.lower()
    if lowered not in ("true", "false"):
        raise _BadValue("not a boolean (expected true or false)")
    return lowered == "true"


def _split_list(raw: str, separator: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in raw.split(separator) if item.strip())


def _parse_class(raw: str) -> str:
    """Accept Kafka's ``package.module.Class`` and the entry-point style ``package.module:Class``;
    importing is left to the loader, which can say more about a class it cannot use."""
    module, colon, qualified_name = raw.partition(":")
    module_parts = module.split(".")
    name_parts = qualified_name.split(".") if colon else []
    if (len(module_parts) < 2 and not colon) or not all(
        _IDENTIFIER.fullmatch(part) for part in module_parts + name_parts
    ):
        raise _BadValue(
            "not a class path such as package.module.ClassName or package.module:ClassName"
        )
    return raw


def _parse_port(text: str, low: int) -> int:
    port = int(text)
    if not low <= port <= 65535:
        raise _BadValue(f"port {port} is outside {low} to 65535")
    return port


def _parse_host_port(text: str, *, allow_empty_host: bool, lowest_port: int) -> HostPort:
    match = _HOST_PORT.fullmatch(text)
    if match is None:
        raise _BadValue(f"'{text}' is not host:port")
    host = match["ipv6"] if match["ipv6"] is not None else match["host"]
    if not host and not allow_empty_host:
        raise _BadValue(f"'{text}' has no host")
    if host and match["ipv6"] is None and not _HOST.fullmatch(host):
        raise _BadValue(f"'{text}' has an invalid host name")
    return HostPort(host, _parse_port(match["port"], lowest_port))


def _parse_voters(raw: str) -> Mapping[int, HostPort]:
    voters: dict[int, HostPort] = {}
    for entry in _split_list(raw, ","):
        node_text, at, address = entry.partition("@")
        if not at or not re.fullmatch(r"[0-9]+", node_text):
            raise _BadValue(f"entry '{entry}' is not id@host:port with a non-negative id")
        node_id = _parse_integer(node_text, 0, _INT_MAX, "a node id")
        if node_id in voters:
            raise _BadValue(f"voter id {node_id} is listed twice")
        endpoint = _parse_host_port(address, allow_empty_host=False, lowest_port=1)
        if endpoint in voters.values():
            raise _BadValue(f"address {endpoint} is given to more than one voter")
        voters[node_id] = endpoint
    if not voters:
        raise _BadValue("no voters listed (expected id@host:port,...)")
    return MappingProxyType(dict(sorted(voters.items())))


def _parse_listeners(raw: str) -> tuple[Listener, ...]:
    listeners: list[Listener] = []
    for entry in _split_list(raw, ","):
        name, scheme, address = entry.partition("://")
        if not scheme or not _LISTENER_NAME.fullmatch(name):
            raise _BadValue(f"entry '{entry}' is not NAME://host:port")
        name = name.upper()
        if any(listener.name == name for listener in listeners):
            raise _BadValue(f"listener name {name} is used twice")
        host, port = _parse_host_port(address, allow_empty_host=True, lowest_port=0)
        if port != 0 and any(listener.port == port for listener in listeners):
            raise _BadValue(f"port {port} is used by more than one listener")
        listeners.append(Listener(name, host, port))
    return tuple(listeners)


# --------------------------------------------------------------------------------------------
# Validators: each checks a parsed value and can describe itself for the README's table
# --------------------------------------------------------------------------------------------


class Validator(Protocol):
    def __call__(self, value: object) -> None:
        """Raise ``_BadValue`` naming the problem when ``value`` is not acceptable."""

    def describe(self) -> str: ...


@dataclass(frozen=True, slots=True)
class AtLeast:
    minimum: int

    def __call__(self, value: object) -> None:
        if isinstance(value, int) and value < self.minimum:
            raise _BadValue(f"must be at least {self.minimum}")

    def describe(self) -> str:
        return f"≥ {self.minimum}"


@dataclass(frozen=True, slots=True)
class Between:
    minimum: int
    maximum: int

    def __call__(self, value: object) -> None:
        if isinstance(value, int) and not self.minimum <= value <= self.maximum:
            raise _BadValue(f"must be between {self.minimum} and {self.maximum}")

    def describe(self) -> str:
        return f"{self.minimum} to {self.maximum}"


@dataclass(frozen=True, slots=True)
class NonEmpty:
    def __call__(self, value: object) -> None:
        if value in ("", ()):
            raise _BadValue("must not be empty")

    def describe(self) -> str:
        return "non-empty"


@dataclass(frozen=True, slots=True)
class SubsetOf:
    """A non-empty list drawn from fixed choices, each at most once."""

    choices: tuple[str, ...]

    def __call__(self, value: object) -> None:
        if not isinstance(value, tuple):
            return
        if not value:
            raise _BadValue(f"must list at least one of {', '.join(self.choices)}")
        for item in value:
            if item not in self.choices:
                raise _BadValue(f"'{item}' is not one of {', '.join(self.choices)}")
        if len(set(value)) != len(value):
            raise _BadValue("lists an entry twice")

    def describe(self) -> str:
        return "non-empty subset of " + ", ".join(self.choices)


@dataclass(frozen=True, slots=True)
class Matches:
    pattern: str
    description: str

    def __call__(self, value: object) -> None:
        if isinstance(value, str) and not re.fullmatch(self.pattern, value):
            raise _BadValue(f"must be {self.description}")

    def describe(self) -> str:
        return self.description


@dataclass(frozen=True, slots=True)
class EachMatches:
    pattern: str
    description: str

    def __call__(self, value: object) -> None:
        if not isinstance(value, tuple):
            return
        for item in value:
            if not re.fullmatch(self.pattern, item):
                raise _BadValue(f"entry '{item}' is not {self.description}")

    def describe(self) -> str:
        return f"each {self.description}"


# --------------------------------------------------------------------------------------------
# The table of keys
# --------------------------------------------------------------------------------------------


class _Required(enum.Enum):
    REQUIRED = "required"


REQUIRED: Final = _Required.REQUIRED
"""Marks a key that has no default: the node refuses to start without it."""


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One key: how to read it, what it may hold, and the line the README shows for it.

    ``default`` is written as it would appear in a file and goes through the same parser and
    validator as a user's value, so a bad default fails the tests rather than a node. ``None``
    means the key is optional and its typed value is ``None`` when absent.
    """

    name: str
    type: ConfigType
    default: str | _Required | None
    doc: str
    validator: Validator | None = None
    separator: str = ","

    @property
    def attribute(self) -> str:
        """The :class:`RaftmetaConfig` field holding this key's typed value."""
        return self.name.replace(".", "_")

    def parse(self, raw: str) -> object:
        """Turn the text of a value into its typed form, or raise ``_BadValue``."""
        value = _PARSERS[self.type](raw, self)
        if self.validator is not None:
            self.validator(value)
        return value

    def valid_values(self) -> str:
        if self.validator is not None:
            return self.validator.describe()
        return _TYPE_SHAPES.get(self.type, "")


_PARSERS: Final[Mapping[ConfigType, Callable[[str, ConfigKey], object]]] = {
    ConfigType.INT: lambda raw, _key: _parse_integer(raw, _INT_MIN, _INT_MAX, "an integer"),
    ConfigType.LONG: lambda raw, _key: _parse_integer(raw, _LONG_MIN, _LONG_MAX, "an integer"),
    ConfigType.BOOLEAN: lambda raw, _key: _parse_boolean(raw),
    ConfigType.STRING: lambda raw, _key: raw,
    ConfigType.LIST: lambda raw, key: _split_list(raw, key.separator),
    ConfigType.CLASS: lambda raw, _key: _parse_class(raw),
    ConfigType.VOTERS: lambda raw, _key: _parse_voters(raw),
    ConfigType.LISTENERS: lambda raw, _key: _parse_listeners(raw),
}

_TYPE_SHAPES: Final[Mapping[ConfigType, str]] = {
    ConfigType.BOOLEAN: "true, false",
    ConfigType.CLASS: "package.module.ClassName or package.module:ClassName",
    ConfigType.VOTERS: "id@host:port,…",
    ConfigType.LISTENERS: "NAME://host:port,…",
}

_MIB = 1024 * 1024
_FAST_FAILOVER = (
    "Kafka ships election 1000 / fetch 2000 ms, tuned for WAN-ish clusters and GC pauses; "
    "raftmeta ships 300 / 500 so that a voter killed with kill -9 is replaced in under 1 s "
    "on loopback. Raise them for slow or distant links."
)

CONFIG_KEYS: Final[tuple[ConfigKey, ...]] = (
    # Identity and roles
    ConfigKey(
        "node.id",
        ConfigType.INT,
        REQUIRED,
        "This node's id; unique in the cluster and, for a controller, its entry in "
        "controller.quorum.voters.",
        AtLeast(0),
    ),
    ConfigKey(
        "process.roles",
        ConfigType.LIST,
        "controller",
        "What this node runs: controller (a quorum voter), broker (an observer that follows "
        "the log), or both.",
        SubsetOf(("broker", "controller")),
    ),
    ConfigKey(
        "controller.quorum.voters",
        ConfigType.VOTERS,
        REQUIRED,
        "The static Raft quorum as id@host:port pairs; every node must list the same voters.",
    ),
    ConfigKey(
        "listeners",
        ConfigType.LISTENERS,
        "",
        "Addresses to serve on as NAME://host:port; an empty host means every interface. "
        "Without a CONTROLLER listener a controller serves on its controller.quorum.voters entry.",
    ),
    ConfigKey(
        "metadata.log.dir",
        ConfigType.STRING,
        REQUIRED,
        "Directory holding the metadata log, snapshots, quorum-state and meta.properties; "
        "prepare it with raftmeta format.",
        NonEmpty(),
    ),
    ConfigKey(
        "cluster.id",
        ConfigType.STRING,
        None,
        "If set, must equal the cluster id in meta.properties; guards against pointing a node "
        "at another cluster's directory.",
        Matches(r"[A-Za-z0-9_-]{1,64}", "1 to 64 letters, digits, '-' or '_'"),
    ),
    # Raft
    ConfigKey(
        "controller.quorum.election.timeout.ms",
        ConfigType.INT,
        "300",
        "T for the randomized election timeout [T, 2T) of a candidate waiting for votes. "
        + _FAST_FAILOVER,
        AtLeast(1),
    ),
    ConfigKey(
        "controller.quorum.fetch.timeout.ms",
        ConfigType.INT,
        "500",
        "A voter that has not fetched from the leader for this long starts an election; a "
        "leader not fetched from by a majority for 1.5 times this long resigns. " + _FAST_FAILOVER,
        AtLeast(1),
    ),
    ConfigKey(
        "controller.quorum.election.backoff.max.ms",
        ConfigType.INT,
        "300",
        "Cap of the exponential backoff after a lost election. " + _FAST_FAILOVER,
        AtLeast(1),
    ),
    ConfigKey(
        "controller.quorum.append.linger.ms",
        ConfigType.INT,
        "1",
        "How long the leader gathers appends into one batch and one fsync. Kafka ships 25; "
        "1 keeps commit latency low while still batching concurrent requests.",
        AtLeast(0),
    ),
    ConfigKey(
        "controller.quorum.request.timeout.ms",
        ConfigType.INT,
        "2000",
        "How long a Raft request (Vote, BeginQuorumEpoch, ...) may go unanswered before it "
        "is sent again. Same as Kafka.",
        AtLeast(1),
    ),
    ConfigKey(
        "controller.quorum.retry.backoff.ms",
        ConfigType.INT,
        "20",
        "Pause before retrying a failed Raft request to the same peer.",
        AtLeast(0),
    ),
    # Log and snapshots
    ConfigKey(
        "metadata.log.max.record.bytes.between.snapshots",
        ConfigType.LONG,
        str(20 * _MIB),
        "Take a snapshot once this many bytes of records were committed since the last one.",
        AtLeast(1),
    ),
    ConfigKey(
        "metadata.log.max.snapshot.interval.ms",
        ConfigType.LONG,
        str(60 * 60 * 1000),
        "Take a snapshot at least this often when anything was committed; 0 turns the time "
        "trigger off.",
        AtLeast(0),
    ),
    ConfigKey(
        "metadata.log.segment.bytes",
        ConfigType.INT,
        str(1024 * _MIB),
        "Size at which the metadata log rolls to a new segment file.",
        AtLeast(1024),
    ),
    ConfigKey(
        "metadata.max.retention.bytes",
        ConfigType.LONG,
        str(100 * _MIB),
        "Delete log segments older than the latest snapshot once the log exceeds this size; "
        "-1 keeps them all.",
        AtLeast(-1),
    ),
    ConfigKey(
        "metadata.max.idle.interval.ms",
        ConfigType.INT,
        "500",
        "An idle active controller appends a NoOpRecord this often, so followers and brokers "
        "can tell a quiet leader from a dead one; 0 turns it off.",
        AtLeast(0),
    ),
    # Brokers
    ConfigKey(
        "broker.heartbeat.interval.ms",
        ConfigType.INT,
        "2000",
        "How often a broker heartbeats to the active controller; must be below "
        "broker.session.timeout.ms.",
        AtLeast(1),
    ),
    ConfigKey(
        "broker.session.timeout.ms",
        ConfigType.INT,
        "9000",
        "A broker whose last heartbeat is older than this is fenced and loses its leaderships.",
        AtLeast(1),
    ),
    ConfigKey(
        "broker.rack",
        ConfigType.STRING,
        None,
        "The rack (or availability zone) of this broker; replica placement spreads each "
        "partition's replicas across racks.",
    ),
    # Leader balance and elections
    ConfigKey(
        "auto.leader.rebalance.enable",
        ConfigType.BOOLEAN,
        "true",
        "Periodically move leadership back to each partition's preferred replica.",
    ),
    ConfigKey(
        "leader.imbalance.per.broker.percentage",
        ConfigType.INT,
        "10",
        "Rebalance a broker's partitions only when more than this percentage of those it "
        "prefers to lead are led elsewhere. Kafka's KRaft controller ignores it; raftmeta "
        "honours it.",
        Between(0, 100),
    ),
    ConfigKey(
        "leader.imbalance.check.interval.seconds",
        ConfigType.LONG,
        "300",
        "How often the automatic leader rebalance runs.",
        AtLeast(1),
    ),
    ConfigKey(
        "leader.imbalance.catch.up.ms",
        ConfigType.LONG,
        "10000",
        "A replica must have been back in the ISR this long before automatic rebalance makes "
        "it leader again, so a recovering broker is not handed traffic while still catching "
        "up; 0 elects it at once, as Kafka does.",
        AtLeast(0),
    ),
    ConfigKey(
        "unclean.leader.election.interval.ms",
        ConfigType.LONG,
        str(5 * 60 * 1000),
        "How often leaderless partitions of topics allowing unclean election are given a "
        "leader from outside the ISR.",
        AtLeast(1),
    ),
    ConfigKey(
        "unclean.leader.election.enable",
        ConfigType.BOOLEAN,
        "false",
        "Cluster default for electing a leader outside the ISR when none in it is alive; may "
        "lose committed data. Topics can override it.",
    ),
    # Topic defaults
    ConfigKey(
        "num.partitions",
        ConfigType.INT,
        "1",
        "Partition count of a topic created without one.",
        AtLeast(1),
    ),
    ConfigKey(
        "default.replication.factor",
        ConfigType.INT,
        "1",
        "Replication factor of a topic created without one.",
        Between(1, 32767),
    ),
    ConfigKey(
        "min.insync.replicas",
        ConfigType.INT,
        "1",
        "Cluster default for the smallest ISR that still accepts acks=all writes.",
        AtLeast(1),
    ),
    # Plug-ins and security
    ConfigKey(
        "replica.placer.class.name",
        ConfigType.CLASS,
        "placement.striped.StripedReplicaPlacer",
        "ReplicaPlacer that chooses replicas for new partitions; it reads its own "
        "replica.placer.* keys.",
    ),
    ConfigKey(
        "authorizer.class.name",
        ConfigType.CLASS,
        None,
        "Authorizer checked on every Admin and BrokerLifecycle request: "
        "raftmeta.auth.AclAuthorizer (rules in raftmeta.acls) or any class with "
        "authorize(principal, operation, resource_type, resource_name). Empty: every request "
        "is allowed, as in Kafka.",
    ),
    ConfigKey(
        "super.users",
        ConfigType.LIST,
        "",
        "Principals the authorizer always allows, separated by semicolons as in Kafka: "
        "User:alice;User:bob.",
        EachMatches(r"[A-Za-z]+:.+", "a principal Type:name"),
        separator=";",
    ),
    ConfigKey(
        "raftmeta.acls",
        ConfigType.LIST,
        "",
        "Allow rules of the built-in raftmeta.auth.AclAuthorizer, comma-separated, each "
        "PrincipalType:name:Operation:ResourceType:resource-name with Kafka's operation and "
        "resource names (User:alice:Alter:Cluster:kafka-cluster); * matches any name.",
    ),
    ConfigKey(
        "raftmeta.auth.tokens.file",
        ConfigType.STRING,
        None,
        "File of token=PrincipalType:name lines: a caller sending 'authorization: Bearer "
        "<token>' is that principal, one with no token is User:ANONYMOUS, and an unknown token "
        "fails with SASL_AUTHENTICATION_FAILED. Unset: tokens are not checked.",
    ),
    # Operations
    ConfigKey(
        "metrics.port",
        ConfigType.INT,
        "-1",
        "Port of the HTTP metrics endpoint; -1 serves none, 0 takes any free port.",
        Between(-1, 65535),
    ),
)

_KEYS_BY_NAME: Final[Mapping[str, ConfigKey]] = {key.name: key for key in CONFIG_KEYS}


# --------------------------------------------------------------------------------------------
# The typed configuration
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RaftmetaConfig:
    """A validated configuration: one typed field per key of :data:`CONFIG_KEYS`.

    Fields are named after the keys with dots turned into underscores, so a reader can go from
    a file to the code and back without a lookup table. Build one with :func:`parse_config` or
    :func:`load_config`; the constructor does no validation of its own.
    """

    node_id: int
    process_roles: tuple[str, ...]
    controller_quorum_voters: Mapping[int, HostPort]
    listeners: tuple[Listener, ...]
    metadata_log_dir: str
    cluster_id: str | None
    controller_quorum_election_timeout_ms: int
    controller_quorum_fetch_timeout_ms: int
    controller_quorum_election_backoff_max_ms: int
    controller_quorum_append_linger_ms: int
    controller_quorum_request_timeout_ms: int
    controller_quorum_retry_backoff_ms: int
    metadata_log_max_record_bytes_between_snapshots: int
    metadata_log_max_snapshot_interval_ms: int
    metadata_log_segment_bytes: int
    metadata_max_retention_bytes: int
    metadata_max_idle_interval_ms: int
    broker_heartbeat_interval_ms: int
    broker_session_timeout_ms: int
    broker_rack: str | None
    auto_leader_rebalance_enable: bool
    leader_imbalance_per_broker_percentage: int
    leader_imbalance_check_interval_seconds: int
    leader_imbalance_catch_up_ms: int
    unclean_leader_election_interval_ms: int
    unclean_leader_election_enable: bool
    num_partitions: int
    default_replication_factor: int
    min_insync_replicas: int
    replica_placer_class_name: str
    authorizer_class_name: str | None
    super_users: tuple[str, ...]
    raftmeta_acls: tuple[str, ...]
    raftmeta_auth_tokens_file: str | None
    metrics_port: int
    originals: Mapping[str, str]
    """Every key as given (after overrides), known or not, as text."""

    @property
    def is_controller(self) -> bool:
        return "controller" in self.process_roles

    @property
    def is_broker(self) -> bool:
        return "broker" in self.process_roles

    @property
    def controller_endpoint(self) -> HostPort:
        """Where this node serves the Raft and Admin services.

        A CONTROLLER listener wins, so a node can bind to all interfaces while peers dial the
        address in ``controller.quorum.voters``; otherwise it is the node's own voter entry.
        """
        for listener in self.listeners:
            if listener.name == "CONTROLLER":
                return listener.address
        if self.node_id in self.controller_quorum_voters:
            return self.controller_quorum_voters[self.node_id]
        raise ConfigError(
            f"Invalid configuration listeners: node {self.node_id} is not a voter and has no "
            "CONTROLLER listener"
        )

    @property
    def unknown_keys(self) -> tuple[str, ...]:
        """Keys this product does not read itself, worth a warning at start-up when no plug-in
        claims them: they are often typos of real keys."""
        return tuple(sorted(key for key in self.originals if key not in _KEYS_BY_NAME))

    def originals_with_prefix(self, prefix: str, *, strip: bool = True) -> dict[str, str]:
        """The raw settings under ``prefix``, for plug-ins that declare their own keys."""
        return {
            (key[len(prefix) :] if strip else key): value
            for key, value in self.originals.items()
            if key.startswith(prefix)
        }


ConfigValue = str | int | bool
"""A value given from Python rather than a file; ints and bools are written out as text."""


def parse_config(
    source: str | Mapping[str, ConfigValue],
    overrides: Mapping[str, ConfigValue] | None = None,
) -> RaftmetaConfig:
    """Validate properties text, or an already parsed mapping, into a :class:`RaftmetaConfig`.

    ``overrides`` win over ``source``; they carry the command line's ``--override key=value``
    and let tests start nodes from one shared base.
    """
    originals = parse_properties(source) if isinstance(source, str) else _as_text(source)
    originals.update(_as_text(overrides or {}))
    return _build(originals)


def load_config(
    path: str | Path, overrides: Mapping[str, ConfigValue] | None = None
) -> RaftmetaConfig:
    """Read and validate a ``.properties`` file (UTF-8; ``\\uXXXX`` escapes work too)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise ConfigError(f"Cannot read configuration file {path}: {reason}") from error
    return parse_config(text, overrides)


def parse_override(argument: str) -> tuple[str, str]:
    """Split a command-line ``key=value`` override."""
    key, equals, value = argument.partition("=")
    if not equals or not key.strip():
        raise ConfigError(f"Invalid override '{_quote(argument)}': expected key=value")
    return key.strip(), value


def _as_text(values: Mapping[str, ConfigValue]) -> dict[str, str]:
    text: dict[str, str] = {}
    for key, value in values.items():
        if isinstance(value, bool):
            text[key] = "true" if value else "false"
        elif isinstance(value, int):
            text[key] = str(value)
        else:
            text[key] = value
    return text


class _Typed:
    """Typed values by key, checked at run time so that the dataclass is filled type-safely."""

    def __init__(self, values: Mapping[str, object]) -> None:
        self._values = values

    def _get(self, key: str, kind: type[_T]) -> _T:
        value = self._values[key]
        assert isinstance(value, kind), f"{key} parsed to {type(value).__name__}"
        return value

    def integer(self, key: str) -> int:
        return self._get(key, int)

    def boolean(self, key: str) -> bool:
        return self._get(key, bool)

    def text(self, key: str) -> str:
        return self._get(key, str)

    def optional_text(self, key: str) -> str | None:
        return None if self._values[key] is None else self.text(key)

    def texts(self, key: str) -> tuple[str, ...]:
        return tuple(str(item) for item in self._get(key, tuple))

    def listeners(self, key: str) -> tuple[Listener, ...]:
        return tuple(item for item in self._get(key, tuple) if isinstance(item, Listener))

    def voters(self, key: str) -> Mapping[int, HostPort]:
        voters: Mapping[int, HostPort] = self._get(key, MappingProxyType)
        return voters


def _build(originals: dict[str, str]) -> RaftmetaConfig:
    values: dict[str, object] = {}
    for key in CONFIG_KEYS:
        raw = originals.get(key.name)
        if raw is None:
            if key.default is REQUIRED:
                raise ConfigError(
                    f"Missing required configuration {key.name}, which has no default: {key.doc}"
                )
            raw = key.default
        raw = None if raw is None else raw.strip()
        if not raw and key.default is None:
            values[key.name] = None
            continue
        assert raw is not None
        try:
            values[key.name] = key.parse(raw)
        except _BadValue as problem:
            raise ConfigError(
                f"Invalid value '{_quote(raw)}' for configuration {key.name}: {problem}"
            ) from None
    _check_together(values)
    typed = _Typed(values)
    return RaftmetaConfig(
        node_id=typed.integer("node.id"),
        process_roles=typed.texts("process.roles"),
        controller_quorum_voters=typed.voters("controller.quorum.voters"),
        listeners=typed.listeners("listeners"),
        metadata_log_dir=typed.text("metadata.log.dir"),
        cluster_id=typed.optional_text("cluster.id"),
        controller_quorum_election_timeout_ms=typed.integer(
            "controller.quorum.election.timeout.ms"
        ),
        controller_quorum_fetch_timeout_ms=typed.integer("controller.quorum.fetch.timeout.ms"),
        controller_quorum_election_backoff_max_ms=typed.integer(
            "controller.quorum.election.backoff.max.ms"
        ),
        controller_quorum_append_linger_ms=typed.integer("controller.quorum.append.linger.ms"),
        controller_quorum_request_timeout_ms=typed.integer("controller.quorum.request.timeout.ms"),
        controller_quorum_retry_backoff_ms=typed.integer("controller.quorum.retry.backoff.ms"),
        metadata_log_max_record_bytes_between_snapshots=typed.integer(
            "metadata.log.max.record.bytes.between.snapshots"
        ),
        metadata_log_max_snapshot_interval_ms=typed.integer(
            "metadata.log.max.snapshot.interval.ms"
        ),
        metadata_log_segment_bytes=typed.integer("metadata.log.segment.bytes"),
        metadata_max_retention_bytes=typed.integer("metadata.max.retention.bytes"),
        metadata_max_idle_interval_ms=typed.integer("metadata.max.idle.interval.ms"),
        broker_heartbeat_interval_ms=typed.integer("broker.heartbeat.interval.ms"),
        broker_session_timeout_ms=typed.integer("broker.session.timeout.ms"),
        broker_rack=typed.optional_text("broker.rack"),
        auto_leader_rebalance_enable=typed.boolean("auto.leader.rebalance.enable"),
        leader_imbalance_per_broker_percentage=typed.integer(
            "leader.imbalance.per.broker.percentage"
        ),
        leader_imbalance_check_interval_seconds=typed.integer(
            "leader.imbalance.check.interval.seconds"
        ),
        leader_imbalance_catch_up_ms=typed.integer("leader.imbalance.catch.up.ms"),
        unclean_leader_election_interval_ms=typed.integer("unclean.leader.election.interval.ms"),
        unclean_leader_election_enable=typed.boolean("unclean.leader.election.enable"),
        num_partitions=typed.integer("num.partitions"),
        default_replication_factor=typed.integer("default.replication.factor"),
        min_insync_replicas=typed.integer("min.insync.replicas"),
        replica_placer_class_name=typed.text("replica.placer.class.name"),
        authorizer_class_name=typed.optional_text("authorizer.class.name"),
        super_users=typed.texts("super.users"),
        raftmeta_acls=typed.texts("raftmeta.acls"),
        raftmeta_auth_tokens_file=typed.optional_text("raftmeta.auth.tokens.file"),
        metrics_port=typed.integer("metrics.port"),
        originals=MappingProxyType(dict(originals)),
    )


def _check_together(values: Mapping[str, object]) -> None:
    """Rules that span keys; each error still names the one key an operator should change."""
    node_id = values["node.id"]
    roles = values["process.roles"]
    voters = values["controller.quorum.voters"]
    assert isinstance(roles, tuple) and isinstance(voters, Mapping)
    voter_ids = ", ".join(str(voter) for voter in voters)
    if "controller" in roles and node_id not in voters:
        raise ConfigError(
            f"Invalid configuration controller.quorum.voters: node.id {node_id} has the "
            f"controller role but is not among the voters ({voter_ids})"
        )
    if "controller" not in roles and node_id in voters:
        raise ConfigError(
            f"Invalid configuration process.roles: node.id {node_id} is listed in "
            "controller.quorum.voters, so it must include controller"
        )
    heartbeat = values["broker.heartbeat.interval.ms"]
    session = values["broker.session.timeout.ms"]
    assert isinstance(heartbeat, int) and isinstance(session, int)
    if heartbeat >= session:
        raise ConfigError(
            f"Invalid value '{heartbeat}' for configuration broker.heartbeat.interval.ms: "
            f"must be less than broker.session.timeout.ms ({session}), or live brokers get fenced"
        )


def _quote(value: str, limit: int = 80) -> str:
    """Show a value on one line: escape line breaks and cut very long values."""
    shown = "".join(
        char if char.isprintable() else char.encode("unicode_escape").decode("ascii")
        for char in value
    )
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


# --------------------------------------------------------------------------------------------
# Documentation
# --------------------------------------------------------------------------------------------


def config_table_markdown(keys: Iterable[ConfigKey] = CONFIG_KEYS) -> str:
    """The README's configuration table, generated so that it always matches the parser."""
    rows = ["| Key | Type | Default | Valid values | Description |", "|---|---|---|---|---|"]
    for key in keys:
        if key.default is REQUIRED:
            default = "*required*"
        elif key.default is None or key.default == "":
            default = "*none*"
        else:
            default = f"`{key.default}`"
        cells = (f"`{key.name}`", key.type.value, default, key.valid_values(), key.doc)
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(config_table_markdown(), end="")
