"""Three real nodes on loopback: election, replication, failover and recovery from disk."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from raftmeta.server import NotLeaderError
from tests.server.harness import DEADLINE_S, Cluster, Member, run


def committed_log(member: Member) -> list[tuple[int, int, bool, bytes]]:
    return [(b.base_offset, b.epoch, b.is_control, b.payload) for b in member.recorder.batches]


def test_three_nodes_elect_a_leader_and_commit_appends_identically(tmp_path: Path) -> None:
    latencies: list[float] = []

    async def scenario(cluster: Cluster) -> None:
        leader = await cluster.wait_for_leader()
        assert sum(1 for m in cluster.members.values() if m.node.core.role.name == "LEADER") == 1
        for i in range(20):
            started = time.perf_counter()
            await cluster.append([f"one-{i}".encode()])
            latencies.append(time.perf_counter() - started)
        # Concurrent appends gather into few batches, and every future learns its own offset.
        appended = [leader.client.append([f"many-{i}".encode()]) for i in range(100)]
        offsets = [offset for offset, _ in appended]
        assert offsets == sorted(set(offsets))
        results = await asyncio.wait_for(
            asyncio.gather(*(future for _, future in appended)), DEADLINE_S
        )
        assert results == offsets
        await cluster.wait_for_commit(offsets[-1] + 1)
        logs = [committed_log(m) for m in cluster.members.values()]
        assert logs[0] == logs[1] == logs[2]
        values = leader.recorder.values
        assert values[:20] == [f"one-{i}".encode() for i in range(20)]
        assert values[20:] == [f"many-{i}".encode() for i in range(100)]
        batches_of_many = {b.base_offset for b in leader.recorder.batches if b.base_offset > 20}
        assert len(batches_of_many) < 100

    run(scenario, Cluster(tmp_path))
    latencies.sort()
    print(f"\ncommit latency over gRPC: median {latencies[len(latencies) // 2] * 1000:.1f} ms")


def test_append_on_a_follower_names_the_leader(tmp_path: Path) -> None:
    async def scenario(cluster: Cluster) -> None:
        leader = await cluster.wait_for_leader()
        await cluster.wait_for_commit(1)
        follower = next(m for m in cluster.members.values() if m is not leader)
        await cluster.changes.wait_for(lambda: follower.node.core.leader_id == leader.node.node_id)
        with pytest.raises(NotLeaderError) as caught:
            follower.client.append([b"x"])
        assert caught.value.leader_id == leader.node.node_id

    run(scenario, Cluster(tmp_path))


def test_graceful_stop_of_the_leader_elects_another_and_appends_resume(tmp_path: Path) -> None:
    failover: list[float] = []

    async def scenario(cluster: Cluster) -> None:
        leader = await cluster.wait_for_leader()
        await cluster.append([b"before"])
        old_epoch = leader.node.core.epoch
        _, pending = leader.client.append([b"in flight at resign"])
        started = time.perf_counter()
        await cluster.stop(leader.node.node_id, graceful=True)
        # Lost or kept by the next leader, the outcome is unknown to this client: not-leader.
        with pytest.raises(NotLeaderError):
            await pending
        successor = await cluster.wait_for_leader(newer_than=old_epoch)
        failover.append(time.perf_counter() - started)
        assert successor is not leader
        offset = await cluster.append([b"after"])
        await cluster.wait_for_commit(offset + 1)
        logs = [committed_log(m) for m in cluster.members.values()]
        assert len(logs) == 2 and logs[0] == logs[1]
        assert b"before" in successor.recorder.values
        assert successor.recorder.values[-1] == b"after"

    run(scenario, Cluster(tmp_path))
    print(f"\ngraceful failover: {failover[0] * 1000:.0f} ms")


def test_restarted_follower_recovers_its_log_from_disk_and_catches_up(tmp_path: Path) -> None:
    async def scenario(cluster: Cluster) -> None:
        leader = await cluster.wait_for_leader()
        for i in range(5):
            await cluster.append([f"early-{i}".encode()])
        follower_id = next(i for i in cluster.members if i != leader.node.node_id)
        follower = cluster.members[follower_id]
        await cluster.wait_for_commit(leader.recorder.committed_offset, [follower])
        held = follower.node.core.log.end_offset
        await cluster.stop(follower_id)
        for i in range(5):
            await cluster.append([f"late-{i}".encode()])
        restarted = await cluster.restart(follower_id)
        # Before it hears from anyone, its log is what it had made durable.
        assert restarted.node.core.log.end_offset >= held
        await cluster.wait_for_commit(leader.recorder.committed_offset, [restarted])
        assert committed_log(restarted) == committed_log(leader)
        assert restarted.recorder.values == leader.recorder.values

    run(scenario, Cluster(tmp_path))


def test_a_follower_that_missed_compacted_records_loads_the_leaders_snapshot(
    tmp_path: Path,
) -> None:
    async def scenario(cluster: Cluster) -> None:
        leader = await cluster.wait_for_leader()
        follower_id = next(i for i in cluster.members if i != leader.node.node_id)
        await cluster.stop(follower_id)
        for i in range(30):
            await cluster.append([f"record-{i:02d}".encode() * 4])
        await cluster.changes.wait_for(lambda: leader.node.core.log.start_offset > 0)
        restarted = await cluster.restart(follower_id)
        await cluster.changes.wait_for(lambda: restarted.recorder.snapshots_loaded > 0)
        await cluster.wait_for_commit(leader.recorder.committed_offset, [restarted])
        assert restarted.recorder.values == leader.recorder.values
        assert len(restarted.recorder.values) == 30

    run(scenario, Cluster(tmp_path, max_bytes_between_snapshots=300))
