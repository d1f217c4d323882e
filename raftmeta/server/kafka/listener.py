"""The Kafka-protocol listener: an asyncio server beside the node's gRPC server.

One connection reads frames as fast as the client sends them (pipelining) and answers them one
at a time, in order, as a Kafka broker does: a request's effects are in place before the next
request on the same connection starts. An API or version not served gets UNSUPPORTED_VERSION
(ApiVersions: a v0 answer listing what is served). A frame that is not a request (bad size,
over ``socket.request.max.bytes``, an undecodable header or body) closes the connection after
the answers already due are written, and is logged once; the listener keeps serving. So does a
request with a null where its schema allows none (Kafka cannot parse it either). A handler that
fails, or an answer that cannot be written, is answered with the API's error response (the
top-level error code, or the code on every item asked about), never left unanswered.

What a connection may hold is bounded (:mod:`raftmeta.server.kafka.limits`): connections in all
and per address, within a reserve of descriptors kept for Raft; idle connections and frames
begun but not finished are closed; request bytes held across connections; and, on a SASL
listener, the size of a frame before the login.

A client that was told (by Metadata or DescribeCluster on a connection) of an active controller
this node no longer names has that connection closed once it has stayed so, and idle, for
``RETIRE_AFTER_S``: librdkafka keeps sending admin calls to the controller it was told of, and
after a kill -9 of that controller it asks no one again until its next periodic refresh
(minutes), spinning on refused connects; a standby asked in the first moments after the kill
still names the dead node. Losing a connection makes every client reconnect and ask Metadata
again, which by then names the new controller.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from raftmeta.apis import ControllerApis, ControllerHost
from raftmeta.auth import TOKENS_FILE_KEY
from raftmeta.config.errors import ConfigError
from raftmeta.config.node import RaftmetaConfig
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.kafka_protocol import codec
from raftmeta.kafka_protocol.framing import (
    DEFAULT_MAX_REQUEST_BYTES,
    SIZE,
    FrameError,
    IdleTimeout,
    PartialFrameTimeout,
    read_frame_within,
)
from raftmeta.security.principal import PrincipalMapper
from raftmeta.security.ssl_contexts import server_ssl_context
from raftmeta.security.tls import (
    SECURITY_PROTOCOL_MAP_KEY,
    ClientAuth,
    SecurityProtocol,
    parse_security_protocol_map,
    parse_tls_settings,
    protocol_of,
)
from raftmeta.server.kafka import (
    KAFKA_LISTENER,
    acls,
    brokers,
    cluster,
    configs,
    elections,
    features,
    limits,
    partitions,
    quorum,
    quotas,
    reassignments,
    sasl,
    scram,
    topics,
    voters,
)
from raftmeta.server.kafka.context import Endpoint, Fields, KafkaContext
from raftmeta.server.kafka.pipeline import FramePipeline
from raftmeta.server.kafka.versions import (
    API_VERSIONS_KEY,
    API_VERSIONS_RANGE,
    api_versions_body,
    make_api_versions,
)

log = logging.getLogger(__name__)

Handler = Callable[[KafkaContext, Any, int], Awaitable[Fields]]
FailedAnswer = Callable[[Any, int, int, str | None], Fields]
"""Kafka's error response of an API whose answer has no top-level error code at some version:
the request, its version, the code and message to put on every item it asked about."""
WaitForChange = Callable[[], Awaitable[None]]
"""Returns at the node's next state change (role, epoch, commit)."""
NAMES_CONTROLLER = frozenset({3, 60})
"""Metadata and DescribeCluster: the answers that tell a client the active controller."""
PIPELINE_DEPTH = 64
"""Requests read ahead of the one being answered; past this the reader waits (back-pressure)."""
STOP_WAIT_S = 5.0
RETIRE_AFTER_S = 1.0
"""How long a connection told of a controller this node no longer names must stay so, with no
request, before it is closed. A client that learned of the new controller elsewhere sends its
next call at once, which keeps the connection; a call sent just as it closes would be lost."""
CONTROLLER_BOUND = frozenset({19, 20, 30, 31, 33, 37, 43, 44, 45, 49, 51, 57, 64, 80, 81})
"""Writes, sent to the controller a client was told of: one answered here while this node is
the active controller shows the client knows it."""
"""How long a stopping listener lets requests in progress finish before cancelling them."""


