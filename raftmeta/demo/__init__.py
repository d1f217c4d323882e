"""``raftmeta demo``: the whole product in one command.

A three-node quorum of ``raftmeta serve`` processes and six brokers on three racks; three
topics; a broker killed and brought back so leadership is skewed; a snapshot; the Spark audit
that shows the skew and plans the fix; the preferred election that applies it; a second
snapshot and audit that show the cluster balanced; everything stopped. ``--simulated`` runs
the consensus core alone in the seeded simulator instead (no processes, no Java).

``runner`` runs the ``steps`` in order with a progress display and stops every process it
started (``processes``) however the run ends.
"""

from __future__ import annotations

import argparse


def run_from_args(args: argparse.Namespace) -> int:
    """The ``raftmeta demo`` command: the live demo, or the simulated one."""
    if args.simulated:
        from raftmeta.demo.simulated import run_simulated_demo

        return run_simulated_demo(args.seed)
    import os

    # gRPC's core would log each process start (a fork) while the AdminClient's thread is busy;
    # it reads this when first imported.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    from raftmeta.demo.runner import run_live_demo

    return run_live_demo(args.data_dir)
