"""``raftmeta quorum describe``: the quorum as its leader sees it, printed the way
``kafka-metadata-quorum describe`` prints it, so operators can read it with the same habits.

Only the leader tracks replication progress, so the question goes to every bootstrap server and
the leader's answer is the one shown; a non-leader's answer only names who leads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import grpc

from raftmeta.admin.quorum import QuorumInfo, Replica
from raftmeta.controller_channel import unreachable_reason
from raftmeta.errors import ErrorCode
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from raftmeta.security.listener import secure_channel_credentials, sync_channel
from raftmeta.security.tls import TlsSettings

DEFAULT_TIMEOUT_S = 3.0
"""How long each bootstrap server gets to answer unless ``request.timeout.ms`` says."""


__all__ = [
    "DEFAULT_TIMEOUT_S",
    "DescribeError",
    "QuorumInfo",
    "Replica",
    "describe_quorum",
    "replication_lines",
    "status_lines",
    "wait_for_leader",
]
"""``QuorumInfo`` and ``Replica`` live in :mod:`raftmeta.admin.quorum` (the admin client's
Kafka transport returns them); they are named here too for the callers of this module."""


class DescribeError(Exception):
    """No server gave the leader's view; the message is one line for the terminal."""


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


def _replica_entries(info: QuorumInfo, replicas: Sequence[Replica], *, voters: bool) -> str:
    """Node ids, or for a dynamic quorum Kafka's (3.9+) entries with directory ids and, for
    voters, endpoints."""
    if not info.dynamic:
        return "[" + ",".join(str(r.node_id) for r in replicas) + "]"
    entries = []
    for replica in replicas:
        entry = f'{{"id": {replica.node_id}, "directoryId": "{replica.directory_id or "-"}"'
        if voters:
            endpoints = ", ".join(f'"{e}"' for n, e in info.endpoints if n == replica.node_id)
            entry += f', "endpoints": [{endpoints}]'
        entries.append(entry + "}")
    return "[" + ", ".join(entries) + "]"


def status_lines(info: QuorumInfo) -> list[str]:
    rows = [
        ("ClusterId", info.cluster_id),
        ("LeaderId", str(info.leader_id)),
        ("LeaderEpoch", str(info.leader_epoch)),
        ("HighWatermark", str(info.high_watermark)),
        ("MaxFollowerLag", str(info.max_follower_lag)),
        ("MaxFollowerLagTimeMs", str(info.max_follower_lag_time_ms)),
        ("CurrentVoters", _replica_entries(info, info.voters, voters=True)),
        ("CurrentObservers", _replica_entries(info, info.observers, voters=False)),
    ]
    return [f"{name + ':':<24}{value}" for name, value in rows]


REPLICATION_COLUMNS = (
    "NodeId",
    "LogEndOffset",
    "Lag",
    "LastFetchTimestamp",
    "LastCaughtUpTimestamp",
    "Status",
)


def replication_lines(info: QuorumInfo) -> list[str]:
    """The leader first, then followers, then observers, as the Kafka tool orders them."""
    ordered: list[tuple[Replica, str]] = []
    if info.leader is not None:
        ordered.append((info.leader, "Leader"))
    ordered += [(f, "Follower") for f in info.followers]
    ordered += [(o, "Observer") for o in info.observers]
    columns: tuple[str, ...] = REPLICATION_COLUMNS
    table: list[tuple[str, ...]] = [
        (
            str(r.node_id),
            str(r.log_end_offset),
            str(info.lag(r)),
            str(r.last_fetch_timestamp),
            str(r.last_caught_up_timestamp),
            status,
        )
        for r, status in ordered
    ]
    if info.dynamic:  # Kafka 3.9's DirectoryId column, after NodeId
        columns = (columns[0], "DirectoryId", *columns[1:])
        table = [
            (row[0], r.directory_id or "-", *row[1:])
            for row, (r, _) in zip(table, ordered, strict=True)
        ]
    table = [columns, *table]
    widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in table
    ]


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
