"""What an embedded broker needs to run, buildable from a ``.properties`` configuration.

Like ``NodeSettings`` for a controller, these are plain values so that tests and embedders can
start brokers against a quorum on ports chosen by the OS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from raftmeta.common.config_defs import static_broker_configs
from raftmeta.common.features import SUPPORTED_FEATURES
from raftmeta.config.errors import ConfigError
from raftmeta.config.node import RaftmetaConfig
from raftmeta.quorum.settings import (
    DEFAULT_SNAPSHOT_BYTES,
    DEFAULT_SNAPSHOT_INTERVAL_MS,
    raft_config,
)
from raftmeta.raft.config import RaftConfig
from raftmeta.records import BrokerFeature
from raftmeta.security.listener import client_tls
from raftmeta.security.tls import TlsSettings

DEFAULT_HEARTBEAT_INTERVAL_MS = 2000
DEFAULT_SESSION_TIMEOUT_MS = 9000
COMBINED_BROKER_DIR = "broker"
"""A combined node's broker directory under ``metadata.log.dir`` when ``log.dirs`` is empty."""


@dataclass(frozen=True, slots=True)
class BrokerSettings:
    broker_id: int
    """The broker's id, also its replica id when it fetches the log: never a voter's id,
    except in a combined node (``combined``), which fetches nothing."""
    voters: Mapping[int, str]
    """Every controller's ``host:port``: the observer fetches the log from their leader.
    Empty for a dynamic quorum (KIP-853): the observer then learns the voters from
    ``bootstrap_servers`` and follows the VotersRecords in the log, as a Kafka broker given
    only ``controller.quorum.bootstrap.servers`` does."""
    data_dir: Path
    """The broker's own formatted metadata directory (the observer's log and snapshots); a
    combined node's broker keeps only its status file and clean-shutdown marker here."""
    bootstrap_servers: str = ""
    """Where BrokerLifecycle calls go first (the channel follows NOT_CONTROLLER); empty means
    the voters' addresses."""
    cluster_id: str | None = None
    """If set, the directory must belong to this cluster."""
    rack: str | None = None
    heartbeat_interval_ms: int = DEFAULT_HEARTBEAT_INTERVAL_MS
    session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS
    listener_name: str = "PLAINTEXT"
    listener_host: str = "127.0.0.1"
    listener_port: int | None = None
    """The endpoint registered for clients; None registers the observer's own port."""
    observer_port: int = 0
    """The port of the observer's gRPC server, on 127.0.0.1 (``raftmeta.broker.observer.port``);
    0 lets the OS choose."""
    raft: RaftConfig = field(default_factory=RaftConfig)
    max_bytes_between_snapshots: int = DEFAULT_SNAPSHOT_BYTES
    max_snapshot_interval_ms: int = DEFAULT_SNAPSHOT_INTERVAL_MS
    status_file: Path | None = None
    """If set, ``<metadata offset> <image digest>`` is kept in this file (see ``status``)."""
    status_interval_ms: int = 100
    unconfirmed_voters: frozenset[int] = frozenset()
    """Voters whose address in ``voters`` is a guess (see ``discovery``): checked against
    the quorum when one of them becomes leader."""
    expand_isr: bool = True
    supported_features: tuple[BrokerFeature, ...] = SUPPORTED_FEATURES
    """The feature ranges reported at registration: this build's, unless a test or a rolling
    upgrade needs a broker that supports less."""
    """As a partition leader, put live replicas back into the ISR (see ``broker/isr.py``);
    tests that steer ISRs by hand turn it off."""
    tls: TlsSettings | None = None
    """The broker's credentials toward the controllers (its ``broker-<id>`` certificate and
    the CA it trusts); None speaks plaintext."""
    static_configs: tuple[tuple[str, str], ...] = ()
    """The broker configs its file sets (Kafka names, such as ``log.retention.hours``): the
    STATIC_BROKER_CONFIG level of its effective config, under the dynamic ones in the log."""
    replica_catch_up_delay_ms: int | None = None
    """How long a replica a reassignment adds must be seen live before this broker, leading
    the partition, counts it caught up and asks for it in the ISR (``replica.catch.up.delay.ms``
    for a broker run from a config file). None: only when the embedding process says so
    (:meth:`raftmeta.broker.Broker.mark_replica_caught_up`), since only it knows."""
    combined: bool = False
    """The broker runs inside a controller's process under the controller's id
    (``process.roles=broker,controller``): it reads the metadata log from that controller's
    own replica and runs no observer, so it may, and must, use a voter's id."""

    def __post_init__(self) -> None:
        if self.combined:
            if self.voters and self.broker_id not in self.voters:
                raise ConfigError(
                    f"Invalid value '{self.broker_id}' for configuration node.id: a combined "
                    "node's broker runs under its controller's id, which must be a voter "
                    f"({', '.join(str(v) for v in sorted(self.voters))})"
                )
        elif self.broker_id in self.voters:
            raise ConfigError(
                f"Invalid value '{self.broker_id}' for configuration node.id: a broker fetches "
                "the log as an observer and must not use a controller's id "
                f"({', '.join(str(v) for v in sorted(self.voters))})"
            )
        if not self.voters and not self.quorum_bootstrap_servers:
            raise ConfigError(
                "Missing required configuration controller.quorum.voters: set it (a static "
                "quorum) or controller.quorum.bootstrap.servers (a dynamic one)"
            )
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ConfigError(
                f"Invalid value '{self.heartbeat_interval_ms}' for configuration "
                "broker.heartbeat.interval.ms: must be less than broker.session.timeout.ms "
                f"({self.session_timeout_ms})"
            )

    @property
    def quorum_bootstrap_servers(self) -> tuple[str, ...]:
        """Where the observer asks for the voters of a dynamic quorum (no ``voters``): the
        plain ``host:port`` entries of ``bootstrap_servers``."""
        entries = (entry.strip() for entry in self.bootstrap_servers.split(","))
        return tuple(entry.rpartition("@")[2] for entry in entries if entry)

    @property
    def controller_servers(self) -> str:
        return self.bootstrap_servers or ",".join(
            address for _, address in sorted(self.voters.items())
        )

    @classmethod
    def from_config(
        cls,
        config: RaftmetaConfig,
        *,
        bootstrap_servers: str = "",
        status_file: Path | None = None,
        unconfirmed_voters: frozenset[int] = frozenset(),
        combined: bool = False,
    ) -> BrokerSettings:
        """A separate broker's settings, or with ``combined`` those of the broker half of a
        combined node: its data directory is the first of ``log.dirs`` (default
        ``<metadata.log.dir>/broker``), since ``metadata.log.dir`` is its controller's."""
        raft = raft_config(config)
        if not bootstrap_servers and not config.controller_quorum_voters:
            bootstrap_servers = ",".join(config.controller_quorum_bootstrap_servers)
        listener = next((item for item in config.listeners if item.name != "CONTROLLER"), None)
        return cls(
            broker_id=config.node_id,
            voters={
                node: str(address) for node, address in config.controller_quorum_voters.items()
            },
            data_dir=_combined_broker_dir(config) if combined else Path(config.metadata_log_dir),
            bootstrap_servers=bootstrap_servers,
            cluster_id=config.cluster_id,
            rack=config.broker_rack,
            heartbeat_interval_ms=config.broker_heartbeat_interval_ms,
            session_timeout_ms=config.broker_session_timeout_ms,
            listener_name=listener.name if listener is not None else "PLAINTEXT",
            listener_host=(listener.host or "127.0.0.1") if listener is not None else "127.0.0.1",
            listener_port=listener.port if listener is not None else None,
            observer_port=config.raftmeta_broker_observer_port,
            raft=raft,
            max_bytes_between_snapshots=config.metadata_log_max_record_bytes_between_snapshots,
            max_snapshot_interval_ms=config.metadata_log_max_snapshot_interval_ms,
            status_file=status_file,
            unconfirmed_voters=unconfirmed_voters,
            tls=client_tls(config.originals),
            static_configs=static_broker_configs(config.originals),
            replica_catch_up_delay_ms=config.replica_catch_up_delay_ms,
            combined=combined,
        )


def _combined_broker_dir(config: RaftmetaConfig) -> Path:
    if config.log_dirs:
        return Path(config.log_dirs[0])
    return Path(config.metadata_log_dir) / COMBINED_BROKER_DIR
