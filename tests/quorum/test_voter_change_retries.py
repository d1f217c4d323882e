"""``quorum add-controller`` / ``remove-controller`` are safe to retry: a change already made
(DUPLICATE_VOTER for the very voter asked, VOTER_NOT_FOUND for a voter already gone) is a
success, while the same codes for a different state stay errors. Real ``RaftNode``s over
loopback gRPC, the tool's own client code on a thread."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from raftmeta.cli import quorum_membership as qm
from raftmeta.quorum import wire
from raftmeta.raft.voters import Endpoint, ReplicaKey, Voter
from raftmeta.rpc import raft_pb2 as pb
from tests.quorum.harness import CLUSTER_ID
from tests.quorum.test_dynamic_membership import DynamicCluster
from tests.support.scenario import run_scenario


def test_a_change_already_made_is_a_success_and_a_different_state_is_not(
    tmp_path: Path,
) -> None:
    async def scenario(cluster: DynamicCluster) -> None:
        leader = await cluster.wait_for_leader()
        servers = [f"127.0.0.1:{cluster.ports[leader.node.node_id]}"]

        def add(voter: Voter) -> qm.ChangeOutcome:
            request = pb.AddRaftVoterRequest(
                cluster_id=CLUSTER_ID, timeout_ms=5_000, voter=wire.voter_to_pb(voter)
            )
            return qm.change_voters(servers, CLUSTER_ID, request, 5.0)

        def remove(node_id: int, directory_id: str) -> qm.ChangeOutcome:
            request = pb.RemoveRaftVoterRequest(
                cluster_id=CLUSTER_ID, voter_id=node_id, voter_directory_id=directory_id
            )
            return qm.change_voters(servers, CLUSTER_ID, request, 5.0)

        voter = cluster.voter(2)
        assert (await asyncio.to_thread(add, voter)).made_before
        assert (await asyncio.to_thread(remove, 9, "AAAAAAAAAAAAAAAAAAAAAA")).made_before
        other_directory = Voter(ReplicaKey(2, "AAAAAAAAAAAAAAAAAAAAAA"), voter.endpoints)
        with pytest.raises(qm.VoterChangeError, match="DUPLICATE_VOTER"):
            await asyncio.to_thread(add, other_directory)
        moved = Voter(voter.key, (Endpoint("CONTROLLER", "127.0.0.1", 1),))
        with pytest.raises(qm.VoterChangeError, match="DUPLICATE_VOTER"):
            await asyncio.to_thread(add, moved)
        with pytest.raises(qm.VoterChangeError, match="INVALID_VOTER_KEY"):
            await asyncio.to_thread(remove, 2, "AAAAAAAAAAAAAAAAAAAAAA")
        assert leader.node.core.voters == frozenset({1, 2, 3})

    run_scenario(scenario, DynamicCluster(tmp_path))
