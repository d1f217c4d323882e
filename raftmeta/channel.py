"""A client's way to the active controller: send a request, follow NOT_CONTROLLER, retry.

Any node serves the Admin and BrokerLifecycle services, but only the active controller answers;
the others reply NOT_CONTROLLER (41) naming the controller's endpoint when they know it. The
AdminClient, the embedded broker and the command-line tools all need the same loop around that
rule, so it lives here once:

* send to the controller last learned of, or else to the next bootstrap server in turn;
* on NOT_CONTROLLER, remember the named controller and send there at once;
* when a server cannot be reached (gRPC UNAVAILABLE), or nobody knows the controller (an
  election is under way), move to the next bootstrap server after a short, growing pause;
* a server that stops answering in the middle of a call (paused, frozen) is found out by
  asking the others: once a call has gone :data:`LEADER_CHECK_AFTER_S` without an answer, the
  channel asks every other bootstrap server (DescribeQuorum) which node leads, and again every
  :data:`LEADER_CHECK_EVERY_S`; when one names another leader, in the newest epoch any of them
  knows, the call is abandoned and sent there. A paused leader then costs about an election,
  as a killed one does. (Sending again is safe: admin writes carry a request id the
  controller answers once, and the broker's calls may be repeated.) The channel's keepalive
  pings are the fallback when no other server can be asked;
* stop at the deadline with REQUEST_TIMED_OUT and a message naming every server tried;
* with ``unreachable_timeout_ms`` (the command-line tools), stop sooner, with
  BROKER_NOT_AVAILABLE, when no server has ever answered and every bootstrap server has been
  unreachable (connection refused, host not found) for that long: a wrong address is known at
  once, and a tool should say so in a second rather than wait out its deadline. Clients that
  live through failovers (the broker, the AdminClient by default) leave it unset.

Any other answer is the caller's to interpret: an item error, a request-level error code in the
response header, anything but NOT_CONTROLLER.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.rpc import admin_pb2, broker_pb2, raft_pb2
from raftmeta.rpc.options import CLIENT_CHANNEL_OPTIONS
from raftmeta.security.listener import aio_channel, secure_channel_credentials
from raftmeta.security.tls import TlsSettings

log = logging.getLogger(__name__)

DEFAULT_REQUEST_TIMEOUT_MS = 30_000

RETRY_BACKOFF_INITIAL_S = 0.01
RETRY_BACKOFF_MAX_S = 0.25
"""The pause before the next attempt starts at 10 ms and doubles up to 250 ms: long enough not
to spin while an election runs (a few hundred ms at the defaults), short enough that a client
notices the new controller soon after it is elected."""

LEADER_CHECK_AFTER_S = 0.5
"""How long a call may go unanswered before the channel asks the other servers whether the
leader moved: about one fetch timeout (500 ms by default), the time followers take to notice a
silent leader, so a check rarely runs before an election could have started."""

LEADER_CHECK_EVERY_S = 0.25
"""How often the check repeats while the call stays unanswered."""

LEADER_CHECK_TIMEOUT_S = 0.5
"""How long one check waits for each server's DescribeQuorum answer."""

CONTROLLER_KEEPALIVE_MS = 1_000
CONTROLLER_PING_TIMEOUT_MS = 3_000
"""Tighter keepalive than the quorum's own channels (2 s + 5 s): a frozen controller with no
other server to ask about it is given up in 3 to 4 s. The servers accept pings every second
(``raftmeta.quorum.peers.SERVER_OPTIONS``)."""

CONTROLLER_CHANNEL_OPTIONS: tuple[tuple[str, int], ...] = (
    *(
        option
        for option in CLIENT_CHANNEL_OPTIONS
        if option[0]
        not in ("grpc.keepalive_time_ms", "grpc.keepalive_timeout_ms", "grpc.http2.ping_timeout_ms")
    ),
    ("grpc.keepalive_time_ms", CONTROLLER_KEEPALIVE_MS),
    ("grpc.keepalive_timeout_ms", CONTROLLER_PING_TIMEOUT_MS),
    ("grpc.http2.ping_timeout_ms", CONTROLLER_PING_TIMEOUT_MS),
)

_DESCRIBE_QUORUM = "Admin/DescribeQuorum"

_RETRIABLE_GRPC_CODES = frozenset({grpc.StatusCode.UNAVAILABLE})
"""A refused connection, and also one not made in time: the channel options' short reconnect
backoff doubles as gRPC's connect timeout, so a paused or black-holed node fails its attempt
in about a tenth of a second instead of holding the request until its deadline."""
_AUTH_GRPC_CODES = frozenset({grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED})


