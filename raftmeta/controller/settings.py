"""The settings the active controller and its domain managers read, under Kafka's names.

Its own module so that the queue (:mod:`raftmeta.controller.controller`) and every manager can
take them without importing one another.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from raftmeta.common.config_defs import static_broker_configs
from raftmeta.config.node import RaftmetaConfig
from raftmeta.records import UserScramCredentialRecord
from raftmeta.storage.bootstrap_scram import BootstrapCredential

APPENDS_IN_FLIGHT = 1
"""The default of ``controller.append.max.in.flight``: appends awaiting their commit at once."""

APPEND_LINGER_MAX_MS = 5
"""The default of ``controller.append.linger.max.ms``: the longest staged records wait for the
other writers the controller expects (*Adaptive wait* in :mod:`raftmeta.controller.controller`)."""


@dataclass(frozen=True, slots=True)
class ControllerSettings:
    """The settings the controller reads, under Kafka's names where Kafka has them."""

    node_id: int
    cluster_id: str
    voter_ids: frozenset[int] = frozenset()
    """The controllers' ids (``controller.quorum.voters``): no broker may register under one."""
    metadata_max_idle_interval_ms: int = 500
    broker_session_timeout_ms: int = 9_000
    broker_heartbeat_interval_ms: int = 2_000
    num_partitions: int = 1
    default_replication_factor: int = 1
    min_insync_replicas: int = 1
    unclean_leader_election_enable: bool = False
    request_timeout_ms: int = 30_000
    """The deadline of a request that names none."""
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_per_broker_percentage: int = 10
    leader_imbalance_check_interval_seconds: int = 300
    leader_imbalance_catch_up_ms: int = 10_000
    unclean_leader_election_interval_ms: int = 300_000
    appends_in_flight: int | None = APPENDS_IN_FLIGHT
    """How many appends may await their commit at once; requests that run meanwhile stage
    their records and append them together, as one batch, once an earlier append commits.
    None appends each request's records as it runs."""
    append_linger_max_ms: int = APPEND_LINGER_MAX_MS
    """The longest staged records that could go to Raft wait for the other writers this
    controller expects, when it has lately seen several at once; 0 never waits, nor does a
    controller without a limit of appends in flight."""
    static_broker_configs: tuple[tuple[str, str], ...] = ()
    """The Kafka broker configs the node's file sets (``log.retention.hours=24``): the
    STATIC_BROKER_CONFIG level DescribeConfigs shows under the dynamic ones."""
    bootstrap_features: tuple[tuple[str, int], ...] = ()
    """The feature levels ``format --release-version`` chose, written by the first controller
    to lead an empty log (none: the cluster runs with no finalized features, as before)."""
    bootstrap_scram: tuple[UserScramCredentialRecord, ...] = ()
    """The SCRAM credentials ``format --add-scram`` chose, written with the feature levels by
    the first controller to lead an empty log."""

    @classmethod
    def from_config(
        cls,
        config: RaftmetaConfig,
        cluster_id: str,
        bootstrap_features: Mapping[str, int] | None = None,
        bootstrap_scram: Sequence[BootstrapCredential] = (),
    ) -> ControllerSettings:
        """The node's settings; ``cluster_id`` is the one in ``meta.properties``."""
        return cls(
            bootstrap_features=tuple(sorted((bootstrap_features or {}).items())),
            bootstrap_scram=tuple(
                UserScramCredentialRecord(
                    c.name, c.mechanism, c.salt, c.stored_key, c.server_key, c.iterations
                )
                for c in bootstrap_scram
            ),
            node_id=config.node_id,
            cluster_id=cluster_id,
            voter_ids=frozenset(config.controller_quorum_voters),
            metadata_max_idle_interval_ms=config.metadata_max_idle_interval_ms,
            broker_session_timeout_ms=config.broker_session_timeout_ms,
            broker_heartbeat_interval_ms=config.broker_heartbeat_interval_ms,
            num_partitions=config.num_partitions,
            default_replication_factor=config.default_replication_factor,
            min_insync_replicas=config.min_insync_replicas,
            unclean_leader_election_enable=config.unclean_leader_election_enable,
            auto_leader_rebalance_enable=config.auto_leader_rebalance_enable,
            leader_imbalance_per_broker_percentage=config.leader_imbalance_per_broker_percentage,
            leader_imbalance_check_interval_seconds=config.leader_imbalance_check_interval_seconds,
            leader_imbalance_catch_up_ms=config.leader_imbalance_catch_up_ms,
            unclean_leader_election_interval_ms=config.unclean_leader_election_interval_ms,
            appends_in_flight=config.controller_append_max_in_flight or None,
            append_linger_max_ms=config.controller_append_linger_max_ms,
            static_broker_configs=static_broker_configs(config.originals),
        )
