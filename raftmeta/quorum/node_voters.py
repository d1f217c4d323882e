"""What a node works out about the voters around its core: the membership it starts from, the
endpoints a static quorum upgrades to, and whether a successor could be elected if it resigned."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from raftmeta.quorum.disk import NodeDisk
from raftmeta.quorum.membership import (
    controller_endpoint,
    discover_membership,
    starting_membership,
)
from raftmeta.quorum.node_clock import monotonic_ms
from raftmeta.quorum.settings import NodeSettings
from raftmeta.raft.core import RaftCore
from raftmeta.raft.membership import Membership
from raftmeta.raft.voters import Endpoint

log = logging.getLogger("raftmeta.quorum.node")
"""The node's own log: how it found its voters is reported under the node's name."""


async def resume_membership(
    settings: NodeSettings, disk: NodeDisk, static: Mapping[int, str]
) -> Membership:
    """Where the log starts: kept on disk, static, or asked of the bootstrap servers."""
    directory = disk.directory
    found = await asyncio.to_thread(
        starting_membership, directory.partition_dir, directory.latest_snapshot, static
    )
    if found is not None:
        return found
    discovered = await discover_membership(
        settings.bootstrap_servers,
        directory.cluster_id,
        settings.raft.fetch_timeout_ms * 20 / 1000,
        tls=settings.bootstrap_tls,
    )
    log.info(
        "node %d: learned the voters from the bootstrap servers: %s",
        settings.node_id,
        ", ".join(str(voter.key) for voter in discovered.voters),
    )
    return discovered


def dialled_endpoints(addresses: Mapping[int, str]) -> dict[int, tuple[Endpoint, ...]]:
    """The static voters' controller endpoints, where this node dials them: what the first
    VotersRecord of an upgrade to kraft.version 1 names (an address that names no endpoint
    is left out)."""
    endpoints: dict[int, tuple[Endpoint, ...]] = {}
    for node_id, address in addresses.items():
        try:
            endpoints[node_id] = (controller_endpoint(address),)
        except ValueError:
            continue
    return endpoints


def successor_reachable(core: RaftCore, node_id: int, fetch_timeout_ms: int) -> bool:
    """Whether enough voters fetched lately for a successor to node ``node_id`` to be elected
    at all; if not, lingering for one would only hold the stop up for nothing."""
    now = monotonic_ms()
    recent = sum(
        1
        for voter in core.describe().voters
        if voter.replica_id != node_id
        and voter.last_fetch_ms is not None
        and now - voter.last_fetch_ms < fetch_timeout_ms
    )
    return recent + 1 >= core.majority
