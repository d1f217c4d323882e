"""``raftmeta brokers``: the registered brokers as the active controller sees them.

One row per broker: id, rack, whether it is fenced (and so holds no leadership), its epoch
(the offset of its registration record), and how many partitions it leads and replicates. With
``--json``, one JSON object holding the cluster id, the controller and the brokers.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from raftmeta.cli.admin_options import add_connection_options, admin_connection, run_admin

FAILURE_PREFIX = "Error while describing the cluster : "

COLUMNS = ("ID", "HOST:PORT", "RACK", "FENCED", "SHUTTING-DOWN", "EPOCH", "LEADERS", "REPLICAS")


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "brokers",
        help="list the registered brokers: id, rack, fenced, epoch, leader count",
        description="List the brokers registered with the active controller.",
    )
    add_connection_options(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    connection = admin_connection(args)
    cluster = run_admin(connection, lambda client: client.describe_cluster(), FAILURE_PREFIX)
    if args.json:
        print(json.dumps(as_json(cluster), sort_keys=True))
    else:
        for line in table_lines(cluster.brokers):
            print(line)
    return 0


def as_json(cluster: Any) -> dict[str, object]:
    return {
        "cluster_id": cluster.cluster_id,
        "controller_id": cluster.controller_id,
        "brokers": [
            {
                "id": b.id,
                "host": b.host,
                "port": b.port,
                "rack": b.rack,
                "fenced": b.fenced,
                "in_controlled_shutdown": b.in_controlled_shutdown,
                "epoch": b.epoch,
                "leader_count": b.leader_count,
                "replica_count": b.replica_count,
            }
            for b in cluster.brokers
        ],
    }


def table_lines(brokers: Sequence[Any]) -> list[str]:
    """A header and one row per broker, columns padded to their widest cell."""
    rows = [COLUMNS] + [
        (
            str(b.id),
            f"{b.host}:{b.port}",
            b.rack if b.rack is not None else "-",
            "yes" if b.fenced else "no",
            "yes" if b.in_controlled_shutdown else "no",
            str(b.epoch),
            str(b.leader_count),
            str(b.replica_count),
        )
        for b in brokers
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
