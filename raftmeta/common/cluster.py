"""DescribeCluster as values: the registered brokers and the cluster they form."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BrokerDescription:
    """One registered broker with its first listener and the partitions it holds."""

    broker_id: int
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    broker_epoch: int
    host: str
    port: int
    leader_count: int
    replica_count: int


@dataclass(frozen=True, slots=True)
class ClusterDescription:
    cluster_id: str
    controller_id: int
    brokers: tuple[BrokerDescription, ...]
    metadata_offset: int
    image_digest: str = ""
    """Empty unless asked for."""
