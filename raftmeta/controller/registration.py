"""Controller registration (KIP-919): the records a controller's registration writes.

Every controller registers its listeners with the active controller, which writes a
``RegisterControllerRecord``; the image keeps the latest one per controller id, so any
controller can name every controller's endpoints to a client bootstrapped to it.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from raftmeta.controller.brokers import check_listeners
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.records import BrokerEndpoint, BrokerFeature, RegisterControllerRecord, Uuid

INCARNATION_BYTES = 16


@dataclass(frozen=True, slots=True)
class ControllerRegistrationRequest:
    controller_id: int
    cluster_id: str
    incarnation_id: Uuid
    endpoints: tuple[BrokerEndpoint, ...] = ()
    features: tuple[BrokerFeature, ...] = ()


def registration_records(
    request: ControllerRegistrationRequest,
    *,
    cluster_id: str,
    voter_ids: Set[int],
    image: MetadataImage,
) -> tuple[RegisterControllerRecord, ...]:
    """The record to write, none when the same registration is already in ``image``.

    Refused with a Kafka error and one line: another cluster's id (INCONSISTENT_CLUSTER_ID),
    an id that is not a voter of ``controller.quorum.voters`` (INVALID_REGISTRATION: only
    controllers register here), an incarnation id that is not 16 bytes or listeners outside
    the record's wire types.
    """
    if request.cluster_id != cluster_id:
        raise KafkaError(
            ErrorCode.INCONSISTENT_CLUSTER_ID,
            f"Expected cluster ID {cluster_id}, but got cluster ID {request.cluster_id}.",
        )
    if request.controller_id not in voter_ids:
        raise KafkaError(
            ErrorCode.INVALID_REGISTRATION,
            f"Controller id {request.controller_id} is not a voter of "
            f"controller.quorum.voters ({', '.join(map(str, sorted(voter_ids)))}).",
        )
    if len(request.incarnation_id) != INCARNATION_BYTES:
        raise KafkaError(
            ErrorCode.INVALID_REGISTRATION,
            f"An incarnation id has {INCARNATION_BYTES} bytes, not {len(request.incarnation_id)}.",
        )
    check_listeners(request.endpoints, request.features)
    record = RegisterControllerRecord(
        request.controller_id, request.incarnation_id, request.endpoints, request.features
    )
    if image.controllers.get(request.controller_id) == record:
        return ()
    return (record,)
