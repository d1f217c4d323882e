"""The quorum runtime: a consensus core on a real disk, driven by asyncio, and its embedding
API (``RaftClient`` and its listener), as Kafka's ``raft`` module or hashicorp's ``Raft`` +
``FSM``.

The node owns no socket. It talks through the transport seam in ``transport`` (Kafka's
``NetworkChannel``); the gRPC implementation is ``peers`` (outbound), ``raft_service``
(inbound) and ``wire`` (protobuf conversion), and ``grpc_server`` gives a composition root
the server to run beside the node, with its own services on the same port. ``stream`` carries
the same messages as frames on one long-lived connection per peer (the default, see
``transport_choice``); both servers pass every request through ``edge``'s checks.

May import the consensus core (``raftmeta.raft``), storage, ``errors``, ``config`` and the
generated gRPC stubs; never the controller, policy, the server or the clients.
"""

from raftmeta.quorum.client import Listener, RaftClient, SnapshotSource
from raftmeta.quorum.grpc_server import RaftServer, Register, serve_raft
from raftmeta.quorum.node import Application, NodeStoppedError, RaftNode
from raftmeta.quorum.peers import Peers
from raftmeta.quorum.settings import NodeSettings
from raftmeta.quorum.transport import Connect, RaftChannel, RaftEndpoint
from raftmeta.raft.core import NotLeaderError

__all__ = [
    "Application",
    "Connect",
    "Listener",
    "NodeSettings",
    "NodeStoppedError",
    "NotLeaderError",
    "Peers",
    "RaftChannel",
    "RaftClient",
    "RaftEndpoint",
    "RaftNode",
    "RaftServer",
    "Register",
    "SnapshotSource",
    "serve_raft",
]
