"""The argument parser every command is registered in.

A command module has ``register(commands)``: it adds its parser to ``commands`` (the object
``add_subparsers`` returns) and sets the ``handler`` default to a function of the parsed
arguments returning the exit status. :func:`build_parser` builds the ``raftmeta`` parser from
such modules, so the dispatcher and anything that runs one command in-process (the demo runs
``leader-election``) parse a command line the same way.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from typing import Any, NoReturn, Protocol

from raftmeta.cli.errors import USAGE_ERROR, CommandLineError

PROG = "raftmeta"
DESCRIPTION = "Cluster metadata in a Raft-replicated event log, in the manner of KRaft."


class Command(Protocol):
    """What a command module provides (a module is accepted where this is expected)."""

    def register(self, commands: Any) -> None: ...


class CommandParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line, not the whole usage text."""

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(f"{self.prog}: {message} (see --help)", USAGE_ERROR)


def build_parser(commands: Iterable[Command]) -> argparse.ArgumentParser:
    """The ``raftmeta`` parser with each of ``commands`` registered, in order."""
    parser = CommandParser(prog=PROG, description=DESCRIPTION)
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=CommandParser
    )
    for command in commands:
        command.register(subparsers)
    return parser


def add_actions(parser: argparse.ArgumentParser, dest: str) -> Any:
    """Sub-actions under a command (``log dump``, ``quorum describe``), parsed the same way."""
    return parser.add_subparsers(dest=dest, metavar="ACTION", parser_class=CommandParser)
