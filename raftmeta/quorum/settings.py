"""What a node runtime needs from the configuration, in one place it can be built from.

Tests and embedders start nodes on ports chosen by the OS, which a ``.properties`` file cannot
name in advance, so the runtime takes these settings rather than ``RaftmetaConfig`` itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from raftmeta.config.errors import ConfigError
from raftmeta.config.node import RaftmetaConfig
from raftmeta.raft.config import RaftConfig
from raftmeta.security.listener import RAFT_LISTENER, client_tls
from raftmeta.security.tls import TlsSettings
from raftmeta.storage.log import DEFAULT_SEGMENT_BYTES
from raftmeta.storage.retention import TRIM_AT_ONCE, LogRetention

STREAM = "stream"
GRPC = "grpc"

DEFAULT_SNAPSHOT_BYTES = 20 * 1024 * 1024
DEFAULT_SNAPSHOT_INTERVAL_MS = 60 * 60 * 1000


def raft_config(config: RaftmetaConfig) -> RaftConfig:
    """The core's timeouts from the ``controller.quorum.*`` keys, for voters and observers.

    The parked Fetch wait stays under half the fetch timeout, or an idle follower would time
    out while its own request is parked."""
    fetch_timeout = config.controller_quorum_fetch_timeout_ms
    return RaftConfig(
        election_timeout_ms=config.controller_quorum_election_timeout_ms,
        fetch_timeout_ms=fetch_timeout,
        election_backoff_max_ms=config.controller_quorum_election_backoff_max_ms,
        request_timeout_ms=config.controller_quorum_request_timeout_ms,
        retry_backoff_ms=config.controller_quorum_retry_backoff_ms,
        fetch_max_wait_ms=min(RaftConfig().fetch_max_wait_ms, fetch_timeout // 2),
    )


@dataclass(frozen=True, slots=True)
class NodeSettings:
    node_id: int
    voters: Mapping[int, str]
    """Every voter's ``host:port``; this node's own entry is not dialled."""
    data_dir: Path
    cluster_id: str | None = None
    """If set, the directory must belong to this cluster."""
    listen_host: str = "127.0.0.1"
    listen_port: int = 0
    """0 lets the OS choose; ``RaftServer.start`` returns the port it got."""
    raft: RaftConfig = field(default_factory=RaftConfig)
    append_linger_ms: int = 1
    max_bytes_between_snapshots: int = DEFAULT_SNAPSHOT_BYTES
    max_snapshot_interval_ms: int = DEFAULT_SNAPSHOT_INTERVAL_MS
    """Snapshot at least this often when anything committed, so a quiet cluster's log still
    gets trimmed and a restart replays little; 0 leaves only the bytes trigger."""
    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    """``metadata.log.segment.bytes``: where the log rolls to a new segment file."""
    transport: str = GRPC
    """``controller.quorum.transport``: how this node calls its peers (``stream`` or
    ``grpc``); the composition root picks the ``Connect`` from it."""
    stream_listen: tuple[str, int] | None = None
    """Where to serve the Raft stream (host, port; 0 lets the OS choose), or None to serve
    none, so that peers reach this node over gRPC."""
    stream_advertised: tuple[str, int] | None = None
    """The address ``DescribeEndpoints`` gives peers for the Raft stream instead of where it
    listens (``advertised.listeners``: a proxy, a NAT); None gives the listener's own."""
    inline_small_writes: bool = True
    """Make a small append durable on the event loop while the disk is fast, rather than
    hand it to a worker thread (see ``raftmeta.quorum.write_placement``); False always hands
    it over."""
    retention: LogRetention = TRIM_AT_ONCE
    """``metadata.max.retention.bytes`` / ``.ms``: the log kept below the latest snapshot, as
    history for audits (a server keeps Kafka's defaults; the default here keeps none)."""
    bootstrap_servers: tuple[str, ...] = ()
    """``controller.quorum.bootstrap.servers``: asked for the voters by a node whose
    directory does not know them (a dynamic quorum's controller formatted to join later)."""
    bootstrap_tls: TlsSettings | None = None
    """How to reach ``bootstrap_servers``: the node's credentials toward a CONTROLLER
    listener that speaks TLS; None speaks plaintext."""

    @classmethod
    def from_config(cls, config: RaftmetaConfig) -> NodeSettings:
        raft = raft_config(config)
        endpoint = config.controller_endpoint
        listen_host = endpoint.host or "0.0.0.0"
        return cls(
            node_id=config.node_id,
            voters={
                node: str(address) for node, address in config.controller_quorum_voters.items()
            },
            data_dir=Path(config.metadata_log_dir),
            cluster_id=config.cluster_id,
            listen_host=listen_host,
            listen_port=endpoint.port,
            raft=raft,
            append_linger_ms=config.controller_quorum_append_linger_ms,
            max_bytes_between_snapshots=config.metadata_log_max_record_bytes_between_snapshots,
            max_snapshot_interval_ms=config.metadata_log_max_snapshot_interval_ms,
            segment_bytes=config.metadata_log_segment_bytes,
            transport=config.controller_quorum_transport,
            stream_listen=stream_listen(config, listen_host),
            stream_advertised=stream_advertised(config),
            retention=LogRetention(
                max_bytes=config.metadata_max_retention_bytes,
                max_age_ms=config.metadata_max_retention_ms,
            ),
            bootstrap_servers=config.controller_quorum_bootstrap_servers,
            bootstrap_tls=client_tls(config.originals),
        )


def stream_advertised(config: RaftmetaConfig) -> tuple[str, int] | None:
    """The RAFT entry of ``advertised.listeners``, which the configuration checked has a
    host, a port and a RAFT listener behind it."""
    for item in config.advertised_listeners:
        if item.name == RAFT_LISTENER:
            return item.host, item.port
    return None


def stream_listen(config: RaftmetaConfig, controller_host: str) -> tuple[str, int] | None:
    """Where a node serves the Raft stream: its RAFT listener; without one, with
    ``controller.quorum.transport=stream``, a port the OS chooses on the controller
    listener's host (peers learn it from the node through ``DescribeEndpoints``). None with
    ``grpc``, where a RAFT listener is a contradiction and refused."""
    raft = next((item for item in config.listeners if item.name == RAFT_LISTENER), None)
    if config.controller_quorum_transport == GRPC:
        if raft is not None:
            raise ConfigError(
                f"Invalid configuration listeners: a {RAFT_LISTENER} listener serves the Raft "
                "stream, but controller.quorum.transport=grpc (set it to stream, or remove "
                "the listener)"
            )
        return None
    if raft is None:
        return controller_host, 0
    return raft.host or "0.0.0.0", raft.port
