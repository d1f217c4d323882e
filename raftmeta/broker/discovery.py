"""Finding the controllers from bootstrap servers: the cluster id, voter ids and addresses.

A broker follows the log as a Raft observer, which dials voters by id, but an operator may
only know the controllers' ``host:port``. Raft's DescribeQuorum answers with the cluster id
from any voter; the leader's answer lists every voter id, and a follower's names the leader
and its endpoint. That pins down the leader's address; other ids are matched to the remaining
addresses in order (or, when fewer addresses were given than there are voters, to the leader's)
and marked unconfirmed, and the broker asks where such a voter is when it becomes leader (see
``Broker``). So one bootstrap server is enough, as in Kafka. ``id@host:port`` entries are taken
as given.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

import grpc

from raftmeta.errors import ErrorCode
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from raftmeta.rpc.options import CHANNEL_OPTIONS
from raftmeta.security.listener import aio_channel, secure_channel_credentials
from raftmeta.security.tls import TlsSettings

ASK_TIMEOUT_S = 1.0
"""How long one DescribeQuorum may take: a round never waits longer on a silent host."""
FIRST_RETRY_BACKOFF_S = 0.5
MAX_RETRY_BACKOFF_S = 2.0
"""The pause between rounds that found no leader doubles from the first to this."""


class DiscoveryError(Exception):
    """The quorum could not be found; the message is one line for the terminal."""


@dataclass(frozen=True, slots=True)
class QuorumContact:
    cluster_id: str
    voters: dict[int, str]
    unconfirmed: frozenset[int]
    """Voters whose address was matched by elimination, not named by the quorum."""
    bootstrap_servers: str
    dynamic: bool = False
    """The quorum keeps its voters in its log (kraft.version 1): a broker then follows the
    voters the log names rather than ``voters``, which holds them only as found now."""


def parse_servers(text: str) -> tuple[dict[int, str], list[str]]:
    """Split ``id@host:port`` entries (voters) from plain ``host:port`` ones."""
    named: dict[int, str] = {}
    plain: list[str] = []
    for entry in (item.strip() for item in text.split(",")):
        if not entry:
            continue
        node, at, address = entry.partition("@")
        if at:
            try:
                node_id = int(node)
            except ValueError:
                raise DiscoveryError(f"bad server {entry!r}: expected id@host:port") from None
            named[node_id] = _check_address(address, entry)
        else:
            plain.append(_check_address(entry, entry))
    if not named and not plain:
        raise DiscoveryError("--bootstrap-server needs at least one host:port")
    return named, plain


def _check_address(address: str, entry: str) -> str:
    host, colon, port = address.rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise DiscoveryError(f"bad server {entry!r}: expected host:port")
    return address


async def _ask(
    server: str, timeout_s: float, credentials: grpc.ChannelCredentials | None = None
) -> pb.DescribeQuorumResponse | None:
    async with aio_channel(server, credentials, CHANNEL_OPTIONS) as channel:
        stub = pb_grpc.RaftStub(channel)
        try:
            response = await stub.DescribeQuorum(pb.DescribeQuorumRequest(), timeout=timeout_s)
        except grpc.aio.AioRpcError:
            return None
        assert isinstance(response, pb.DescribeQuorumResponse)
        return response


async def leader_endpoint(
    servers: list[str], timeout_s: float = 1.0, *, tls: TlsSettings | None = None
) -> tuple[int, str] | None:
    """The current leader's id and endpoint as some server names it, if any does."""
    credentials = secure_channel_credentials(tls)
    for server in servers:
        response = await _ask(server, timeout_s, credentials)
        if response is None or response.leader_id < 0:
            continue
        if response.error_code == ErrorCode.NONE:
            return response.leader_id, server
        if response.leader_endpoint:
            return response.leader_id, response.leader_endpoint
    return None


