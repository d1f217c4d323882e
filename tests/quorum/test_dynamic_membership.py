"""Voter changes on real ``RaftNode``s over loopback gRPC: AddRaftVoter / RemoveRaftVoter with
Kafka's codes, voters learned by a node that knows only a bootstrap server, and a snapshot's
voter set surviving restarts (the VotersRecord that set it is no longer in the log)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import grpc

from raftmeta.errors import ErrorCode
from raftmeta.quorum import RaftNode, wire
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC
from raftmeta.raft.membership import Membership
from raftmeta.raft.voters import Endpoint, ReplicaKey, Voter, VoterSet
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR
from raftmeta.storage.membership_files import bootstrap_path, write_membership
from raftmeta.storage.meta_properties import read_meta_properties
from tests.quorum.harness import CLUSTER_ID, Member, NodeCluster
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async


class DynamicCluster(NodeCluster):
    """Voters 1..size formatted as ``--initial-controllers`` would (a bootstrap voter set with
    directory ids and endpoints); observers formatted with ``--no-initial-controllers``, given
    only node 1 as their bootstrap server."""

    def voter(self, node_id: int) -> Voter:
        directory = read_meta_properties(self.data_dir(node_id) / "meta.properties").directory_id
        endpoint = Endpoint("CONTROLLER", "127.0.0.1", self.ports[node_id])
        return Voter(ReplicaKey(node_id, directory), (endpoint,))

    async def start(self) -> None:
        await self.serve_members()
        first = Membership(KRAFT_VERSION_DYNAMIC, VoterSet(self.voter(i) for i in self.ids))
        for node_id in self.ids:
            write_membership(bootstrap_path(self.data_dir(node_id) / METADATA_PARTITION_DIR), first)
        for member in self.members.values():
            member.node.settings = dataclasses.replace(
                member.node.settings, bootstrap_servers=(f"127.0.0.1:{self.ports[1]}",)
            )
            await member.node.start({})

    async def restart(self, node_id: int) -> Member:
        member = self._member(node_id)
        self.members[node_id] = member
        await member.serve()
        await member.node.start({})
        return member


async def answer(
    port: int, request: pb.AddRaftVoterRequest | pb.RemoveRaftVoterRequest
) -> pb.VoterChangeResponse:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.RaftStub(channel)
        if isinstance(request, pb.AddRaftVoterRequest):
            response = await stub.AddRaftVoter(request, timeout=10)
        else:
            response = await stub.RemoveRaftVoter(request, timeout=10)
    assert isinstance(response, pb.VoterChangeResponse)
    return response


def test_an_observer_joins_and_its_set_outlives_snapshots_and_restarts(tmp_path: Path) -> None:
    async def scenario(cluster: DynamicCluster) -> None:
        leader = await cluster.wait_for_leader()
        observer = cluster.members[4]
        assert observer.node.core.kraft_version == KRAFT_VERSION_DYNAMIC
        assert observer.node.core.voters == frozenset({1, 2, 3})
        await cluster.append([b"before"])
        new_voter = cluster.voter(4)
        port = cluster.ports[leader.node.node_id]
        follower = next(i for i in cluster.ids if i != leader.node.node_id)

        def add(voter: Voter) -> pb.AddRaftVoterRequest:
            return pb.AddRaftVoterRequest(
                cluster_id=CLUSTER_ID, timeout_ms=10_000, voter=wire.voter_to_pb(voter)
            )

        refused = await answer(cluster.ports[follower], add(new_voter))
        assert refused.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert refused.leader_endpoint == f"127.0.0.1:{port}"
        duplicate = await answer(port, add(cluster.voter(2)))
        assert duplicate.error_code == ErrorCode.DUPLICATE_VOTER, duplicate
        foreign = pb.AddRaftVoterRequest(cluster_id="other", voter=wire.voter_to_pb(new_voter))
        assert (await answer(port, foreign)).error_code == ErrorCode.INCONSISTENT_CLUSTER_ID

        await cluster.wait_until(
            lambda: observer.recorder.committed_offset >= leader.recorder.committed_offset,
            "the observer to catch up",
        )
        added = await answer(port, add(new_voter))
        assert added.error_code == ErrorCode.NONE, added.error_message
        assert leader.node.core.voters == frozenset({1, 2, 3, 4})
        await cluster.wait_until(lambda: observer.node.core.is_voter, "node 4 to be a voter")

        wrong_key = pb.RemoveRaftVoterRequest(
            cluster_id=CLUSTER_ID, voter_id=2, voter_directory_id="not-its-directory"
        )
        assert (await answer(port, wrong_key)).error_code == ErrorCode.INVALID_VOTER_KEY
        missing = pb.RemoveRaftVoterRequest(cluster_id=CLUSTER_ID, voter_id=9)
        assert (await answer(port, missing)).error_code == ErrorCode.VOTER_NOT_FOUND

        # Snapshots now cover the VotersRecord: restarted nodes know node 4 from the set kept
        # with their snapshot, not from their log or the bootstrap file (three voters).
        for i in range(30):
            await cluster.append([f"record-{i:02d}".encode() * 4])
        for node_id in (4, follower):
            trimmed = cluster.members[node_id].node

            def trimmed_log(node: RaftNode = trimmed) -> bool:
                return node.core.log.start_offset > 10

            await cluster.wait_until(trimmed_log, f"node {node_id} to trim")
            await cluster.stop(node_id)
            restarted = await cluster.restart(node_id)
            assert restarted.node.core.voter_set == leader.node.core.voter_set
            assert restarted.node.voter_addresses[4] == f"127.0.0.1:{cluster.ports[4]}"
        offset = await cluster.append([b"after"])
        await cluster.wait_for_commit(offset + 1)

    run_scenario(scenario, DynamicCluster(tmp_path, observers=1, max_bytes_between_snapshots=300))


def test_a_static_quorum_is_upgraded_to_dynamic_and_stays_so_after_a_restart(
    tmp_path: Path,
) -> None:
    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        await cluster.append([b"static"])
        port = cluster.ports[leader.node.node_id]

        def upgrade(level: int, *, validate_only: bool = False) -> pb.UpdateKRaftVersionRequest:
            return pb.UpdateKRaftVersionRequest(
                cluster_id=CLUSTER_ID,
                kraft_version=level,
                timeout_ms=10_000,
                validate_only=validate_only,
            )

        async def update(request: pb.UpdateKRaftVersionRequest) -> pb.VoterChangeResponse:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                response = await pb_grpc.RaftStub(channel).UpdateKRaftVersion(request, timeout=10)
            assert isinstance(response, pb.VoterChangeResponse)
            return response

        async def answered(
            request: pb.UpdateKRaftVersionRequest,
        ) -> pb.VoterChangeResponse | None:
            # REQUEST_TIMED_OUT asks for a retry (a voter has not fetched since the leader was
            # elected, say), as the tool retries it.
            response = await update(request)
            return None if response.error_code == ErrorCode.REQUEST_TIMED_OUT else response

        assert (await update(upgrade(2))).error_code == ErrorCode.UNSUPPORTED_VERSION
        checked = await wait_until_async(
            lambda: answered(upgrade(1, validate_only=True)), "the validation to be answered"
        )
        assert checked.error_code == ErrorCode.NONE, checked.error_message
        assert leader.node.core.kraft_version == 0, "a validation must not write"
        done = await update(upgrade(1))
        assert done.error_code == ErrorCode.NONE, done.error_message
        directories = {
            i: read_meta_properties(cluster.data_dir(i) / "meta.properties").directory_id
            for i in cluster.ids
        }
        expected = {ReplicaKey(i, directories[i]) for i in cluster.ids}
        for member in cluster.members.values():
            await cluster.wait_until(
                lambda m=member: set(m.node.core.voter_set.keys) == expected,  # type: ignore[misc]
                f"node {member.node.node_id} to hold the first VotersRecord",
            )
            assert member.node.core.kraft_version == KRAFT_VERSION_DYNAMIC
        assert (await update(upgrade(0))).error_code == ErrorCode.INVALID_UPDATE_VERSION
        follower = next(i for i in cluster.ids if i != leader.node.node_id)
        await cluster.stop(follower)
        restarted = await cluster.restart(follower)
        assert restarted.node.core.kraft_version == KRAFT_VERSION_DYNAMIC
        assert set(restarted.node.core.voter_set.keys) == expected

    run_scenario(scenario, NodeCluster(tmp_path))
