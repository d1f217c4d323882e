"""``raftmeta topics``: create, list, describe, grow and delete topics, as ``kafka-topics.sh``.

The options and the output are kafka-topics.sh's, so scripts and habits carry over: "Created
topic T.", and a describe that prints a topic line (TopicId, PartitionCount,
ReplicationFactor, Configs) followed by one tab-indented line per partition (Leader, Replicas,
Isr). Errors are one line on stderr, "Error while executing topic command : ..." with the Kafka
error's name, and exit 1; a command line that cannot work exits 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from raftmeta.cli.admin_options import add_connection_options, admin_connection, run_admin
from raftmeta.cli.errors import USAGE_ERROR, CommandLineError

FAILURE_PREFIX = "Error while executing topic command : "

ACTIONS = ("create", "list", "describe", "alter", "delete")


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "topics",
        help="create, list, describe, alter or delete topics, as kafka-topics.sh",
        description="Create, list, describe, add partitions to, or delete topics, through the "
        "active controller. Exactly one of --create, --list, --describe, --alter, --delete.",
    )
    add_connection_options(parser, with_controller_flag=True)
    actions = parser.add_mutually_exclusive_group()
    actions.add_argument("--create", action="store_true", help="create --topic")
    actions.add_argument("--list", action="store_true", help="print every topic name")
    actions.add_argument("--describe", action="store_true", help="describe --topic, or every topic")
    actions.add_argument(
        "--alter", action="store_true", help="grow --topic to --partitions partitions"
    )
    actions.add_argument("--delete", action="store_true", help="delete --topic")
    parser.add_argument("--topic", help="the topic to act on")
    parser.add_argument(
        "--partitions",
        type=int,
        metavar="N",
        help="with --create: the partition count (default: num.partitions); "
        "with --alter: the new, larger count",
    )
    parser.add_argument(
        "--replication-factor",
        type=int,
        metavar="R",
        help="with --create: replicas per partition (default: default.replication.factor)",
    )
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --create: a topic config; repeat for several",
    )
    parser.add_argument(
        "--replica-assignment",
        metavar="B:B,B:B",
        help="with --create: each partition's replicas, partitions separated by commas and "
        "brokers by colons, e.g. 1:2,2:3 (excludes --partitions and --replication-factor); "
        "with --alter: the replicas of each new partition",
    )
    parser.add_argument(
        "--if-not-exists",
        action="store_true",
        help="with --create: succeed quietly when the topic already exists",
    )
    parser.add_argument(
        "--if-exists",
        action="store_true",
        help="with --alter, --delete or --describe --topic: succeed quietly when the topic "
        "does not exist",
    )
    parser.add_argument(
        "--under-replicated-partitions",
        action="store_true",
        help="with --describe: only partitions whose ISR is smaller than their replica list",
    )
    parser.add_argument(
        "--unavailable-partitions",
        action="store_true",
        help="with --describe: only partitions without a leader",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    action = next((name for name in ACTIONS if getattr(args, name)), None)
    if action is None:
        raise CommandLineError(
            "raftmeta topics: give one of --create, --list, --describe, --alter or --delete "
            "(see --help)",
            USAGE_ERROR,
        )
    _check_options(action, args)
    # Parsed before anything is sent, so a malformed option never half-runs a command.
    args.parsed_configs = parse_configs(args.config)
    args.parsed_assignment = (
        parse_replica_assignment(args.replica_assignment) if args.replica_assignment else None
    )
    connection = admin_connection(args)
    if action == "create":
        return run_admin(connection, lambda client: _create(client, args), FAILURE_PREFIX)
    if action == "list":
        return run_admin(connection, _list, FAILURE_PREFIX)
    if action == "describe":
        return run_admin(connection, lambda client: _describe(client, args), FAILURE_PREFIX)
    if action == "alter":
        return run_admin(connection, lambda client: _alter(client, args), FAILURE_PREFIX)
    return run_admin(connection, lambda client: _delete(client, args), FAILURE_PREFIX)


def _usage(message: str) -> CommandLineError:
    return CommandLineError(f"raftmeta topics: {message} (see --help)", USAGE_ERROR)


def _check_options(action: str, args: argparse.Namespace) -> None:
    """Refuse options that make no sense for ``action``, as kafka-topics.sh does."""
    needs_topic = action in ("create", "alter", "delete")
    if needs_topic and not args.topic:
        raise _usage(f"--{action} needs --topic")
    if action == "list" and args.topic:
        raise _usage("--list takes no --topic")
    if action != "create":
        for option, value in (
            ("--replication-factor", args.replication_factor),
            ("--config", args.config or None),
            ("--if-not-exists", args.if_not_exists or None),
        ):
            if value is not None:
                raise _usage(f"{option} goes only with --create")
    if action not in ("create", "alter") and args.partitions is not None:
        raise _usage("--partitions goes only with --create or --alter")
    if action not in ("create", "alter") and args.replica_assignment is not None:
        raise _usage("--replica-assignment goes only with --create or --alter")
    if action != "describe" and (args.under_replicated_partitions or args.unavailable_partitions):
        raise _usage(
            "--under-replicated-partitions and --unavailable-partitions go only with --describe"
        )
    if action in ("create", "list") and args.if_exists:
        raise _usage(f"--if-exists does not go with --{action}")
    if action == "alter" and args.partitions is None:
        raise _usage("--alter needs --partitions, the new partition count")
    if (
        action == "create"
        and args.replica_assignment is not None
        and (args.partitions is not None or args.replication_factor is not None)
    ):
        raise _usage("--replica-assignment excludes --partitions and --replication-factor")
    for option, value in (
        ("--partitions", args.partitions),
        ("--replication-factor", args.replication_factor),
    ):
        if value is not None and value < 1:
            raise _usage(f"{option} must be at least 1")


def parse_configs(entries: Sequence[str]) -> dict[str, str]:
    configs: dict[str, str] = {}
    for entry in entries:
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            raise _usage(f"--config {entry!r} is not KEY=VALUE")
        configs[key.strip()] = value.strip()
    return configs


def parse_replica_assignment(text: str) -> list[list[int]]:
    """``1:2,2:3`` as ``[[1, 2], [2, 3]]``: partitions by comma, replicas by colon."""
    assignment: list[list[int]] = []
    for partition in text.split(","):
        try:
            replicas = [int(broker) for broker in partition.strip().split(":")]
        except ValueError:
            raise _usage(
                f"--replica-assignment {text!r}: write broker ids as 1:2,2:3 "
                "(partitions separated by commas, brokers by colons)"
            ) from None
        assignment.append(replicas)
    return assignment


async def _create(client: Any, args: argparse.Namespace) -> int:
    from raftmeta.admin import NewTopic
    from raftmeta.errors import ErrorCode, KafkaError

    topic = NewTopic(
        args.topic,
        num_partitions=-1 if args.partitions is None else args.partitions,
        replication_factor=-1 if args.replication_factor is None else args.replication_factor,
        replica_assignment=args.parsed_assignment,
        config=args.parsed_configs,
    )
    try:
        await client.create_topics([topic])[args.topic]
    except KafkaError as error:
        if args.if_not_exists and error.code is ErrorCode.TOPIC_ALREADY_EXISTS:
            return 0
        raise
    print(f"Created topic {args.topic}.")
    return 0


async def _list(client: Any) -> int:
    topics = await client.describe_topics()
    for name in sorted(topics):
        print(name)
    return 0


async def _describe(client: Any, args: argparse.Namespace) -> int:
    if args.topic:
        found, description = await _unless_missing(
            client.describe_topics([args.topic])[args.topic], args
        )
        if not found:
            return 0
        descriptions = [description]
    else:
        every = await client.describe_topics()
        descriptions = [every[name] for name in sorted(every)]
    for description in descriptions:
        lines = describe_lines(
            description,
            under_replicated_only=args.under_replicated_partitions,
            unavailable_only=args.unavailable_partitions,
        )
        for line in lines:
            print(line)
    return 0


def describe_lines(
    description: Any, *, under_replicated_only: bool = False, unavailable_only: bool = False
) -> list[str]:
    """kafka-topics.sh --describe's lines for one topic. With a partition filter, as there,
    only the matching partitions' lines, without the topic line."""
    filtered = under_replicated_only or unavailable_only
    configs = ",".join(f"{key}={value}" for key, value in sorted(description.configs.items()))
    lines = (
        []
        if filtered
        else [
            f"Topic: {description.name}\tTopicId: {description.topic_id}\t"
            f"PartitionCount: {len(description.partitions)}\t"
            f"ReplicationFactor: {description.replication_factor}\tConfigs: {configs}"
        ]
    )
    for partition in description.partitions:
        under_replicated = len(partition.isr) < len(partition.replicas)
        unavailable = partition.leader < 0
        if filtered and not (
            (under_replicated_only and under_replicated) or (unavailable_only and unavailable)
        ):
            continue
        leader = partition.leader if partition.leader >= 0 else "none"
        lines.append(
            f"\tTopic: {description.name}\tPartition: {partition.id}\tLeader: {leader}\t"
            f"Replicas: {_ids(partition.replicas)}\tIsr: {_ids(partition.isr)}\t"
            # Kafka 4.x prints both KIP-966 lists on every line, empty while ELR is off.
            f"Elr: {_ids(partition.elr)}\tLastKnownElr: {_ids(partition.last_known_elr)}"
        )
    return lines


def _ids(ids: Sequence[int]) -> str:
    return ",".join(str(i) for i in ids)


async def _alter(client: Any, args: argparse.Namespace) -> int:
    from raftmeta.admin import NewPartitions

    return await _quietly_if_missing(
        client.create_partitions(
            [NewPartitions(args.topic, args.partitions, replica_assignment=args.parsed_assignment)]
        )[args.topic],
        args,
    )


async def _delete(client: Any, args: argparse.Namespace) -> int:
    return await _quietly_if_missing(client.delete_topics([args.topic])[args.topic], args)


async def _quietly_if_missing(future: Any, args: argparse.Namespace) -> int:
    await _unless_missing(future, args)
    return 0


async def _unless_missing(future: Any, args: argparse.Namespace) -> tuple[bool, Any]:
    """Whether the topic was there, and the future's result; a missing topic is an error
    unless ``--if-exists`` says it may be missing (as kafka-topics.sh)."""
    from raftmeta.errors import ErrorCode, KafkaError

    try:
        return True, await future
    except KafkaError as error:
        if error.code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            if args.if_exists:
                return False, None
            raise KafkaError(
                error.code, f"Topic '{args.topic}' does not exist as expected"
            ) from None
        raise
