"""An observer: a node outside the voter set that replicates the log but has no say in it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from raftmeta.quorum import NotLeaderError
from raftmeta.raft.roles import Role
from tests.quorum.harness import DEADLINE_S, Member, NodeCluster
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async

OBSERVER_ROLES = {Role.UNATTACHED, Role.FOLLOWER}
"""The only roles an observer may reach: it never campaigns, so never leads."""


def committed_log(member: Member) -> list[tuple[int, int, bool, bytes]]:
    return [(b.base_offset, b.epoch, b.is_control, b.payload) for b in member.recorder.batches]


@pytest.mark.parametrize("transport", ["grpc", "stream"])
def test_observer_replicates_the_log_but_never_counts_or_leads(
    tmp_path: Path, transport: str
) -> None:
    async def scenario(cluster: NodeCluster) -> None:
        observer = cluster.members[4]
        roles_seen: set[Role] = set()
        failures: list[BaseException] = []

        async def watch_observer() -> None:
            """Samples the observer's role often: a campaign would show as a role change."""
            while True:
                node = observer.node
                if node.running:
                    roles_seen.add(node.core.role)
                if node.failure is not None:
                    failures.append(node.failure)
                await asyncio.sleep(0.005)

        watcher = asyncio.create_task(watch_observer())
        try:
            leader = await cluster.wait_for_leader()
            assert leader.node.node_id in cluster.ids
            assert not observer.node.core.is_voter
            last = 0
            for i in range(10):
                last = await cluster.append([f"record-{i}".encode()])
            await cluster.wait_for_commit(last + 1)
            voters = [cluster.members[i] for i in cluster.ids]
            assert committed_log(observer) == committed_log(voters[0])
            assert all(committed_log(v) == committed_log(observer) for v in voters)
            assert observer.recorder.leader[0] == leader.node.node_id

            # With two of three voters gone only the observer still fetches: holding the
            # records must not let them commit.
            for voter in voters:
                if voter is not leader:
                    await cluster.stop(voter.node.node_id, graceful=False)
            high_watermark = leader.node.core.high_watermark
            offset, future = leader.client.append([b"uncommittable"])
            await wait_until_async(
                lambda: observer.node.core.log.end_offset > offset,
                f"the observer's log to pass offset {offset}",
            )
            assert leader.node.core.high_watermark == high_watermark <= offset
            assert not future.done()
            assert observer.recorder.committed_offset <= offset

            # Left alone, the leader resigns for want of a quorum; the observer then gives up
            # on it after its fetch timeout, which is when a voter would campaign: it must not.
            try:
                await asyncio.wait_for(future, DEADLINE_S)
                raise AssertionError("an append committed without a voter majority")
            except NotLeaderError:
                pass
            await wait_until_async(
                lambda: leader.node.core.role is not Role.LEADER, "the leader to resign"
            )
            await wait_until_async(
                lambda: observer.node.core.leader_id is None,
                "the observer to forget the leader",
            )
            assert observer.node.core.role in OBSERVER_ROLES
        finally:
            watcher.cancel()
        assert not failures
        assert roles_seen <= OBSERVER_ROLES, roles_seen

    run_scenario(scenario, NodeCluster(tmp_path, observers=1, transport=transport))
