"""Voter changes are authorized like the Admin service's requests: ALTER on the CLUSTER for
AddRaftVoter, RemoveRaftVoter and UpdateKRaftVersion, CLUSTER_ACTION for UpdateRaftVoter, for
the principal the caller's bearer token names. Real ``RaftNode``s over loopback gRPC; a
refused change gets CLUSTER_AUTHORIZATION_FAILED and appends nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc

from raftmeta.auth import AccessControl, Acl, AclAuthorizer
from raftmeta.errors import ErrorCode
from raftmeta.quorum import wire
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from tests.quorum.harness import CLUSTER_ID, Member
from tests.quorum.test_dynamic_membership import DynamicCluster
from tests.support.scenario import run_scenario

TOKENS = {"operator-token": "User:operator", "node-token": "User:node", "guest-token": "User:guest"}
ACLS = (
    Acl("User:operator", "Alter", "Cluster", "kafka-cluster"),
    Acl("User:node", "ClusterAction", "Cluster", "kafka-cluster"),
)

VoterChange = (
    pb.AddRaftVoterRequest
    | pb.RemoveRaftVoterRequest
    | pb.UpdateRaftVoterRequest
    | pb.UpdateKRaftVersionRequest
)


class GuardedCluster(DynamicCluster):
    """A dynamic quorum whose nodes authorize voter changes with an ACL authorizer."""

    def _member(self, node_id: int) -> Member:
        member = super()._member(node_id)
        member.access = AccessControl(AclAuthorizer(ACLS), tokens=TOKENS)
        return member


async def ask(port: int, request: VoterChange, token: str | None) -> pb.VoterChangeResponse:
    metadata = () if token is None else (("authorization", f"Bearer {token}"),)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.RaftStub(channel)
        method: Any = {
            pb.AddRaftVoterRequest: stub.AddRaftVoter,
            pb.RemoveRaftVoterRequest: stub.RemoveRaftVoter,
            pb.UpdateRaftVoterRequest: stub.UpdateRaftVoter,
            pb.UpdateKRaftVersionRequest: stub.UpdateKRaftVersion,
        }[type(request)]
        response = await method(request, timeout=10, metadata=metadata)
    assert isinstance(response, pb.VoterChangeResponse)
    return response


def test_only_a_caller_allowed_on_the_cluster_changes_the_voters(tmp_path: Path) -> None:
    async def scenario(cluster: GuardedCluster) -> None:
        leader = await cluster.wait_for_leader()
        port = cluster.ports[leader.node.node_id]
        await cluster.append([b"before"])
        observer = cluster.members[4]
        await cluster.wait_until(
            lambda: observer.recorder.committed_offset >= leader.recorder.committed_offset,
            "the observer to catch up",
        )
        new_voter = wire.voter_to_pb(cluster.voter(4))
        add = pb.AddRaftVoterRequest(cluster_id=CLUSTER_ID, timeout_ms=10_000, voter=new_voter)
        remove = pb.RemoveRaftVoterRequest(
            cluster_id=CLUSTER_ID, voter_id=4, voter_directory_id=new_voter.directory_id
        )
        update = pb.UpdateRaftVoterRequest(
            cluster_id=CLUSTER_ID, voter=wire.voter_to_pb(cluster.voter(2))
        )
        upgrade = pb.UpdateKRaftVersionRequest(
            cluster_id=CLUSTER_ID, kraft_version=KRAFT_VERSION_DYNAMIC, validate_only=True
        )
        end_before = leader.node.core.log.end_offset
        # Anonymous, a principal without ALTER, and the one with only CLUSTER_ACTION: refused,
        # with a message naming the principal, and the leader's log has not grown.
        for request in (add, remove, upgrade):
            for token in (None, "guest-token", "node-token"):
                refused = await ask(port, request, token)
                assert refused.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, refused
                principal = "User:ANONYMOUS" if token is None else TOKENS[token]
                assert principal in refused.error_message
        for token in (None, "guest-token", "operator-token"):
            refused = await ask(port, update, token)
            assert refused.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, refused
        unknown = await ask(port, add, "stolen-token")
        assert unknown.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED, unknown
        # Authorization comes before the cluster check: a stranger learns nothing.
        foreign = pb.AddRaftVoterRequest(cluster_id="other", voter=new_voter)
        stranger = await ask(port, foreign, "guest-token")
        assert stranger.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        assert leader.node.core.log.end_offset == end_before
        assert leader.node.core.voters == frozenset({1, 2, 3})

        operator_foreign = await ask(port, foreign, "operator-token")
        assert operator_foreign.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
        assert (await ask(port, upgrade, "operator-token")).error_code == ErrorCode.NONE
        added = await ask(port, add, "operator-token")
        assert added.error_code == ErrorCode.NONE, added.error_message
        assert leader.node.core.voters == frozenset({1, 2, 3, 4})
        updated = await ask(port, update, "node-token")
        assert updated.error_code == ErrorCode.NONE, updated.error_message
        removed = await ask(port, remove, "operator-token")
        assert removed.error_code == ErrorCode.NONE, removed.error_message
        assert leader.node.core.voters == frozenset({1, 2, 3})

    run_scenario(scenario, GuardedCluster(tmp_path, observers=1))


def test_without_an_authorizer_authenticated_voter_changes_need_a_super_user(
    tmp_path: Path,
) -> None:
    """With no ``authorizer.class.name`` but tokens checked, a voter change is a peer's or an
    operator's: any other principal, and an anonymous caller, is refused; a super user (or a
    controller's principal) may. With no authentication at all every caller is anonymous, and
    may, as before."""

    class OpenCluster(DynamicCluster):
        def _member(self, node_id: int) -> Member:
            member = super()._member(node_id)
            member.access = AccessControl(None, ["User:operator"], tokens=TOKENS)
            return member

    async def scenario(cluster: OpenCluster) -> None:
        leader = await cluster.wait_for_leader()
        port = cluster.ports[leader.node.node_id]
        upgrade = pb.UpdateKRaftVersionRequest(
            cluster_id=CLUSTER_ID, kraft_version=KRAFT_VERSION_DYNAMIC, validate_only=True
        )
        for token in (None, "guest-token", "node-token"):
            refused = await ask(port, upgrade, token)
            assert refused.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED, token
        assert (await ask(port, upgrade, "operator-token")).error_code == ErrorCode.NONE
        for member in cluster.members.values():
            assert member.access is not None
            member.access.tokens = None  # no authentication: every caller is anonymous
        assert (await ask(port, upgrade, None)).error_code == ErrorCode.NONE

    run_scenario(scenario, OpenCluster(tmp_path))
