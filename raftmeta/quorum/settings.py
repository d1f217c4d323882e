"""What a node runtime needs from the configuration, in one place it can be built from.

Tests and embedders start nodes on ports chosen by the OS, which a ``.properties`` file cannot
name in advance, so the runtime takes these settings rather than ``RaftmetaConfig`` itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from raftmeta.config.node import RaftmetaConfig
from raftmeta.raft.config import RaftConfig
from raftmeta.storage.log import DEFAULT_SEGMENT_BYTES
from raftmeta.storage.retention import TRIM_AT_ONCE, LogRetention

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
    retention: LogRetention = TRIM_AT_ONCE
    """``metadata.max.retention.bytes`` / ``.ms``: the log kept below the latest snapshot, as
    history for audits (a server keeps Kafka's defaults; the default here keeps none)."""

    @classmethod
    def from_config(cls, config: RaftmetaConfig) -> NodeSettings:
        raft = raft_config(config)
        endpoint = config.controller_endpoint
        return cls(
            node_id=config.node_id,
            voters={
                node: str(address) for node, address in config.controller_quorum_voters.items()
            },
            data_dir=Path(config.metadata_log_dir),
            cluster_id=config.cluster_id,
            listen_host=endpoint.host or "0.0.0.0",
            listen_port=endpoint.port,
            raft=raft,
            append_linger_ms=config.controller_quorum_append_linger_ms,
            max_bytes_between_snapshots=config.metadata_log_max_record_bytes_between_snapshots,
            max_snapshot_interval_ms=config.metadata_log_max_snapshot_interval_ms,
            segment_bytes=config.metadata_log_segment_bytes,
            retention=LogRetention(
                max_bytes=config.metadata_max_retention_bytes,
                max_age_ms=config.metadata_max_retention_ms,
            ),
        )
