"""``raftmeta random-uuid`` and ``raftmeta format``: prepare a node's metadata directory, as
``kafka-storage random-uuid`` and ``kafka-storage format`` do."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raftmeta.cli.errors import USAGE_ERROR, CommandLineError
from raftmeta.cli.serve import load_node_config
from raftmeta.security.scram import ScramMechanism

if TYPE_CHECKING:
    from raftmeta.raft.membership import Membership
    from raftmeta.storage.bootstrap_scram import BootstrapCredential


def register(commands: Any) -> None:
    random_uuid = commands.add_parser("random-uuid", help="print a new random cluster id")
    random_uuid.set_defaults(handler=run_random_uuid)

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
    format_.add_argument(
        "--release-version",
        metavar="X.Y",
        help="finalize this release's default feature levels (metadata.version, "
        "eligible.leader.replicas.version: on from 4.1) when the cluster first starts; "
        "default: the latest release this build supports, as kafka-storage format does",
    )
    format_.add_argument(
        "--add-scram",
        action="append",
        default=[],
        metavar="'SCRAM-SHA-256=[name=alice,password=...]'",
        help="a SCRAM credential the cluster starts with, as kafka-storage format takes it "
        "(name=, then password= or salt= and saltedpassword= in base64, and iterations=, "
        "4096 to 16384); repeat for more. Only the salted, iterated keys are written",
    )
    first_voters = format_.add_mutually_exclusive_group()
    first_voters.add_argument(
        "--standalone",
        action="store_true",
        help="a dynamic quorum (KIP-853) whose only voter is this controller",
    )
    first_voters.add_argument(
        "--initial-controllers",
        metavar="ID@HOST:PORT:DIRECTORY_ID,...",
        help="a dynamic quorum with these first voters; this node is one of them and its "
        "directory gets the directory id given here",
    )
    first_voters.add_argument(
        "--no-initial-controllers",
        action="store_true",
        help="a controller of a dynamic quorum that joins later (quorum add-controller); it "
        "learns the voters from controller.quorum.bootstrap.servers",
    )
    format_.set_defaults(handler=run_format)


def run_random_uuid(args: argparse.Namespace) -> int:
    from raftmeta.storage.meta_properties import generate_id

    print(generate_id())
    return 0


def run_format(args: argparse.Namespace) -> int:
    from raftmeta.common.features import LATEST_RELEASE, release_levels
    from raftmeta.storage import (
        AlreadyFormattedError,
        MetadataDir,
        MetaPropertiesTooLargeError,
        StorageError,
    )
    from raftmeta.storage.bootstrap_scram import write_bootstrap_scram
    from raftmeta.storage.markers import write_bootstrap_features
    from raftmeta.storage.meta_properties import META_PROPERTIES_FILE

    config = load_node_config(args.config)
    credentials = _scram_credentials(args.add_scram)
    directory_id, first_voters = _first_voters(args, config)
    # Like kafka-storage format, a new cluster gets the latest release's levels unless told
    # otherwise: without them it would run with no metadata.version and without KIP-966.
    try:
        levels = dict(release_levels(args.release_version or LATEST_RELEASE))
    except ValueError as error:
        raise CommandLineError(f"format: --release-version: {error}", USAGE_ERROR) from None
    if (
        args.release_version is None
        and (Path(config.metadata_log_dir) / META_PROPERTIES_FILE).exists()
    ):
        levels = {}  # --ignore-formatted leaves a formatted directory's chosen levels alone
    try:
        properties = MetadataDir.format(
            config.metadata_log_dir,
            config.node_id,
            args.cluster_id,
            ignore_formatted=args.ignore_formatted,
            directory_id=directory_id,
        )
        if first_voters is not None:
            _write_first_voters(config.metadata_log_dir, first_voters)
        if levels:
            write_bootstrap_features(config.metadata_log_dir, levels)
        if credentials:
            write_bootstrap_scram(config.metadata_log_dir, credentials)
    except AlreadyFormattedError as error:
        raise CommandLineError(
            str(error).replace("pass ignore_formatted", "pass --ignore-formatted")
        ) from error
    except MetaPropertiesTooLargeError as error:
        raise CommandLineError(str(error), USAGE_ERROR) from None
    except StorageError as error:
        raise CommandLineError(str(error)) from None
    except OSError as error:
        raise CommandLineError(
            f"cannot format {config.metadata_log_dir}: {error.strerror or error}"
        ) from None
    except ValueError as error:  # the node id or --cluster-id is not an id: a usage error
        raise CommandLineError(f"format: {error}", USAGE_ERROR) from None
    print(
        f"Formatted {config.metadata_log_dir} for node {properties.node_id} "
        f"of cluster {properties.cluster_id}"
    )
    if first_voters is not None:
        listed = ", ".join(str(voter.key) for voter in first_voters.voters)
        print(f"Bootstrap voters (kraft.version 1): {listed}")
    if levels:
        finalized = ", ".join(f"{name}={level}" for name, level in sorted(levels.items()))
        print(f"Bootstrap feature levels: {finalized}")
    if credentials:
        users = ", ".join(
            f"{c.name} ({ScramMechanism(c.mechanism).mechanism_name}, {c.iterations} iterations)"
            for c in credentials
        )
        print(f"Bootstrap SCRAM credentials: {users}")
    return 0


def _scram_credentials(values: list[str]) -> list[BootstrapCredential]:
    """Each ``--add-scram`` as the credential to write; a usage error names the bad one by
    its position, never by its text (which may hold a password)."""
    from raftmeta.cli.scram_arguments import ScramArgumentError, parse_add_scram
    from raftmeta.storage.bootstrap_scram import BootstrapCredential

    credentials: dict[tuple[str, int], BootstrapCredential] = {}
    for position, value in enumerate(values, 1):
        try:
            name, mechanism, credential = parse_add_scram(value)
        except ScramArgumentError as error:
            raise CommandLineError(
                f"format: --add-scram #{position}: {error}", USAGE_ERROR
            ) from None
        if (name, int(mechanism)) in credentials:
            raise CommandLineError(
                f"format: --add-scram #{position}: {mechanism.mechanism_name} for {name} is "
                "given twice",
                USAGE_ERROR,
            )
        credentials[(name, int(mechanism))] = BootstrapCredential(
            name,
            int(mechanism),
            credential.iterations,
            credential.salt,
            credential.stored_key,
            credential.server_key,
        )
    return list(credentials.values())


def _first_voters(args: argparse.Namespace, config: Any) -> tuple[str | None, Membership | None]:
    """The directory id to format with and the dynamic quorum's first voters, if any."""
    from raftmeta.cli.bootstrap_voters import dynamic, parse_initial_controllers, standalone
    from raftmeta.storage.meta_properties import generate_id

    static = bool(config.controller_quorum_voters)
    chosen = args.standalone or args.initial_controllers or args.no_initial_controllers
    if static:
        if chosen:
            raise CommandLineError(
                "format: controller.quorum.voters makes the quorum static; remove it and set "
                "controller.quorum.bootstrap.servers for --standalone, --initial-controllers "
                "or --no-initial-controllers",
                USAGE_ERROR,
            )
        return None, None
    if not config.is_controller:
        return None, None
    if not chosen:
        raise CommandLineError(
            "format: a controller of a dynamic quorum (no controller.quorum.voters) needs "
            "--standalone, --initial-controllers or --no-initial-controllers",
            USAGE_ERROR,
        )
    if args.no_initial_controllers:
        return None, None
    if args.standalone:
        directory_id = generate_id()
        endpoint = config.controller_endpoint
        host = endpoint.host or "127.0.0.1"
        return directory_id, dynamic(standalone(config.node_id, directory_id, host, endpoint.port))
    try:
        voters = parse_initial_controllers(args.initial_controllers)
    except ValueError as error:
        raise CommandLineError(f"format: --initial-controllers: {error}", USAGE_ERROR) from None
    own = voters.key_of(config.node_id)
    if own is None:
        raise CommandLineError(
            f"format: --initial-controllers does not list this node ({config.node_id})",
            USAGE_ERROR,
        )
    return own.directory_id, dynamic(voters)


def _write_first_voters(log_dir: str, membership: Membership) -> None:
    from raftmeta.storage.data_dir import METADATA_PARTITION_DIR
    from raftmeta.storage.membership_files import bootstrap_path, write_membership

    path = bootstrap_path(Path(log_dir) / METADATA_PARTITION_DIR)
    if not path.exists():
        write_membership(path, membership)
