"""``raftmeta random-uuid`` and ``raftmeta format``: prepare a node's metadata directory, as
``kafka-storage random-uuid`` and ``kafka-storage format`` do."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from raftmeta.cli.errors import USAGE_ERROR, CommandLineError
from raftmeta.cli.serve import load_node_config


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
        "eligible.leader.replicas.version: on from 4.1) when the cluster first starts",
    )
    format_.set_defaults(handler=run_format)


def run_random_uuid(args: argparse.Namespace) -> int:
    from raftmeta.storage.meta_properties import generate_id

    print(generate_id())
    return 0


def run_format(args: argparse.Namespace) -> int:
    from raftmeta.common.features import release_levels
    from raftmeta.storage import AlreadyFormattedError, MetadataDir, StorageError
    from raftmeta.storage.markers import write_bootstrap_features

    config = load_node_config(args.config)
    levels: dict[str, int] = {}
    if args.release_version is not None:
        try:
            levels = dict(release_levels(args.release_version))
        except ValueError as error:
            raise CommandLineError(f"format: --release-version: {error}", USAGE_ERROR) from None
    try:
        properties = MetadataDir.format(
            config.metadata_log_dir,
            config.node_id,
            args.cluster_id,
            ignore_formatted=args.ignore_formatted,
        )
        if levels:
            write_bootstrap_features(config.metadata_log_dir, levels)
    except AlreadyFormattedError as error:
        raise CommandLineError(
            str(error).replace("pass ignore_formatted", "pass --ignore-formatted")
        ) from error
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
    if levels:
        finalized = ", ".join(f"{name}={level}" for name, level in sorted(levels.items()))
        print(f"Bootstrap feature levels: {finalized}")
    return 0
