"""``raftmeta features describe | upgrade | downgrade``, in the shape of ``kafka-features.sh``.

``describe`` prints one line per feature this build knows: the range every unfenced broker
and the controller support, and the finalized level (metadata.version by its release name).
``upgrade`` and ``downgrade`` take ``--feature name=level`` (repeatable; metadata.version may
be named, ``4.1-IV1``) or, for ``upgrade``, ``--release-version`` for a release's defaults;
``--dry-run`` asks the controller to check without writing. The controller checks every
registered, unfenced broker: one that does not support a level fails the whole command with
Kafka's INVALID_UPDATE_VERSION message, on one line, exit 1.
"""

from __future__ import annotations

import argparse
from typing import Any

from raftmeta.cli.admin_options import add_connection_options, admin_connection, run_admin
from raftmeta.cli.errors import USAGE_ERROR, CommandLineError
from raftmeta.cli.parser import add_actions

FAILURE_PREFIX = "Error while updating features : "


def register(commands: Any) -> None:
    features = commands.add_parser(
        "features",
        help="describe, upgrade or downgrade finalized feature levels, as kafka-features.sh",
    )
    actions = add_actions(features, "features_command")
    describe = actions.add_parser("describe", help="the finalized and supported levels")
    add_connection_options(describe)
    describe.set_defaults(handler=run_describe)
    for name, verb in (("upgrade", "raise"), ("downgrade", "lower")):
        action = actions.add_parser(name, help=f"{verb} finalized feature levels")
        add_connection_options(action)
        action.add_argument(
            "--feature",
            action="append",
            default=[],
            metavar="NAME=LEVEL",
            help="a feature and its new level; repeat for more",
        )
        if name == "upgrade":
            action.add_argument(
                "--release-version",
                metavar="X.Y",
                help="every feature to the default levels of this release",
            )
        action.add_argument(
            "--dry-run", action="store_true", help="check the update without writing it"
        )
        action.set_defaults(handler=run_update, downgrade=name == "downgrade")


def _level(name: str, text: str) -> int:
    from raftmeta.common.features import METADATA_VERSION, METADATA_VERSION_RELEASES

    text = text.strip()
    if text.isdigit():
        return int(text)
    if name == METADATA_VERSION:
        for level, release in METADATA_VERSION_RELEASES.items():
            if release == text:
                return level
    raise CommandLineError(f"--feature {name}={text}: the level is not a number", USAGE_ERROR)


def parse_updates(args: argparse.Namespace) -> list[Any]:
    from raftmeta.common.features import FeatureUpdate, release_levels

    levels: dict[str, int] = {}
    release = getattr(args, "release_version", None)
    if release is not None:
        if args.feature:
            raise CommandLineError(
                "features: give --feature or --release-version, not both", USAGE_ERROR
            )
        try:
            levels = dict(release_levels(release))
        except ValueError as error:
            raise CommandLineError(f"--release-version: {error}", USAGE_ERROR) from None
    for given in args.feature:
        name, sep, text = given.partition("=")
        if not sep or not name.strip():
            raise CommandLineError(f"--feature {given!r}: expected NAME=LEVEL", USAGE_ERROR)
        if name.strip() in levels:
            raise CommandLineError(f"--feature {name.strip()} is given twice", USAGE_ERROR)
        levels[name.strip()] = _level(name.strip(), text)
    if not levels:
        raise CommandLineError("features: no --feature given", USAGE_ERROR)
    return [
        FeatureUpdate(name, level, allow_downgrade=bool(args.downgrade))
        for name, level in levels.items()
    ]


KRAFT_VERSION = "kraft.version"


def run_update(args: argparse.Namespace) -> int:
    updates = parse_updates(args)
    if any(update.name == KRAFT_VERSION for update in updates):
        return _update_kraft_version(args, updates)
    connection = admin_connection(args)
    run_admin(
        connection,
        lambda client: client.update_features(updates, validate_only=args.dry_run),
        FAILURE_PREFIX,
    )
    verb = "downgraded" if args.downgrade else "upgraded"
    for update in updates:
        if args.dry_run:
            print(f"{update.name} can be {verb} to {_shown(update.name, update.level)}.")
        else:
            print(f"{update.name} was {verb} to {_shown(update.name, update.level)}.")
    return 0


def _update_kraft_version(args: argparse.Namespace, updates: list[Any]) -> int:
    """kraft.version is the quorum's, not the controller's (KIP-853): its leader writes the
    static voters as the first VotersRecord. Only the upgrade 0 -> 1 exists."""
    from raftmeta.cli import quorum_membership as qm
    from raftmeta.cli.quorum import voter_client

    if len(updates) != 1:
        raise CommandLineError(
            "features: update kraft.version on its own, not with other features", USAGE_ERROR
        )
    level = updates[0].level
    if args.downgrade:
        raise CommandLineError(f"{FAILURE_PREFIX}kraft.version cannot be downgraded")
    if getattr(args, "bootstrap_server", None) is None:
        raise CommandLineError(
            "features: kraft.version is updated through --bootstrap-server (controllers)",
            USAGE_ERROR,
        )
    servers = [s.strip() for s in args.bootstrap_server.split(",") if s.strip()]
    client = voter_client(args.command_config)
    try:
        said = qm.upgrade_kraft_version(
            servers, level, validate_only=args.dry_run, timeout_s=30.0, client=client
        )
    except qm.VoterChangeError as error:
        raise CommandLineError(f"{FAILURE_PREFIX}{error}") from None
    if args.dry_run:
        print(f"kraft.version can be upgraded to {level}" + (f": {said}" if said else "."))
    else:
        print(f"kraft.version was upgraded to {level}.")
    return 0


def _shown(name: str, level: int) -> str:
    from raftmeta.common.features import METADATA_VERSION, metadata_version_name

    return metadata_version_name(level) if name == METADATA_VERSION else str(level)


def run_describe(args: argparse.Namespace) -> int:
    connection = admin_connection(args)
    metadata = run_admin(
        connection,
        lambda client: client.describe_features(),
        "Error while describing features : ",
    )
    for line in describe_lines(metadata):
        print(line)
    return 0


def describe_lines(metadata: Any) -> list[str]:
    names = sorted(set(metadata.supported) | set(metadata.finalized))
    lines = []
    for name in names:
        low, high = metadata.supported.get(name, (0, 0))
        level = metadata.finalized.get(name, 0)
        lines.append(
            f"Feature: {name}\tSupportedMinVersion: {_shown(name, low)}\t"
            f"SupportedMaxVersion: {_shown(name, high)}\t"
            f"FinalizedVersionLevel: {_shown(name, level) if level else 'none'}\t"
            f"Epoch: {metadata.finalized_epoch}"
        )
    return lines
