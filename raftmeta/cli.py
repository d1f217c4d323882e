"""The ``raftmeta`` command line."""

from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="raftmeta",
        description="Cluster metadata in a Raft-replicated event log, in the manner of KRaft.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo", help="run a local quorum through a leader failure and report what happened"
    )
    demo.add_argument("--seed", type=int, default=2026, help="seed of the simulated run")
    soak = commands.add_parser("soak", help="run seeded fault schedules against the consensus core")
    soak.add_argument("--start", type=int, default=0, help="first seed")
    soak.add_argument("--count", type=int, default=1000, help="how many seeds")
    soak.add_argument("--seed", type=int, help="replay one seed")
    soak.add_argument("--trace", action="store_true", help="print the event trace")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        from raftmeta.demo import run_demo

        return run_demo(args.seed)
    if args.command == "soak":
        from raftmeta.sim import soak

        forwarded = ["--start", str(args.start), "--count", str(args.count)]
        if args.seed is not None:
            forwarded += ["--seed", str(args.seed)]
        if args.trace:
            forwarded.append("--trace")
        return soak.main(forwarded)
    parser.print_help(sys.stderr)
    return 2
