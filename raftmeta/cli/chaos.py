"""``raftmeta chaos``: a fault campaign against a local cluster of real processes, checked
Jepsen-style afterwards: no acknowledged write lost, no write reported failed present, the
controllers' logs identical where they overlap, every image equal at equal offsets. The
campaign is :mod:`raftmeta.devkit.chaos`; this module is its command line.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from raftmeta.cli.errors import CommandLineError


def register(commands: Any) -> None:
    from raftmeta.devkit.chaos.faults import DEFAULT_KINDS, KINDS

    chaos = commands.add_parser(
        "chaos",
        help="run a fault campaign against a local cluster and check what it acknowledged",
        description="Start three controllers and three brokers under --dir, write topics from "
        "several clients while faults (" + ", ".join(KINDS) + ") hit the cluster one at a "
        "time, then check every node's files against what the clients were told. Exits 0 "
        "when nothing acknowledged was lost and no check failed, 1 otherwise.",
    )
    chaos.add_argument("--dir", required=True, type=Path, help="an empty or new directory")
    chaos.add_argument("--duration", type=float, default=180.0, help="seconds of faults")
    chaos.add_argument("--seed", type=int, default=0, help="picks the faults and targets")
    chaos.add_argument(
        "--faults",
        default=",".join(DEFAULT_KINDS),
        help="comma-separated fault kinds to draw from (default: all)",
    )
    chaos.add_argument("--workers", type=int, default=4, help="concurrent writing clients")
    chaos.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from raftmeta.devkit.chaos.campaign import Plan, report_lines, run_campaign
    from raftmeta.devkit.chaos.faults import KINDS

    kinds = [kind.strip() for kind in args.faults.split(",") if kind.strip()]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown or not kinds:
        raise CommandLineError(
            f"--faults: unknown kind {', '.join(unknown) or '(none given)'}; "
            f"known: {', '.join(KINDS)}"
        )
    if args.duration <= 0 or args.workers < 1:
        raise CommandLineError("--duration must be above 0 and --workers at least 1")
    directory: Path = args.dir
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise CommandLineError(f"--dir {directory}: must be a new or empty directory")
    plan = Plan(directory, args.seed, args.duration, kinds, args.workers)
    result = asyncio.run(run_campaign(plan, lambda line: print(line, flush=True)))
    lines = report_lines(result, plan)
    (directory / "report.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for line in lines:
        print(line)
    return 0 if result.passed else 1
