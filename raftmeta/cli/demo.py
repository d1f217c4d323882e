"""``raftmeta demo``: the whole product in one command.

A three-node quorum of ``raftmeta serve`` processes and six brokers on three racks; three
topics; a broker killed and brought back so leadership is skewed; a snapshot; the Spark audit
that shows the skew and plans the fix; the preferred election that applies it; a second
snapshot and audit that show leadership balanced; a seventh broker joining empty on a new rack,
which that audit finds and plans replica moves for; ``reassign-partitions --execute`` and
``--verify`` of the plan; a last audit with every broker's replicas within the threshold;
everything stopped. ``--tls`` runs all of it over mutual TLS: every controller, broker and tool
with its own certificate from a throwaway CA (``raftmeta dev --tls``'s), the tools with the
admin's client properties file; the audit reads snapshot files, so it is the same either way.
``--simulated`` runs the consensus core alone in the seeded simulator instead (no processes,
no Java).

This module is the command line; the demo itself is :mod:`raftmeta.devkit.demo`, which starts
``serve`` and ``broker`` processes through :mod:`raftmeta.devkit.cluster` and runs
``leader-election``, ``reassign-partitions`` and ``log export`` as an operator would, as child
commands.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from raftmeta.cli.errors import CommandLineError


def register(commands: Any) -> None:
    demo = commands.add_parser(
        "demo",
        help="run a quorum and brokers through a broker failure, audit and rebalance them",
        description="Start a three-node quorum and 6 brokers on 3 racks, create 3 topics of "
        "50 partitions, kill -9 a broker and bring it back (leadership is now skewed), audit a "
        "snapshot with Spark, run the preferred election the audit plans, add a 7th broker on a "
        "new rack, audit again, move replicas onto it with the audit's reassignment plan, "
        "audit once more, and stop everything. Ctrl-C stops every process it started. Takes "
        "one to three minutes.",
    )
    demo.add_argument(
        "--data-dir", type=Path, help="an empty or new directory (default: a fresh temporary one)"
    )
    demo.add_argument(
        "--simulated", action="store_true", help="run the consensus core in the simulator instead"
    )
    demo.add_argument("--seed", type=int, default=2026, help="seed of the --simulated run")
    demo.add_argument(
        "--tls",
        action="store_true",
        help="run every node, broker and tool over mutual TLS, with a throwaway CA and "
        "certificates under DATA_DIR/tls (as `raftmeta dev --tls`)",
    )
    demo.set_defaults(handler=run_from_args)


def run_from_args(args: argparse.Namespace) -> int:
    """The ``raftmeta demo`` command: the live demo, or the simulated one."""
    if args.simulated:
        from raftmeta.devkit.demo.errors import DemoFailed
        from raftmeta.devkit.demo.simulated import run_simulated_demo

        try:
            return run_simulated_demo(args.seed)
        except DemoFailed as failure:
            raise CommandLineError(str(failure)) from None
    from raftmeta.devkit.demo.runner import run_live_demo

    return run_live_demo(args.data_dir, tls=args.tls)
