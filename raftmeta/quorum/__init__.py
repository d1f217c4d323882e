"""The quorum runtime: a consensus core on a real disk and a real network, driven by asyncio,
and its embedding API (``RaftClient`` and its listener), as Kafka's ``raft`` module or
hashicorp's ``Raft`` + ``FSM``.

May import the consensus core (``raftmeta.raft``), storage, ``errors`` and the generated gRPC
stubs; never the controller, policy, the server or the clients."""

from raftmeta.quorum.client import Listener, RaftClient, SnapshotSource
from raftmeta.quorum.node import Application, NodeStoppedError, RaftNode
from raftmeta.quorum.settings import NodeSettings
from raftmeta.raft.core import NotLeaderError

__all__ = [
    "Application",
    "Listener",
    "NodeSettings",
    "NodeStoppedError",
    "NotLeaderError",
    "RaftClient",
    "RaftNode",
    "SnapshotSource",
]
