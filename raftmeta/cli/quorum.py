"""``raftmeta quorum describe``: the quorum as its leader sees it, printed the way
``kafka-metadata-quorum describe`` prints it (the asking is in
:mod:`raftmeta.admin.quorum`, the rendering in :mod:`raftmeta.cli.quorum_describe`);
``quorum add-controller`` / ``remove-controller`` change a dynamic quorum's voters
(:mod:`raftmeta.cli.quorum_membership`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raftmeta.cli.errors import USAGE_ERROR, CommandLineError
from raftmeta.cli.parser import add_actions

if TYPE_CHECKING:
    from raftmeta.cli.client_config import ClientSettings
    from raftmeta.cli.quorum_membership import VoterClient
    from raftmeta.security.tls import TlsSettings


VOTERS_OVER_KAFKA = (
    "instead: one or more controllers' KAFKA listeners (KIP-919); the change goes to the "
    "active controller with Kafka's AddRaftVoter / RemoveRaftVoter"
)


def register(commands: Any) -> None:
    quorum = commands.add_parser("quorum", help="inspect the Raft quorum, change its voters")
    actions = add_actions(quorum, "quorum_command")
    describe = actions.add_parser(
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

    add = actions.add_parser(
        "add-controller",
        help="make a running, caught-up controller a voter of a dynamic quorum (KIP-853)",
    )
    add.add_argument(
        "--config",
        required=True,
        type=Path,
        help="the joining controller's .properties: its node.id, metadata.log.dir (for its "
        "directory id), CONTROLLER listener and controller.quorum.bootstrap.servers",
    )
    add_doors = add.add_mutually_exclusive_group()
    add_doors.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="controllers to ask for the leader (default: the config's "
        "controller.quorum.bootstrap.servers)",
    )
    add_doors.add_argument(
        "--bootstrap-controller", metavar="HOST:PORT[,HOST:PORT...]", help=VOTERS_OVER_KAFKA
    )
    add.add_argument(
        "--timeout", type=float, default=60.0, help="seconds to keep trying (default 60)"
    )
    _add_command_config(add)
    add.add_argument("--dry-run", action="store_true", help="print the change, make none")
    add.set_defaults(handler=run_add)

    remove = actions.add_parser(
        "remove-controller", help="remove a voter from a dynamic quorum (KIP-853)"
    )
    remove_doors = remove.add_mutually_exclusive_group(required=True)
    remove_doors.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="controllers to ask for the leader",
    )
    remove_doors.add_argument(
        "--bootstrap-controller", metavar="HOST:PORT[,HOST:PORT...]", help=VOTERS_OVER_KAFKA
    )
    remove.add_argument("--controller-id", required=True, type=int, help="the voter's node id")
    remove.add_argument(
        "--controller-directory-id",
        required=True,
        help="the voter's directory id (quorum describe --replication shows it)",
    )
    remove.add_argument(
        "--timeout", type=float, default=60.0, help="seconds to keep trying (default 60)"
    )
    _add_command_config(remove)
    remove.add_argument("--dry-run", action="store_true", help="print the change, make none")
    remove.set_defaults(handler=run_remove)


def _add_command_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--command-config",
        type=Path,
        metavar="FILE",
        help="a properties file of client settings: security.protocol=SSL and the ssl.* keys "
        "for a TLS controller listener, bearer.token (who the caller is: the leader requires "
        "ALTER on the cluster); other keys are ignored with a warning",
    )


def run(args: argparse.Namespace) -> int:
    from raftmeta.admin.quorum import DescribeError, describe_quorum
    from raftmeta.cli import quorum_describe as qd

    tls, timeout_s, tls_properties = _connection(args.command_config)
    try:
        if args.bootstrap_controller is not None:
            info = _describe_over_kafka(args.bootstrap_controller, timeout_s, tls_properties)
        else:
            info = describe_quorum(
                args.bootstrap_server, args.cluster_id, timeout_s=timeout_s, tls=tls
            )
    except DescribeError as error:
        raise CommandLineError(str(error)) from error
    lines = qd.replication_lines(info) if args.replication else qd.status_lines(info)
    for line in lines:
        print(line)
    return 0


def _connection(path: Path | None) -> tuple[TlsSettings | None, float, dict[str, str]]:
    """The TLS settings (None: plaintext), the per-server deadline and the TLS keys as given,
    from ``--command-config``; a file that cannot be used exits 2 with one line naming it."""
    from raftmeta.admin.quorum import DEFAULT_TIMEOUT_S
    from raftmeta.config.properties import parse_properties

    if path is None:
        return None, DEFAULT_TIMEOUT_S, {}
    settings, tls = _client_settings(path)
    # The file was just read and parsed: only whether it set the key is asked again here.
    given = "request.timeout.ms" in parse_properties(path.read_text(encoding="utf-8"))
    timeout_s = max(0.001, settings.request_timeout_ms / 1000) if given else DEFAULT_TIMEOUT_S
    return tls, timeout_s, dict(settings.tls_properties)


def _client_settings(path: Path) -> tuple[ClientSettings, TlsSettings | None]:
    """The client settings in ``path`` and their TLS settings (None: plaintext); a file that
    cannot be used, or names key or certificate files that cannot be read, exits 2 with one
    line naming it, before anything is dialled."""
    from raftmeta.cli.client_config import ClientConfigError, read_client_config
    from raftmeta.config.errors import ConfigError
    from raftmeta.security.credentials import channel_credentials
    from raftmeta.security.listener import client_tls

    try:
        settings = read_client_config(path)
        tls = client_tls(dict(settings.tls_properties))
        if tls is not None:
            channel_credentials(tls)
    except (ClientConfigError, ConfigError) as error:
        raise CommandLineError(f"--command-config {error}", USAGE_ERROR) from None
    settings.warn_about_ignored_keys()
    return settings, tls


def voter_client(path: Path | None) -> VoterClient:
    """How ``add-controller`` / ``remove-controller`` (and ``features upgrade --feature
    kraft.version=1``) reach the leader: ``--command-config``'s TLS credentials and bearer
    token, or plaintext and anonymous without the flag."""
    from raftmeta.cli.quorum_membership import VoterClient
    from raftmeta.security.credentials import channel_credentials

    if path is None:
        return VoterClient()
    settings, tls = _client_settings(path)
    credentials = None if tls is None else channel_credentials(tls)
    return VoterClient(credentials, settings.bearer_token)


def _describe_over_kafka(bootstrap: str, timeout_s: float, tls_properties: dict[str, str]) -> Any:
    """The quorum as the active controller's DescribeQuorum on its KAFKA listener has it."""
    import asyncio

    from raftmeta.admin import AsyncAdminClient, QuorumInfo
    from raftmeta.admin.quorum import DescribeError
    from raftmeta.errors import KafkaError

    config = _kafka_admin_config(bootstrap, timeout_s, tls_properties)
    client = AsyncAdminClient(config)

    async def ask() -> QuorumInfo:
        async with client:
            return await client.describe_quorum()

    try:
        return asyncio.run(ask())
    except KafkaError as error:
        raise DescribeError(f"{error.message} ({error.code.name})") from None


