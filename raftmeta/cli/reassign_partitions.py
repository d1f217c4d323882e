"""``raftmeta reassign-partitions``: ``kafka-reassign-partitions.sh`` against a raftmeta quorum.

The actions, options, file formats and messages are Kafka's; ``--drain-broker`` is raftmeta's
addition to ``--generate``. The plans come from :mod:`placement.reassignment` (``--generate``
asks the configured ReplicaPlacer, KIP-660), the files are read by
:mod:`raftmeta.cli.reassignment_files`, and the moves go through the AdminClient's
``alter_partition_reassignments`` and ``list_partition_reassignments`` (KIP-455). Exit status as
every ``raftmeta`` command: 2 for a command line or file that cannot work, 1 when the cluster
refused or could not be reached.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raftmeta.cli.admin_options import add_connection_options, admin_connection, run_admin
from raftmeta.cli.errors import FAILURE, USAGE_ERROR, CommandLineError
from raftmeta.cli.reassignment_files import (
    ReassignmentFileError,
    assignment_json,
    parse_broker_list,
    read_reassignment,
    read_topics_to_move,
)
from raftmeta.common.elections import TopicPartition

if TYPE_CHECKING:
    from raftmeta.admin import AsyncAdminClient
    from raftmeta.admin.types import ClusterDescription, TopicDescription
    from raftmeta.common.reassignments import PartitionReassignment

ACTIONS = ("generate", "execute", "verify", "cancel", "list")
FAILURE_PREFIX = "Error while executing reassign-partitions command : "

DESCRIPTION = """\
Move partition replicas between brokers (KIP-455), in four steps: --generate proposes a
reassignment (or --drain-broker plans moving every replica off a broker), --execute starts it,
--verify reports which partitions have finished moving, and --cancel puts partitions still
moving back on their original replicas. --list shows every move in progress.

A move adds the new replicas first; the partition leaves its old replicas only once every new
one has caught up and joined the ISR, so a partition keeps its replication factor throughout.
Before --execute starts, the tool prints the partitions' current assignment: save it, and pass
it to --execute to move them back."""

EPILOG = """\
exit status: 0 on success; 2 for a bad option or file; 1 otherwise (a refused partition, an
unknown topic or broker, an unreachable quorum).

