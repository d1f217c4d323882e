"""``raftmeta cluster``: the cluster's id, and the unregistration of a broker that is gone for
good, in the shape of Kafka's ``kafka-cluster.sh``.

``cluster-id`` prints ``Cluster ID: <id>`` from either door. ``unregister --id N`` removes
broker N's registration through the controllers' KAFKA listeners (``--bootstrap-controller``,
Kafka's UnregisterBroker, which needs ALTER on the cluster): the broker is taken out of every
ISR, its leaderships move, and no image holds it afterwards. Over ``--bootstrap-server`` (the
gRPC door, which carries UnregisterBroker only for the broker itself) it fails, as Kafka's tool
fails against a cluster without the API. A broker still running registers again at its next
heartbeat, so it is stopped first.
"""

from __future__ import annotations

import argparse
from typing import Any

from raftmeta.cli.admin_options import add_connection_options, admin_connection, run_admin
from raftmeta.cli.errors import USAGE_ERROR, CommandLineError
from raftmeta.cli.parser import add_actions

CLUSTER_ID_FAILURE = "Error while describing the cluster : "
UNREGISTER_FAILURE = "Error while unregistering the broker : "


def register(commands: Any) -> None:
    cluster = commands.add_parser(
        "cluster",
        help="the cluster id, or unregister a broker gone for good, as kafka-cluster.sh",
        description="The cluster id, or unregister a broker, as Kafka's kafka-cluster.sh does.",
    )
    actions = add_actions(cluster, "cluster_command")
    cluster_id = actions.add_parser("cluster-id", help="print the cluster's id")
    add_connection_options(cluster_id, with_controller_flag=True)
    cluster_id.set_defaults(handler=run_cluster_id)
    unregister = actions.add_parser(
        "unregister",
        help="remove a broker's registration (over --bootstrap-controller; ALTER on the cluster)",
    )
    add_connection_options(unregister, with_controller_flag=True)
    unregister.add_argument("--id", required=True, type=int, help="the broker's id")
    unregister.set_defaults(handler=run_unregister)


def run_cluster_id(args: argparse.Namespace) -> int:
    connection = admin_connection(args)
    found = run_admin(connection, lambda client: client.describe_cluster_id(), CLUSTER_ID_FAILURE)
    print(f"Cluster ID: {found}")
    return 0


def run_unregister(args: argparse.Namespace) -> int:
    if args.id < 0:
        raise CommandLineError("--id must be a broker id (>= 0)", USAGE_ERROR)
    connection = admin_connection(args)
    run_admin(connection, lambda client: client.unregister_broker(args.id), UNREGISTER_FAILURE)
    print(f"Broker {args.id} is no longer registered.")
    return 0
