"""The gRPC ``Raft`` service: the server side of the gRPC transport, and the node's edge.

Each inbound call is decoded here and checked by :mod:`raftmeta.quorum.edge` (the checks the
stream listener makes too) before the node (a :class:`~raftmeta.quorum.transport.RaftEndpoint`)
sees it: a peer's message is input, never trusted (issue 12). The rule for what a caller gets
back:

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

The voter changes (AddRaftVoter, RemoveRaftVoter, UpdateRaftVoter, UpdateKRaftVersion) change
who decides what is committed, so they are authorized as Kafka's controller authorizes them:
ALTER on the CLUSTER for adding and removing voters and for kraft.version (an UpdateFeatures),
CLUSTER_ACTION on the CLUSTER for UpdateRaftVoter (a voter reporting its own endpoints). The
caller's principal (a bearer token's, else, where client certificates are required, the
certificate's, else ``User:ANONYMOUS``; named by the function every door uses) and the
decision are the node's
:class:`~raftmeta.quorum.identity.VoterChangeAccess`, the one its Admin service authorizes
with, handed in by the composition root; with none every caller is allowed, as on the Admin
service with no authorizer configured. A refused call gets
CLUSTER_AUTHORIZATION_FAILED with a message and changes nothing. One decorator,
:func:`_voter_change`, does this and the cluster-id check for all four.

``DescribeQuorum`` is a peer's (a controller finding the voters, a broker its leader) or an
operator's: with client certificates required, a certificate that names no node needs DESCRIBE
on the CLUSTER (answered CLUSTER_AUTHORIZATION_FAILED otherwise, logged).

``DescribeEndpoints`` tells a peer where the node serves the Raft stream (its RAFT listener),
to any caller whose certificate names a cluster node; a peer asks it once per connection.

A call the node takes is answered when the core emits its response to the calling peer, which
for a Fetch may be up to the fetch max wait later, when the leader gives up waiting for new
records.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Any, NoReturn, Protocol, TypeVar

import grpc

from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.quorum import wire
from raftmeta.quorum.edge import NoAnswer, RaftEdge
from raftmeta.quorum.identity import (
    ANY_CALLER,
    IdentityRule,
    VoterChangeAccess,
    VoterChangeOperation,
)
from raftmeta.quorum.transport import RaftEndpoint
from raftmeta.quorum.voter_changes import new_voter_problem, voter_change_timeout_ms
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC
from raftmeta.raft.core import NotLeaderError
from raftmeta.raft.voter_change import VoterChangeResult
from raftmeta.raft.voters import ReplicaKey
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from raftmeta.security.principal import node_identity, parse_principal

log = logging.getLogger(__name__)

SERVICE_NAME = "raftmeta.raft.v1.Raft"
ERROR_MESSAGE_KEY = "raftmeta-error-message"
"""Trailing metadata key carrying the one-line reason a request was refused at the edge."""

StreamEndpoint = Callable[[], tuple[str, int] | None]
"""Where the node serves the Raft stream (host as bound, port), or None when it does not."""

BrokerIds = Callable[[], Collection[int]]
"""The ids of the brokers registered in the node's committed metadata (none without it)."""

CLUSTER_DENIED = "Cluster authorization failed."
"""The message of a refused voter change, the Admin service's for the same refusal."""


class _ForCluster(Protocol):
    """A voter-change request: each names the cluster it is meant for."""

    @property
    def cluster_id(self) -> str: ...


_Request = TypeVar("_Request", bound=_ForCluster)
_VoterChangeHandler = Callable[["RaftService", _Request, Any], Awaitable[pb.VoterChangeResponse]]


