"""The pure Raft consensus core: no I/O, no clock, no randomness it was not handed.

Drive a ``RaftCore`` with ``step``/``tick``/``propose`` and execute each ``Ready`` it returns
(persist, send, apply, ``advance``); ``raftmeta.sim`` and ``raftmeta.quorum`` are the two
runtimes that do so. ``core`` holds the roles' transitions; the leader's bookkeeping of its
replicas lives in ``progress`` and the majority arithmetic in ``majority``.

This is the bottom layer: it imports only the standard library, msgpack and the shared
``raftmeta.errors`` codes, never storage, the runtime or anything above.
"""

from raftmeta.raft.batch import Batch, OffsetAndEpoch, SnapshotId, decode_records, make_batch
from raftmeta.raft.config import RaftConfig
from raftmeta.raft.core import AppendResult, NotLeaderError, QuorumDescription, RaftCore
from raftmeta.raft.log import LogInvariantError, RaftLog
from raftmeta.raft.ready import LeaderAndEpoch, Outbound, Ready
from raftmeta.raft.roles import Role
from raftmeta.raft.state import ElectionState

__all__ = [
    "AppendResult",
    "Batch",
    "ElectionState",
    "LeaderAndEpoch",
    "LogInvariantError",
    "NotLeaderError",
    "OffsetAndEpoch",
    "Outbound",
    "QuorumDescription",
    "RaftConfig",
    "RaftCore",
    "RaftLog",
    "Ready",
    "Role",
    "SnapshotId",
    "decode_records",
    "make_batch",
]
