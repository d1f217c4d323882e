"""What the admin commands (``topics``, ``brokers``) share: the ``--bootstrap-server`` and
``--command-config`` options, turning them into an admin client config, and running a
request with every failure reduced to one line.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from raftmeta.cli import USAGE_ERROR, CommandLineError

T = TypeVar("T")

DEFAULT_REQUEST_TIMEOUT_MS = 15_000
"""How long a command waits for the controller unless --command-config says otherwise: long
enough to ride out a controller failover, short enough that a wrong address fails soon."""

COMMAND_CONFIG_KEYS = ("bearer.token", "request.timeout.ms")


def add_connection_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bootstrap-server",
        required=True,
        metavar="HOST:PORT[,HOST:PORT...]",
        help="one or more nodes of the quorum; requests go on to the active controller",
    )
    parser.add_argument(
        "--command-config",
        type=Path,
        metavar="FILE",
        help="a properties file of client settings: bearer.token, request.timeout.ms "
        f"(default {DEFAULT_REQUEST_TIMEOUT_MS})",
    )


def admin_config(args: argparse.Namespace) -> dict[str, object]:
    """The AdminClient config the options describe; a bad file or address exits 2."""
    from raftmeta.admin import parse_admin_config
    from raftmeta.controller_channel import parse_bootstrap_servers

    try:
        parse_bootstrap_servers(args.bootstrap_server)
    except ValueError as error:
        raise CommandLineError(f"--bootstrap-server: {error}", USAGE_ERROR) from None
    config: dict[str, object] = {
        "bootstrap.servers": args.bootstrap_server,
        "request.timeout.ms": DEFAULT_REQUEST_TIMEOUT_MS,
    }
    if args.command_config is not None:
        config.update(_read_command_config(args.command_config))
        try:
            parse_admin_config(config)
        except ValueError as error:
            raise CommandLineError(
                f"--command-config {args.command_config}: {error}", USAGE_ERROR
            ) from None
    return config


def _read_command_config(path: Path) -> dict[str, str]:
    from raftmeta.config import ConfigError, parse_properties

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CommandLineError(
            f"--command-config {path}: {error.strerror or error}", USAGE_ERROR
        ) from None
    try:
        properties = {key: value.strip() for key, value in parse_properties(text).items()}
    except ConfigError as error:
        raise CommandLineError(f"--command-config {path}: {error}", USAGE_ERROR) from None
    unknown = sorted(set(properties) - set(COMMAND_CONFIG_KEYS))
    if unknown:
        raise CommandLineError(
            f"--command-config {path}: unknown key {', '.join(unknown)} "
            f"(known: {', '.join(COMMAND_CONFIG_KEYS)})",
            USAGE_ERROR,
        )
    return properties


def run_admin(
    config: dict[str, object],
    work: Callable[[Any], Coroutine[Any, Any, T]],
    failure_prefix: str,
) -> T:
    """Run ``work(client)`` with an AsyncAdminClient; a Kafka error becomes one line, exit 1.

    ``failure_prefix`` starts the line (Kafka's tools say "Error while executing topic command
    : ..."); the error's own message follows, then its code name.
    """
    # gRPC's core logs connection chatter; a command's user needs only its own one line.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    from raftmeta.admin import AsyncAdminClient
    from raftmeta.errors import KafkaError

    async def main() -> T:
        async with AsyncAdminClient(config) as client:
            return await work(client)

    try:
        return asyncio.run(main())
    except KafkaError as error:
        raise CommandLineError(f"{failure_prefix}{error.message} ({error.code.name})") from None