@dataclass(frozen=True, slots=True)
class _Method:
    path: str
    """gRPC's full method name: ``/package.Service/Method``."""
    response_type: Callable[[bytes], Any]


def _methods(modules: Sequence[Any]) -> dict[str, _Method]:
    """Every RPC of the given generated modules' services, keyed ``Service/Method``, with its
    response parser.

    Read from the generated descriptors so that a method added to the protos needs no change
    here.
    """
    messages: dict[str, Any] = {}
    for module in (*modules, raft_pb2):
        for name, descriptor in module.DESCRIPTOR.message_types_by_name.items():
            messages[descriptor.full_name] = getattr(module, name)
    methods: dict[str, _Method] = {}
    for module in modules:
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                response_class = messages[method.output_type.full_name]
                methods[f"{service.name}/{method.name}"] = _Method(
                    f"/{service.full_name}/{method.name}", response_class.FromString
                )
    return methods


_METHODS = _methods([admin_pb2, broker_pb2])


class _Watch:
    """One call's leader watch: the watcher task once it runs, and the leader it found."""

    __slots__ = ("moved_to", "task")

    def __init__(self) -> None:
        self.task: asyncio.Future[None] | None = None
        self.moved_to: str | None = None


@dataclass(frozen=True, slots=True)
class _LeaderMoved:
    """What a call that was abandoned for another leader answers instead."""

    endpoint: str


def parse_bootstrap_servers(bootstrap_servers: str | Iterable[str]) -> tuple[str, ...]:
    """``"h1:p1,h2:p2"`` or a list of ``host:port`` strings, checked, as a tuple.

    An IPv6 host is written in brackets (``[::1]:9093``), as gRPC expects it.
    """
    if isinstance(bootstrap_servers, str):
        entries = bootstrap_servers.split(",")
    else:
        entries = []
        for entry in bootstrap_servers:
            if not isinstance(entry, str):
                raise ValueError(f"bootstrap servers must be host:port strings, got {entry!r}")
            entries.extend(entry.split(","))
    servers = [entry.strip() for entry in entries if entry.strip()]
    if not servers:
        raise ValueError("bootstrap servers: need at least one host:port")
    for server in servers:
        _check_endpoint(server)
    return tuple(dict.fromkeys(servers))


def _check_endpoint(server: str) -> None:
    host, sep, port_text = server.rpartition(":")
    if not sep or not host:
        raise ValueError(f"bootstrap server {server!r} is not host:port")
    if host.startswith("[") != host.endswith("]") or (":" in host and not host.startswith("[")):
        raise ValueError(
            f"bootstrap server {server!r}: write an IPv6 address in brackets, as [::1]:9093"
        )
    if any(c.isspace() for c in host):
        raise ValueError(f"bootstrap server {server!r}: the host contains a space")
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"bootstrap server {server!r}: the port must be a number from 1 to 65535")


def _redirect(response: Any) -> tuple[bool, str]:
    """Whether ``response`` says "not me", and the endpoint it names ("" if none).

    Admin and BrokerLifecycle responses carry a ResponseHeader with NOT_CONTROLLER;
    DescribeQuorum reuses the Raft service's message, which says NOT_LEADER_OR_FOLLOWER with
    a leader endpoint. Both mean the same thing here.
    """
    fields = response.DESCRIPTOR.fields_by_name
    if "header" in fields:
        header = response.header
        return header.error_code == ErrorCode.NOT_CONTROLLER, header.controller_endpoint
    if "leader_endpoint" in fields and "error_code" in fields:
        return response.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER, response.leader_endpoint
    return False, ""


