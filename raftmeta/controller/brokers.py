"""Broker lifecycle: the heartbeat state machine and the records each transition writes.

The state machine is Kafka's (reference §5.4): a broker is FENCED, UNFENCED, in
CONTROLLED_SHUTDOWN, or told to SHUTDOWN_NOW. The durable part of that state lives in the
image (``fenced``, ``in_controlled_shutdown``); the rest (last contact, reported metadata
offset, where a controlled shutdown began) is soft state only the active controller keeps,
rebuilt from scratch after a failover, as in Kafka.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass

from elections import elections_for_unfenced_broker, online_elections_for_broker_removal
from raftmeta.common.brokers import BrokerRegistrationRequest
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.records import (
    BrokerEndpoint,
    BrokerFeature,
    BrokerRegistrationChangeRecord,
    ControlledShutdownChange,
    FencingChange,
    Record,
)

MAX_BROKER_ID = 2**31 - 1
MAX_PORT = 65_535
INT16_MAX = 2**15 - 1
MAX_NAME_LENGTH = 255
"""The longest listener name, host, rack or feature name a registration may carry."""
MAX_LISTENERS = 64
MAX_FEATURES = 64


def _invalid(message: str) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_REGISTRATION, message)


def _check_text(what: str, text: str) -> None:
    if len(text) > MAX_NAME_LENGTH:
        raise _invalid(f"{what} is {len(text)} characters long; at most {MAX_NAME_LENGTH} allowed.")


def check_registration(request: BrokerRegistrationRequest, voter_ids: Set[int]) -> None:
    """INVALID_REGISTRATION unless the registration may be written as it is.

    A registration is replayed by every node for as long as the broker lives, and a separate
    broker's id is the replica id it fetches the metadata log under, so a negative id or a
    controller's id (which would let the broker pass for a voter) is refused, as are values
    outside the wire types of Kafka's RegisterBrokerRecord (a uint16 port, int16 security
    protocol and feature versions) and oversized lists and strings. The broker half of a
    combined node (``combined``) fetches nothing: it reads its controller's replica, so it
    registers under that controller's id, and only under a voter's id.
    """
    broker_id = request.broker_id
    if not 0 <= broker_id <= MAX_BROKER_ID:
        raise _invalid(f"Broker id {broker_id} is invalid: broker ids are 0..{MAX_BROKER_ID}.")
    if request.combined:
        if voter_ids and broker_id not in voter_ids:
            raise _invalid(
                f"Broker id {broker_id} registers as part of a combined node, but no voter of "
                "controller.quorum.voters has that id."
            )
    elif broker_id in voter_ids:
        raise _invalid(
            f"Broker id {broker_id} is the id of a controller; a broker needs an id that no "
            "voter of controller.quorum.voters uses (unless it runs in that controller's "
            "process: process.roles=broker,controller)."
        )
    check_listeners(request.endpoints, request.features)
    if request.rack is not None:
        _check_text("The rack", request.rack)


def check_listeners(endpoints: Sequence[BrokerEndpoint], features: Sequence[BrokerFeature]) -> None:
    """INVALID_REGISTRATION unless listeners and features fit Kafka's registration records:
    unique names, a uint16 port, int16 security protocol and feature versions, bounded sizes."""
    if len(endpoints) > MAX_LISTENERS:
        raise _invalid(f"{len(endpoints)} listeners given; at most {MAX_LISTENERS}.")
    names: set[str] = set()
    for endpoint in endpoints:
        _check_text("A listener name", endpoint.name)
        _check_text(f"The host of listener {endpoint.name}", endpoint.host)
        if endpoint.name in names:
            raise _invalid(f"Listener {endpoint.name} is given twice.")
        names.add(endpoint.name)
        if not 0 <= endpoint.port <= MAX_PORT:
            raise _invalid(
                f"Listener {endpoint.name} has port {endpoint.port}, outside 0..{MAX_PORT}."
            )
        if not 0 <= endpoint.security_protocol <= INT16_MAX:
            raise _invalid(
                f"Listener {endpoint.name} has security protocol {endpoint.security_protocol}, "
                f"outside 0..{INT16_MAX}."
            )
    if len(features) > MAX_FEATURES:
        raise _invalid(f"{len(features)} features given; at most {MAX_FEATURES}.")
    for feature in features:
        _check_text("A feature name", feature.name)
        low, high = feature.min_supported_version, feature.max_supported_version
        if not 0 <= low <= high <= INT16_MAX:
            raise _invalid(
                f"Feature {feature.name} supports versions {low}..{high}; versions must be "
                f"0..{INT16_MAX} with the minimum first."
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


def fence_records(
    image: MetadataImage,
    broker_id: int,
    *,
    unclean_default: bool,
    min_isr_default: int = 1,
    max_elections: int | None = None,
) -> list[Record]:
    """Out of every ISR with leaderships moved (ONLINE, or UNCLEAN where the topic allows it),
    then the fencing record: the order of Kafka's ``handleBrokerFenced``.

    With ``max_elections``, one slice of a fencing written over several events (see
    :mod:`raftmeta.controller.slices`): at most that many elections, and the fencing record
    only in the slice that finds fewer, the last. Until then the broker stays unfenced, so a
    controller that fails over mid-way fences it again from the start when its new session
    expires, and every slice leaves each partition it touched in a state the rules allow.
    """
    registration = image.broker(broker_id)
    assert registration is not None
    records: list[Record] = list(
        online_elections_for_broker_removal(
            image,
            broker_id,
            unclean_default=unclean_default,
            min_isr_default=min_isr_default,
            max_records=max_elections,
        )
    )
    if max_elections is None or len(records) < max_elections:
        records.append(
            BrokerRegistrationChangeRecord(
                broker_id, registration.broker_epoch, fenced=int(FencingChange.FENCE)
            )
        )
    return records


def unfence_records(
    image: MetadataImage, broker_id: int, *, unclean_default: bool, min_isr_default: int = 1
) -> list[Record]:
    """The unfencing record, then leaders for partitions this broker can now bring back."""
    registration = image.broker(broker_id)
    assert registration is not None
    records: list[Record] = [
        BrokerRegistrationChangeRecord(
            broker_id, registration.broker_epoch, fenced=int(FencingChange.UNFENCE)
        )
    ]
    records.extend(
        elections_for_unfenced_broker(
            image, broker_id, unclean_default=unclean_default, min_isr_default=min_isr_default
        )
    )
    return records


def controlled_shutdown_records(
    image: MetadataImage,
    broker_id: int,
    *,
    unclean_default: bool,
    min_isr_default: int = 1,
    max_elections: int | None = None,
) -> list[Record]:
    """The shutdown marker, then the same ISR removal and leader moves as fencing.

    With ``max_elections``, only the first slice of the moves follows the marker; the rest
    come from :func:`controlled_shutdown_slice` in later events. The marker goes first so
    that from it on no election hands the broker a leadership.
    """
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
        online_elections_for_broker_removal(
            image,
            broker_id,
            unclean_default=unclean_default,
            min_isr_default=min_isr_default,
            max_records=max_elections,
        )
    )
    return records


def controlled_shutdown_slice(
    image: MetadataImage,
    broker_id: int,
    *,
    unclean_default: bool,
    min_isr_default: int = 1,
    max_elections: int,
) -> list[Record]:
    """The next slice of a controlled shutdown's moves (the marker already written); fewer
    than ``max_elections`` records means the shutdown has moved everything it can."""
    return list(
        online_elections_for_broker_removal(
            image,
            broker_id,
            unclean_default=unclean_default,
            min_isr_default=min_isr_default,
            max_records=max_elections,
        )
    )