@dataclass(frozen=True, slots=True)
class Api:
    low: int
    high: int
    handler: Handler
    failed: FailedAnswer | None = None


def _served() -> dict[int, Api]:
    table = {
        3: Api(0, 12, cluster.metadata, cluster.metadata_failed),
        19: Api(2, 7, topics.create_topics, topics.create_topics_failed),
        20: Api(1, 6, topics.delete_topics, topics.delete_topics_failed),
        29: Api(1, 3, acls.describe_acls),
        30: Api(1, 3, acls.create_acls, acls.create_acls_failed),
        31: Api(1, 3, acls.delete_acls, acls.delete_acls_failed),
        32: Api(1, 4, configs.describe_configs, configs.describe_configs_failed),
        33: Api(0, 2, configs.alter_configs, configs.alter_configs_failed),
        37: Api(0, 3, topics.create_partitions, topics.create_partitions_failed),
        43: Api(0, 2, elections.elect_leaders, elections.elect_leaders_failed),
        44: Api(0, 1, configs.incremental_alter_configs, configs.incremental_alter_configs_failed),
        45: Api(0, 1, reassignments.alter_partition_reassignments),
        46: Api(0, 0, reassignments.list_partition_reassignments),
        48: Api(0, 1, quotas.describe_client_quotas),
        49: Api(0, 1, quotas.alter_client_quotas, quotas.alter_client_quotas_failed),
        55: Api(0, 2, quorum.describe_quorum),
        57: Api(0, 2, features.update_features),
        60: Api(0, 2, cluster.describe_cluster),
        75: Api(
            0,
            0,
            partitions.describe_topic_partitions,
            partitions.describe_topic_partitions_failed,
        ),
        64: Api(0, 0, brokers.unregister_broker),
        80: Api(0, 1, voters.add_raft_voter),
        81: Api(0, 0, voters.remove_raft_voter),
        50: Api(0, 0, scram.describe_user_scram_credentials),
        51: Api(
            0,
            0,
            scram.alter_user_scram_credentials,
            scram.alter_user_scram_credentials_failed,
        ),
    }
    ranges = {key: (api.low, api.high) for key, api in table.items()}
    ranges.update(SESSION_APIS)
    ranges[API_VERSIONS_KEY] = API_VERSIONS_RANGE
    table[API_VERSIONS_KEY] = Api(*API_VERSIONS_RANGE, make_api_versions(ranges))
    return table


SESSION_APIS = {sasl.SASL_HANDSHAKE_KEY: (0, 1), sasl.SASL_AUTHENTICATE_KEY: (0, 2)}
"""APIs that change the connection's own state (its login), answered by the listener itself."""
SERVED = _served()
BEFORE_LOGIN = frozenset({API_VERSIONS_KEY, *SESSION_APIS})
"""What a SASL listener answers before the connection has logged in."""