class ControllerChannel:
    """Sends Admin and BrokerLifecycle requests to whichever node is the active controller.

    One gRPC channel per endpoint, opened on first use and kept until :meth:`close`. Use it
    from one event loop (gRPC's asyncio channels belong to the loop that made them).
    """

    def __init__(
        self,
        bootstrap_servers: str | Iterable[str],
        *,
        bearer_token: str | None = None,
        request_timeout_ms: int = DEFAULT_REQUEST_TIMEOUT_MS,
        tls: TlsSettings | None = None,
        unreachable_timeout_ms: int | None = None,
    ) -> None:
        """``tls`` set: every channel speaks TLS, checks servers against its truststore and
        presents its keystore's certificate, if any (raises ``ConfigError`` for unreadable
        files); None: plaintext. ``unreachable_timeout_ms`` set: a call gives up once every
        bootstrap server has been unreachable that long and none has answered since the
        channel was made."""
        self._credentials = secure_channel_credentials(tls)
        self._bootstrap = parse_bootstrap_servers(bootstrap_servers)
        if isinstance(request_timeout_ms, bool) or not isinstance(request_timeout_ms, int):
            raise ValueError(f"request timeout must be an int of ms, got {request_timeout_ms!r}")
        if request_timeout_ms <= 0:
            raise ValueError(f"request timeout must be above 0 ms, got {request_timeout_ms}")
        if bearer_token is not None and (not bearer_token or "\n" in bearer_token):
            raise ValueError("bearer token must be a non-empty single line")
        if unreachable_timeout_ms is not None and (
            isinstance(unreachable_timeout_ms, bool)
            or not isinstance(unreachable_timeout_ms, int)
            or unreachable_timeout_ms < 0
        ):
            raise ValueError(
                "unreachable timeout must be an int of ms, 0 or more, "
                f"got {unreachable_timeout_ms!r}"
            )
        self._request_timeout_ms = request_timeout_ms
        self._unreachable_timeout_ms = unreachable_timeout_ms
        self._answered = False
        """Whether any server has answered anything on this channel."""
        self._metadata: tuple[tuple[str, str], ...] = (
            (("authorization", f"Bearer {bearer_token}"),) if bearer_token is not None else ()
        )
        self._channels: dict[str, grpc.aio.Channel] = {}
        self._stubs: dict[tuple[str, str], Any] = {}
        """Each endpoint's callable per method path, made on first use."""
        self._checks: dict[str, asyncio.Future[str | None]] = {}
        """The leader check under way for each silent server, shared by the calls waiting on it."""
        self._controller: str | None = None
        self._next_bootstrap = 0
        self._closed = False

    @property
    def bootstrap_servers(self) -> tuple[str, ...]:
        return self._bootstrap

    @property
    def request_timeout_ms(self) -> int:
        return self._request_timeout_ms

    @property
    def controller_endpoint(self) -> str | None:
        """The endpoint requests go to next; ``None`` until a node named the controller."""
        return self._controller

    async def call(self, method: str, request: Any, *, timeout_ms: int | None = None) -> Any:
        """The active controller's answer to ``request``, for ``method`` ("Admin/CreateTopics").

        Returns the first response that is not NOT_CONTROLLER, whatever else it reports.
        Raises KafkaError: REQUEST_TIMED_OUT when no controller answered within ``timeout_ms``
        (default: the channel's request timeout), CLUSTER_AUTHORIZATION_FAILED when gRPC
        refused the caller's credentials, UNKNOWN_SERVER_ERROR for any other gRPC failure.
        """
        if self._closed:
            raise RuntimeError("the controller channel is closed")
        spec = _METHODS.get(method)
        if spec is None:
            raise ValueError(f"unknown method {method!r}; known: {', '.join(sorted(_METHODS))}")
        budget_ms = self._request_timeout_ms if timeout_ms is None else timeout_ms
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + max(0, budget_ms) / 1000
        tried: dict[str, str] = {}
        backoff_s = RETRY_BACKOFF_INITIAL_S
        redirects_in_a_row = 0
        while True:
            remaining_s = deadline - loop.time()
            if remaining_s <= 0:
                raise self._timed_out(method, budget_ms, tried)
            endpoint = self._controller or self._take_bootstrap()
            response = await self._attempt(method, spec, endpoint, request, remaining_s, tried)
            if response is None and self._nobody_to_ask(started, loop.time(), tried):
                raise self._unreachable(method, tried)
            if response is not None:
                self._answered = True
                redirected, named = _redirect(response)
                if not redirected:
                    tried.pop(endpoint, None)
                    self._controller = endpoint
                    return response
                if named and named != endpoint and redirects_in_a_row < len(self._bootstrap) + 2:
                    # Go straight to the named controller; only a chain of stale redirects
                    # (several nodes naming each other) falls through to the pause below.
                    tried[endpoint] = f"not the controller, named {named}"
                    self._controller = named
                    redirects_in_a_row += 1
                    continue
                tried[endpoint] = "not the controller, and knows none"
            self._forget_controller(endpoint)
            redirects_in_a_row = 0
            pause_s = min(backoff_s, deadline - loop.time())
            if pause_s > 0:
                await asyncio.sleep(pause_s)
            backoff_s = min(backoff_s * 2, RETRY_BACKOFF_MAX_S)

    async def close(self) -> None:
        """Close every channel; calls after this raise RuntimeError."""
        self._closed = True
        channels, self._channels = list(self._channels.values()), {}
        self._stubs = {}
        for channel in channels:
            await channel.close()

    async def __aenter__(self) -> ControllerChannel:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    def _take_bootstrap(self) -> str:
        endpoint = self._bootstrap[self._next_bootstrap % len(self._bootstrap)]
        self._next_bootstrap += 1
        return endpoint

    def _forget_controller(self, endpoint: str) -> None:
        if self._controller == endpoint:
            self._controller = None

    async def _attempt(
        self,
        method: str,
        spec: _Method,
        endpoint: str,
        request: Any,
        remaining_s: float,
        tried: dict[str, str],
    ) -> Any:
        """One try at ``endpoint``: its response, or None (the reason noted in ``tried``) when
        it could not answer and the next server should be asked. Raises what no other server
        would answer differently."""
        stub = self._stub(endpoint, spec)
        try:
            call = stub(request, timeout=remaining_s, metadata=self._metadata or None)
            if method == _DESCRIBE_QUORUM:
                return await call
            answer = await self._answer_or_new_leader(endpoint, call)
            if isinstance(answer, _LeaderMoved):
                tried[endpoint] = f"stopped answering; {answer.endpoint} leads now"
                self._controller = answer.endpoint
                return None
            return answer
        except grpc.aio.AioRpcError as error:
            code = error.code()
            if code in _RETRIABLE_GRPC_CODES:
                tried[endpoint] = unreachable_reason(error.details() or "")
                return None
            if code is grpc.StatusCode.DEADLINE_EXCEEDED:
                # The deadline was the whole remaining budget: the caller's loop ends now.
                tried[endpoint] = "no answer in time"
                return None
            if code in _AUTH_GRPC_CODES:
                raise KafkaError(
                    ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                    f"{endpoint} refused the credentials: {error.details() or code.name}",
                ) from None
            details = f": {error.details()}" if error.details() else ""
            raise KafkaError(
                ErrorCode.UNKNOWN_SERVER_ERROR,
                f"{method} at {endpoint} failed with gRPC {code.name}{details}",
            ) from None

    def _stub(self, endpoint: str, spec: _Method) -> Any:
        """The callable for ``spec`` on ``endpoint``'s channel, made once and kept with the
        channel: a multi-callable is gRPC's per-method state, not per call."""
        stub = self._stubs.get((endpoint, spec.path))
        if stub is not None:
            return stub
        channel = self._channels.get(endpoint)
        if channel is None:
            channel = aio_channel(endpoint, self._credentials, CONTROLLER_CHANNEL_OPTIONS)
            self._channels[endpoint] = channel
        stub = channel.unary_unary(
            spec.path, request_serializer=_serialize, response_deserializer=spec.response_type
        )
        self._stubs[(endpoint, spec.path)] = stub
        return stub

    async def _answer_or_new_leader(self, endpoint: str, call: Any) -> Any:
        """``call``'s response (or its gRPC error, raised), or :class:`_LeaderMoved` when
        the other servers name another leader while ``endpoint`` stays silent (the call is
        then cancelled).

        The call is awaited as it is, with one timer beside it: most calls are answered
        well before :data:`LEADER_CHECK_AFTER_S`, and then cost no task, no ``asyncio.wait``
        and no check. Only a call still open when the timer fires gets a watcher task,
        which asks the others and cancels the call when they name another leader.
        """
        loop = asyncio.get_running_loop()
        watch = _Watch()
        timer = loop.call_later(LEADER_CHECK_AFTER_S, self._start_watch, endpoint, call, watch)
        try:
            return await call
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if watch.moved_to is None or (task is not None and task.cancelling()):
                raise  # cancelled by the caller, not by the watcher
            log.info("%s stopped answering; %s leads now", endpoint, watch.moved_to)
            return _LeaderMoved(watch.moved_to)
        finally:
            timer.cancel()
            if watch.task is not None:
                watch.task.cancel()

    def _start_watch(self, endpoint: str, call: Any, watch: _Watch) -> None:
        if not call.done():
            watch.task = asyncio.ensure_future(self._watch(endpoint, call, watch))

    async def _watch(self, endpoint: str, call: Any, watch: _Watch) -> None:
        """Ask the others every :data:`LEADER_CHECK_EVERY_S` while ``call`` stays open; when
        they name another leader, note it and cancel the call. The check races the call: a
        slow answer is not held up by it."""
        while True:
            moved_to = await self._leader_elsewhere(endpoint)
            if call.done():
                return
            if moved_to is not None:
                watch.moved_to = moved_to
                call.cancel()
                return
            await asyncio.sleep(LEADER_CHECK_EVERY_S)

    async def _leader_elsewhere(self, silent: str) -> str | None:
        """The leader the other bootstrap servers name, in the newest epoch any of them
        knows, if that is not ``silent``; None when none names one or they name ``silent``.

        Calls waiting on the same silent server share one check: a broker host or an admin
        client with many calls in flight to a slow leader would otherwise ask the other
        servers once per call, every :data:`LEADER_CHECK_EVERY_S`, and load them in turn."""
        running = self._checks.get(silent)
        if running is None:
            running = asyncio.ensure_future(self._ask_others(silent))
            self._checks[silent] = running

            def forget(done: asyncio.Future[str | None]) -> None:
                if self._checks.get(silent) is done:
                    del self._checks[silent]

            running.add_done_callback(forget)
        # Shielded: the call that gives up on the check must not cancel it for the others.
        return await asyncio.shield(running)

    async def _ask_others(self, silent: str) -> str | None:
        others = [server for server in self._bootstrap if server != silent]
        answers = await asyncio.gather(*(self._leader_known_to(server) for server in others))
        known = [answer for answer in answers if answer is not None]
        if not known:
            return None
        _epoch, leader = max(known)
        return leader if leader != silent else None

    async def _leader_known_to(self, server: str) -> tuple[int, str] | None:
        """(epoch, leader endpoint) as ``server`` knows them; None if it cannot say."""
        stub = self._stub(server, _METHODS[_DESCRIBE_QUORUM])
        try:
            response = await stub(
                raft_pb2.DescribeQuorumRequest(),
                timeout=LEADER_CHECK_TIMEOUT_S,
                metadata=self._metadata or None,
            )
        except grpc.aio.AioRpcError:
            return None
        if response.error_code == ErrorCode.NONE:
            return response.leader_epoch, server
        redirected, named = _redirect(response)
        if redirected and named and response.leader_epoch >= 0:
            return response.leader_epoch, named
        return None

    def _nobody_to_ask(self, started: float, now: float, tried: dict[str, str]) -> bool:
        """Whether the fail-fast rule says stop: nothing ever answered, every bootstrap server
        is unreachable, and has been for ``unreachable_timeout_ms``."""
        limit_ms = self._unreachable_timeout_ms
        if limit_ms is None or self._answered or (now - started) * 1000 < limit_ms:
            return False
        return all(tried.get(server, "").startswith(UNREACHABLE) for server in self._bootstrap)

    def _unreachable(self, method: str, tried: dict[str, str]) -> KafkaError:
        what = "; ".join(f"{server}: {tried[server]}" for server in self._bootstrap)
        return KafkaError(
            ErrorCode.BROKER_NOT_AVAILABLE,
            f"{method}: cannot reach any bootstrap server ({what})",
        )

    def _timed_out(self, method: str, budget_ms: int, tried: dict[str, str]) -> KafkaError:
        if tried:
            what = "; ".join(f"{endpoint}: {why}" for endpoint, why in tried.items())
        else:
            what = "none answered"
        return KafkaError(
            ErrorCode.REQUEST_TIMED_OUT,
            f"{method}: no controller answered within {math.ceil(budget_ms)} ms "
            f"(bootstrap servers {','.join(self._bootstrap)}; {what})",
        )


UNREACHABLE = "unreachable"


def unreachable_reason(details: str) -> str:
    """``unreachable``, with why in words when gRPC's details say (refused, no such host)."""
    text = details.lower()
    if "connection refused" in text:
        return f"{UNREACHABLE} (connection refused)"
    if "resolv" in text or "domain name not found" in text or "name or service" in text:
        return f"{UNREACHABLE} (host not found)"
    if "handshake" in text or "ssl" in text or "certificate" in text:
        return f"{UNREACHABLE} (TLS handshake failed)"
    return UNREACHABLE


def _serialize(message: Any) -> bytes:
    data: bytes = message.SerializeToString()
    return data
