"""``raftmeta serve``: run one node of the quorum until SIGTERM or Ctrl-C."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raftmeta.cli.errors import USAGE_ERROR, CommandLineError
from raftmeta.devkit.parent import end_with_parent

if TYPE_CHECKING:
    from raftmeta.config.node import RaftmetaConfig


def register(commands: Any) -> None:
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
    serve.set_defaults(handler=run)


def load_node_config(path: Path) -> RaftmetaConfig:
    """The node's configuration file, validated; a problem is one line and exit status 2."""
    from raftmeta.config.errors import ConfigError
    from raftmeta.config.node import load_config

    try:
        return load_config(path)
    except ConfigError as error:
        raise CommandLineError(str(error), USAGE_ERROR) from error


def check_identity_file_size(log_dir: Path) -> None:
    """A ``meta.properties`` far larger than a format writes is a damaged file: refused before
    anything reads it whole, in one line and with the configuration errors' exit status."""
    from raftmeta.storage.errors import MetaPropertiesTooLargeError
    from raftmeta.storage.meta_properties import META_PROPERTIES_FILE, check_meta_properties_size

    try:
        check_meta_properties_size(log_dir / META_PROPERTIES_FILE)
    except MetaPropertiesTooLargeError as error:
        raise CommandLineError(str(error), USAGE_ERROR) from error
    except OSError:
        pass  # an unreadable directory is the start-up's to report, with its own words


def run(args: argparse.Namespace) -> int:
    import logging

    end_with_parent()

    from raftmeta.config.errors import ConfigError
    from raftmeta.quorum import collector, event_loop
    from raftmeta.server.serve import LoadGenerator, ServeError, serve

    config = load_node_config(args.config)
    check_identity_file_size(Path(config.metadata_log_dir))
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
    collector.tune_for_server()
    try:
        event_loop.run(serve(config, load))
    except ConfigError as error:
        raise CommandLineError(str(error), USAGE_ERROR) from error
    except ServeError as error:
        raise CommandLineError(str(error)) from error
    return 0
