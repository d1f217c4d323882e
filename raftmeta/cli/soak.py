"""``raftmeta soak``: the simulator's seeded fault schedules against the consensus core."""

from __future__ import annotations

import argparse
from typing import Any


def register(commands: Any) -> None:
    soak = commands.add_parser("soak", help="run seeded fault schedules against the core")
    soak.add_argument("--start", type=int, default=0, help="first seed")
    soak.add_argument("--count", type=int, default=1000, help="how many seeds")
    soak.add_argument("--seed", type=int, help="replay one seed")
    soak.add_argument("--trace", action="store_true", help="print the event trace")
    soak.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from raftmeta.sim import soak

    forwarded = ["--start", str(args.start), "--count", str(args.count)]
    if args.seed is not None:
        forwarded += ["--seed", str(args.seed)]
    if args.trace:
        forwarded.append("--trace")
    return soak.main(forwarded)
