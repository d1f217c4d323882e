"""``raftmeta quorum describe``: the quorum as its leader sees it, printed the way
``kafka-metadata-quorum describe`` prints it (the asking and the rendering are in
:mod:`raftmeta.cli.quorum_describe`)."""

from __future__ import annotations

import argparse
from typing import Any

from raftmeta.cli.errors import CommandLineError
from raftmeta.cli.parser import add_actions


def register(commands: Any) -> None:
    quorum = commands.add_parser("quorum", help="inspect the Raft quorum")
    describe = add_actions(quorum, "quorum_command").add_parser(
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
    describe.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from raftmeta.cli import quorum_describe as qd

    try:
        info = qd.describe_quorum(args.bootstrap_server, args.cluster_id)
    except qd.DescribeError as error:
        raise CommandLineError(str(error)) from error
    lines = qd.replication_lines(info) if args.replication else qd.status_lines(info)
    for line in lines:
        print(line)
    return 0
