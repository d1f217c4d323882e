"""The runtime side of dynamic controller membership (KIP-853): what the node needs around the
core's voter set.

- **Where the log starts**: the membership a node's core starts from is its latest snapshot's
  voter set, else the bootstrap checkpoint ``raftmeta format`` wrote, else the static
  ``controller.quorum.voters``; a node with none of these (formatted with
  ``--no-initial-controllers``) asks ``controller.quorum.bootstrap.servers`` for the voters
  (DescribeQuorum) and fetches the log, whose VotersRecords then decide.
- **Whom to dial**: a dynamic voter's address is the first endpoint of its VotersRecord entry;
  addresses are only ever added or replaced, never forgotten, so a voter an uncommitted change
  removed can still be reached if the change is truncated away.
- **Waiting for a change**: AddRaftVoter and friends answer once the VotersRecord commits, or
  REQUEST_TIMED_OUT when it has not by the caller's deadline (the change may still commit
  later, as in Kafka).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import grpc

from raftmeta.errors import ErrorCode
from raftmeta.quorum import wire
from raftmeta.raft.batch import SnapshotId
from raftmeta.raft.control import KRAFT_VERSION_STATIC
from raftmeta.raft.core import RaftCore
from raftmeta.raft.membership import Membership
from raftmeta.raft.voter_change import VoterChangeResult
from raftmeta.raft.voters import Endpoint, Voter, VoterSet
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from raftmeta.security.listener import aio_channel, secure_channel_credentials
from raftmeta.security.tls import TlsSettings
from raftmeta.storage.membership_files import log_start_membership

log = logging.getLogger(__name__)

CONTROLLER_ENDPOINT = "CONTROLLER"
"""The listener name a voter's endpoint is recorded under (Kafka's default controller
listener name); the Raft and Admin services both serve on it."""


class DiscoveryError(ConnectionError):
    """No bootstrap server told this node who the voters are."""


def endpoint_address(endpoint: Endpoint) -> str:
    host = endpoint.host
    return f"[{host}]:{endpoint.port}" if ":" in host else f"{host}:{endpoint.port}"


def controller_endpoint(host_port: str) -> Endpoint:
    """A ``host:port`` as a voter's CONTROLLER endpoint; ``ValueError`` if it is not one."""
    host, colon, port = host_port.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"'{host_port}' is not host:port")
    return Endpoint(CONTROLLER_ENDPOINT, host, int(port))


def voter_addresses(voters: Iterable[Voter], known: Mapping[int, str]) -> dict[int, str]:
    """``known`` with every voter that names an endpoint dialled there instead."""
    addresses = dict(known)
    for voter in voters:
        if voter.endpoints:
            addresses[voter.node_id] = endpoint_address(voter.endpoints[0])
    return addresses


def static_membership(voters: Mapping[int, str]) -> Membership:
    return Membership(KRAFT_VERSION_STATIC, VoterSet.of(voters))


def starting_membership(
    partition_dir: Path, latest: SnapshotId | None, static_voters: Mapping[int, str]
) -> Membership | None:
    """The membership where the node's log starts; None when it must be discovered."""
    kept = log_start_membership(partition_dir, latest)
    if kept is not None:
        return kept
    return static_membership(static_voters) if static_voters else None


async def discover_membership(
    servers: Sequence[str], cluster_id: str, timeout_s: float, *, tls: TlsSettings | None = None
) -> Membership:
    """The voters, as a bootstrap server's DescribeQuorum reports them (any controller answers
    with its voter set, leader or not). Tries each server until the deadline; over TLS with
    ``tls``'s credentials when given."""
    credentials = secure_channel_credentials(tls)
    if not servers:
        raise DiscoveryError(
            "the directory holds no voter set and controller.quorum.bootstrap.servers is empty"
        )
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    problems: dict[str, str] = {}
    while True:
        for server in servers:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise DiscoveryError(
                    "no bootstrap server named the voters: "
                    + "; ".join(f"{s}: {p}" for s, p in problems.items())
                )
            try:
                return await _ask_voters(server, cluster_id, min(remaining, 2.0), credentials)
            except (grpc.aio.AioRpcError, ValueError, DiscoveryError) as error:
                problems[server] = (
                    str(error.code()) if isinstance(error, grpc.aio.AioRpcError) else str(error)
                )
        await asyncio.sleep(min(0.2, max(0.0, deadline - loop.time())))


async def _ask_voters(
    server: str,
    cluster_id: str,
    timeout_s: float,
    credentials: grpc.ChannelCredentials | None,
) -> Membership:
    async with aio_channel(server, credentials) as channel:
        stub = pb_grpc.RaftStub(channel)
        answer = await stub.DescribeQuorum(
            pb.DescribeQuorumRequest(cluster_id=cluster_id), timeout=timeout_s
        )
    code = wire.error_code(answer.error_code)
    if code not in (ErrorCode.NONE, ErrorCode.NOT_LEADER_OR_FOLLOWER):
        raise DiscoveryError(code.name)
    if not answer.voter_endpoints:
        raise DiscoveryError("it named no voters")
    return wire.membership_from_pb(
        pb.Membership(kraft_version=answer.kraft_version, voters=answer.voter_endpoints)
    )


class VoterChangeWaits:
    """Voter changes appended by this leader, each waiting for its record to commit."""

    def __init__(self) -> None:
        self._waiting: list[tuple[int, int, asyncio.Future[VoterChangeResult]]] = []

    def wait_for(self, result: VoterChangeResult) -> asyncio.Future[VoterChangeResult]:
        """A future that completes with ``result`` once its record commits."""
        assert result.offset is not None and result.epoch is not None
        future: asyncio.Future[VoterChangeResult] = asyncio.get_running_loop().create_future()
        self._waiting.append((result.offset, result.epoch, future))
        return future

    def progressed(self, core: RaftCore) -> None:
        """Complete every change whose record committed; fail those truncated away."""
        still: list[tuple[int, int, asyncio.Future[VoterChangeResult]]] = []
        for offset, epoch, future in self._waiting:
            if future.done():
                continue
            if offset >= core.log.start_offset and (
                offset >= core.log.end_offset or core.log.epoch_at(offset) != epoch
            ):
                future.set_result(
                    VoterChangeResult(
                        ErrorCode.NOT_LEADER_OR_FOLLOWER,
                        "the leader lost its epoch before the change committed; retry",
                    )
                )
            elif core.high_watermark > offset:
                future.set_result(VoterChangeResult(ErrorCode.NONE, "", offset, epoch))
            else:
                still.append((offset, epoch, future))
        self._waiting = still

    def stopped(self) -> None:
        for _, _, future in self._waiting:
            if not future.done():
                future.set_result(
                    VoterChangeResult(ErrorCode.NOT_LEADER_OR_FOLLOWER, "the node stopped")
                )
        self._waiting = []


def timed_out(timeout_ms: int) -> VoterChangeResult:
    return VoterChangeResult(
        ErrorCode.REQUEST_TIMED_OUT,
        f"the voter change did not commit within {timeout_ms} ms; it may still commit",
    )