--reassignment-json-file format:
  {"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}
--topics-to-move-json-file format: {"version":1,"topics":[{"topic":"t"}]}
--placer-config: a properties file whose replica.placer.* keys choose and configure the placer,
  as on the controllers (their server.properties will do); without it, the default placer"""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "reassign-partitions",
        help="move partition replicas between brokers, as kafka-reassign-partitions.sh",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_connection_options(parser, with_controller_flag=True)
    for action, text in (
        (
            "generate",
            "propose a reassignment of --topics-to-move-json-file onto --broker-list, "
            "or (with --drain-broker) one moving every replica off brokers",
        ),
        ("execute", "start the reassignment in --reassignment-json-file"),
        ("verify", "report whether each partition of --reassignment-json-file has moved"),
        ("cancel", "cancel the moves of --reassignment-json-file still in progress"),
        ("list", "list every partition reassignment in progress"),
    ):
        parser.add_argument(f"--{action}", action="store_true", help=text)
    parser.add_argument(
        "--reassignment-json-file",
        type=Path,
        metavar="FILE",
        help="the reassignment (format below)",
    )
    parser.add_argument(
        "--topics-to-move-json-file", type=Path, metavar="FILE", help="--generate: the topics"
    )
    parser.add_argument(
        "--broker-list",
        metavar="ID[,ID...]",
        help="--generate: the brokers to place the topics on (with --drain-broker: the only "
        "brokers that may take the drained replicas)",
    )
    parser.add_argument(
        "--drain-broker",
        metavar="ID[,ID...]",
        help="--generate: plan moving every replica off these brokers, one move per replica, "
        "keeping each partition's replication factor and rack spread; every topic unless "
        "--topics-to-move-json-file names some",
    )
    parser.add_argument(
        "--placer-config", type=Path, metavar="FILE", help="--generate: the placer's settings"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    chosen = [action for action in ACTIONS if getattr(args, action)]
    if len(chosen) != 1:
        raise CommandLineError(
            "Command must include exactly one action: --generate, --execute, --verify, "
            "--cancel or --list",
            USAGE_ERROR,
        )
    action = chosen[0]
    try:
        if action == "generate":
            return _generate(args)
        if action == "list":
            return _list(args)
        if args.reassignment_json_file is None:
            raise CommandLineError(
                f'Missing required argument "[reassignment-json-file]" for --{action}',
                USAGE_ERROR,
            )
        targets = read_reassignment(args.reassignment_json_file)
    except ReassignmentFileError as error:
        raise CommandLineError(str(error), USAGE_ERROR) from None
    if action == "execute":
        return _execute(args, targets)
    if action == "verify":
        return _verify(args, targets)
    return _cancel(args, targets)


# --- --generate --------------------------------------------------------------------------------


def _generate(args: argparse.Namespace) -> int:
    drained = (
        None
        if args.drain_broker is None
        else parse_broker_list(args.drain_broker, "--drain-broker")
    )
    brokers = (
        None if args.broker_list is None else parse_broker_list(args.broker_list, "--broker-list")
    )
    topics = None
    if args.topics_to_move_json_file is not None:
        topics = read_topics_to_move(args.topics_to_move_json_file)
    if drained is None and (topics is None or brokers is None):
        raise CommandLineError(
            "--generate needs --topics-to-move-json-file and --broker-list (or --drain-broker)",
            USAGE_ERROR,
        )
    placer = _placer(args.placer_config) if drained is None else None
    connection = admin_connection(args)
    cluster, described = run_admin(
        connection, lambda client: _describe(client, topics), FAILURE_PREFIX
    )
    if cluster is None:
        raise CommandLineError(
            "--generate needs the brokers' racks, which only --bootstrap-server describes"
        )
    known = {broker.id for broker in cluster.brokers}
    unknown = sorted(set(brokers or ()) - known)
    if unknown:
        raise CommandLineError(
            "The given broker list contains unregistered brokers: "
            + ",".join(str(b) for b in unknown)
        )
    current = _assignment(described)
    if drained is not None:
        proposed = _drain(current, cluster, drained, brokers)
        current = {tp: current[tp] for tp in proposed}
    else:
        proposed = _propose(placer, current, cluster, brokers or [])
    print("Current partition replica assignment")
    print(assignment_json(current))
    print()
    print("Proposed partition reassignment configuration")
    print(assignment_json(proposed))
    return 0


def _drain(
    current: Mapping[TopicPartition, tuple[int, ...]],
    cluster: ClusterDescription,
    drained: Sequence[int],
    brokers: Sequence[int] | None,
) -> dict[TopicPartition, tuple[int, ...]]:
    """The drain plan: every replica off ``drained``, onto active brokers (of ``brokers``
    when given); a partition that must span fewer racks is warned about on stderr."""
    from placement.reassignment import DrainError, PartitionReplicas, PlanBroker, drain_plan

    allowed = None if brokers is None else set(brokers)
    plan_brokers = [
        PlanBroker(
            b.id,
            b.rack,
            not b.fenced and not b.in_controlled_shutdown and (allowed is None or b.id in allowed),
        )
        for b in cluster.brokers
    ]
    try:
        plan = drain_plan(
            (PartitionReplicas(tp.topic, tp.partition, r) for tp, r in current.items()),
            plan_brokers,
            drained,
        )
    except DrainError as error:
        raise CommandLineError(str(error)) from None
    for topic, partition in plan.spread_reduced:
        print(
            f"Warning: partition {topic}-{partition} spans fewer racks after the move: no "
            "other broker keeps its rack spread",
            file=sys.stderr,
        )
    return {
        TopicPartition(topic, partition): replicas
        for (topic, partition), replicas in plan.reassignments.items()
    }


def _placer(path: Path | None) -> Any:
    from placement import DEFAULT_PLACER_CLASS, PLACER_CLASS_KEY, PlacerLoadError, load_placer
    from raftmeta.cli.text_files import UnreadableFile, read_text_file
    from raftmeta.config.errors import ConfigError
    from raftmeta.config.properties import parse_properties

    settings: dict[str, str] = {}
    if path is not None:
        try:
            settings = parse_properties(read_text_file(path, "a properties file"))
        except (UnreadableFile, ConfigError) as error:
            raise CommandLineError(f"--placer-config {error}", USAGE_ERROR) from None
    placer_settings = {k: v for k, v in settings.items() if k.startswith("replica.placer.")}
    try:
        return load_placer(
            placer_settings.get(PLACER_CLASS_KEY, DEFAULT_PLACER_CLASS), placer_settings
        )
    except PlacerLoadError as error:
        raise CommandLineError(f"--placer-config: {error}", USAGE_ERROR) from None


def _propose(
    placer: Any,
    current: Mapping[TopicPartition, tuple[int, ...]],
    cluster: ClusterDescription,
    broker_ids: Sequence[int],
) -> dict[TopicPartition, tuple[int, ...]]:
    from placement import PlacementError, UsableBroker
    from placement.reassignment import propose_assignment

    by_id = {broker.id: broker for broker in cluster.brokers}
    usable = [
        UsableBroker(b, by_id[b].rack, by_id[b].fenced)
        for b in broker_ids
        if not by_id[b].in_controlled_shutdown
    ]
    topics: dict[str, list[tuple[int, ...]]] = {}
    for tp in sorted(current, key=lambda tp: (tp.topic, tp.partition)):
        topics.setdefault(tp.topic, []).append(current[tp])
    try:
        proposed = propose_assignment(placer, topics, usable)
    except PlacementError as error:
        raise CommandLineError(f"{FAILURE_PREFIX}{error.message} ({error.code.name})") from None
    return {TopicPartition(t, p): r for (t, p), r in proposed.items()}


# --- --execute, --verify, --cancel, --list -----------------------------------------------------


def _execute(args: argparse.Namespace, targets: Mapping[TopicPartition, tuple[int, ...]]) -> int:
    topics = sorted({tp.topic for tp in targets})

    async def work(
        client: AsyncAdminClient,
    ) -> tuple[dict[TopicPartition, tuple[int, ...]], dict[TopicPartition, BaseException]]:
        cluster, described = await _describe(client, topics)
        current = _assignment(described)
        missing = [tp for tp in targets if tp not in current]
        if missing:
            raise CommandLineError(f"Unable to find partition: {_names(missing)}")
        # Over the KAFKA listener the brokers are not described; the controller then refuses
        # an unknown broker itself, per partition (INVALID_REPLICA_ASSIGNMENT).
        known = None if cluster is None else {broker.id for broker in cluster.brokers}
        named = {b for replicas in targets.values() for b in replicas}
        unknown = [] if known is None else sorted(named - known)
        if unknown:
            raise CommandLineError(
                "The proposed assignment contains non-existent brokerIDs: "
                + ",".join(str(b) for b in unknown)
            )
        rollback = {tp: current[tp] for tp in targets}
        print("Current partition replica assignment")
        print()
        print(assignment_json(rollback))
        print()
        print("Save this to use as the --reassignment-json-file option during rollback")
        sys.stdout.flush()
        futures = client.alter_partition_reassignments(dict(targets))
        return rollback, await _outcomes(futures)

    _, failed = run_admin(admin_connection(args), work, FAILURE_PREFIX)
    if failed:
        print("Error reassigning partition(s):")
        for tp, error in failed.items():
            print(f"{tp}: {_error_text(error)}")
        return FAILURE
    print(f"Successfully started partition reassignments for {_names(targets)}")
    return 0


def _verify(args: argparse.Namespace, targets: Mapping[TopicPartition, tuple[int, ...]]) -> int:
    topics = sorted({tp.topic for tp in targets})

    async def work(
        client: AsyncAdminClient,
    ) -> tuple[dict[TopicPartition, tuple[int, ...]], dict[TopicPartition, PartitionReassignment]]:
        _, described = await _describe(client, topics)
        moving = await client.list_partition_reassignments(list(targets))
        return _assignment(described), moving

    current, moving = run_admin(admin_connection(args), work, FAILURE_PREFIX)
    print("Status of partition reassignment:")
    status = 0
    for tp, target in targets.items():
        if tp in moving:
            print(f"Reassignment of partition {tp} is still in progress.")
        elif current.get(tp) == target:
            print(f"Reassignment of partition {tp} is completed.")
        else:
            status = FAILURE
            found = current.get(tp)
            print(
                f"There is no active reassignment of partition {tp}, but replica set is "
                f"{_replica_list(found)} rather than {_replica_list(target)}."
            )
    return status


def _cancel(args: argparse.Namespace, targets: Mapping[TopicPartition, tuple[int, ...]]) -> int:
    async def work(
        client: AsyncAdminClient,
    ) -> tuple[list[TopicPartition], dict[TopicPartition, BaseException]]:
        moving = await client.list_partition_reassignments(list(targets))
        active = [tp for tp in targets if tp in moving]
        if not active:
            return [], {}
        futures = client.alter_partition_reassignments({tp: None for tp in active})
        return active, await _outcomes(futures)

    active, failed = run_admin(admin_connection(args), work, FAILURE_PREFIX)
    if not active:
        print("None of the specified partition reassignments are active.")
        return 0
    cancelled = [tp for tp in active if tp not in failed]
    if cancelled:
        print(f"Successfully cancelled partition reassignments for: {_names(cancelled)}")
    if failed:
        print("Error cancelling partition reassignment(s):")
        for tp, error in failed.items():
            print(f"{tp}: {_error_text(error)}")
        return FAILURE
    return 0


def _list(args: argparse.Namespace) -> int:
    async def work(client: AsyncAdminClient) -> dict[TopicPartition, PartitionReassignment]:
        return await client.list_partition_reassignments()

    moving = run_admin(admin_connection(args), work, FAILURE_PREFIX)
    if not moving:
        print("No partition reassignments found.")
        return 0
    print("Current partition reassignments:")
    for tp in sorted(moving, key=lambda tp: (tp.topic, tp.partition)):
        entry = moving[tp]
        print(
            f"{tp}: replicas: {_ids(entry.replicas)}. adding: {_ids(entry.adding_replicas)}. "
            f"removing: {_ids(entry.removing_replicas)}."
        )
    return 0


# --- helpers -----------------------------------------------------------------------------------


async def _describe(
    client: AsyncAdminClient, topics: Sequence[str] | None
) -> tuple[ClusterDescription | None, dict[str, TopicDescription]]:
    """The cluster (``None`` where the door does not serve DescribeCluster: the controllers'
    KAFKA listeners) and the named topics (every topic for ``None``); an unknown topic fails."""
    from raftmeta.errors import ErrorCode, KafkaError

    cluster: ClusterDescription | None = None
    try:
        cluster = await client.describe_cluster()
    except KafkaError as error:
        if error.code is not ErrorCode.UNSUPPORTED_VERSION:
            raise
    if topics is None:
        return cluster, await client.describe_topics()
    futures = client.describe_topics(list(topics))
    described: dict[str, TopicDescription] = {}
    for name, future in futures.items():
        try:
            described[name] = await future
        except KafkaError as error:
            if error.code is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                raise CommandLineError(f"Topic {name} not found") from None
            raise
    return cluster, described


def _assignment(described: Mapping[str, TopicDescription]) -> dict[TopicPartition, tuple[int, ...]]:
    return {
        TopicPartition(name, partition.id): tuple(partition.replicas)
        for name, topic in described.items()
        for partition in topic.partitions
    }


async def _outcomes(futures: Mapping[TopicPartition, Any]) -> dict[TopicPartition, BaseException]:
    failed: dict[TopicPartition, BaseException] = {}
    for tp, future in futures.items():
        try:
            await future
        except Exception as error:  # each partition's refusal is reported on its own line
            failed[tp] = error
    return failed


def _error_text(error: BaseException) -> str:
    from raftmeta.errors import KafkaError

    if isinstance(error, KafkaError):
        return f"{error.code.name}: {error.message}" if error.message else error.code.name
    return f"{type(error).__name__}: {error}"


def _names(partitions: Any) -> str:
    return ",".join(str(tp) for tp in partitions)


def _ids(brokers: Sequence[int]) -> str:
    return ",".join(str(b) for b in brokers)


def _replica_list(replicas: Sequence[int] | None) -> str:
    return "[]" if replicas is None else "[" + ", ".join(str(b) for b in replicas) + "]"
