"""raftmeta: cluster metadata kept in a Raft-replicated event log, in the manner of KRaft."""

__version__ = "0.1.0"
