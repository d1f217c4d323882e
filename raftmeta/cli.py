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
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from raftmeta.config import RaftmetaConfig

USAGE_ERROR = 2
FAILURE = 1


class CommandLineError(Exception):
    def __init__(self, message: str, status: int = FAILURE) -> None:
        super().__init__(message)
        self.status = status


COMMAND_MODULES = (
    "raftmeta.commands.topics",
    "raftmeta.commands.brokers",
    "raftmeta.commands.broker",
    "raftmeta.commands.leader_election",
    "raftmeta.commands.audit",
)
"""Commands that live in their own module: each has ``register(commands)``, which adds its
parser and sets ``handler`` to a function of the parsed arguments returning the exit status."""


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
        "demo",
        help="run a quorum and brokers through a broker failure, audit and rebalance them",
        description="Start a three-node quorum and 6 brokers on 3 racks, create 3 topics of "
        "50 partitions, kill -9 a broker and bring it back (leadership is now skewed), audit a "
        "snapshot with Spark, run the preferred election the audit plans, audit again, and stop "
        "everything. Ctrl-C stops every process it started. Takes one to two minutes.",
    )
    demo.add_argument(
        "--data-dir", type=Path, help="an empty or new directory (default: a fresh temporary one)"
    )
    demo.add_argument(
        "--simulated", action="store_true", help="run the consensus core in the simulator instead"
    )
    demo.add_argument("--seed", type=int, default=2026, help="seed of the --simulated run")

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

    serve = commands.add_parser("serve", help="run one node of the quorum until SIGTERM or Ctrl-C")
    serve.add_argument("--config", required=True, type=Path, help="the node's .properties")
    serve.add_argument(
        "--load-generator",
        type=float,
        metavar="RATE",
        help="testing aid: while this node leads, append RATE numbered records a second and "
        "record each acknowledged one in --acked-log",
    )
    serve.add_argument(
        "--acked-log",
        type=Path,
        help="testing aid: file the load generator appends acknowledged values to "
        "(default: acked.log in metadata.log.dir)",
    )

    dev = commands.add_parser(
        "dev", help="run a local quorum (controllers 3000-3002) and brokers until Ctrl-C"
    )
    dev.add_argument(
        "--data-dir", type=Path, default=Path("raftmeta-dev"), help="where the nodes keep data"
    )
    dev.add_argument(
        "--base-port", type=_port, default=19093, help="node 3000's port; 3001, 3002 the next"
    )
    dev.add_argument(
        "--brokers", type=_count, default=3, help="broker processes, ids 1..N (default 3; 0: none)"
    )
    dev.add_argument(
        "--racks",
        type=_count,
        default=3,
        help="racks rack-1..rack-R, brokers round-robin (default 3; 0: no racks)",
    )

    quorum = commands.add_parser("quorum", help="inspect the Raft quorum")
    quorum_commands = quorum.add_subparsers(
        dest="quorum_command", metavar="ACTION", parser_class=_Parser
    )
    describe = quorum_commands.add_parser(
        "describe", help="the leader's view of the quorum, as kafka-metadata-quorum prints it"
    )
    describe.add_argument(
        "--bootstrap-server",
        required=True,
        metavar="HOST:PORT[,HOST:PORT...]",
        help="one or more voters; the leader among them answers",
    )
    describe.add_argument(
        "--cluster-id", default="", help="the cluster id (printed by `raftmeta dev`)"
    )
    shape = describe.add_mutually_exclusive_group()
    shape.add_argument("--status", action="store_true", help="leader, epoch, lag (the default)")
    shape.add_argument("--replication", action="store_true", help="one row per replica")

    soak = commands.add_parser("soak", help="run seeded fault schedules against the core")
    soak.add_argument("--start", type=int, default=0, help="first seed")
    soak.add_argument("--count", type=int, default=1000, help="how many seeds")
    soak.add_argument("--seed", type=int, help="replay one seed")
    soak.add_argument("--trace", action="store_true", help="print the event trace")

    import importlib

    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            continue
        module.register(commands)
    return parser


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65533:
        raise argparse.ArgumentTypeError(f"port {port} is out of range (1 to 65533)")
    return port


def _count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= count <= 100:
        raise argparse.ArgumentTypeError(f"{count} is out of range (0 to 100)")
    return count


def _load_config(path: Path) -> RaftmetaConfig:
    from raftmeta.config import ConfigError, load_config

    try:
        return load_config(path)
    except ConfigError as error:
        raise CommandLineError(str(error), USAGE_ERROR) from error


def _serve(args: argparse.Namespace) -> int:
    import asyncio
    import logging
    import os

    # gRPC's core logs connection chatter at INFO; operators need only its errors.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    from raftmeta.config import ConfigError
    from raftmeta.server.serve import LoadGenerator, ServeError, serve

    config = _load_config(args.config)
    load = None
    if args.load_generator is not None:
        if args.load_generator <= 0:
            raise CommandLineError("--load-generator needs a rate above 0", USAGE_ERROR)
        acked_log = args.acked_log or Path(config.metadata_log_dir) / "acked.log"
        load = LoadGenerator(args.load_generator, acked_log)
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO,
        format=f"%(asctime)s node {config.node_id} %(levelname)s %(message)s",
    )
    try:
        asyncio.run(serve(config, load))
    except ConfigError as error:
        raise CommandLineError(str(error), USAGE_ERROR) from error
    except ServeError as error:
        raise CommandLineError(str(error)) from error
    return 0


def _dev(args: argparse.Namespace) -> int:
    from raftmeta.devcluster import run_dev

    return run_dev(args.data_dir, args.base_port, brokers=args.brokers, racks=args.racks)


def _quorum_describe(args: argparse.Namespace) -> int:
    from raftmeta import quorum_describe as qd

    try:
        info = qd.describe_quorum(args.bootstrap_server, args.cluster_id)
    except qd.DescribeError as error:
        raise CommandLineError(str(error)) from error
    lines = qd.replication_lines(info) if args.replication else qd.status_lines(info)
    for line in lines:
        print(line)
    return 0


def _format(args: argparse.Namespace) -> int:
    from raftmeta.storage import AlreadyFormattedError, MetadataDir, StorageError

    config = _load_config(args.config)
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
    handler = getattr(args, "handler", None)
    if handler is not None:
        return int(handler(args))
    if args.command == "demo":
        from raftmeta.demo import run_from_args

        return run_from_args(args)
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
    if args.command == "serve":
        return _serve(args)
    if args.command == "dev":
        return _dev(args)
    if args.command == "quorum" and args.quorum_command == "describe":
        return _quorum_describe(args)
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
    except BrokenPipeError:
        # The reader (say, `head`) went away: nothing more to say, and nobody to say it to.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
