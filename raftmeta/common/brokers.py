"""What a broker says to the controller and hears back: registration, heartbeat, AlterPartition.

Both ends use these values: the broker builds its AlterPartition changes from them, and the
controller's handlers take and return them, with the gRPC service translating in between.
"""

from __future__ import annotations

from dataclasses import dataclass

from raftmeta.common.items import OK, ItemError
from raftmeta.records import BrokerEndpoint, BrokerFeature, TopicId, Uuid


@dataclass(frozen=True, slots=True)
class BrokerRegistrationRequest:
    broker_id: int
    cluster_id: str
    incarnation_id: Uuid
    endpoints: tuple[BrokerEndpoint, ...] = ()
    features: tuple[BrokerFeature, ...] = ()
    rack: str | None = None
    previous_broker_epoch: int = -1
    """The epoch of the incarnation this one replaces if it stopped cleanly, else -1: with
    eligible leader replicas on, a broker without that proof leaves every ISR and ELR."""
    combined: bool = False
    """The broker runs inside a controller's process under that controller's id (a combined
    node) and fetches no log of its own: the one case where a broker may use a voter's id."""


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatRequest:
    broker_id: int
    broker_epoch: int
    current_metadata_offset: int
    want_fence: bool
    want_shut_down: bool = False


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatReply:
    is_caught_up: bool
    is_fenced: bool
    should_shut_down: bool


@dataclass(frozen=True, slots=True)
class IsrMember:
    """A proposed ISR member with the broker epoch the leader saw it at (-1: not known)."""

    broker_id: int
    broker_epoch: int = -1


@dataclass(frozen=True, slots=True)
class PartitionIsrChange:
    partition_id: int
    leader_epoch: int
    new_isr: tuple[IsrMember, ...]
    partition_epoch: int
    leader_recovery_state: int = 0


@dataclass(frozen=True, slots=True)
class AlterPartitionRequest:
    broker_id: int
    broker_epoch: int
    topic_id: TopicId
    partitions: tuple[PartitionIsrChange, ...]


@dataclass(frozen=True, slots=True)
class AlterPartitionResult:
    """A partition's state after the change, or its error."""

    partition_id: int
    error: ItemError = OK
    leader: int = -1
    leader_epoch: int = -1
    isr: tuple[int, ...] = ()
    partition_epoch: int = -1
    leader_recovery_state: int = 0