def _kafka_admin_config(
    bootstrap: str, timeout_s: float, tls_properties: dict[str, str]
) -> dict[str, object]:
    """The admin client's settings for ``--bootstrap-controller``; exits 2 for a bad list."""
    from raftmeta.admin import parse_admin_config

    config: dict[str, object] = {
        "bootstrap.controllers": bootstrap,
        "request.timeout.ms": max(1, round(timeout_s * 1000)),
        **tls_properties,
    }
    try:
        parse_admin_config(config)
    except ValueError as error:
        raise CommandLineError(f"--bootstrap-controller: {error}", USAGE_ERROR) from None
    return config


def _change_over_kafka(
    args: argparse.Namespace, change: Any, already_made: Any, timeout_s: float
) -> bool:
    """The voter change through ``--bootstrap-controller``; True when made before."""
    from raftmeta.cli.voters_over_kafka import change_voters_over_kafka

    _, _, tls_properties = _connection(args.command_config)
    config = _kafka_admin_config(args.bootstrap_controller, min(timeout_s, 60.0), tls_properties)
    return change_voters_over_kafka(config, change, already_made, timeout_s)


def _servers(text: str | None, option: str) -> list[str]:
    servers = [s.strip() for s in (text or "").split(",") if s.strip()]
    if not servers:
        raise CommandLineError(f"{option} needs at least one host:port", USAGE_ERROR)
    return servers


def _timeout(value: float) -> float:
    if not value > 0:
        raise CommandLineError("--timeout must be a positive number of seconds", USAGE_ERROR)
    return value


