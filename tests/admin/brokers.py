"""Brokers for admin tests on a real quorum: registered and heartbeated through the
BrokerLifecycle service over a :class:`ControllerChannel`, as an embedded broker would."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from raftmeta.channel import ControllerChannel
from raftmeta.common.features import SUPPORTED_FEATURES
from raftmeta.errors import ErrorCode
from raftmeta.rpc import broker_pb2 as bpb
from tests.support.controller_quorum import CLUSTER_ID, DEADLINE_S
from tests.support.waiting import wait_until_async

CAUGHT_UP = 1 << 40
"""A metadata offset past anything a test commits: the broker says it has seen everything."""


SUPPORTED_BY_THIS_BUILD = [
    bpb.Feature(
        name=feature.name,
        min_supported_version=feature.min_supported_version,
        max_supported_version=feature.max_supported_version,
    )
    for feature in SUPPORTED_FEATURES
]
"""The feature ranges a broker of this build advertises: a cluster formatted at the latest
release refuses a registration that cannot run its finalized levels."""


async def heartbeat(
    channel: ControllerChannel, broker_id: int, epoch: int, *, want_fence: bool = False
) -> bpb.BrokerHeartbeatResponse:
    response: bpb.BrokerHeartbeatResponse = await channel.call(
        "BrokerLifecycle/BrokerHeartbeat",
        bpb.BrokerHeartbeatRequest(
            broker_id=broker_id,
            broker_epoch=epoch,
            current_metadata_offset=CAUGHT_UP,
            want_fence=want_fence,
        ),
    )
    assert response.header.error_code == ErrorCode.NONE, response.header
    return response


async def register_unfenced(
    channel: ControllerChannel,
    broker_ids: Iterable[int],
    racks: str = "abc",
    cluster_id: str = CLUSTER_ID,
) -> dict[int, int]:
    """Register each broker and heartbeat it until the controller unfences it; the epochs."""
    epochs: dict[int, int] = {}
    for broker_id in broker_ids:
        registered = await channel.call(
            "BrokerLifecycle/RegisterBroker",
            bpb.RegisterBrokerRequest(
                broker_id=broker_id,
                cluster_id=cluster_id,
                incarnation_id=uuid.uuid4().bytes,
                listeners=[bpb.Listener(name="PLAINTEXT", host="127.0.0.1", port=9000 + broker_id)],
                rack=racks[(broker_id - 1) % len(racks)],
                features=SUPPORTED_BY_THIS_BUILD,
            ),
        )
        assert registered.header.error_code == ErrorCode.NONE, registered.header
        epochs[broker_id] = registered.broker_epoch
    for broker_id, epoch in epochs.items():
        await set_fenced(channel, broker_id, epoch, fenced=False)
    return epochs


async def set_fenced(
    channel: ControllerChannel, broker_id: int, epoch: int, *, fenced: bool
) -> None:
    """Heartbeat (asking to be fenced or not) until the controller reports that state."""

    async def reached() -> bool:
        reply = await heartbeat(channel, broker_id, epoch, want_fence=fenced)
        return reply.is_fenced == fenced

    await wait_until_async(reached, f"broker {broker_id} to become fenced={fenced}", DEADLINE_S)
