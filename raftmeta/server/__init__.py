"""The asyncio node runtime: a consensus core on a real disk, served and fed over gRPC."""

from raftmeta.raft.core import NotLeaderError
from raftmeta.server.client import Listener, RaftClient, SnapshotSource
from raftmeta.server.node import Application, NodeStoppedError, RaftNode
from raftmeta.server.settings import NodeSettings

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