def run_add(args: argparse.Namespace) -> int:
    from raftmeta.cli import quorum_membership as qm
    from raftmeta.cli.serve import load_node_config
    from raftmeta.rpc import raft_pb2 as pb
    from raftmeta.storage.errors import StorageError
    from raftmeta.storage.meta_properties import META_PROPERTIES_FILE, read_meta_properties

    config = load_node_config(args.config)
    timeout_s = _timeout(args.timeout)
    if not config.is_controller:
        raise CommandLineError(
            f"add-controller: node {config.node_id} has no controller role", USAGE_ERROR
        )
    over_kafka = args.bootstrap_controller is not None
    servers = (
        []
        if over_kafka
        else _servers(
            args.bootstrap_server or ",".join(config.controller_quorum_bootstrap_servers),
            "--bootstrap-server (or controller.quorum.bootstrap.servers)",
        )
    )
    try:
        meta = read_meta_properties(Path(config.metadata_log_dir) / META_PROPERTIES_FILE)
    except (OSError, StorageError) as error:
        raise CommandLineError(
            f"add-controller: cannot read {config.metadata_log_dir}'s identity ({error}); "
            "format it with --no-initial-controllers and start the controller first"
        ) from None
    if meta.directory_id is None:
        raise CommandLineError(
            f"add-controller: {config.metadata_log_dir} has no directory.id; format it again"
        )
    endpoint = config.controller_endpoint
    host = endpoint.host or "127.0.0.1"
    voter = pb.Voter(
        voter_id=config.node_id,
        directory_id=meta.directory_id,
        endpoints=[pb.Endpoint(name="CONTROLLER", host=host, port=endpoint.port)],
    )
    shown = f"controller {config.node_id} (directory {meta.directory_id}) at {host}:{endpoint.port}"
    client = voter_client(args.command_config)
    if args.dry_run:
        print(f"Would add {shown} to the voters of cluster {meta.cluster_id}")
        return 0
    node_id, directory_id = config.node_id, meta.directory_id
    try:
        if over_kafka:
            made_before = _change_over_kafka(
                args,
                lambda admin, left_s: admin.add_raft_voter(
                    node_id,
                    directory_id,
                    [("CONTROLLER", host, endpoint.port)],
                    request_timeout=min(left_s, 60.0),
                ),
                lambda info: any(v.node_id == node_id for v in info.voters),
                timeout_s,
            )
        else:
            request = pb.AddRaftVoterRequest(
                cluster_id=meta.cluster_id,
                timeout_ms=int(min(timeout_s, 60.0) * 1000),
                voter=voter,
            )
            made_before = qm.change_voters(
                servers, meta.cluster_id, request, timeout_s, client
            ).made_before
    except qm.VoterChangeError as error:
        raise CommandLineError(f"add-controller: {error}") from None
    if made_before:
        print(f"Nothing to change: {shown} is already a voter (added before)")
    else:
        print(f"Added {shown} to the voters")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    from raftmeta.cli import quorum_membership as qm
    from raftmeta.rpc import raft_pb2 as pb

    over_kafka = args.bootstrap_controller is not None
    servers = [] if over_kafka else _servers(args.bootstrap_server, "--bootstrap-server")
    timeout_s = _timeout(args.timeout)
    if args.controller_id < 0 or not args.controller_directory_id.strip():
        raise CommandLineError(
            "remove-controller: --controller-id must be >= 0 and --controller-directory-id "
            "not empty",
            USAGE_ERROR,
        )
    shown = f"controller {args.controller_id} (directory {args.controller_directory_id})"
    client = voter_client(args.command_config)
    if args.dry_run:
        print(f"Would remove {shown} from the voters")
        return 0
    voter_id, directory_id = args.controller_id, args.controller_directory_id
    try:
        if over_kafka:
            made_before = _change_over_kafka(
                args,
                lambda admin, left_s: admin.remove_raft_voter(
                    voter_id, directory_id, request_timeout=min(left_s, 60.0)
                ),
                lambda info: all(v.node_id != voter_id for v in info.voters),
                timeout_s,
            )
        else:
            cluster_id = qm.find_cluster_id(list(servers), min(timeout_s, 5.0), client)
            request = pb.RemoveRaftVoterRequest(
                cluster_id=cluster_id, voter_id=voter_id, voter_directory_id=directory_id
            )
            made_before = qm.change_voters(
                servers, cluster_id, request, timeout_s, client
            ).made_before
    except qm.VoterChangeError as error:
        raise CommandLineError(f"remove-controller: {error}") from None
    if made_before:
        print(f"Nothing to change: {shown} is not a voter (removed before)")
    else:
        print(f"Removed {shown} from the voters")
    return 0
