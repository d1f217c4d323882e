"""kraft.version 0 -> 1 on the leader: a static quorum's voters become its first VotersRecord,
each under the directory id its fetches carry."""

from __future__ import annotations

from raftmeta.errors import ErrorCode
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC
from raftmeta.raft.voters import Endpoint, ReplicaKey
from tests.raft.builder import CoreCluster, new_core

ENDPOINTS = {i: (Endpoint("CONTROLLER", "127.0.0.1", 9090 + i),) for i in (1, 2, 3)}


def static_cluster_with_directories() -> CoreCluster:
    """Three static voters (controller.quorum.voters) whose directories have ids."""
    cluster = CoreCluster()
    cluster.cores = {
        i: new_core(i, frozenset({1, 2, 3}), seed=100 + i, directory_id=f"d{i}") for i in (1, 2, 3)
    }
    cluster.elect()
    cluster.advance_time(cluster.now_ms + 300)
    return cluster


def test_the_upgrade_records_every_voter_under_its_directory_and_everyone_adopts_it() -> None:
    cluster = static_cluster_with_directories()
    leader = cluster.leader()
    checked = leader.upgrade_to_dynamic(ENDPOINTS, cluster.now_ms, validate_only=True)
    assert checked.error is ErrorCode.NONE and checked.offset is None
    assert leader.kraft_version == 0
    result = leader.upgrade_to_dynamic(ENDPOINTS, cluster.now_ms)
    assert result.error is ErrorCode.NONE and result.offset is not None
    cluster.pump()
    assert leader.high_watermark > result.offset
    for core in cluster.cores.values():
        assert core.kraft_version == KRAFT_VERSION_DYNAMIC
        assert core.voter_set.keys == tuple(ReplicaKey(i, f"d{i}") for i in (1, 2, 3))
        assert core.voter_set.voter(2) is not None
    again = leader.upgrade_to_dynamic(ENDPOINTS, cluster.now_ms)
    assert again.error is ErrorCode.NONE and again.offset is None, "already dynamic: no-op"


def test_the_upgrade_waits_for_every_voter_and_needs_their_endpoints() -> None:
    cluster = static_cluster_with_directories()
    leader = cluster.leader()
    down = next(i for i in (1, 2, 3) if i != leader.node_id)
    cluster.down.add(down)
    cluster.advance_time(cluster.now_ms + 3 * leader.config.fetch_timeout_ms // 4)
    cluster.advance_time(cluster.now_ms + leader.config.fetch_timeout_ms // 2)
    missing = leader.upgrade_to_dynamic(ENDPOINTS, cluster.now_ms)
    assert missing.error is ErrorCode.REQUEST_TIMED_OUT and f"voter {down}" in missing.message
    cluster.down.clear()
    cluster.advance_time(cluster.now_ms + 300)
    leader = cluster.leader()
    no_endpoint = dict(ENDPOINTS)
    del no_endpoint[down]
    refused = leader.upgrade_to_dynamic(no_endpoint, cluster.now_ms)
    assert refused.error is ErrorCode.INVALID_REQUEST and f"voter {down}" in refused.message
    assert leader.kraft_version == 0
