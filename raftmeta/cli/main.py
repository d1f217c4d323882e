"""The ``raftmeta`` command: parse the command line, run the command's handler, and turn
every failure into one line and an exit status (see :mod:`raftmeta.cli.errors`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from raftmeta.cli import (
    acls,
    audit,
    broker,
    brokers,
    chaos,
    cluster,
    configs,
    demo,
    dev,
    dump,
    features,
    leader_election,
    quorum,
    reassign_partitions,
    serve,
    soak,
    spark_cluster,
    storage,
    topics,
)
from raftmeta.cli.errors import USAGE_ERROR, CommandLineError
from raftmeta.cli.parser import Command
from raftmeta.cli.parser import build_parser as _build_parser

COMMANDS: tuple[Command, ...] = (
    demo,
    storage,
    dump,
    serve,
    dev,
    quorum,
    soak,
    chaos,
    topics,
    brokers,
    broker,
    leader_election,
    reassign_partitions,
    features,
    acls,
    audit,
    spark_cluster,
    cluster,
    configs,
)
"""Every command, in the order ``--help`` lists them. A command module imports what its work
needs when it runs, so building the parser stays cheap."""


def build_parser() -> argparse.ArgumentParser:
    return _build_parser(COMMANDS)


def run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:  # no command, or a command without its action (``raftmeta log``)
        parser.print_help(sys.stderr)
        return USAGE_ERROR
    return int(handler(args))


def one_line(message: str) -> str:
    """``message`` with control characters escaped: a file name or value the user typed with a
    line break in it must not turn the one line of a failure into two."""
    if message.isprintable():
        return message
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return run(argv)
    except CommandLineError as error:
        print(one_line(str(error)), file=sys.stderr)
        return error.status
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (say, `head`) went away: nothing more to say, and nobody to say it to.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
