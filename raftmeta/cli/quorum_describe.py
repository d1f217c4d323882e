"""``raftmeta quorum describe``'s output: the quorum as its leader sees it (asked by
:mod:`raftmeta.admin.quorum`), printed the way ``kafka-metadata-quorum describe`` prints it, so
operators can read it with the same habits.
"""

from __future__ import annotations

from collections.abc import Sequence

from raftmeta.admin.quorum import QuorumInfo, Replica


def _replica_entries(info: QuorumInfo, replicas: Sequence[Replica], *, voters: bool) -> str:
    """Node ids, or for a dynamic quorum Kafka's (3.9+) entries with directory ids and, for
    voters, endpoints."""
    if not info.dynamic:
        return "[" + ",".join(str(r.node_id) for r in replicas) + "]"
    entries = []
    for replica in replicas:
        entry = f'{{"id": {replica.node_id}, "directoryId": "{replica.directory_id or "-"}"'
        if voters:
            endpoints = ", ".join(f'"{e}"' for n, e in info.endpoints if n == replica.node_id)
            entry += f', "endpoints": [{endpoints}]'
        entries.append(entry + "}")
    return "[" + ", ".join(entries) + "]"


def status_lines(info: QuorumInfo) -> list[str]:
    rows = [
        ("ClusterId", info.cluster_id),
        ("LeaderId", str(info.leader_id)),
        ("LeaderEpoch", str(info.leader_epoch)),
        ("HighWatermark", str(info.high_watermark)),
        ("MaxFollowerLag", str(info.max_follower_lag)),
        ("MaxFollowerLagTimeMs", str(info.max_follower_lag_time_ms)),
        ("CurrentVoters", _replica_entries(info, info.voters, voters=True)),
        ("CurrentObservers", _replica_entries(info, info.observers, voters=False)),
    ]
    return [f"{name + ':':<24}{value}" for name, value in rows]


REPLICATION_COLUMNS = (
    "NodeId",
    "LogEndOffset",
    "Lag",
    "LastFetchTimestamp",
    "LastCaughtUpTimestamp",
    "Status",
)


def replication_lines(info: QuorumInfo) -> list[str]:
    """The leader first, then followers, then observers, as the Kafka tool orders them."""
    ordered: list[tuple[Replica, str]] = []
    if info.leader is not None:
        ordered.append((info.leader, "Leader"))
    ordered += [(f, "Follower") for f in info.followers]
    ordered += [(o, "Observer") for o in info.observers]
    columns: tuple[str, ...] = REPLICATION_COLUMNS
    table: list[tuple[str, ...]] = [
        (
            str(r.node_id),
            str(r.log_end_offset),
            str(info.lag(r)),
            str(r.last_fetch_timestamp),
            str(r.last_caught_up_timestamp),
            status,
        )
        for r, status in ordered
    ]
    if info.dynamic:  # Kafka 3.9's DirectoryId column, after NodeId
        columns = (columns[0], "DirectoryId", *columns[1:])
        table = [
            (row[0], r.directory_id or "-", *row[1:])
            for row, (r, _) in zip(table, ordered, strict=True)
        ]
    table = [columns, *table]
    widths = [max(len(row[i]) for row in table) for i in range(len(columns))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in table
    ]
