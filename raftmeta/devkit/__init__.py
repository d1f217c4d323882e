"""Local clusters of real processes, for ``raftmeta dev``, the demo, the fault campaign, the
process tests and the benchmarks.

``cluster`` is the supervisor: it formats and configures a quorum of ``raftmeta serve`` processes
(and ``raftmeta broker`` processes beside them) under one directory, starts, kills and stops them.
``parent`` makes every such child end with the process that started it; ``ports`` finds free ports
on 127.0.0.1. ``spark_cluster`` runs a Spark standalone master and workers from the installed
pyspark (``raftmeta spark-cluster``, and the audit's cluster tests). ``demo`` is the machinery of
``raftmeta demo`` (its steps, progress display, process book, Spark audit) and ``chaos`` the fault
campaign of ``raftmeta chaos`` (faults, the Raft-link proxy, the workload, its history and checker).

This room sits just below the command line: the ``dev``, ``demo``, ``chaos`` and ``spark-cluster``
commands in :mod:`raftmeta.cli` call into it, and it may import the admin client, the broker, the
server and what lies below them, never the command line (it runs raftmeta's commands as child
processes, the way an operator types them).
"""
