"""The gRPC ``Raft`` service: the server side of the gRPC transport, and the node's edge.

Each inbound call is decoded and checked here before the node (a
:class:`~raftmeta.quorum.transport.RaftEndpoint`) sees it: a peer's message is input, never
trusted (issue 12). The rule for what a caller gets back:

* bytes that do not decode as the method's request: gRPC ``INVALID_ARGUMENT`` with a one-line
  message (there is no request to answer in kind);
* a request that decodes but carries a value no node may act on (an epoch at the int32 limit,
  a negative offset or ``max_bytes``, a node id of -5), or names another cluster: the Raft
  response with Kafka's error code (INVALID_REQUEST, INCONSISTENT_CLUSTER_ID), as the core
  itself answers what it refuses, with the one-line reason in the trailing metadata key
  :data:`ERROR_MESSAGE_KEY`. The range rule is ``raft.validation.message_problem``, written once;
  the core runs it again at the top of ``step``;
* a node that is not running (starting, restarting, stopping): gRPC ``UNAVAILABLE``; peers
  retry on their own timers;
* anything else that goes wrong: gRPC ``INTERNAL`` with one line, and the traceback in the log.

No call ever ends as gRPC UNKNOWN with a Python exception's text. Every refusal is logged once
(rate-limited per sender, see :mod:`raftmeta.quorum.refusals`).

A call the node takes is answered when the core emits its response to the calling peer, which
for a Fetch may be up to the fetch max wait later, when the leader gives up waiting for new
records.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import grpc

from raftmeta.errors import ErrorCode
from raftmeta.quorum import wire
from raftmeta.quorum.identity import IdentityRule
from raftmeta.quorum.refusals import RefusalLog
from raftmeta.quorum.transport import RaftEndpoint
from raftmeta.raft.core import NotLeaderError
from raftmeta.raft.limits import MAX_NODE_ID, node_id_in_range
from raftmeta.raft.messages import Request
from raftmeta.raft.validation import message_problem
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc

log = logging.getLogger(__name__)

SERVICE_NAME = "raftmeta.raft.v1.Raft"
ERROR_MESSAGE_KEY = "raftmeta-error-message"
"""Trailing metadata key carrying the one-line reason a request was refused at the edge."""

_PbIn = TypeVar(
    "_PbIn",
    pb.VoteRequest,
    pb.BeginQuorumEpochRequest,
    pb.EndQuorumEpochRequest,
    pb.FetchRequest,
    pb.FetchSnapshotRequest,
)


class RaftService(pb_grpc.RaftServicer):
    """The typed methods, on decoded protobuf messages. Served through
    :func:`add_raft_service`, which decodes the bytes itself so that undecodable input and
    unexpected failures never reach gRPC as UNKNOWN. With mutual TLS, ``identity`` refuses a
    message whose sender is not the certificate's owner."""

    def __init__(self, node: RaftEndpoint, identity: IdentityRule | None = None) -> None:
        self._node = node
        self._identity = identity or IdentityRule()
        self._refusals = RefusalLog(log, node.node_id)

    @property
    def node_id(self) -> int:
        return self._node.node_id

    def refused(self, sender: object, what: str, reason: str) -> None:
        """Log a refusal once, within the sender's budget."""
        self._refusals.refused(sender, what, reason)

    async def _call(
        self,
        message: _PbIn,
        decode: Callable[[_PbIn], tuple[int, Request]],
        context: Any,
    ) -> wire.PbResponse:
        node = self._node
        sender, request = decode(message)
        what = type(request).__name__
        if message.cluster_id != node.cluster_id:
            foreign = f"cluster {message.cluster_id!r} is not {node.cluster_id!r}"
            self.refused(sender, what, foreign)
            _tell(context, foreign)
            return wire.error_response(type(request), ErrorCode.INCONSISTENT_CLUSTER_ID)
        if self._identity.raft_refusal(context, sender, request, node.voter_addresses):
            return wire.error_response(type(request), ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        reason = _range_problem(sender, request)
        if reason is not None:
            self.refused(sender, what, reason)
            _tell(context, reason)
            return wire.error_response(type(request), ErrorCode.INVALID_REQUEST)
        try:
            response = await node.handle_request(sender, request)
        except (TimeoutError, ConnectionError) as error:
            # No answer will come (superseded, timed out, or shutting down): the caller's
            # core resends on its own timers, so an unavailable call is the honest reply.
            await _abort(context, grpc.StatusCode.UNAVAILABLE, f"no answer: {error}")
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
        # A node that is not running raises ConnectionError: add_raft_service answers it
        # UNAVAILABLE, and the admin service, which calls this too, maps it itself.
        try:
            description = node.describe_quorum()
        except NotLeaderError as error:
            leader = error.leader_id
            endpoint = "" if leader is None else node.voter_addresses.get(leader, "")
            return wire.describe_quorum_not_leader(leader, error.epoch, endpoint)
        return wire.describe_quorum_to_pb(description, node.cluster_id)


def _range_problem(sender: int, request: Request) -> str | None:
    """Why ``request`` from ``sender`` carries a value no node may act on, or None."""
    problem = message_problem(request)
    if problem is not None:
        return problem.reason
    if not node_id_in_range(sender):
        return f"sender {sender} is not a node id (0..{MAX_NODE_ID})"
    return None


async def _abort(context: Any, code: grpc.StatusCode, reason: str) -> NoReturn:
    await context.abort(code, _one_line(reason))
    raise AssertionError("abort returns only by raising")


def _tell(context: Any, reason: str) -> None:
    context.set_trailing_metadata(((ERROR_MESSAGE_KEY, _one_line(reason)),))


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


Method = Callable[[Any, Any], Awaitable[Any]]


def _guarded(service: RaftService, name: str, request_type: type[Any], method: Method) -> Any:
    """A handler for raw request bytes: decode, call ``method``, and map every failure to a
    status with one line (see the module docstring)."""
    node_id = service.node_id

    async def handle(raw: bytes, context: Any) -> Any:
        try:
            message = request_type.FromString(raw)
        except Exception as error:  # protobuf's DecodeError, or any other parse failure
            reason = f"undecodable {request_type.__name__}: {_one_line(str(error), 120)}"
            service.refused(context.peer(), name, reason)
            await _abort(context, grpc.StatusCode.INVALID_ARGUMENT, reason)
        try:
            return await method(message, context)
        except grpc.aio.AbortError:
            raise
        except (ConnectionError, TimeoutError) as error:
            reason = f"node {node_id} is not running: {error}"
            await _abort(context, grpc.StatusCode.UNAVAILABLE, reason)
        except Exception as error:
            log.error("node %d: %s failed", node_id, name, exc_info=error)
            reason = f"node {node_id} could not answer {name} ({type(error).__name__}); see its log"
            await _abort(context, grpc.StatusCode.INTERNAL, reason)

    return handle


def add_raft_service(service: RaftService, server: Any) -> None:
    """Serve ``service`` on ``server`` (a ``grpc.aio`` server that has not started yet)."""
    methods: dict[str, tuple[type[Any], type[Any], Method]] = {
        "Vote": (pb.VoteRequest, pb.VoteResponse, service.Vote),
        "BeginQuorumEpoch": (
            pb.BeginQuorumEpochRequest,
            pb.BeginQuorumEpochResponse,
            service.BeginQuorumEpoch,
        ),
        "EndQuorumEpoch": (
            pb.EndQuorumEpochRequest,
            pb.EndQuorumEpochResponse,
            service.EndQuorumEpoch,
        ),
        "Fetch": (pb.FetchRequest, pb.FetchResponse, service.Fetch),
        "FetchSnapshot": (pb.FetchSnapshotRequest, pb.FetchSnapshotResponse, service.FetchSnapshot),
        "DescribeQuorum": (
            pb.DescribeQuorumRequest,
            pb.DescribeQuorumResponse,
            service.DescribeQuorum,
        ),
    }
    handlers = {
        name: grpc.unary_unary_rpc_method_handler(
            _guarded(service, name, request_type, method),
            request_deserializer=None,
            response_serializer=response_type.SerializeToString,
        )
        for name, (request_type, response_type, method) in methods.items()
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
