"""The ``raftmeta`` command line.

Every failure a user can cause (a bad flag, a missing file, a bad configuration value) ends
with one line on stderr and a non-zero exit status, never a traceback: 2 for usage and
configuration errors, 1 for everything else.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

USAGE_ERROR = 2
FAILURE = 1


class CommandLineError(Exception):
    def __init__(self, message: str, status: int = FAILURE) -> None:
        super().__init__(message)
        self.status = status


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, not the whole usage text."""

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(f"{self.prog}: {message} (see --help)", USAGE_ERROR)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="raftmeta",
        description="Cluster metadata in a Raft-replicated event log, in the manner of KRaft.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    demo = commands.add_parser(
        "demo", help="run a local quorum through a leader failure and report what happened"
    )
    demo.add_argument("--seed", type=int, default=2026, help="seed of the simulated run")

    commands.add_parser("random-uuid", help="print a new random cluster id")

    format_ = commands.add_parser(
        "format", help="give a node's metadata.log.dir its node id and cluster id"
    )
    format_.add_argument("--config", required=True, type=Path, help="the node's .properties")
    format_.add_argument("--cluster-id", required=True, help="from `raftmeta random-uuid`")
    format_.add_argument(
        "--ignore-formatted",
        action="store_true",
        help="leave an already formatted directory as it is instead of failing",
    )

    log = commands.add_parser("log", help="inspect log segments")
    log_commands = log.add_subparsers(dest="log_command", metavar="ACTION", parser_class=_Parser)
    log_dump = log_commands.add_parser("dump", help="print every batch and record of a log")
    log_dump.add_argument("directory", type=Path, help="metadata.log.dir or its log folder")
    log_dump.add_argument("--json", action="store_true", help="one JSON object per line")

    snapshot = commands.add_parser("snapshot", help="inspect snapshot files")
    snapshot_commands = snapshot.add_subparsers(
        dest="snapshot_command", metavar="ACTION", parser_class=_Parser
    )
    snapshot_dump = snapshot_commands.add_parser("dump", help="print a snapshot's records")
    snapshot_dump.add_argument("file", type=Path, help="a .checkpoint file")
    snapshot_dump.add_argument("--json", action="store_true", help="one JSON object per line")

    soak = commands.add_parser("soak", help="run seeded fault schedules against the core")
    soak.add_argument("--start", type=int, default=0, help="first seed")
    soak.add_argument("--count", type=int, default=1000, help="how many seeds")
    soak.add_argument("--seed", type=int, help="replay one seed")
    soak.add_argument("--trace", action="store_true", help="print the event trace")
    return parser


def _format(args: argparse.Namespace) -> int:
    from raftmeta.config import ConfigError, load_config
    from raftmeta.storage import AlreadyFormattedError, MetadataDir, StorageError

    try:
        config = load_config(args.config)
    except ConfigError as error:
        raise CommandLineError(str(error), USAGE_ERROR) from error
    except OSError as error:
        raise CommandLineError(
            f"cannot read {args.config}: {error.strerror}", USAGE_ERROR
        ) from error
    try:
        properties = MetadataDir.format(
            config.metadata_log_dir,
            config.node_id,
            args.cluster_id,
            ignore_formatted=args.ignore_formatted,
        )
    except AlreadyFormattedError as error:
        raise CommandLineError(
            str(error).replace("pass ignore_formatted", "pass --ignore-formatted")
        ) from error
    except (StorageError, ValueError) as error:
        raise CommandLineError(str(error)) from error
    print(
        f"Formatted {config.metadata_log_dir} for node {properties.node_id} "
        f"of cluster {properties.cluster_id}"
    )
    return 0


def _dump(args: argparse.Namespace) -> int:
    from raftmeta import dump
    from raftmeta.storage import StorageError

    try:
        if args.command == "log":
            entries = dump.dump_log(args.directory)
        else:
            entries = dump.dump_snapshot(args.file)
        dump.render(entries, as_json=args.json, write=print)
    except OSError as error:
        raise CommandLineError(f"{error.filename or args.command}: {error.strerror}") from error
    except StorageError as error:
        raise CommandLineError(str(error)) from error
    return 0


def run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        from raftmeta.demo import run_demo

        return run_demo(args.seed)
    if args.command == "random-uuid":
        from raftmeta.storage.meta_properties import generate_id

        print(generate_id())
        return 0
    if args.command == "format":
        return _format(args)
    if (args.command == "log" and args.log_command == "dump") or (
        args.command == "snapshot" and args.snapshot_command == "dump"
    ):
        return _dump(args)
    if args.command == "soak":
        from raftmeta.sim import soak

        forwarded = ["--start", str(args.start), "--count", str(args.count)]
        if args.seed is not None:
            forwarded += ["--seed", str(args.seed)]
        if args.trace:
            forwarded.append("--trace")
        return soak.main(forwarded)
    parser.print_help(sys.stderr)
    return USAGE_ERROR


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(argv)
    except CommandLineError as error:
        print(str(error), file=sys.stderr)
        return error.status
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
