"""The Kafka-protocol listener: an asyncio server beside the node's gRPC server.

One connection reads frames as fast as the client sends them (pipelining) and answers them one
at a time, in order, as a Kafka broker does: a request's effects are in place before the next
request on the same connection starts. An API or version not served gets UNSUPPORTED_VERSION
(ApiVersions: a v0 answer listing what is served). A frame that is not a request (bad size,
over ``socket.request.max.bytes``, an undecodable header or body) closes the connection after
the answers already due are written, and is logged once; the listener keeps serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from raftmeta.config.errors import ConfigError
from raftmeta.config.node import RaftmetaConfig
from raftmeta.errors import ErrorCode
from raftmeta.security.tls import (
    SECURITY_PROTOCOL_MAP_KEY,
    SecurityProtocol,
    parse_security_protocol_map,
    protocol_of,
)
from raftmeta.server.admin_service import AdminService
from raftmeta.server.kafka import (
    KAFKA_LISTENER,
    cluster,
    codec,
    configs,
    elections,
    quorum,
    topics,
)
from raftmeta.server.kafka.context import Endpoint, Fields, KafkaContext
from raftmeta.server.kafka.framing import DEFAULT_MAX_REQUEST_BYTES, FrameError, read_frame
from raftmeta.server.kafka.versions import (
    API_VERSIONS_KEY,
    API_VERSIONS_RANGE,
    api_versions_body,
    make_api_versions,
)
from raftmeta.server.service_base import ControllerHost

log = logging.getLogger(__name__)

Handler = Callable[[KafkaContext, Any, int], Awaitable[Fields]]
PIPELINE_DEPTH = 64
"""Requests read ahead of the one being answered; past this the reader waits (back-pressure)."""
STOP_WAIT_S = 5.0
"""How long a stopping listener lets requests in progress finish before cancelling them."""


@dataclass(frozen=True, slots=True)
class Api:
    low: int
    high: int
    handler: Handler


def _served() -> dict[int, Api]:
    table = {
        3: Api(0, 12, cluster.metadata),
        19: Api(2, 7, topics.create_topics),
        20: Api(1, 6, topics.delete_topics),
        32: Api(1, 4, configs.describe_configs),
        37: Api(0, 3, topics.create_partitions),
        43: Api(0, 2, elections.elect_leaders),
        44: Api(0, 1, configs.incremental_alter_configs),
        55: Api(0, 2, quorum.describe_quorum),
        60: Api(0, 2, cluster.describe_cluster),
    }
    ranges = {key: (api.low, api.high) for key, api in table.items()}
    ranges[API_VERSIONS_KEY] = API_VERSIONS_RANGE
    table[API_VERSIONS_KEY] = Api(*API_VERSIONS_RANGE, make_api_versions(ranges))
    return table


SERVED = _served()


class KafkaListener:
    """Serves Kafka's protocol for one node on ``host:port`` (port 0: one the OS picks)."""

    def __init__(
        self,
        owner: ControllerHost,
        host: str,
        port: int,
        *,
        max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
        advertised_host: str | None = None,
    ) -> None:
        self.owner = owner
        self.host = host
        self.port = port
        self.max_request_bytes = max_request_bytes
        self.advertised_host = advertised_host
        self._server: asyncio.Server | None = None
        self._connections: dict[asyncio.Task[Any], asyncio.StreamWriter] = {}
        self._context: KafkaContext | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host or None, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        host = self.advertised_host or self.host
        if host in ("", "0.0.0.0", "::"):
            host = "127.0.0.1"
        self._context = KafkaContext(
            self.owner, AdminService(self.owner), Endpoint(host, self.port)
        )
        log.info(
            "node %d: Kafka protocol listener on %s:%d (plaintext)",
            self.owner.node_id,
            self.host or "*",
            self.port,
        )

    @property
    def address(self) -> str:
        assert self._context is not None, "the listener is started"
        return f"{self._context.endpoint.host}:{self._context.endpoint.port}"

    async def stop(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for writer in list(self._connections.values()):
            writer.transport.abort()  # each connection's reader ends; its answers finish
        if self._connections:
            _, late = await asyncio.wait(list(self._connections), timeout=STOP_WAIT_S)
            for task in late:
                task.cancel()
        await self._server.wait_closed()
        self._server = None

    # ------------------------------------------------------------------------ connections

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = writer
        peer = writer.get_extra_info("peername")
        frames: asyncio.Queue[bytes | None] = asyncio.Queue(PIPELINE_DEPTH)
        answering = asyncio.create_task(self._answer_all(frames, writer, peer))
        try:
            while True:
                try:
                    frame = await read_frame(reader, self.max_request_bytes)
                except FrameError as error:
                    self._refuse(peer, str(error))
                    break
                except (asyncio.IncompleteReadError, ConnectionError):
                    break
                if frame is None:
                    break
                await frames.put(frame)
            await frames.put(None)
            await answering
        except asyncio.CancelledError:
            answering.cancel()
            raise
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            self._connections.pop(task, None)

    async def _answer_all(
        self, frames: asyncio.Queue[bytes | None], writer: asyncio.StreamWriter, peer: object
    ) -> None:
        closing = False
        while (frame := await frames.get()) is not None:
            if closing:
                continue  # read ahead of a malformed frame: discarded with the connection
            answer = await self._answer(frame, peer)
            if answer is not None:
                writer.write(answer)
                try:
                    await writer.drain()
                except ConnectionError:
                    answer = None
            if answer is None:
                # Close after the answers already written; the reader then sees the end of
                # the stream and sends the None that ends this loop.
                closing = True
                writer.close()

    def _refuse(self, peer: object, reason: str) -> None:
        log.warning(
            "node %d: Kafka listener closed the connection from %s: %s",
            self.owner.node_id,
            peer,
            reason,
        )

    async def _answer(self, frame: bytes, peer: object) -> bytes | None:
        """The framed response to one request, or ``None`` to close the connection."""
        try:
            head = codec.peek(frame)
        except codec.CodecError as error:
            self._refuse(peer, str(error))
            return None
        api = SERVED.get(head.api_key)
        if api is None or not api.low <= head.api_version <= api.high:
            return self._unsupported(head, peer)
        try:
            request = codec.decode_request(frame, head.api_key, head.api_version)
        except codec.CodecError as error:
            self._refuse(peer, str(error))
            return None
        assert self._context is not None
        try:
            fields = await api.handler(self._context, request, head.api_version)
        except Exception:
            log.exception(
                "node %d: Kafka %s request failed",
                self.owner.node_id,
                codec.api_name(head.api_key),
            )
            return self._error(head, ErrorCode.UNKNOWN_SERVER_ERROR, peer)
        try:
            return codec.encode_response(
                head.api_key, head.api_version, head.correlation_id, fields
            )
        except codec.CodecError as error:
            log.error("node %d: %s", self.owner.node_id, error)
            return self._error(head, ErrorCode.UNKNOWN_SERVER_ERROR, peer)

    def _unsupported(self, head: codec.RequestHead, peer: object) -> bytes | None:
        name = codec.api_name(head.api_key)
        if head.api_key == API_VERSIONS_KEY:
            # Kafka answers an ApiVersions version it does not know with a v0 body.
            ranges = {key: (api.low, api.high) for key, api in SERVED.items()}
            return codec.encode_response(
                API_VERSIONS_KEY,
                0,
                head.correlation_id,
                api_versions_body(ranges, ErrorCode.UNSUPPORTED_VERSION),
            )
        log.info(
            "node %d: Kafka %s v%d from %s is not served: UNSUPPORTED_VERSION",
            self.owner.node_id,
            name,
            head.api_version,
            peer,
        )
        return self._error(head, ErrorCode.UNSUPPORTED_VERSION, peer)

    def _error(self, head: codec.RequestHead, code: ErrorCode, peer: object) -> bytes | None:
        """A response with only a top-level error code, when the API's schema has one at
        this version; otherwise the connection closes (as Kafka does for a version it cannot
        parse)."""
        if codec.can_encode(head.api_key, head.api_version) and codec.has_top_level_error(
            head.api_key, head.api_version
        ):
            try:
                return codec.encode_response(
                    head.api_key, head.api_version, head.correlation_id, {"error_code": int(code)}
                )
            except codec.CodecError:
                pass
        self._refuse(
            peer,
            f"{codec.api_name(head.api_key)} v{head.api_version}: {code.name} and no "
            "response shape to carry it",
        )
        return None


async def start_kafka_listener(
    owner: ControllerHost, config: RaftmetaConfig
) -> KafkaListener | None:
    """Serve the ``KAFKA`` listener of ``listeners``, if configured; ``None`` otherwise.

    The listener speaks plaintext only for now: one mapped to SSL is refused with a
    configuration error rather than served unencrypted against the operator's intent."""
    for listener in config.listeners:
        if listener.name == KAFKA_LISTENER:
            protocols = parse_security_protocol_map(config.listener_security_protocol_map)
            if protocol_of(listener.name, protocols) is not SecurityProtocol.PLAINTEXT:
                raise ConfigError(
                    f"Invalid configuration {SECURITY_PROTOCOL_MAP_KEY}: the {KAFKA_LISTENER} "
                    "listener serves PLAINTEXT only (TLS on the Kafka protocol is not built yet)"
                )
            served = KafkaListener(
                owner,
                listener.host,
                listener.port,
                max_request_bytes=config.socket_request_max_bytes,
            )
            await served.start()
            return served
    return None
