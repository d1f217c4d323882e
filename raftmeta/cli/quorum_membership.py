"""``raftmeta quorum add-controller`` and ``remove-controller``: change a dynamic quorum's
voters (KIP-853), as ``kafka-metadata-quorum add-controller`` / ``remove-controller`` do.

``add-controller`` is run with the joining controller's own configuration: its node id, the
directory id its ``metadata.log.dir`` was formatted with and its CONTROLLER endpoint are what
the leader records, and ``controller.quorum.bootstrap.servers`` says where to find the quorum.
The controller must already be running as an observer: the leader adds it only once it has
caught up, so a REQUEST_TIMED_OUT for that reason (or for a change still committing) is
retried until ``--timeout``.

The leader is found by asking the servers given, following the leader any of them names.

Both changes are safe to retry. A change the leader timed out on may still commit later (as in
Kafka), so a retried ``add-controller`` can meet DUPLICATE_VOTER and a retried
``remove-controller`` VOTER_NOT_FOUND. The leader's codes stay Kafka's; the tool then reads the
leader's voter set (DescribeQuorum) and, when it already is what was asked (the same id,
directory id and endpoints among the voters; the id no longer among them), reports success,
saying that the change had been made before.
Calls go over TLS with the credentials of ``--command-config`` (``security.protocol=SSL`` and
the ``ssl.*`` keys) and carry its ``bearer.token``: the leader authorizes voter changes
(ALTER on the CLUSTER) for the principal these name.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import grpc

from raftmeta.errors import ErrorCode
from raftmeta.quorum.raft_service import ERROR_MESSAGE_KEY
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from raftmeta.security.listener import sync_channel

RETRY_PAUSE_S = 0.2


class VoterChangeError(Exception):
    """The change was refused or could not be made; the message is one line for stderr."""


@dataclass(frozen=True, slots=True)
class VoterClient:
    """How the tool reaches the controllers: over TLS with ``credentials`` (plaintext when
    None), naming itself with ``bearer_token`` when one is given."""

    credentials: grpc.ChannelCredentials | None = None
    bearer_token: str | None = None

    def channel(self, server: str) -> grpc.Channel:
        return sync_channel(server, self.credentials)

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        if self.bearer_token is None:
            return ()
        return (("authorization", f"Bearer {self.bearer_token}"),)


PLAINTEXT = VoterClient()


@dataclass(frozen=True, slots=True)
class ChangeOutcome:
    leader_endpoint: str
    attempts: int
    message: str = ""
    made_before: bool = False
    """The voters already were as asked (an earlier attempt's change committed)."""


VoterChangeRequest = (
    pb.AddRaftVoterRequest | pb.RemoveRaftVoterRequest | pb.UpdateKRaftVersionRequest
)


def _call(
    client: VoterClient, server: str, request: VoterChangeRequest, timeout_s: float
) -> pb.VoterChangeResponse:
    with client.channel(server) as channel:
        stub = pb_grpc.RaftStub(channel)
        method: Any
        if isinstance(request, pb.AddRaftVoterRequest):
            method = stub.AddRaftVoter
        elif isinstance(request, pb.RemoveRaftVoterRequest):
            method = stub.RemoveRaftVoter
        else:
            method = stub.UpdateKRaftVersion
        answer = method(request, timeout=timeout_s, metadata=client.metadata)
        assert isinstance(answer, pb.VoterChangeResponse)
        return answer


def find_cluster_id(servers: list[str], timeout_s: float, client: VoterClient = PLAINTEXT) -> str:
    """The cluster id the servers answer DescribeQuorum with (any controller names it)."""
    problems = []
    for server in servers:
        try:
            with client.channel(server) as channel:
                describe: Any = pb_grpc.RaftStub(channel).DescribeQuorum  # with_call: untyped
                answer, call = describe.with_call(
                    pb.DescribeQuorumRequest(), timeout=timeout_s, metadata=client.metadata
                )
        except grpc.RpcError as error:
            code = error.code() if isinstance(error, grpc.Call) else None
            problems.append(f"cannot reach {server} ({code.name if code else 'no answer'})")
            continue
        assert isinstance(answer, pb.DescribeQuorumResponse)
        if answer.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED:
            told = dict(call.trailing_metadata() or ()).get(ERROR_MESSAGE_KEY, "")
            raise VoterChangeError(f"CLUSTER_AUTHORIZATION_FAILED: {told}".rstrip(": "))
        if answer.cluster_id:
            return answer.cluster_id
        leader = answer.leader_endpoint
        if leader and leader not in servers:
            servers.append(leader)
        problems.append(f"{server} did not name its cluster")
    raise VoterChangeError("; ".join(problems) or "no server to ask")


def change_voters(
    servers: list[str],
    cluster_id: str,
    request: VoterChangeRequest,
    deadline_s: float,
    client: VoterClient = PLAINTEXT,
) -> ChangeOutcome:
    """Send ``request`` to the leader (following NOT_LEADER_OR_FOLLOWER answers) and retry
    REQUEST_TIMED_OUT until ``deadline_s`` seconds pass; raise ``VoterChangeError`` with the
    leader's code and message otherwise."""
    deadline = time.monotonic() + deadline_s
    candidates = list(servers)
    attempts = 0
    last_problem = "no server answered"
    index = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise VoterChangeError(f"gave up after {deadline_s:g} s: {last_problem}")
        server = candidates[index % len(candidates)]
        attempts += 1
        try:
            answer = _call(client, server, request, max(0.5, remaining))
        except grpc.RpcError as error:
            code = error.code() if isinstance(error, grpc.Call) else None
            last_problem = f"cannot reach {server} ({code.name if code else 'no answer'})"
            index += 1
            time.sleep(min(RETRY_PAUSE_S, max(0.0, deadline - time.monotonic())))
            continue
        error_code = _code(answer.error_code)
        if error_code is ErrorCode.NONE:
            return ChangeOutcome(server, attempts, answer.error_message)
        message = f"{error_code.name}: {answer.error_message}".rstrip(": ")
        if error_code is ErrorCode.NOT_LEADER_OR_FOLLOWER:
            last_problem = f"{server} does not lead"
            endpoint = answer.leader_endpoint
            if endpoint and endpoint != server:
                if endpoint not in candidates:
                    candidates.append(endpoint)
                index = candidates.index(endpoint)
                continue
            index += 1
        elif error_code is ErrorCode.REQUEST_TIMED_OUT:
            last_problem = message
        elif _already_as_asked(client, server, request, error_code, max(0.5, remaining)):
            return ChangeOutcome(server, attempts, answer.error_message, made_before=True)
        else:
            raise VoterChangeError(message)
        time.sleep(min(RETRY_PAUSE_S, max(0.0, deadline - time.monotonic())))


def _already_as_asked(
    client: VoterClient,
    server: str,
    request: VoterChangeRequest,
    error_code: ErrorCode,
    timeout_s: float,
) -> bool:
    """Whether a refusal only says the change was made before: DUPLICATE_VOTER for an add
    whose voter (id, directory id and endpoints) is already in the leader's set, or
    VOTER_NOT_FOUND for a remove whose voter id is no longer in it. The set is the leader's
    committed one: it refuses every change with REQUEST_TIMED_OUT while one is pending."""
    adding = isinstance(request, pb.AddRaftVoterRequest)
    removing = isinstance(request, pb.RemoveRaftVoterRequest)
    if not (
        (adding and error_code is ErrorCode.DUPLICATE_VOTER)
        or (removing and error_code is ErrorCode.VOTER_NOT_FOUND)
    ):
        return False
    try:
        with client.channel(server) as channel:
            answer = pb_grpc.RaftStub(channel).DescribeQuorum(
                pb.DescribeQuorumRequest(cluster_id=request.cluster_id),
                timeout=timeout_s,
                metadata=client.metadata,
            )
    except grpc.RpcError:
        return False
    assert isinstance(answer, pb.DescribeQuorumResponse)
    if answer.error_code != ErrorCode.NONE:
        return False
    voters = list(answer.voter_endpoints)
    if isinstance(request, pb.AddRaftVoterRequest):
        return any(_same_voter(voter, request.voter) for voter in voters)
    assert isinstance(request, pb.RemoveRaftVoterRequest)
    return all(voter.voter_id != request.voter_id for voter in voters)


def _same_voter(one: pb.Voter, other: pb.Voter) -> bool:
    def endpoints(voter: pb.Voter) -> set[tuple[str, str, int]]:
        return {(e.name, e.host, e.port) for e in voter.endpoints}

    return (
        one.voter_id == other.voter_id
        and one.directory_id == other.directory_id
        and endpoints(one) == endpoints(other)
    )


def _code(value: int) -> ErrorCode:
    try:
        return ErrorCode(value)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR


def upgrade_kraft_version(
    servers: list[str],
    level: int,
    *,
    validate_only: bool,
    timeout_s: float,
    client: VoterClient = PLAINTEXT,
) -> str:
    """kraft.version ``level`` through the leader (``features upgrade --feature
    kraft.version=1``); returns the leader's one-line account."""
    cluster_id = find_cluster_id(list(servers), min(timeout_s, 5.0), client)
    request = pb.UpdateKRaftVersionRequest(
        cluster_id=cluster_id,
        kraft_version=level,
        timeout_ms=int(min(timeout_s, 60.0) * 1000),
        validate_only=validate_only,
    )
    return change_voters(servers, cluster_id, request, timeout_s, client).message
