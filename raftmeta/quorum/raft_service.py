"""The gRPC ``Raft`` service: the server side of the gRPC transport.

Each inbound call is decoded and handed to the node (a
:class:`~raftmeta.quorum.transport.RaftEndpoint`), which steps it into its core. A call is
answered when the core emits its response to the calling peer, which for a Fetch may be up to
the fetch max wait later, when the leader gives up waiting for new records.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import grpc

from raftmeta.errors import ErrorCode
from raftmeta.quorum import wire
from raftmeta.quorum.identity import IdentityRule
from raftmeta.quorum.transport import RaftEndpoint
from raftmeta.raft.core import NotLeaderError
from raftmeta.raft.messages import Request
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

_PbIn = TypeVar(
    "_PbIn",
    pb.VoteRequest,
    pb.BeginQuorumEpochRequest,
    pb.EndQuorumEpochRequest,
    pb.FetchRequest,
    pb.FetchSnapshotRequest,
)


class RaftService(pb_grpc.RaftServicer):
    def __init__(self, node: RaftEndpoint, identity: IdentityRule | None = None) -> None:
        self._node = node
        self._identity = identity or IdentityRule()

    async def _call(
        self,
        message: _PbIn,
        decode: Callable[[_PbIn], tuple[int, Request]],
        context: Any,
    ) -> wire.PbResponse:
        node = self._node
        sender, request = decode(message)
        if message.cluster_id != node.cluster_id:
            log.warning(
                "node %d: %s from node %d of cluster %r, not %r",
                node.node_id,
                type(request).__name__,
                sender,
                message.cluster_id,
                node.cluster_id,
            )
            return wire.error_response(type(request), ErrorCode.INCONSISTENT_CLUSTER_ID)
        if self._identity.raft_refusal(context, sender, request, node.voter_addresses):
            return wire.error_response(type(request), ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        try:
            response = await node.handle_request(sender, request)
        except (TimeoutError, ConnectionError) as error:
            # No answer will come (superseded, timed out, or shutting down): the caller's
            # core resends on its own timers, so an unavailable call is the honest reply.
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"no answer: {error!r}")
            raise AssertionError("abort returns only by raising") from None
        return wire.response_to_pb(response)

    async def Vote(self, request: pb.VoteRequest, context: Any) -> pb.VoteResponse:
        response = await self._call(request, wire.vote_request_from_pb, context)
        assert isinstance(response, pb.VoteResponse)
        return response

    async def BeginQuorumEpoch(
        self, request: pb.BeginQuorumEpochRequest, context: Any
    ) -> pb.BeginQuorumEpochResponse:
        response = await self._call(request, wire.begin_epoch_request_from_pb, context)
        assert isinstance(response, pb.BeginQuorumEpochResponse)
        return response

    async def EndQuorumEpoch(
        self, request: pb.EndQuorumEpochRequest, context: Any
    ) -> pb.EndQuorumEpochResponse:
        response = await self._call(request, wire.end_epoch_request_from_pb, context)
        assert isinstance(response, pb.EndQuorumEpochResponse)
        return response

    async def Fetch(self, request: pb.FetchRequest, context: Any) -> pb.FetchResponse:
        response = await self._call(request, wire.fetch_request_from_pb, context)
        assert isinstance(response, pb.FetchResponse)
        return response

    async def FetchSnapshot(
        self, request: pb.FetchSnapshotRequest, context: Any
    ) -> pb.FetchSnapshotResponse:
        response = await self._call(request, wire.fetch_snapshot_request_from_pb, context)
        assert isinstance(response, pb.FetchSnapshotResponse)
        return response

    async def DescribeQuorum(
        self, request: pb.DescribeQuorumRequest, context: Any
    ) -> pb.DescribeQuorumResponse:
        node = self._node
        # Like Kafka's DescribeQuorum, a request may carry no cluster id: tools ask before
        # they know it. One that names the wrong cluster is still refused.
        if request.cluster_id and request.cluster_id != node.cluster_id:
            return wire.describe_quorum_error(ErrorCode.INCONSISTENT_CLUSTER_ID)
        # A node that is not running raises ConnectionError, which callers map themselves.
        try:
            description = node.describe_quorum()
        except NotLeaderError as error:
            leader = error.leader_id
            endpoint = "" if leader is None else node.voter_addresses.get(leader, "")
            return wire.describe_quorum_not_leader(leader, error.epoch, endpoint)
        return wire.describe_quorum_to_pb(description, node.cluster_id)