async def discover(
    bootstrap: str,
    timeout_s: float | None = 30.0,
    *,
    tls: TlsSettings | None = None,
    on_retry: Callable[[str, float], None] | None = None,
) -> QuorumContact:
    """Ask the bootstrap servers until the leader's answer names every voter (over TLS with
    ``tls``'s credentials when given).

    Each round asks every server at once, so one unreachable server costs a round at most
    ``ASK_TIMEOUT_S``. After a round that found no leader, ``on_retry`` is told why and how
    long until the next round (the wait doubles up to ``MAX_RETRY_BACKOFF_S``): an operator
    who started a broker against the wrong address hears about it at once, not after the
    deadline. With ``timeout_s`` None the rounds go on until the caller cancels."""
    credentials = secure_channel_credentials(tls)
    named, plain = parse_servers(bootstrap)
    servers = [*named.values(), *plain]
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    problems: dict[str, str] = {}
    backoff_s = FIRST_RETRY_BACKOFF_S
    while True:
        cluster_id = ""
        leader: tuple[int, str] | None = None
        voter_ids: list[int] | None = None
        dynamic = False
        asked: set[str] = set()
        while pending := [server for server in servers if server not in asked]:
            ask_s = ASK_TIMEOUT_S
            if deadline is not None:
                ask_s = min(ask_s, max(0.1, deadline - time.monotonic()))
            responses = await asyncio.gather(
                *(_ask(server, ask_s, credentials) for server in pending)
            )
            asked.update(pending)
            for server, response in zip(pending, responses, strict=True):
                if response is None:
                    problems[server] = "unreachable"
                    continue
                problems.pop(server, None)
                cluster_id = cluster_id or response.cluster_id
                dynamic = dynamic or response.kraft_version >= KRAFT_VERSION_DYNAMIC
                if response.error_code == ErrorCode.NONE:
                    leader = (response.leader_id, server)
                    voter_ids = [voter.replica_id for voter in response.voters]
                elif response.leader_id >= 0 and response.leader_endpoint and leader is None:
                    leader = (response.leader_id, response.leader_endpoint)
                    if response.leader_endpoint not in servers:
                        # Only the leader lists the voters: ask it too, in this same round.
                        servers.append(response.leader_endpoint)
        if cluster_id and voter_ids is not None and leader is not None:
            contact = _match(cluster_id, named, plain, voter_ids, leader, bootstrap)
            return dataclasses.replace(contact, dynamic=dynamic)
        detail = "; ".join(f"{s}: {why}" for s, why in problems.items()) or "no leader yet"
        if deadline is not None and time.monotonic() >= deadline:
            raise DiscoveryError(
                f"cannot find the controller quorum at {','.join(servers)} "
                f"within {timeout_s:g} s ({detail})"
            )
        if on_retry is not None:
            on_retry(
                f"cannot find the controller quorum at {','.join(servers)} ({detail})", backoff_s
            )
        await asyncio.sleep(backoff_s)
        backoff_s = min(backoff_s * 2, MAX_RETRY_BACKOFF_S)


def _match(
    cluster_id: str,
    named: dict[int, str],
    plain: list[str],
    voter_ids: list[int],
    leader: tuple[int, str],
    bootstrap: str,
) -> QuorumContact:
    voters = {node: address for node, address in named.items() if node in voter_ids}
    leader_id, leader_address = leader
    voters[leader_id] = leader_address
    missing_ids = sorted(set(voter_ids) - set(voters))
    spare = [address for address in plain if address not in voters.values()]
    # With fewer addresses than voters, the rest start at the leader's address: wrong, but
    # unconfirmed, so the broker asks where such a voter is once it leads.
    guesses = [*spare, *[leader_address] * (len(missing_ids) - len(spare))]
    voters.update(zip(missing_ids, guesses, strict=False))
    exact = len(missing_ids) == 1 and len(spare) == 1
    unconfirmed = frozenset() if exact else frozenset(missing_ids)
    servers = ",".join(dict.fromkeys([*named.values(), *plain]))
    return QuorumContact(cluster_id, voters, unconfirmed, servers or bootstrap)
