"""Outbound calls to the other voters over gRPC, one grpc.aio channel each: the client side
of the gRPC transport (:class:`~raftmeta.quorum.transport.RaftChannel`). The channel and
server options every gRPC user in raftmeta shares are in :mod:`raftmeta.rpc.options`.

A request the core sends becomes one unary call; its answer is returned to be stepped in.
A failed call is dropped without retry: the core already resends on its own timers, and a
second retry policy here would only fight it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import grpc

from raftmeta.errors import ErrorCode
from raftmeta.quorum import wire
from raftmeta.quorum.transport import Connect
from raftmeta.raft.messages import (
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    FetchRequest,
    FetchSnapshotRequest,
    Request,
    Response,
    VoteRequest,
)
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from raftmeta.rpc.options import CHANNEL_OPTIONS, MAX_MESSAGE_BYTES, SERVER_OPTIONS

__all__ = ["CHANNEL_OPTIONS", "MAX_MESSAGE_BYTES", "SERVER_OPTIONS", "Peers"]
from raftmeta.storage.errors import BatchDecodeError

log = logging.getLogger(__name__)

ANOTHER_CLUSTER = "node %d: node %d belongs to another cluster; check controller.quorum.voters"
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})
"""A listener bound to these serves every interface: a peer dials the host it already knows."""


def encode_request(
    local_id: int, cluster_id: str, destination: int, request: Request
) -> wire.PbRequest | None:
    """The wire form of ``request``, or None (logged) when a value does not fit its field."""
    try:
        return wire.request_to_pb(request, cluster_id, local_id)
    except (ValueError, TypeError) as error:
        # A value that does not fit its wire field (an epoch past int32, say). The core
        # refuses such values before it persists them, so this is a bug; drop the request
        # rather than let the call task die, and let the core's timers go on.
        log.error(
            "node %d: cannot encode %s to node %d: %s",
            local_id,
            type(request).__name__,
            destination,
            error,
        )
        return None


def decode_answer(
    local_id: int, destination: int, answer: wire.PbResponse, request: Request
) -> Response | None:
    """The core's form of ``answer`` to ``request``, or None (logged) when it is damaged or
    comes from another cluster."""
    try:
        response = wire.response_from_pb(answer, request)
    except (BatchDecodeError, ValueError) as error:
        # Bytes damaged on the way are never appended; the core asks again.
        log.warning(
            "node %d: bad %s from node %d: %s",
            local_id,
            type(answer).__name__,
            destination,
            error,
        )
        return None
    if response.error is ErrorCode.INCONSISTENT_CLUSTER_ID:
        log.error(ANOTHER_CLUSTER, local_id, destination)
        return None
    return response


class Peers:
    """A :class:`~raftmeta.quorum.transport.RaftChannel` over gRPC; the class itself is the
    :class:`~raftmeta.quorum.transport.Connect` a ``RaftNode`` is given."""

    def __init__(
        self,
        local_id: int,
        cluster_id: str,
        addresses: Mapping[int, str],
        request_timeout_ms: int,
        *,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        self.local_id = local_id
        self.cluster_id = cluster_id
        self.request_timeout_ms = request_timeout_ms
        self._addresses = dict(addresses)
        self._credentials = credentials
        self._channels: dict[int, Any] = {}
        self._stubs: dict[int, pb_grpc.RaftStub] = {}
        self._discovery: dict[int, tuple[Any, pb_grpc.RaftStub]] = {}
        for peer_id, address in addresses.items():
            if peer_id == local_id:
                continue
            channel = self._open_channel(address)
            self._channels[peer_id] = channel
            self._stubs[peer_id] = pb_grpc.RaftStub(channel)

    def _open_channel(self, address: str, *, own_subchannel: bool = False) -> Any:
        # Channels to one address share its connection (and that connection's backoff)
        # unless given a subchannel pool of their own.
        options = CHANNEL_OPTIONS
        if own_subchannel:
            options = (*options, ("grpc.use_local_subchannel_pool", 1))
        if self._credentials is None:
            return grpc.aio.insecure_channel(address, options=options)
        return grpc.aio.secure_channel(address, self._credentials, options=options)

    async def _discovery_stub(self, destination: int, address: str) -> pb_grpc.RaftStub:
        """The stub ``DescribeEndpoints`` goes through, on a channel of its own.

        A channel that failed to connect fails every call at once until its reconnect
        backoff (up to ``grpc.max_reconnect_backoff_ms``) runs out, even when the peer is back:
        a voter restarted while this node had no need of it stays unreachable for up to that
        long once it is needed, say as the new leader after a handover, and its followers'
        first fetches fail meanwhile. The stream link that asks paces its own attempts with
        its own backoff, so a channel in that state is replaced by a fresh one instead.
        """
        entry = self._discovery.get(destination)
        if entry is not None:
            channel, stub = entry
            if channel.get_state() is not grpc.ChannelConnectivity.TRANSIENT_FAILURE:
                return stub
            del self._discovery[destination]
            await channel.close()
        channel = self._open_channel(address, own_subchannel=True)
        stub = pb_grpc.RaftStub(channel)
        self._discovery[destination] = (channel, stub)
        return stub

    @classmethod
    def over_tls(cls, credentials: grpc.ChannelCredentials | None) -> Connect:
        """A :class:`~raftmeta.quorum.transport.Connect` whose channels use ``credentials``
        (TLS, presenting the node's certificate); None: plaintext, the class itself."""
        if credentials is None:
            return cls

        def connect(
            local_id: int, cluster_id: str, addresses: Mapping[int, str], request_timeout_ms: int
        ) -> Peers:
            return cls(local_id, cluster_id, addresses, request_timeout_ms, credentials=credentials)

        return connect

    async def call(self, destination: int, request: Request) -> Response | None:
        """Send ``request`` and return the answer; a failure is logged and dropped."""
        stub = self._stubs.get(destination)
        if stub is None:
            log.warning("node %d: no address for node %d", self.local_id, destination)
            return None
        message = encode_request(self.local_id, self.cluster_id, destination, request)
        if message is None:
            return None
        timeout_ms = self.request_timeout_ms
        # Election messages wait for a reconnecting channel rather than failing at once: a
        # lost EndQuorumEpoch or vote costs a whole timeout. Fetches are resent by the core.
        wait_for_ready = True
        method: Any
        if isinstance(request, VoteRequest):
            method = stub.Vote
        elif isinstance(request, BeginQuorumEpochRequest):
            method = stub.BeginQuorumEpoch
        elif isinstance(request, EndQuorumEpochRequest):
            method = stub.EndQuorumEpoch
        elif isinstance(request, FetchRequest):
            method = stub.Fetch
            timeout_ms += request.max_wait_ms
            wait_for_ready = False
        elif isinstance(request, FetchSnapshotRequest):
            method = stub.FetchSnapshot
            wait_for_ready = False
        try:
            answer = await method(message, timeout=timeout_ms / 1000, wait_for_ready=wait_for_ready)
        except grpc.aio.AioRpcError as error:
            log.debug(
                "node %d: %s to node %d failed: %s",
                self.local_id,
                type(request).__name__,
                destination,
                error.code(),
            )
            return None
        return decode_answer(self.local_id, destination, answer, request)

    def heard_from(self, peer_id: int) -> None:
        """Nothing to do: gRPC offers no way to cut a channel's reconnect backoff short."""

    async def describe_endpoints(
        self, destination: int, timeout_s: float, *, wait_for_ready: bool
    ) -> tuple[str, int] | None:
        """Where ``destination`` serves the Raft stream (host to dial, port), or None when it
        serves none (or is a version without the call). Raises ``ConnectionError`` when it
        cannot be asked or refuses to say."""
        address = self._addresses.get(destination)
        if destination not in self._stubs or address is None:
            raise ConnectionError(f"no address for node {destination}")
        stub = await self._discovery_stub(destination, address)
        request = pb.DescribeEndpointsRequest(cluster_id=self.cluster_id, replica_id=self.local_id)
        try:
            answer = await stub.DescribeEndpoints(
                request, timeout=timeout_s, wait_for_ready=wait_for_ready
            )
        except grpc.aio.AioRpcError as error:
            if error.code() is grpc.StatusCode.UNIMPLEMENTED:
                return None
            raise ConnectionError(f"DescribeEndpoints failed: {error.code()}") from None
        code = wire.error_code(answer.error_code)
        if code is ErrorCode.INCONSISTENT_CLUSTER_ID:
            log.error(ANOTHER_CLUSTER, self.local_id, destination)
            raise ConnectionError("DescribeEndpoints refused: INCONSISTENT_CLUSTER_ID")
        if code is not ErrorCode.NONE:
            log.error(
                "node %d: node %d refused to describe its endpoints: %s",
                self.local_id,
                destination,
                code.name,
            )
            raise ConnectionError(f"DescribeEndpoints refused: {code.name}")
        if answer.raft_stream_port <= 0:
            return None
        host = answer.raft_stream_host
        if host in WILDCARD_HOSTS:
            host = address.rpartition(":")[0].strip("[]")
        return host, answer.raft_stream_port

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        for channel, _ in self._discovery.values():
            await channel.close()
        self._channels.clear()
        self._discovery.clear()
        self._stubs.clear()
