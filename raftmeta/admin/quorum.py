"""Who leads the quorum, asked over the Raft service's DescribeQuorum: the leader's view of
every voter's and observer's progress, as ``kafka-metadata-quorum describe`` shows it.

Only the leader tracks replication progress, so the question goes to every bootstrap server and
the leader's answer is the one kept; a non-leader's answer only names who leads (and where, which
is then asked too). The admin client's Kafka transport builds the same values from Kafka's
DescribeQuorum answer, so both print through the same code. ``raftmeta quorum describe`` prints
the answer; ``raftmeta dev``, the demo,
the fault campaign and the tests wait on it for a leader.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import grpc

from raftmeta.channel import unreachable_reason
from raftmeta.errors import ErrorCode
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from raftmeta.security.listener import secure_channel_credentials, sync_channel
from raftmeta.security.tls import TlsSettings

UNKNOWN = -1
DEFAULT_TIMEOUT_S = 3.0
"""How long each bootstrap server gets to answer unless ``request.timeout.ms`` says."""


class DescribeError(Exception):
    """No server gave the leader's view; the message is one line for the terminal."""


@dataclass(frozen=True, slots=True)
class Replica:
    """One voter or observer as the leader last heard from it; -1 where it does not know."""

    node_id: int
    log_end_offset: int
    last_fetch_timestamp: int
    last_caught_up_timestamp: int
    directory_id: str = ""
    """KIP-853's directory id; empty when the leader does not know it."""


@dataclass(frozen=True, slots=True)
class QuorumInfo:
    """The leader's view of the quorum at ``high_watermark``."""

    cluster_id: str
    leader_id: int
    leader_epoch: int
    high_watermark: int
    voters: tuple[Replica, ...]
    observers: tuple[Replica, ...]
    kraft_version: int = 0
    """1: a dynamic quorum, whose voters are shown with their directory ids and endpoints."""
    endpoints: tuple[tuple[int, str], ...] = ()
    """(voter id, NAME://host:port) for every endpoint of every voter (a dynamic quorum)."""

    @property
    def dynamic(self) -> bool:
        return self.kraft_version >= 1

    @property
    def leader(self) -> Replica | None:
        return next((v for v in self.voters if v.node_id == self.leader_id), None)

    def lag(self, replica: Replica) -> int:
        """Records behind the leader's log end; -1 while the replica's end is unknown."""
        leader = self.leader
        if leader is None or replica.log_end_offset < 0 or leader.log_end_offset < 0:
            return UNKNOWN
        return max(0, leader.log_end_offset - replica.log_end_offset)

    @property
    def followers(self) -> tuple[Replica, ...]:
        return tuple(v for v in self.voters if v.node_id != self.leader_id)

    @property
    def max_follower_lag(self) -> int:
        lags = [self.lag(f) for f in self.followers]
        return max(lags, default=0)

    @property
    def max_follower_lag_time_ms(self) -> int:
        """How long the follower furthest behind has not been caught up, as the leader last
        saw; -1 if a follower was never caught up."""
        leader = self.leader
        if leader is None or leader.last_caught_up_timestamp < 0:
            return UNKNOWN
        times = [f.last_caught_up_timestamp for f in self.followers]
        if not times:
            return 0
        if min(times) < 0:
            return UNKNOWN
        return max(0, leader.last_caught_up_timestamp - min(times))


def _split_servers(bootstrap: str) -> list[str]:
    servers = [s.strip() for s in bootstrap.split(",") if s.strip()]
    if not servers:
        raise DescribeError("--bootstrap-server needs at least one host:port")
    return servers


def _ask(
    server: str,
    cluster_id: str,
    timeout_s: float,
    credentials: grpc.ChannelCredentials | None = None,
) -> pb.DescribeQuorumResponse:
    with sync_channel(server, credentials) as channel:
        stub = pb_grpc.RaftStub(channel)
        response = stub.DescribeQuorum(
            pb.DescribeQuorumRequest(cluster_id=cluster_id), timeout=timeout_s
        )
        # The stubs are typed for both flavours of channel; this one is synchronous.
        assert isinstance(response, pb.DescribeQuorumResponse)
        return response


def _replicas(states: Sequence[pb.ReplicaState]) -> tuple[Replica, ...]:
    return tuple(
        Replica(
            s.replica_id,
            s.log_end_offset,
            s.last_fetch_timestamp,
            s.last_caught_up_timestamp,
            s.replica_directory_id,
        )
        for s in states
    )


def describe_quorum(
    bootstrap: str,
    cluster_id: str,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    tls: TlsSettings | None = None,
) -> QuorumInfo:
    """Ask each bootstrap server in turn until one answers as the leader (over TLS with
    ``tls``'s credentials when given)."""
    credentials = secure_channel_credentials(tls)
    problems: list[str] = []
    named_leader: tuple[int, int] | None = None
    servers = _split_servers(bootstrap)
    for server in servers:
        try:
            response = _ask(server, cluster_id, timeout_s, credentials)
        except grpc.RpcError as error:
            code = error.code() if isinstance(error, grpc.Call) else None
            reason = code.name if code is not None else "no answer"
            if code is grpc.StatusCode.UNAVAILABLE and isinstance(error, grpc.Call):
                # "unreachable (connection refused)", "(host not found)": the words the admin
                # commands use for the same failure.
                said = unreachable_reason(error.details() or "")
                reason = said.partition(" (")[2].rstrip(")") or reason
            problems.append(f"cannot reach {server} ({reason})")
            continue
        error_code = ErrorCode(response.error_code)
        if error_code is ErrorCode.NONE:
            return QuorumInfo(
                response.cluster_id or cluster_id,
                response.leader_id,
                response.leader_epoch,
                response.high_watermark,
                _replicas(response.voters),
                _replicas(response.observers),
                response.kraft_version,
                tuple(
                    (voter.voter_id, f"{e.name}://{_host_port(e.host, e.port)}")
                    for voter in response.voter_endpoints
                    for e in voter.endpoints
                ),
            )
        if error_code is ErrorCode.INCONSISTENT_CLUSTER_ID:
            if cluster_id:
                problems.append(f"{server} belongs to a cluster other than {cluster_id}")
            else:
                problems.append(f"{server} needs the cluster id: pass --cluster-id")
        elif error_code is ErrorCode.NOT_LEADER_OR_FOLLOWER:
            if response.leader_id >= 0:
                named_leader = (response.leader_id, response.leader_epoch)
            endpoint = response.leader_endpoint
            if endpoint and endpoint not in servers and len(servers) < 16:
                servers.append(endpoint)  # follow the leader it names, once
            problems.append(f"{server} does not lead")
        else:
            problems.append(f"{server} answered {error_code.name}")
    if named_leader is not None:
        leader_id, epoch = named_leader
        raise DescribeError(
            f"node {leader_id} leads epoch {epoch} but is not among the bootstrap servers; "
            "list its address too"
        )
    raise DescribeError("; ".join(problems))


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def wait_for_leader(
    bootstrap: str,
    cluster_id: str,
    deadline_s: float,
    *,
    give_up: Callable[[], bool] = lambda: False,
    tls: TlsSettings | None = None,
) -> QuorumInfo:
    """Poll until some bootstrap server answers as the leader; raise at the deadline or as
    soon as ``give_up`` says waiting is pointless (a node died, the user pressed Ctrl-C)."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            return describe_quorum(bootstrap, cluster_id, timeout_s=1.0, tls=tls)
        except DescribeError as error:
            if give_up():
                raise
            if time.monotonic() >= deadline:
                raise DescribeError(f"no leader within {deadline_s:g} s: {error}") from None
        time.sleep(0.1)
