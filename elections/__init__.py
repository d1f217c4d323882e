"""Leader election policy: which broker leads each partition, as pure functions of the image.

The controller asks this package for the PartitionChangeRecords of every election it runs and
appends them; nothing here does I/O, reads a clock, or changes the image.

* :func:`elect_leaders` answers ElectLeaders (PREFERRED or UNCLEAN, listed partitions or all),
  with Kafka's per-partition codes: NONE, UNKNOWN_TOPIC_OR_PARTITION (3),
  PREFERRED_LEADER_NOT_AVAILABLE (80), ELIGIBLE_LEADERS_NOT_AVAILABLE (83) and
  ELECTION_NOT_NEEDED (84); the messages are in :mod:`elections.messages`. More records than
  fit one append are split into batches rather than refused (see :func:`elect_leaders`).
* :func:`online_elections_for_broker_removal` and :func:`elections_for_unfenced_broker` are
  the elections of a broker's fencing, controlled shutdown, unregistration and unfencing.
* :func:`preferred_rebalance` is the automatic leader rebalance with the per-broker imbalance
  threshold Kafka's KRaft controller ignores, a cap per run and a catch-up gate;
  :func:`unclean_elections_for_leaderless` is the periodic config-driven unclean election.
* :func:`choose_leader` holds the leader-choice rules every path shares; given
  :class:`ElrSettings` it applies the eligible leader replica rules (KIP-966), which every
  function here turns on when the image finalizes ``eligible.leader.replicas.version`` 1.
* :func:`elections_for_unclean_shutdown` takes a broker that returned from an unclean stop
  out of every ISR and ELR.

The election type arrives parsed (:class:`raftmeta.common.elections.ElectionType`): the gRPC
service refuses an unknown one before the controller sees it. The one top-level request error
left here (too many records, when Kafka's limit is asked for) is raised as
:class:`raftmeta.errors.KafkaError`; per-partition errors are values.

May import ``raftmeta.common``, ``raftmeta.records``, ``raftmeta.image`` and
``raftmeta.errors``; the controller is its only caller.
"""

from elections.elect import (
    MAX_ELECTIONS_PER_RUN,
    MAX_RECORDS_PER_BATCH,
    UNCLEAN_LEADER_ELECTION_ENABLE,
    ElrExposure,
    PeriodicElections,
    active_brokers,
    effective_min_isr,
    elect_leaders,
    elections_for_unclean_shutdown,
    elections_for_unfenced_broker,
    elr_exposure,
    leader_imbalance,
    online_elections_for_broker_removal,
    preferred_rebalance,
    unclean_election_enabled,
    unclean_elections_for_leaderless,
)
from elections.leader_choice import ElrSettings, LeaderChange, PartitionState, choose_leader
from elections.messages import EXCESSIVE_BATCH_MESSAGE
from elections.types import ElectionOutcome, split_into_batches

__all__ = [
    "EXCESSIVE_BATCH_MESSAGE",
    "MAX_ELECTIONS_PER_RUN",
    "MAX_RECORDS_PER_BATCH",
    "UNCLEAN_LEADER_ELECTION_ENABLE",
    "ElectionOutcome",
    "ElrExposure",
    "ElrSettings",
    "LeaderChange",
    "PartitionState",
    "PeriodicElections",
    "active_brokers",
    "choose_leader",
    "effective_min_isr",
    "elect_leaders",
    "elections_for_unclean_shutdown",
    "elections_for_unfenced_broker",
    "elr_exposure",
    "leader_imbalance",
    "online_elections_for_broker_removal",
    "preferred_rebalance",
    "split_into_batches",
    "unclean_election_enabled",
    "unclean_elections_for_leaderless",
]
