"""A node's validated configuration: :class:`RaftmetaConfig`, built from a ``.properties`` file
or a mapping by :func:`load_config` and :func:`parse_config`.

A bad file must stop a node before it joins a quorum and tell the operator exactly what to fix:
every problem raises :class:`~raftmeta.config.errors.ConfigError` with a one-line message naming
the key. Keys that are not in the table are kept, unparsed, so that plug-ins can read their own
settings (``replica.placer.*``, ``authorizer.*``) through
:meth:`RaftmetaConfig.originals_with_prefix`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar

from raftmeta.config.errors import ConfigError
from raftmeta.config.keys import CONFIG_KEYS, KEYS_BY_NAME, REQUIRED
from raftmeta.config.properties import parse_properties
from raftmeta.config.values import BadValue, HostPort, Listener

_T = TypeVar("_T")

RAFT_LISTENER_NAME = "RAFT"
"""The listener that serves the Raft stream (as ``raftmeta.security.listener`` names it; the
configuration layer sits below it)."""


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
    """Empty for a dynamic quorum, whose voters are in the log."""
    controller_quorum_bootstrap_servers: tuple[str, ...]
    listeners: tuple[Listener, ...]
    advertised_listeners: tuple[Listener, ...]
    metadata_log_dir: str
    cluster_id: str | None
    controller_quorum_election_timeout_ms: int
    controller_quorum_fetch_timeout_ms: int
    controller_quorum_election_backoff_max_ms: int
    controller_quorum_append_linger_ms: int
    controller_quorum_request_timeout_ms: int
    controller_quorum_transport: str
    controller_append_max_in_flight: int
    controller_append_linger_max_ms: int
    controller_quorum_retry_backoff_ms: int
    metadata_log_max_record_bytes_between_snapshots: int
    metadata_log_max_snapshot_interval_ms: int
    metadata_log_segment_bytes: int
    metadata_max_retention_bytes: int
    metadata_max_retention_ms: int
    metadata_max_idle_interval_ms: int
    broker_heartbeat_interval_ms: int
    broker_session_timeout_ms: int
    broker_rack: str | None
    replica_catch_up_delay_ms: int
    log_dirs: tuple[str, ...]
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
    raftmeta_allow_unauthenticated_listeners: bool
    listener_security_protocol_map: str
    ssl_keystore_type: str
    ssl_keystore_location: str | None
    ssl_keystore_key: str | None
    ssl_keystore_certificate_chain: str | None
    ssl_key_password: str | None
    ssl_truststore_type: str
    ssl_truststore_location: str | None
    ssl_truststore_certificates: str | None
    ssl_client_auth: str
    ssl_principal_mapping_rules: str | None
    metrics_port: int
    socket_request_max_bytes: int
    max_connections: int
    max_connections_per_ip: int
    connections_max_idle_ms: int
    raftmeta_kafka_partial_request_timeout_ms: int
    queued_max_request_bytes: int
    sasl_server_max_receive_size: int
    raftmeta_broker_observer_port: int
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
        return tuple(sorted(key for key in self.originals if key not in KEYS_BY_NAME))

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
        if self._values[key] is None:
            return MappingProxyType({})
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
        except BadValue as problem:
            raise ConfigError(
                f"Invalid value '{_quote(raw)}' for configuration {key.name}: {problem}"
            ) from None
    _check_together(values)
    typed = _Typed(values)
    return RaftmetaConfig(
        node_id=typed.integer("node.id"),
        process_roles=typed.texts("process.roles"),
        controller_quorum_voters=typed.voters("controller.quorum.voters"),
        controller_quorum_bootstrap_servers=typed.texts("controller.quorum.bootstrap.servers"),
        listeners=typed.listeners("listeners"),
        advertised_listeners=typed.listeners("advertised.listeners"),
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
        controller_quorum_transport=typed.text("controller.quorum.transport"),
        controller_append_max_in_flight=typed.integer("controller.append.max.in.flight"),
        controller_append_linger_max_ms=typed.integer("controller.append.linger.max.ms"),
        controller_quorum_retry_backoff_ms=typed.integer("controller.quorum.retry.backoff.ms"),
        metadata_log_max_record_bytes_between_snapshots=typed.integer(
            "metadata.log.max.record.bytes.between.snapshots"
        ),
        metadata_log_max_snapshot_interval_ms=typed.integer(
            "metadata.log.max.snapshot.interval.ms"
        ),
        metadata_log_segment_bytes=typed.integer("metadata.log.segment.bytes"),
        metadata_max_retention_bytes=typed.integer("metadata.max.retention.bytes"),
        metadata_max_retention_ms=typed.integer("metadata.max.retention.ms"),
        metadata_max_idle_interval_ms=typed.integer("metadata.max.idle.interval.ms"),
        broker_heartbeat_interval_ms=typed.integer("broker.heartbeat.interval.ms"),
        broker_session_timeout_ms=typed.integer("broker.session.timeout.ms"),
        broker_rack=typed.optional_text("broker.rack"),
        replica_catch_up_delay_ms=typed.integer("replica.catch.up.delay.ms"),
        log_dirs=typed.texts("log.dirs"),
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
        raftmeta_allow_unauthenticated_listeners=typed.boolean(
            "raftmeta.allow.unauthenticated.listeners"
        ),
        listener_security_protocol_map=typed.text("listener.security.protocol.map"),
        ssl_keystore_type=typed.text("ssl.keystore.type"),
        ssl_keystore_location=typed.optional_text("ssl.keystore.location"),
        ssl_keystore_key=typed.optional_text("ssl.keystore.key"),
        ssl_keystore_certificate_chain=typed.optional_text("ssl.keystore.certificate.chain"),
        ssl_key_password=typed.optional_text("ssl.key.password"),
        ssl_truststore_type=typed.text("ssl.truststore.type"),
        ssl_truststore_location=typed.optional_text("ssl.truststore.location"),
        ssl_truststore_certificates=typed.optional_text("ssl.truststore.certificates"),
        ssl_client_auth=typed.text("ssl.client.auth"),
        ssl_principal_mapping_rules=typed.optional_text("ssl.principal.mapping.rules"),
        metrics_port=typed.integer("metrics.port"),
        socket_request_max_bytes=typed.integer("socket.request.max.bytes"),
        max_connections=typed.integer("max.connections"),
        max_connections_per_ip=typed.integer("max.connections.per.ip"),
        connections_max_idle_ms=typed.integer("connections.max.idle.ms"),
        raftmeta_kafka_partial_request_timeout_ms=typed.integer(
            "raftmeta.kafka.partial.request.timeout.ms"
        ),
        queued_max_request_bytes=typed.integer("queued.max.request.bytes"),
        sasl_server_max_receive_size=typed.integer("sasl.server.max.receive.size"),
        raftmeta_broker_observer_port=typed.integer("raftmeta.broker.observer.port"),
        originals=MappingProxyType(dict(originals)),
    )


def _check_together(values: Mapping[str, object]) -> None:
    """Rules that span keys; each error still names the one key an operator should change."""
    node_id = values["node.id"]
    roles = values["process.roles"]
    voters = values["controller.quorum.voters"]
    bootstrap = values["controller.quorum.bootstrap.servers"]
    assert isinstance(roles, tuple) and isinstance(bootstrap, tuple)
    if voters is None:
        # A dynamic quorum: the voters are in the log, found through the bootstrap servers.
        if not bootstrap:
            raise ConfigError(
                "Missing required configuration controller.quorum.voters: set it (a static "
                "quorum) or controller.quorum.bootstrap.servers (a dynamic one)"
            )
        for server in bootstrap:
            host, colon, port = str(server).rpartition(":")
            if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ConfigError(
                    f"Invalid value '{_quote(str(server))}' for configuration "
                    "controller.quorum.bootstrap.servers: not host:port"
                )
        voters = {}
    assert isinstance(voters, Mapping)
    voter_ids = ", ".join(str(voter) for voter in voters)
    if "controller" in roles and voters and node_id not in voters:
        raise ConfigError(
            f"Invalid configuration controller.quorum.voters: node.id {node_id} has the "
            f"controller role but is not among the voters ({voter_ids})"
        )
    if "controller" not in roles and node_id in voters:
        raise ConfigError(
            f"Invalid configuration process.roles: node.id {node_id} is listed in "
            "controller.quorum.voters, so it must include controller"
        )
    _check_advertised(values)
    heartbeat = values["broker.heartbeat.interval.ms"]
    session = values["broker.session.timeout.ms"]
    assert isinstance(heartbeat, int) and isinstance(session, int)
    if heartbeat >= session:
        raise ConfigError(
            f"Invalid value '{heartbeat}' for configuration broker.heartbeat.interval.ms: "
            f"must be less than broker.session.timeout.ms ({session}), or live brokers get fenced"
        )


def _check_advertised(values: Mapping[str, object]) -> None:
    """An advertised address stands in for a listener the node serves, so it must name one
    that exists; a RAFT address is handed out only by the stream transport's
    DescribeEndpoints, so advertising one for gRPC replication is a mistake to report."""
    advertised = values["advertised.listeners"]
    listeners = values["listeners"]
    assert isinstance(advertised, tuple) and isinstance(listeners, tuple)
    served = {listener.name for listener in listeners if isinstance(listener, Listener)}
    for listener in advertised:
        assert isinstance(listener, Listener)
        if listener.name not in served:
            raise ConfigError(
                f"Invalid configuration advertised.listeners: {listener.name} is not a "
                f"listener in listeners ({', '.join(sorted(served)) or 'none'})"
            )
        transport = values["controller.quorum.transport"]
        if listener.name == RAFT_LISTENER_NAME and transport != "stream":
            raise ConfigError(
                "Invalid configuration advertised.listeners: a RAFT address is advertised, but "
                "controller.quorum.transport is not stream"
            )


def _quote(value: str, limit: int = 80) -> str:
    """Show a value on one line: escape line breaks and cut very long values."""
    shown = "".join(
        char if char.isprintable() else char.encode("unicode_escape").decode("ascii")
        for char in value
    )
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."
