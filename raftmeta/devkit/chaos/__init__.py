"""The fault campaign of ``raftmeta chaos``, against real processes, checked Jepsen-style.

``faults`` injects one fault at a time (kill -9, pauses, restarts, damaged segments, loss of
the majority, a full restart, and through ``proxy``, a relay on every Raft link, partitions,
cut links, one-way cuts and latency); ``workload`` writes topics from several clients and
records every operation and what its client was told (``history``); ``checker`` judges every
node's files against that history afterwards; ``campaign`` runs it all. The command line is
:mod:`raftmeta.cli.chaos`.
"""
