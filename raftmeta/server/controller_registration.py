"""A controller's registration of its listeners with the active controller (KIP-919).

Once a leader is known, the controller sends ``RegisterController`` (its id, a random
incarnation id made at start-up and its listeners) to the active controller, in process when
it is the active one itself, and retries until the registration is committed. It registers
again whenever the committed image stops holding its registration (a new active controller
that lost it, a restored snapshot); a restart makes a new incarnation, which replaces the old.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from typing import Protocol

import grpc

from raftmeta.controller import ControllerRegistrationRequest
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.records import BrokerEndpoint, RegisterControllerRecord
from raftmeta.rpc import broker_pb2 as bpb
from raftmeta.rpc import broker_pb2_grpc as bpb_grpc
from raftmeta.security.listener import aio_channel
from raftmeta.server.service_base import ControllerHost


class _Changes(Protocol):
    async def wait(self) -> None: ...


class RegisteringNode(ControllerHost, Protocol):
    """The controller node as the registrar sees it."""

    @property
    def changes(self) -> _Changes:
        """Wakes waiters whenever the node's state may have moved."""
        ...


log = logging.getLogger(__name__)

RETRY_BACKOFF_S = 0.2
"""Between attempts that failed (no leader reachable, NOT_CONTROLLER during an election)."""
CALL_TIMEOUT_S = 5.0


class ControllerRegistrar:
    """Keeps ``owner``'s registration in the log for as long as the node runs."""

    def __init__(
        self,
        owner: RegisteringNode,
        endpoints: Callable[[], tuple[BrokerEndpoint, ...]],
        credentials: grpc.ChannelCredentials | None,
    ) -> None:
        self.owner = owner
        self.endpoints = endpoints
        self.credentials = credentials
        self.incarnation_id = os.urandom(16)
        self._task: asyncio.Task[None] | None = None
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._refused: set[tuple[int, str]] = set()
        self._matched: RegisterControllerRecord | None = None
        """The record in the image last found equal to :meth:`wanted`."""

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="controller-registration")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()

    def wanted(self) -> RegisterControllerRecord:
        return RegisterControllerRecord(
            self.owner.node_id, self.incarnation_id, self.endpoints(), ()
        )

    def registered(self) -> bool:
        controller = self.owner.maybe_controller
        if controller is None:
            return False
        held = controller.committed_image.controllers.get(self.owner.node_id)
        if held is None:
            return False
        if held is self._matched:
            # Records are frozen: the very record found to match before still does. Asked
            # at every change of the node's state, so comparing again would cost a
            # registration's worth of objects each time.
            return True
        if held == self.wanted():
            self._matched = held
            return True
        return False

    async def _run(self) -> None:
        changes = self.owner.changes
        while True:
            if self.registered():
                await changes.wait()
                continue
            waiting = asyncio.ensure_future(changes.wait())
            try:
                await self._attempt()
                # Committed (this node's image follows soon) or not now (no leader, an
                # election, a refusal): look again on the next change of the node's state
                # or after a short pause, whichever comes first.
                await asyncio.wait({waiting}, timeout=RETRY_BACKOFF_S)
            finally:
                waiting.cancel()

    async def _attempt(self) -> bool:
        controller = self.owner.maybe_controller
        leader_id = controller.leader_id if controller is not None else None
        if controller is None or leader_id is None:
            return False
        record = self.wanted()
        request = ControllerRegistrationRequest(
            record.controller_id,
            self.owner.node.cluster_id,
            record.incarnation_id,
            record.endpoints,
        )
        try:
            if controller.is_active:
                await controller.register_controller(request)
            else:
                await self._remote(leader_id, request)
        except KafkaError as error:
            if error.code is not ErrorCode.NOT_CONTROLLER:
                self._refused_once(leader_id, error)
            return False
        except (TimeoutError, grpc.aio.AioRpcError, OSError):
            return False
        log.info(
            "controller %d registered (incarnation %s): %s",
            record.controller_id,
            record.incarnation_id.hex(),
            ", ".join(f"{e.name}://{e.host}:{e.port}" for e in record.endpoints),
        )
        return True

    async def _remote(self, leader_id: int, request: ControllerRegistrationRequest) -> None:
        address = self.owner.endpoint_of(leader_id)
        if not address:
            raise KafkaError(ErrorCode.NOT_CONTROLLER, "no address for the leader")
        channel = self._channels.get(address)
        if channel is None:
            channel = self._channels[address] = aio_channel(address, self.credentials)
        stub = bpb_grpc.BrokerLifecycleStub(channel)
        response = await stub.RegisterController(
            bpb.RegisterControllerRequest(
                controller_id=request.controller_id,
                cluster_id=request.cluster_id,
                incarnation_id=request.incarnation_id,
                listeners=[
                    bpb.Listener(
                        name=e.name, host=e.host, port=e.port, security_protocol=e.security_protocol
                    )
                    for e in request.endpoints
                ],
            ),
            timeout=CALL_TIMEOUT_S,
        )
        code = ErrorCode(response.header.error_code)
        if code is not ErrorCode.NONE:
            raise KafkaError(code, response.header.error_message or code.name)

    def _refused_once(self, leader_id: int, error: KafkaError) -> None:
        key = (int(error.code), error.message)
        if key not in self._refused:
            self._refused.add(key)
            log.warning(
                "controller %d: registration refused by controller %d: %s: %s",
                self.owner.node_id,
                leader_id,
                error.code.name,
                error.message,
            )