def _voter_change(
    operation: VoterChangeOperation,
) -> Callable[[_VoterChangeHandler[_Request]], _VoterChangeHandler[_Request]]:
    """What every voter-change handler checks before it runs: the caller may perform
    ``operation`` on the CLUSTER (else CLUSTER_AUTHORIZATION_FAILED, logged), then the request
    is for this node's cluster (else INCONSISTENT_CLUSTER_ID). Authorization comes first, as in
    Kafka, so that an unauthorized caller learns nothing about the cluster."""

    def wrap(handler: _VoterChangeHandler[_Request]) -> _VoterChangeHandler[_Request]:
        name = handler.__name__

        @functools.wraps(handler)
        async def checked(
            service: RaftService, request: _Request, context: Any
        ) -> pb.VoterChangeResponse:
            refusal = service.voter_change_refusal(name, operation, context)
            if refusal is None:
                refusal = service.foreign_cluster(request.cluster_id)
            if refusal is not None:
                return refusal
            return await handler(service, request, context)

        return checked

    return wrap


class RaftService(pb_grpc.RaftServicer):
    """The typed methods, on decoded protobuf messages. Served through
    :func:`add_raft_service`, which decodes the bytes itself so that undecodable input and
    unexpected failures never reach gRPC as UNKNOWN. The checks before the node are
    :mod:`raftmeta.quorum.edge`'s, shared with the stream listener; with mutual TLS,
    ``identity`` refuses a message whose sender is not the certificate's owner.
    ``stream_endpoint`` tells ``DescribeEndpoints`` where the node's RAFT listener is;
    ``access`` authorizes the voter changes (the access the node's Admin service uses);
    ``broker_ids`` names the registered brokers, whose ids AddRaftVoter refuses."""

    def __init__(
        self,
        node: RaftEndpoint,
        identity: IdentityRule | None = None,
        stream_endpoint: StreamEndpoint | None = None,
        access: VoterChangeAccess | None = None,
        broker_ids: BrokerIds | None = None,
    ) -> None:
        self._node = node
        self._broker_ids = broker_ids
        self._edge = RaftEdge(node, identity)
        self._stream_endpoint = stream_endpoint
        self._access = access if access is not None else ANY_CALLER
        """Who may change the voters; without one, no authorizer (every caller allowed)."""

    @property
    def node_id(self) -> int:
        return self._node.node_id

    def refused(self, sender: object, what: str, reason: str) -> None:
        """Log a refusal once, within the sender's budget."""
        self._edge.refused(sender, what, reason)

    async def _call(self, message: wire.PbRequest, context: Any) -> wire.PbResponse:
        try:
            answer = await self._edge.answer(message, context)
        except NoAnswer as error:
            # No answer will come (superseded, timed out, or shutting down): the caller's
            # core resends on its own timers, so an unavailable call is the honest reply.
            await _abort(context, grpc.StatusCode.UNAVAILABLE, str(error))
        if answer.refusal is not None:
            _tell(context, answer.refusal)
        return answer.response

    async def Vote(self, request: pb.VoteRequest, context: Any) -> pb.VoteResponse:
        response = await self._call(request, context)
        assert isinstance(response, pb.VoteResponse)
        return response

    async def BeginQuorumEpoch(
        self, request: pb.BeginQuorumEpochRequest, context: Any
    ) -> pb.BeginQuorumEpochResponse:
        response = await self._call(request, context)
        assert isinstance(response, pb.BeginQuorumEpochResponse)
        return response

    async def EndQuorumEpoch(
        self, request: pb.EndQuorumEpochRequest, context: Any
    ) -> pb.EndQuorumEpochResponse:
        response = await self._call(request, context)
        assert isinstance(response, pb.EndQuorumEpochResponse)
        return response

    async def Fetch(self, request: pb.FetchRequest, context: Any) -> pb.FetchResponse:
        response = await self._call(request, context)
        assert isinstance(response, pb.FetchResponse)
        return response

    async def FetchSnapshot(
        self, request: pb.FetchSnapshotRequest, context: Any
    ) -> pb.FetchSnapshotResponse:
        response = await self._call(request, context)
        assert isinstance(response, pb.FetchSnapshotResponse)
        return response

    async def DescribeQuorum(
        self, request: pb.DescribeQuorumRequest, context: Any
    ) -> pb.DescribeQuorumResponse:
        node = self._node
        refusal = self.describe_refusal(context)
        if refusal is not None:
            _tell(context, refusal)
            return wire.describe_quorum_error(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
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
            answer = wire.describe_quorum_not_leader(leader, error.epoch, endpoint)
            # Any controller names the voters it knows, so a node that knows only bootstrap
            # servers finds them without first finding the leader.
            membership = node.membership
            answer.kraft_version = membership.kraft_version
            answer.voter_endpoints.extend(wire.voter_to_pb(v) for v in membership.voters)
            return answer
        return wire.describe_quorum_to_pb(description, node.cluster_id, node.membership)

    def describe_refusal(self, context: Any) -> str | None:
        """Why DescribeQuorum is refused (logged; told the caller in the trailing metadata),
        or None: with client certificates required, a node's certificate (a controller
        finding the voters, a broker its leader) or a principal allowed DESCRIBE on the
        cluster may ask; without, anyone."""
        identity = self._edge.identity
        if not identity.enforced:
            return None
        try:
            principal = self._access.caller_principal(context, identity.mapper)
        except KafkaError as error:
            principal, reason = "a caller", error.message
        else:
            if node_identity(parse_principal(principal)) is not None:
                return None
            if self._access.may_describe_quorum(principal):
                return None
            reason = "DescribeQuorum needs Describe on the cluster"
        self.refused(principal, "DescribeQuorum", f"{principal}: {reason}")
        return f"{CLUSTER_DENIED} {principal} may not: {reason}"

    # ------------------------------------------------------------------ voter changes

    def _voter_change_answer(self, result: VoterChangeResult) -> pb.VoterChangeResponse:
        node = self._node
        core_leader = None
        epoch = wire.UNKNOWN
        try:
            node.describe_quorum()
            core_leader = node.node_id
        except NotLeaderError as error:
            core_leader, epoch = error.leader_id, error.epoch
        endpoint = ""
        if result.error is ErrorCode.NOT_LEADER_OR_FOLLOWER and core_leader is not None:
            endpoint = node.voter_addresses.get(core_leader, "")
        return pb.VoterChangeResponse(
            error_code=result.error,
            error_message=result.message,
            current_leader=pb.LeaderIdAndEpoch(
                leader_id=wire.UNKNOWN if core_leader is None else core_leader,
                leader_epoch=epoch,
            ),
            leader_endpoint=endpoint,
        )

    def foreign_cluster(self, cluster_id: str) -> pb.VoterChangeResponse | None:
        """INCONSISTENT_CLUSTER_ID for a voter change meant for another cluster, else None."""
        if cluster_id == self._node.cluster_id:
            return None
        return pb.VoterChangeResponse(
            error_code=ErrorCode.INCONSISTENT_CLUSTER_ID,
            error_message=f"this node belongs to cluster {self._node.cluster_id}",
        )

    def voter_change_refusal(
        self, call: str, operation: VoterChangeOperation, context: Any
    ) -> pb.VoterChangeResponse | None:
        """CLUSTER_AUTHORIZATION_FAILED (or the token's SASL_AUTHENTICATION_FAILED) for a
        caller who may not perform ``operation`` on the CLUSTER, logged; None when allowed."""
        identity = self._edge.identity
        try:
            principal = self._access.caller_principal(
                context, identity.mapper if identity.enforced else None
            )
        except KafkaError as error:
            principal, reason, code = "a caller", error.message, error.code
        else:
            if self._access.may_change_voters(principal, operation):
                return None
            reason = f"{call} needs {operation.value} on the cluster"
            code = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        self.refused(principal, call, f"{principal}: {reason}")
        if code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED:
            reason = f"{CLUSTER_DENIED} {principal} may not: {reason}"
        return pb.VoterChangeResponse(error_code=code, error_message=reason)

    @_voter_change(VoterChangeOperation.ALTER)
    async def AddRaftVoter(
        self, request: pb.AddRaftVoterRequest, context: Any
    ) -> pb.VoterChangeResponse:
        try:
            voter = wire.voter_from_pb(request.voter)
        except (TypeError, ValueError) as error:
            return pb.VoterChangeResponse(
                error_code=ErrorCode.INVALID_REQUEST, error_message=_one_line(str(error))
            )
        problem = new_voter_problem(voter, () if self._broker_ids is None else self._broker_ids())
        if problem is not None:
            return pb.VoterChangeResponse(
                error_code=ErrorCode.INVALID_REQUEST, error_message=problem
            )
        result = await self._node.add_voter(voter, voter_change_timeout_ms(request.timeout_ms))
        return self._voter_change_answer(result)

    @_voter_change(VoterChangeOperation.ALTER)
    async def RemoveRaftVoter(
        self, request: pb.RemoveRaftVoterRequest, context: Any
    ) -> pb.VoterChangeResponse:
        key = ReplicaKey(request.voter_id, wire.directory_from_pb(request.voter_directory_id))
        result = await self._node.remove_voter(key, voter_change_timeout_ms(0))
        return self._voter_change_answer(result)

    @_voter_change(VoterChangeOperation.CLUSTER_ACTION)
    async def UpdateRaftVoter(
        self, request: pb.UpdateRaftVoterRequest, context: Any
    ) -> pb.VoterChangeResponse:
        voter = wire.voter_from_pb(request.voter)
        result = await self._node.update_voter(voter, voter_change_timeout_ms(0))
        return self._voter_change_answer(result)

    @_voter_change(VoterChangeOperation.ALTER)
    async def UpdateKRaftVersion(
        self, request: pb.UpdateKRaftVersionRequest, context: Any
    ) -> pb.VoterChangeResponse:
        current = self._node.membership.kraft_version
        if request.kraft_version > KRAFT_VERSION_DYNAMIC:
            result = VoterChangeResult(
                ErrorCode.UNSUPPORTED_VERSION,
                f"kraft.version {request.kraft_version} is not supported (0 or 1)",
            )
        elif request.kraft_version < current:
            result = VoterChangeResult(
                ErrorCode.INVALID_UPDATE_VERSION, "kraft.version cannot be downgraded"
            )
        else:
            result = await self._node.upgrade_to_dynamic(
                voter_change_timeout_ms(request.timeout_ms), validate_only=request.validate_only
            )
        return self._voter_change_answer(result)

    async def DescribeEndpoints(
        self, request: pb.DescribeEndpointsRequest, context: Any
    ) -> pb.DescribeEndpointsResponse:
        node = self._node
        if request.cluster_id != node.cluster_id:
            self.refused(
                request.replica_id,
                "DescribeEndpoints",
                f"cluster {request.cluster_id!r} is not {node.cluster_id!r}",
            )
            return pb.DescribeEndpointsResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)
        refusal = self._edge.identity.node_refusal(context, "DescribeEndpoints", request.replica_id)
        if refusal is not None:
            _tell(context, refusal)
            return pb.DescribeEndpointsResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        # A peer asks this when it opens a connection, typically just after it started: the
        # link to it may be backing off from its last failure, and should open again now.
        node.heard_from(request.replica_id)
        endpoint = None if self._stream_endpoint is None else self._stream_endpoint()
        if endpoint is None:
            return pb.DescribeEndpointsResponse(error_code=ErrorCode.NONE)
        host, port = endpoint
        return pb.DescribeEndpointsResponse(
            error_code=ErrorCode.NONE, raft_stream_host=host, raft_stream_port=port
        )


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
        "DescribeEndpoints": (
            pb.DescribeEndpointsRequest,
            pb.DescribeEndpointsResponse,
            service.DescribeEndpoints,
        ),
        "AddRaftVoter": (pb.AddRaftVoterRequest, pb.VoterChangeResponse, service.AddRaftVoter),
        "RemoveRaftVoter": (
            pb.RemoveRaftVoterRequest,
            pb.VoterChangeResponse,
            service.RemoveRaftVoter,
        ),
        "UpdateRaftVoter": (
            pb.UpdateRaftVoterRequest,
            pb.VoterChangeResponse,
            service.UpdateRaftVoter,
        ),
        "UpdateKRaftVersion": (
            pb.UpdateKRaftVersionRequest,
            pb.VoterChangeResponse,
            service.UpdateKRaftVersion,
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