@dataclass(slots=True)
class Connection:
    """One client connection: who it is, and whether it must close after the answer due."""

    peer: object
    sasl: sasl.SaslSession
    context: KafkaContext
    """What the handlers see: the listener's context, as this connection's principal."""
    writer: asyncio.StreamWriter
    frames: FramePipeline
    close_after: bool = False
    told_controller: int | None = None
    """The ControllerId this connection's client was last told, if it asked."""
    answering: bool = False
    last_request_at: float = 0.0
    """The event loop's time when the last request frame arrived."""
    stale_since: float | None = None
    """Since when this node names a controller other than ``told_controller``."""
    held_bytes: int = 0
    """Bytes of this connection's requests counted against ``queued.max.request.bytes``."""

    @property
    def idle(self) -> bool:
        return not self.answering and self.frames.empty()

    def note_login(self) -> None:
        """Name the connection's principal, once, when its SASL login succeeds."""
        principal = self.sasl.principal
        if principal is not None and principal != self.context.principal:
            self.context = dataclasses.replace(self.context, principal=principal)


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
        advertised_port: int | None = None,
        protocol: SecurityProtocol = SecurityProtocol.PLAINTEXT,
        ssl_context: ssl.SSLContext | None = None,
        changes: WaitForChange | None = None,
        principal_mapper: PrincipalMapper | None = None,
        listener_limits: limits.ListenerLimits | None = None,
        sasl_mechanisms: tuple[str, ...] = (sasl.PLAIN,),
    ) -> None:
        if protocol.uses_tls != (ssl_context is not None):
            raise ValueError(f"a {protocol} listener takes a TLS context exactly when it uses TLS")
        self.owner = owner
        self.host = host
        self.port = port
        self.max_request_bytes = max_request_bytes
        self.advertised_host = advertised_host
        self.advertised_port = advertised_port
        self.protocol = protocol
        self.ssl_context = ssl_context
        self.principal_mapper = principal_mapper
        """The listener's ``ssl.principal.mapping.rules`` when it requires client
        certificates: a connection is then its certificate's principal until a SASL login."""
        self.limits = listener_limits or limits.ListenerLimits()
        self.sasl_mechanisms = sasl_mechanisms
        """``sasl.enabled.mechanisms``: what a SASL connection may log in with."""
        self._credentials = sasl.image_credentials(owner)
        self._decoy_secret = secrets.token_bytes(32)
        """Derives the salt a SCRAM login for an unknown user is shown (same user, same
        salt, on this node), so a client cannot tell an unknown user from a wrong password."""
        self._admission = limits.Admission(self.limits, owner.node_id)
        self._request_bytes: limits.RequestBytes | None = None
        self._server: asyncio.Server | None = None
        self._connections: dict[asyncio.Task[Any], Connection] = {}
        self._context: KafkaContext | None = None
        self._changes = changes
        self._watcher: asyncio.Task[None] | None = None
        self._stopping = False
        """Set by :meth:`stop`: a connection that registers from then on closes itself."""

    async def start(self) -> None:
        self._stopping = False
        self._request_bytes = limits.RequestBytes(self.limits.queued_max_request_bytes)
        self._server = await asyncio.start_server(
            self._serve, self.host or None, self.port, ssl=self.ssl_context
        )
        self.port = self._server.sockets[0].getsockname()[1]
        host = self.advertised_host or self.host
        if host in ("", "0.0.0.0", "::"):
            host = "127.0.0.1"
        self._context = KafkaContext(
            self.owner,
            ControllerApis(self.owner),
            Endpoint(host, self.advertised_port or self.port),
        )
        cluster.note_registrations(self._context)
        log.info(
            "node %d: Kafka protocol listener on %s:%d (%s)",
            self.owner.node_id,
            self.host or "*",
            self.port,
            self.protocol,
        )
        if self._changes is not None:
            self._watcher = asyncio.create_task(self._retire_stale(self._changes))

    async def _retire_stale(self, changes: WaitForChange) -> None:
        """At every change of this node's state (and every half ``RETIRE_AFTER_S`` while some
        connection is stale), close the connections told of a controller this node no longer
        names, once stale and without a request for ``RETIRE_AFTER_S`` (see the module's
        docstring)."""
        assert self._context is not None
        loop = asyncio.get_running_loop()
        while True:
            if any(c.stale_since is not None for c in self._connections.values()):
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow the
                # stop's cancel when the change lands at the same moment, and this loop
                # would then never end.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(RETIRE_AFTER_S / 2):
                        await changes()
            else:
                await changes()
            cluster.note_registrations(self._context)
            named = cluster.active_controller_id(self._context)
            now = loop.time()
            for connection in list(self._connections.values()):
                told = connection.told_controller
                if told is None or told == named:
                    connection.stale_since = None
                    continue
                if connection.stale_since is None:
                    connection.stale_since = now
                quiet_since = max(connection.stale_since, connection.last_request_at)
                if now - quiet_since >= RETIRE_AFTER_S and connection.idle:
                    log.info(
                        "node %d: closing the Kafka connection from %s, told of controller %d "
                        "while this node now names %d",
                        self.owner.node_id,
                        connection.peer,
                        told,
                        named,
                    )
                    connection.told_controller = connection.stale_since = None
                    connection.writer.close()

    @property
    def address(self) -> str:
        assert self._context is not None, "the listener is started"
        return f"{self._context.endpoint.host}:{self._context.endpoint.port}"

    async def stop(self) -> None:
        """Stop accepting, abort every connection once, and wait at most ``STOP_WAIT_S`` for
        their tasks and the server to close.

        A connection accepted just before the server closed may not have registered yet (its
        task has not run); it finds the listener stopped when it does and aborts itself (see
        :meth:`_serve`), so no second sweep is needed for it.
        """
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping = True
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
        server.close()
        for connection in list(self._connections.values()):
            connection.writer.transport.abort()  # each connection's reader ends; its answers finish
        try:
            async with asyncio.timeout(STOP_WAIT_S):
                if self._connections:
                    await asyncio.wait(list(self._connections))
                await server.wait_closed()
        except TimeoutError:
            for task in list(self._connections):
                task.cancel()
            log.warning(
                "node %d: the Kafka listener closed with connections still open",
                self.owner.node_id,
            )

    # ------------------------------------------------------------------------ connections

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._stopping:
            # Accepted as the listener stopped, and registered only now: stop's sweep has
            # passed, so this connection closes itself.
            writer.transport.abort()
            return
        task = asyncio.current_task()
        assert task is not None
        peer = writer.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else str(peer)
        if self._admission.admit(address) is not None:
            writer.transport.abort()
            return
        try:
            await self._serve_admitted(task, peer, reader, writer)
        finally:
            self._admission.release(address)

    async def _serve_admitted(
        self,
        task: asyncio.Task[Any],
        peer: object,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        assert self._context is not None and self._request_bytes is not None, "started"
        request_bytes = self._request_bytes
        try:
            caller_context = self._caller_context(writer)
        except KafkaError as error:
            self._refuse(peer, error.message)
            writer.transport.abort()
            return
        frames = FramePipeline(PIPELINE_DEPTH)
        connection = Connection(
            peer,
            sasl.SaslSession(
                self.owner.access,
                self.protocol.uses_sasl,
                self.sasl_mechanisms,
                self._credentials,
                self._decoy_secret,
            ),
            caller_context,
            writer,
            frames,
        )
        self._connections[task] = connection
        answering = asyncio.create_task(self._answer_all(frames, writer, connection))

        async def take(size: int) -> None:
            await request_bytes.take(size)
            connection.held_bytes += size

        try:
            while True:
                try:
                    frame = await read_frame_within(
                        reader,
                        self._frame_limit(connection),
                        idle_timeout_s=self.limits.idle_ms / 1000,
                        partial_timeout_s=self.limits.partial_request_ms / 1000,
                        take=take,
                    )
                except IdleTimeout:
                    if not connection.idle:
                        continue  # still answering: not idle
                    log.info(
                        "node %d: closing the idle Kafka connection from %s "
                        "(connections.max.idle.ms)",
                        self.owner.node_id,
                        peer,
                    )
                    break
                except (FrameError, PartialFrameTimeout) as error:
                    self._refuse(peer, str(error))
                    break
                except (asyncio.IncompleteReadError, ConnectionError):
                    break
                if frame is None:
                    break
                connection.last_request_at = asyncio.get_running_loop().time()
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
            held, connection.held_bytes = connection.held_bytes, 0
            await request_bytes.give_back(held)

    def _frame_limit(self, connection: Connection) -> int:
        """The largest frame read next: ``sasl.server.max.receive.size`` on a SASL listener
        until the connection has logged in (nothing large is read from an unknown caller),
        ``socket.request.max.bytes`` after."""
        if connection.sasl.authenticated:
            return self.max_request_bytes
        return min(self.max_request_bytes, self.limits.sasl_max_receive_bytes)

    async def _answer_all(
        self,
        frames: FramePipeline,
        writer: asyncio.StreamWriter,
        connection: Connection,
    ) -> None:
        closing = False
        while (frame := await frames.get()) is not None:
            if closing:
                await self._give_back(connection, len(frame))
                continue  # read ahead of a malformed frame: discarded with the connection
            connection.answering = True
            try:
                answer = await self._answer(frame, connection)
                if answer is not None:
                    writer.write(answer)
                    try:
                        await writer.drain()
                    except ConnectionError:
                        answer = None
            finally:
                connection.answering = False
                await self._give_back(connection, len(frame))
            if answer is None or connection.close_after:
                # Close after the answers already written; the reader then sees the end of
                # the stream and sends the None that ends this loop.
                closing = True
                writer.close()

    def _caller_context(self, writer: asyncio.StreamWriter) -> KafkaContext:
        """The listener's context as this connection's caller: on a listener that requires
        client certificates, the certificate's principal, named by the function every door
        uses (a SASL login replaces it). Raises ``KafkaError`` for a certificate no mapping
        rule names."""
        assert self._context is not None, "the listener is started"
        if self.principal_mapper is None:
            return self._context
        ssl_object = writer.get_extra_info("ssl_object")
        certificate = None if ssl_object is None else ssl_object.getpeercert(binary_form=True)
        principal = self.owner.access.principal((), certificate, self.principal_mapper)
        return dataclasses.replace(self._context, principal=principal)

    async def _give_back(self, connection: Connection, size: int) -> None:
        """A frame answered (or discarded): its bytes no longer count as held."""
        assert self._request_bytes is not None, "started"
        size = min(size, connection.held_bytes)
        connection.held_bytes -= size
        await self._request_bytes.give_back(size)

    def _refuse(self, peer: object, reason: str) -> None:
        log.warning(
            "node %d: Kafka listener closed the connection from %s: %s",
            self.owner.node_id,
            peer,
            reason,
        )

    async def _answer(self, frame: bytes, connection: Connection) -> bytes | None:
        """The framed response to one request, or ``None`` to close the connection."""
        peer = connection.peer
        if connection.sasl.stage is sasl.SaslStage.RAW_TOKEN:
            step = connection.sasl.step(frame)  # handshake v0: bare tokens, bare answers
            if step.error is not None:
                self._refuse(peer, step.reason or step.error)
                return None
            connection.note_login()
            return SIZE.pack(len(step.reply)) + step.reply
        try:
            head = codec.peek(frame)
        except codec.CodecError as error:
            self._refuse(peer, str(error))
            return None
        if not connection.sasl.authenticated and head.api_key not in BEFORE_LOGIN:
            self._refuse(peer, f"{codec.api_name(head.api_key)} before SASL authentication")
            return None
        api = SERVED.get(head.api_key)
        low, high = (api.low, api.high) if api else SESSION_APIS.get(head.api_key, (0, -1))
        if not low <= head.api_version <= high:
            return self._unsupported(head, peer)
        try:
            request = codec.decode_request(frame, head.api_key, head.api_version)
        except codec.CodecError as error:
            self._refuse(peer, str(error))
            return None
        try:
            if api is not None:
                fields = await api.handler(connection.context, request, head.api_version)
                if head.api_key in NAMES_CONTROLLER:
                    connection.told_controller = int(fields["controller_id"])
                elif (
                    head.api_key in CONTROLLER_BOUND
                    and cluster.active_controller_id(connection.context) == self.owner.node_id
                ):
                    connection.told_controller = self.owner.node_id
            else:
                fields = self._session_answer(connection, head, request)
        except Exception:
            log.exception(
                "node %d: Kafka %s request failed",
                self.owner.node_id,
                codec.api_name(head.api_key),
            )
            return self._error(head, ErrorCode.UNKNOWN_SERVER_ERROR, peer, request)
        try:
            return codec.encode_response(
                head.api_key, head.api_version, head.correlation_id, fields
            )
        except codec.CodecError as error:
            log.error("node %d: %s", self.owner.node_id, error)
            return self._error(head, ErrorCode.UNKNOWN_SERVER_ERROR, peer, request)

    def _session_answer(
        self, connection: Connection, head: codec.RequestHead, request: Any
    ) -> Fields:
        if head.api_key == sasl.SASL_HANDSHAKE_KEY:
            fields, keep_open = connection.sasl.handshake(request, head.api_version)
        else:
            fields, keep_open = connection.sasl.authenticate(request)
            connection.note_login()
        if not keep_open:
            connection.close_after = True
            reason = connection.sasl.failure or fields.get("error_message") or "refused"
            self._refuse(connection.peer, f"{codec.api_name(head.api_key)}: {reason}")
        return fields

    def _unsupported(self, head: codec.RequestHead, peer: object) -> bytes | None:
        name = codec.api_name(head.api_key)
        if head.api_key == API_VERSIONS_KEY:
            # Kafka answers an ApiVersions version it does not know with a v0 body.
            ranges = {key: (api.low, api.high) for key, api in SERVED.items()}
            ranges.update(SESSION_APIS)
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

    def _error(
        self, head: codec.RequestHead, code: ErrorCode, peer: object, request: Any = None
    ) -> bytes | None:
        """A response with only a top-level error code, when the API's schema has one at
        this version; else, for a request read, Kafka's error response (the code on every
        item asked about); otherwise the connection closes (as Kafka does for a version it
        cannot parse)."""
        fields: Fields | None = None
        api = SERVED.get(head.api_key)
        if codec.can_encode(head.api_key, head.api_version) and codec.has_top_level_error(
            head.api_key, head.api_version
        ):
            fields = {"error_code": int(code)}
        elif request is not None and api is not None and api.failed is not None:
            fields = api.failed(request, head.api_version, int(code), None)
        if fields is not None:
            try:
                return codec.encode_response(
                    head.api_key, head.api_version, head.correlation_id, fields
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
    owner: ControllerHost, config: RaftmetaConfig, changes: WaitForChange | None = None
) -> KafkaListener | None:
    """Serve the ``KAFKA`` listener of ``listeners``, if configured; ``None`` otherwise.

    Its protocol is ``listener.security.protocol.map``'s entry for ``KAFKA``: SSL and SASL_SSL
    use the node's ``ssl.*`` settings (``listener.name.kafka.ssl.*`` win, as in Kafka), the
    same certificates as the gRPC listener by default; SASL_PLAINTEXT and SASL_SSL log users
    in with ``sasl.enabled.mechanisms``: SCRAM against the credentials in the metadata log,
    PLAIN against ``raftmeta.auth.tokens.file``, which PLAIN therefore needs."""
    for listener in config.listeners:
        if listener.name == KAFKA_LISTENER:
            protocols = parse_security_protocol_map(config.listener_security_protocol_map)
            protocol = protocol_of(listener.name, protocols)
            mechanisms = config.sasl_enabled_mechanisms
            if protocol.uses_sasl and sasl.PLAIN in mechanisms and owner.access.tokens is None:
                raise ConfigError(
                    f"Invalid configuration {SECURITY_PROTOCOL_MAP_KEY}: the {KAFKA_LISTENER} "
                    f"listener is {protocol}, whose PLAIN logins are checked against "
                    f"{TOKENS_FILE_KEY}; set it"
                )
            advertised = next(
                (entry for entry in config.advertised_listeners if entry.name == KAFKA_LISTENER),
                None,
            )
            context = None
            mapper = None
            if protocol.uses_tls:
                tls = parse_tls_settings(config.originals, KAFKA_LISTENER)
                context = server_ssl_context(tls)
                if tls.client_auth is ClientAuth.REQUIRED:
                    mapper = tls.principal_mapper
            served = KafkaListener(
                owner,
                listener.host,
                listener.port,
                max_request_bytes=config.socket_request_max_bytes,
                advertised_host=None if advertised is None else advertised.host,
                advertised_port=None if advertised is None else advertised.port,
                protocol=protocol,
                ssl_context=context,
                changes=changes,
                principal_mapper=mapper,
                listener_limits=limits.ListenerLimits(
                    max_connections=config.max_connections,
                    max_connections_per_ip=config.max_connections_per_ip,
                    idle_ms=config.connections_max_idle_ms,
                    partial_request_ms=config.raftmeta_kafka_partial_request_timeout_ms,
                    queued_max_request_bytes=config.queued_max_request_bytes,
                    sasl_max_receive_bytes=config.sasl_server_max_receive_size,
                ),
                sasl_mechanisms=mechanisms,
            )
            await served.start()
            return served
    return None
