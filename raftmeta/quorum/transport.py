"""The transport seam: how a ``RaftNode`` exchanges the core's messages without owning a socket.

Two small protocols, in the spirit of Kafka's ``NetworkChannel``:

* outbound, :class:`RaftChannel`: the node sends a request to a peer and gets the answer
  back (or nothing, and the core resends on its own timers). :class:`Connect` opens one once
  the node knows its cluster and its voters' addresses;
* inbound, :class:`RaftEndpoint`: a transport's server hands each request it receives to the
  node (``handle_request``) and relays the answer, and asks it to describe the quorum.

``raftmeta.quorum.peers`` (client side) and ``raftmeta.quorum.raft_service`` (server side) are
the gRPC implementation; ``raftmeta.quorum.stream`` is the framed one on long-lived TCP
connections (``controller.quorum.transport``); tests plug in an in-memory one. The node and
the services all depend on this module, never on each other, so there is no import circle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from raftmeta.raft.core import QuorumDescription
from raftmeta.raft.membership import Membership
from raftmeta.raft.messages import Request, Response
from raftmeta.raft.voter_change import VoterChangeResult
from raftmeta.raft.voters import ReplicaKey, Voter


class PeerDownError(ConnectionError):
    """Raised by :meth:`RaftChannel.call` instead of returning ``None`` when the peer's end
    closed or refused the connection, as its OS does once its process died: the node tells
    the core, and a follower whose leader this is campaigns without waiting out the fetch
    timeout. A timeout says nothing of the kind (the peer may be slow or cut off)."""


class RaftChannel(Protocol):
    """A node's outbound calls to the other voters."""

    async def call(self, destination: int, request: Request) -> Response | None:
        """Send ``request`` to node ``destination`` and return its answer, or ``None`` when
        none came (unreachable, timed out, damaged, or from another cluster); a channel
        that can tell a closed or refused connection from the rest raises
        :class:`PeerDownError` for it.

        A failed call is not retried here: the core already resends on its own timers, and
        a second retry policy would only fight it."""
        ...

    def heard_from(self, peer_id: int) -> None:
        """Node ``peer_id`` just called this node, so it is up: a connection to it that is
        waiting out a reconnect backoff may try again at once."""
        ...

    async def close(self) -> None:
        """Release the connections; the node makes no call after this."""
        ...


class Connect(Protocol):
    """Opens the channel of node ``local_id``, in cluster ``cluster_id``, to the voters at
    ``addresses`` (``host:port`` by node id; the node's own entry is not dialled)."""

    def __call__(
        self,
        local_id: int,
        cluster_id: str,
        addresses: Mapping[int, str],
        request_timeout_ms: int,
    ) -> RaftChannel: ...


class RaftEndpoint(Protocol):
    """What a transport's server delivers inbound requests to; ``RaftNode`` is one."""

    @property
    def node_id(self) -> int: ...

    @property
    def cluster_id(self) -> str:
        """The cluster the node's directory belongs to; requests from others are refused."""
        ...

    @property
    def voter_addresses(self) -> Mapping[int, str]:
        """Every voter's ``host:port`` as the node dials it, to tell callers where the
        leader is."""
        ...

    def heard_from(self, peer_id: int) -> None:
        """Node ``peer_id`` contacted this node outside a Raft request (it asked where the
        node serves the Raft stream, as a node does when it starts): it is up."""
        ...

    async def handle_request(self, sender: int, request: Request) -> Response:
        """The core's answer to ``request`` from node ``sender``.

        Raises ``ConnectionError`` when no answer will come (the node is not running, or a
        newer request from the same peer superseded this one) and ``TimeoutError`` when
        the core did not answer in time."""
        ...

    def submit_request(
        self,
        sender: int,
        request: Request,
        answer: Callable[[Response | BaseException], None],
    ) -> Callable[[], None]:
        """Hand ``request`` in without awaiting: ``answer`` is called once, on the event loop,
        with the core's answer or the exception :meth:`handle_request` would raise (raised
        here at once when the node is not running). Returns a function that withdraws the
        request. A FetchSnapshot answer's chunk is not filled in: use
        :meth:`handle_request` for those."""
        ...

    def describe_quorum(self) -> QuorumDescription:
        """The leader's view of the voters' and observers' progress, its times in wall-clock
        milliseconds. Raises ``NotLeaderError`` on a node that does not lead and
        ``ConnectionError`` on one that is not running."""
        ...

    @property
    def membership(self) -> Membership:
        """The node's kraft.version and voter set, endpoints included (KIP-853). Raises
        ``ConnectionError`` on a node that is not running."""
        ...

    async def add_voter(self, voter: Voter, timeout_ms: int) -> VoterChangeResult:
        """AddRaftVoter on this node (it must lead); answered once the change commits or
        ``timeout_ms`` passes (REQUEST_TIMED_OUT)."""
        ...

    async def remove_voter(self, key: ReplicaKey, timeout_ms: int) -> VoterChangeResult:
        """RemoveRaftVoter, as ``add_voter``."""
        ...

    async def update_voter(self, voter: Voter, timeout_ms: int) -> VoterChangeResult:
        """UpdateRaftVoter (a voter's new endpoints), as ``add_voter``."""
        ...

    async def upgrade_to_dynamic(
        self, timeout_ms: int, *, validate_only: bool = False
    ) -> VoterChangeResult:
        """kraft.version 0 -> 1 (the static voters become the first VotersRecord), as
        ``add_voter``; ``validate_only`` checks without writing."""
        ...
