"""``raftmeta quorum describe``: the quorum as its leader sees it, printed the way
``kafka-metadata-quorum describe`` prints it (the asking and the rendering are in
:mod:`raftmeta.cli.quorum_describe`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raftmeta.cli.errors import USAGE_ERROR, CommandLineError
from raftmeta.cli.parser import add_actions

if TYPE_CHECKING:
    from raftmeta.security.tls import TlsSettings


def register(commands: Any) -> None:
    quorum = commands.add_parser("quorum", help="inspect the Raft quorum")
    describe = add_actions(quorum, "quorum_command").add_parser(
        "describe", help="the leader's view of the quorum, as kafka-metadata-quorum prints it"
    )
    doors = describe.add_mutually_exclusive_group(required=True)
    doors.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="one or more voters; the leader among them answers",
    )
    doors.add_argument(
        "--bootstrap-controller",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="instead: one or more controllers' KAFKA listeners (KIP-919); asks the active "
        "controller with Kafka's DescribeQuorum",
    )
    describe.add_argument(
        "--cluster-id", default="", help="the cluster id (printed by `raftmeta dev`)"
    )
    describe.add_argument(
        "--command-config",
        type=Path,
        metavar="FILE",
        help="a properties file of client settings: security.protocol=SSL and the ssl.* keys "
        "for a TLS controller listener (as `raftmeta dev --tls` writes), request.timeout.ms "
        "(each server's deadline); other keys are ignored with a warning",
    )
    shape = describe.add_mutually_exclusive_group()
    shape.add_argument("--status", action="store_true", help="leader, epoch, lag (the default)")
    shape.add_argument("--replication", action="store_true", help="one row per replica")
    describe.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from raftmeta.cli import quorum_describe as qd

    tls, timeout_s = _connection(args.command_config)
    try:
        if args.bootstrap_controller is not None:
            if tls is not None:
                raise CommandLineError(
                    "--bootstrap-controller speaks PLAINTEXT only; TLS settings go with "
                    "--bootstrap-server",
                    USAGE_ERROR,
                )
            info = _describe_over_kafka(args.bootstrap_controller, timeout_s)
        else:
            info = qd.describe_quorum(
                args.bootstrap_server, args.cluster_id, timeout_s=timeout_s, tls=tls
            )
    except qd.DescribeError as error:
        raise CommandLineError(str(error)) from error
    lines = qd.replication_lines(info) if args.replication else qd.status_lines(info)
    for line in lines:
        print(line)
    return 0


def _connection(path: Path | None) -> tuple[TlsSettings | None, float]:
    """The TLS settings (None: plaintext) and the per-server deadline from ``--command-config``;
    a file that cannot be used exits 2 with one line naming it."""
    from raftmeta.cli.client_config import ClientConfigError, read_client_config
    from raftmeta.cli.quorum_describe import DEFAULT_TIMEOUT_S
    from raftmeta.config.errors import ConfigError
    from raftmeta.config.properties import parse_properties
    from raftmeta.security.credentials import channel_credentials
    from raftmeta.security.listener import client_tls

    if path is None:
        return None, DEFAULT_TIMEOUT_S
    try:
        settings = read_client_config(path)
        tls = client_tls(dict(settings.tls_properties))
        if tls is not None:
            channel_credentials(tls)  # unreadable key or certificate files: fail before dialling
    except (ClientConfigError, ConfigError) as error:
        raise CommandLineError(f"--command-config {error}", USAGE_ERROR) from None
    settings.warn_about_ignored_keys()
    # The file was just read and parsed: only whether it set the key is asked again here.
    given = "request.timeout.ms" in parse_properties(path.read_text(encoding="utf-8"))
    timeout_s = max(0.001, settings.request_timeout_ms / 1000) if given else DEFAULT_TIMEOUT_S
    return tls, timeout_s


def _describe_over_kafka(bootstrap: str, timeout_s: float) -> Any:
    """The quorum as the active controller's DescribeQuorum on its KAFKA listener has it."""
    import asyncio

    from raftmeta.cli.kafka_admin import KafkaAdmin
    from raftmeta.cli.quorum_describe import DescribeError
    from raftmeta.controller_channel import parse_bootstrap_servers
    from raftmeta.errors import KafkaError

    try:
        controllers = parse_bootstrap_servers(bootstrap)
    except ValueError as error:
        raise CommandLineError(f"--bootstrap-controller: {error}", USAGE_ERROR) from None

    async def ask() -> Any:
        async with KafkaAdmin(controllers, timeout_s) as client:
            return await client.describe_quorum()

    try:
        return asyncio.run(ask())
    except KafkaError as error:
        raise DescribeError(f"{error.message} ({error.code.name})") from None
