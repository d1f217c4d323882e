"""What the admin commands (``topics``, ``brokers``) share: the ``--bootstrap-server`` (or
``--bootstrap-controller``) and ``--command-config`` options, turning them into an admin client
connection, and running a request with every failure reduced to one line.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from raftmeta.cli.client_config import (
    DEFAULT_API_TIMEOUT_MS,
    KNOWN_KEYS,
    REQUEST_TIMEOUT_MS,
    ClientConfigError,
    ClientSettings,
    read_client_config,
)
from raftmeta.cli.errors import USAGE_ERROR, CommandLineError

T = TypeVar("T")


BOOTSTRAP_CONTROLLER_HELP = (
    "instead of --bootstrap-server: one or more controllers' KAFKA listeners (Kafka's "
    "KIP-919 flag); the command speaks Kafka's protocol to the active controller"
)


def add_connection_options(
    parser: argparse.ArgumentParser, *, with_controller_flag: bool = False
) -> None:
    doors: Any = (
        parser.add_mutually_exclusive_group(required=True) if with_controller_flag else parser
    )
    doors.add_argument(
        "--bootstrap-server",
        required=not with_controller_flag,
        metavar="HOST:PORT[,HOST:PORT...]",
        help="one or more nodes of the quorum; requests go on to the active controller",
    )
    if with_controller_flag:
        doors.add_argument(
            "--bootstrap-controller",
            metavar="HOST:PORT[,HOST:PORT...]",
            help=BOOTSTRAP_CONTROLLER_HELP,
        )
    parser.add_argument(
        "--command-config",
        type=Path,
        metavar="FILE",
        help=f"a properties file of client settings: {KNOWN_KEYS[0]}, {KNOWN_KEYS[1]} "
        f"(default {REQUEST_TIMEOUT_MS}), {KNOWN_KEYS[2]} (default {DEFAULT_API_TIMEOUT_MS}); "
        "other keys are ignored with a warning",
    )


@dataclass(frozen=True, slots=True)
class AdminConnection:
    """Where to send the command's requests and how long to wait for the whole answer."""

    config: dict[str, object]
    """The AdminClient config: ``bootstrap.controllers`` with ``--bootstrap-controller``."""
    answer_timeout_ms: int
    """``default.api.timeout.ms``: the command gives up after this long."""


def admin_connection(args: argparse.Namespace) -> AdminConnection:
    """The connection the options describe; a bad file or address exits 2."""
    from raftmeta.admin.settings import parse_admin_config
    from raftmeta.channel import parse_bootstrap_servers

    flag, bootstrap = "--bootstrap-server", args.bootstrap_server
    if getattr(args, "bootstrap_controller", None) is not None:
        flag, bootstrap = "--bootstrap-controller", args.bootstrap_controller
    try:
        parse_bootstrap_servers(bootstrap)
    except ValueError as error:
        raise CommandLineError(f"{flag}: {error}", USAGE_ERROR) from None
    settings = ClientSettings()
    if args.command_config is not None:
        try:
            settings = read_client_config(args.command_config)
        except ClientConfigError as error:
            raise CommandLineError(f"--command-config {error}", USAGE_ERROR) from None
        settings.warn_about_ignored_keys()
    config = settings.admin_config(bootstrap, controllers=flag == "--bootstrap-controller")
    try:
        parse_admin_config(config)
    except ValueError as error:  # SASL named for the gRPC door, say
        raise CommandLineError(f"--command-config {error}", USAGE_ERROR) from None
    return AdminConnection(config, settings.default_api_timeout_ms)


def run_admin(
    connection: AdminConnection,
    work: Callable[[Any], Coroutine[Any, Any, T]],
    failure_prefix: str,
) -> T:
    """Run ``work(client)`` with an AsyncAdminClient; a Kafka error becomes one line, exit 1.

    ``failure_prefix`` starts the line (Kafka's tools say "Error while executing topic command
    : ..."); the error's own message follows, then its code name. No answer within
    ``default.api.timeout.ms`` is REQUEST_TIMED_OUT, as a request's own deadline is.
    """
    from raftmeta.errors import ErrorCode, KafkaError

    timeout_ms = connection.answer_timeout_ms

    async def main() -> T:
        from raftmeta.admin import AsyncAdminClient

        async with AsyncAdminClient(connection.config) as client:
            try:
                async with asyncio.timeout(timeout_ms / 1000):
                    return await work(client)
            except TimeoutError:
                raise KafkaError(
                    ErrorCode.REQUEST_TIMED_OUT,
                    f"no answer within default.api.timeout.ms ({timeout_ms} ms)",
                ) from None

    try:
        return asyncio.run(main())
    except KafkaError as error:
        raise CommandLineError(f"{failure_prefix}{error.message} ({error.code.name})") from None
