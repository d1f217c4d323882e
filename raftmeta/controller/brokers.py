"""Broker lifecycle: the heartbeat state machine and the records each transition writes.

The state machine is Kafka's (reference §5.4): a broker is FENCED, UNFENCED, in
CONTROLLED_SHUTDOWN, or told to SHUTDOWN_NOW. The durable part of that state lives in the
image (``fenced``, ``in_controlled_shutdown``); the rest (last contact, reported metadata
offset, where a controlled shutdown began) is soft state only the active controller keeps,
rebuilt from scratch after a failover, as in Kafka.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from elections import elections_for_unfenced_broker, online_elections_for_broker_removal
from raftmeta.image import MetadataImage
from raftmeta.records import (
    BrokerRegistrationChangeRecord,
    ControlledShutdownChange,
    FencingChange,
    Record,
)


class BrokerState(enum.Enum):
    FENCED = "fenced"
    UNFENCED = "unfenced"
    CONTROLLED_SHUTDOWN = "controlled_shutdown"
    SHUTDOWN_NOW = "shutdown_now"


@dataclass(slots=True)
class BrokerSession:
    """What the active controller remembers of a broker between heartbeats."""

    last_contact_ms: int
    metadata_offset: int = -1
    """The last metadata offset the broker reported it has applied."""
    controlled_shutdown_offset: int | None = None
    """The last offset of the batch that began the broker's controlled shutdown."""
    unfenced_at_ms: int | None = None
    """When this controller last unfenced the broker; gates handing it leadership back."""


def current_state(image: MetadataImage, broker_id: int) -> BrokerState:
    registration = image.broker(broker_id)
    if registration is None or registration.fenced:
        return BrokerState.FENCED
    if registration.in_controlled_shutdown:
        return BrokerState.CONTROLLED_SHUTDOWN
    return BrokerState.UNFENCED


def lowest_active_offset(
    image: MetadataImage, sessions: Mapping[int, BrokerSession], excluding: int
) -> int | None:
    """The lowest metadata offset any other active broker reports; ``None`` if none is active."""
    offsets = [
        session.metadata_offset
        for broker_id, session in sessions.items()
        if broker_id != excluding
        and (registration := image.broker(broker_id)) is not None
        and registration.is_active
    ]
    return min(offsets) if offsets else None


def next_state(
    image: MetadataImage,
    broker_id: int,
    session: BrokerSession,
    *,
    want_fence: bool,
    want_shut_down: bool,
    sessions: Mapping[int, BrokerSession],
) -> BrokerState:
    """Where a heartbeat moves the broker (Kafka's ``calculateNextBrokerState``)."""
    state = current_state(image, broker_id)
    registration = image.broker(broker_id)
    assert registration is not None
    if state is BrokerState.FENCED:
        if want_shut_down:
            return BrokerState.SHUTDOWN_NOW
        if not want_fence and session.metadata_offset >= registration.broker_epoch:
            return BrokerState.UNFENCED
        return BrokerState.FENCED
    if state is BrokerState.UNFENCED:
        if want_fence:
            return BrokerState.SHUTDOWN_NOW if want_shut_down else BrokerState.FENCED
        if want_shut_down:
            if image.leader_count(broker_id) > 0:
                return BrokerState.CONTROLLED_SHUTDOWN
            return BrokerState.SHUTDOWN_NOW
        return BrokerState.UNFENCED
    # In controlled shutdown: wait until it leads nothing and every active broker has seen
    # the records that moved its leaderships away.
    if image.leader_count(broker_id) > 0:
        return BrokerState.CONTROLLED_SHUTDOWN
    shutdown_offset = session.controlled_shutdown_offset
    lowest = lowest_active_offset(image, sessions, broker_id)
    if shutdown_offset is None or lowest is None or shutdown_offset <= lowest:
        return BrokerState.SHUTDOWN_NOW
    return BrokerState.CONTROLLED_SHUTDOWN


def fence_records(image: MetadataImage, broker_id: int, *, unclean_default: bool) -> list[Record]:
    """Out of every ISR with leaderships moved (ONLINE, or UNCLEAN where the topic allows it),
    then the fencing record: the order of Kafka's ``handleBrokerFenced``."""
    registration = image.broker(broker_id)
    assert registration is not None
    records: list[Record] = list(
        online_elections_for_broker_removal(image, broker_id, unclean_default=unclean_default)
    )
    records.append(
        BrokerRegistrationChangeRecord(
            broker_id, registration.broker_epoch, fenced=int(FencingChange.FENCE)
        )
    )
    return records


def unfence_records(image: MetadataImage, broker_id: int, *, unclean_default: bool) -> list[Record]:
    """The unfencing record, then leaders for partitions this broker can now bring back."""
    registration = image.broker(broker_id)
    assert registration is not None
    records: list[Record] = [
        BrokerRegistrationChangeRecord(
            broker_id, registration.broker_epoch, fenced=int(FencingChange.UNFENCE)
        )
    ]
    records.extend(elections_for_unfenced_broker(image, broker_id, unclean_default=unclean_default))
    return records


def controlled_shutdown_records(
    image: MetadataImage, broker_id: int, *, unclean_default: bool
) -> list[Record]:
    """The shutdown marker, then the same ISR removal and leader moves as fencing."""
    registration = image.broker(broker_id)
    assert registration is not None
    records: list[Record] = [
        BrokerRegistrationChangeRecord(
            broker_id,
            registration.broker_epoch,
            in_controlled_shutdown=int(ControlledShutdownChange.IN_CONTROLLED_SHUTDOWN),
        )
    ]
    records.extend(
        online_elections_for_broker_removal(image, broker_id, unclean_default=unclean_default)
    )
    return records
