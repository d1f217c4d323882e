"""``raftmeta leader-election``: ``kafka-leader-election.sh`` against a raftmeta quorum.

The options, messages, output lines and exit statuses are Kafka's (the rules are in
:mod:`raftmeta.cli.election_request` and :mod:`raftmeta.cli.election_report`, the settings file
in :mod:`raftmeta.cli.client_config`); this module only parses the command line, asks the
AdminClient and prints. The exit status follows ``raftmeta``'s one rule rather than Kafka's
tool (which exits 1 for everything): 2 for a command line or settings file that cannot work,
whether argparse or one of Kafka's checks refuses it, 1 when the election itself failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping
from typing import Any

from raftmeta.cli import election_report, election_request
from raftmeta.cli.client_config import (
    DEFAULT_API_TIMEOUT_MS,
    KNOWN_KEYS,
    REQUEST_TIMEOUT_MS,
)
from raftmeta.cli.election_request import ElectionRequest
from raftmeta.cli.errors import USAGE_ERROR, CommandLineError
from raftmeta.common.elections import TopicPartition

DESCRIPTION = """\
Move partition leadership to the preferred replica, or, in an emergency, elect an out-of-sync
replica of a partition that has no leader.

A partition's preferred replica is the first broker in its replica list. Replica placement
spreads first replicas evenly over the brokers, so when every partition is led by its preferred
replica the leadership load is balanced. After a broker restarts, the partitions it used to
lead are led by other replicas until a preferred election moves them back.

PREFERRED elects the preferred replica if it is alive and in the ISR (a partition with no
leader at all gets the first live ISR member instead). UNCLEAN elects any live replica, in sync
or not, for a partition that has no leader; it may lose committed data, and the new leader
starts in the RECOVERING state with itself as the only ISR member.

This tool is rarely needed for PREFERRED elections: with auto.leader.rebalance.enable=true (the
default) the controller moves leadership back on its own every
leader.imbalance.check.interval.seconds, for brokers whose share of partitions led by others is
above leader.imbalance.per.broker.percentage, once they have been back for
leader.imbalance.catch.up.ms (KIP-183)."""

EPILOG = f"""\
exit status: 0 when every partition was elected or already had a valid leader; 2 for a bad
option or settings file; 1 otherwise (a partition not elected, an unreachable quorum, a timeout,
a refused authorization).

--path-to-json-file format: {{"partitions": [{{"topic": "foo", "partition": 1}}, ...]}}
--admin.config keys: {KNOWN_KEYS[0]}, {KNOWN_KEYS[1]} (default {REQUEST_TIMEOUT_MS}),
{KNOWN_KEYS[2]} (default {DEFAULT_API_TIMEOUT_MS}); other keys are ignored with a warning"""


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "leader-election",
        help="elect preferred (or, unclean, out-of-sync) leaders, as kafka-leader-election.sh",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--bootstrap-server",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="REQUIRED: one or more nodes of the quorum; the active controller answers",
    )
    parser.add_argument(
        "--bootstrap-controller",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="instead of --bootstrap-server: one or more controllers' KAFKA listeners (KIP-919); "
        "the election goes over Kafka's protocol to the active controller",
    )
    parser.add_argument(
        "--election-type",
        metavar="PREFERRED|UNCLEAN",
        help="REQUIRED: the kind of election, in any case",
    )
    parser.add_argument(
        "--topic",
        help="the topic of the partition to elect; needs --partition "
        "(exclusive with --all-topic-partitions and --path-to-json-file)",
    )
    parser.add_argument("--partition", metavar="N", help="the partition of --topic to elect")
    parser.add_argument(
        "--all-topic-partitions",
        action="store_true",
        help="every partition of every topic; only those where an election ran or failed are "
        "listed",
    )
    parser.add_argument(
        "--path-to-json-file",
        metavar="FILE",
        help="a JSON file naming the partitions (format below); duplicates are refused",
    )
    parser.add_argument(
        "--admin.config",
        dest="admin_config",
        metavar="FILE",
        help="a properties file of client settings (keys below)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.bootstrap_server is not None and args.bootstrap_controller is not None:
        raise CommandLineError(
            "Only one of --bootstrap-server or --bootstrap-controller can be given", USAGE_ERROR
        )
    try:
        request = election_request.validate(
            bootstrap_server=args.bootstrap_server or args.bootstrap_controller,
            election_type=args.election_type,
            topic=args.topic,
            partition=args.partition,
            all_topic_partitions=args.all_topic_partitions,
            path_to_json_file=args.path_to_json_file,
            admin_config=args.admin_config,
        )
    except election_request.ElectionCommandError as error:
        raise CommandLineError(str(error), USAGE_ERROR) from None
    request.admin.warn_about_ignored_keys()
    try:
        results = elect(request, over_kafka=args.bootstrap_controller is not None)
    except election_request.ElectionCommandError as error:  # the settings, refused by the client
        raise CommandLineError(str(error), USAGE_ERROR) from None
    except Exception as error:  # every failure of the request as a whole: one line, exit 1
        print(election_report.request_failure_line(error))
        return 1
    report = election_report.report(request.election_type, results)
    for line in report.lines:
        print(line)
    if report.failed:
        print(election_report.failure_summary(report.failed), file=sys.stderr)
    sys.stdout.flush()
    return report.exit_status


def elect(
    request: ElectionRequest, *, over_kafka: bool = False
) -> Mapping[TopicPartition, BaseException | None]:
    """Sends the election through the AdminClient (``over_kafka``: Kafka's protocol to the
    controllers' KAFKA listeners) and waits for every partition's answer.

    The request carries ``request.timeout.ms`` to the controller; the tool waits at most
    ``default.api.timeout.ms`` for the answer, as Kafka's admin client does.
    """
    from raftmeta.admin import AdminClient

    if request.partitions == ():
        return {}  # Kafka's controller answers an empty list at once, with nothing
    admin = request.admin
    try:
        client = AdminClient(admin.admin_config(request.bootstrap_server, controllers=over_kafka))
    except ValueError as error:
        raise election_request.ElectionCommandError(str(error)) from None
    wait_s = admin.default_api_timeout_ms / 1000
    deadline = time.monotonic() + wait_s
    try:
        result = client.elect_leaders(
            request.election_type,
            None if request.partitions is None else list(request.partitions),
        )
        answers = result.partitions()
        # The wait is measured from the call, so an answer that beat a zero wait (the
        # controller can be that quick) still counts as late: the outcome of a timeout
        # must not depend on how fast the quorum is.
        remaining_s = deadline - time.monotonic()
        if remaining_s <= 0:
            raise TimeoutError("no answer within default.api.timeout.ms")
        return dict(answers.result(timeout=remaining_s))
    finally:
        client.close()
