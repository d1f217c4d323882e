"""ACLs over real gRPC on a three-controller quorum: created on the leader, enforced by every
controller, after a failover and after a node reloads them from a snapshot."""

from __future__ import annotations

import functools
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest

from raftmeta.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPatternType,
    AclPermissionType,
    AclResourceType,
    AsyncAdminClient,
    ElectionType,
    KafkaException,
)
from raftmeta.auth import CLUSTER_NAME, Operation, ResourceType
from raftmeta.errors import ErrorCode
from raftmeta.server.controller_node import ControllerNode
from tests.support.controller_quorum import ControllerQuorum
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async

ALICE_MAY_ALTER = AclBinding(
    int(AclResourceType.CLUSTER),
    CLUSTER_NAME,
    int(AclPatternType.LITERAL),
    "User:alice",
    "*",
    int(AclOperation.ALTER),
    int(AclPermissionType.ALLOW),
)
ALICE_DENIED = AclBinding(
    int(AclResourceType.CLUSTER),
    CLUSTER_NAME,
    int(AclPatternType.LITERAL),
    "User:alice",
    "*",
    int(AclOperation.ALL),
    int(AclPermissionType.DENY),
)
NOT_AN_ACL = AclBinding(
    int(AclResourceType.TOPIC),
    "t",
    int(AclPatternType.MATCH),
    "User:alice",
    "*",
    int(AclOperation.READ),
    int(AclPermissionType.ALLOW),
)


async def failure(future: Awaitable[Any]) -> KafkaException:
    with pytest.raises(KafkaException) as caught:
        await future
    return caught.value


def alice_may_alter(member: ControllerNode) -> bool:
    return member.access.allowed("User:alice", Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)


def test_acls_are_enforced_by_every_controller_after_failover_and_a_snapshot_load(
    tmp_path: Path,
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("root-token=User:root\nalice-token=User:alice\nbob-token=User:bob\n")

    async def scenario(cluster: ControllerQuorum) -> None:
        servers = list(cluster.addresses.values())

        def client(token: str) -> AsyncAdminClient:
            return AsyncAdminClient({"bootstrap.servers": servers, "bearer.token": token})

        async with (
            client("root-token") as root,
            client("alice-token") as alice,
            client("bob-token") as bob,
        ):
            # No ACL yet: alice may not elect, nor grant herself the right.
            refused = await failure(alice.elect_leaders(ElectionType.PREFERRED, None).all())
            assert refused.code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            grab = alice.create_acls([ALICE_MAY_ALTER])[ALICE_MAY_ALTER]
            assert (await failure(grab)).code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED

            # The bootstrap super user grants it; a filter-only value is refused per item.
            created = root.create_acls([ALICE_MAY_ALTER, NOT_AN_ACL])
            await created[ALICE_MAY_ALTER]
            bad = await failure(created[NOT_AN_ACL])
            assert bad.code is ErrorCode.INVALID_REQUEST
            assert "Invalid patternType MATCH" in bad.message
            assert await root.describe_acls(AclBindingFilter()) == [ALICE_MAY_ALTER]

            assert await alice.elect_leaders(ElectionType.PREFERRED, None).partitions() == {}
            refused = await failure(bob.elect_leaders(ElectionType.PREFERRED, None).all())
            assert refused.code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED

        # Every controller replayed the ACL and decides the same way.
        for member in cluster.members.values():
            await wait_until_async(
                functools.partial(alice_may_alter, member), f"node {member.node_id} to allow"
            )
            assert not member.access.allowed(
                "User:bob", Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME
            )

        # Failover: the next leader enforces the same ACL over gRPC.
        old = await cluster.wait_for_active()
        acl_offset = old.controller.committed_image.offset
        await cluster.stop(old.node_id)
        new = await cluster.wait_for_active(not_node=old.node_id)
        servers = [cluster.addresses[n] for n in cluster.members]
        async with client("alice-token") as alice, client("bob-token") as bob:
            assert await alice.elect_leaders(ElectionType.PREFERRED, None).partitions() == {}
            refused = await failure(bob.elect_leaders(ElectionType.PREFERRED, None).all())
            assert refused.code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED

        # A follower snapshots past the ACL, restarts, and loads it from the snapshot.
        follower = next(m for m in cluster.members.values() if m is not new)
        await wait_until_async(
            lambda: follower.node.running and follower.node.core.log.start_offset > acl_offset,
            "a follower snapshot past the ACL",
        )
        await cluster.stop(follower.node_id)
        restarted = await cluster.restart(follower.node_id)
        assert restarted.node.core.log.start_offset > acl_offset, "the ACL's record is gone"
        assert ALICE_MAY_ALTER.principal in {
            acl.principal for acl in restarted.controller.committed_image.acls.by_id.values()
        }
        assert alice_may_alter(restarted)

        # DENY wins over the ALLOW; deleting it by a filter restores the ALLOW.
        async with client("root-token") as root, client("alice-token") as alice:
            await root.create_acls([ALICE_DENIED])[ALICE_DENIED]
            refused = await failure(alice.elect_leaders(ElectionType.PREFERRED, None).all())
            assert refused.code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            deny_filter = AclBindingFilter(permission_type=int(AclPermissionType.DENY))
            assert await root.delete_acls([deny_filter])[deny_filter] == [ALICE_DENIED]
            assert await alice.elect_leaders(ElectionType.PREFERRED, None).partitions() == {}

    run_scenario(
        scenario,
        ControllerQuorum(
            tmp_path,
            {
                "authorizer.class.name": "raftmeta.auth.StandardAuthorizer",
                "super.users": "User:root",
                "raftmeta.auth.tokens.file": str(tokens),
                "auto.leader.rebalance.enable": False,
                "metadata.log.max.snapshot.interval.ms": 100,
                "metadata.log.max.record.bytes.between.snapshots": 1 << 30,
            },
        ),
        timeout_s=90,
    )


def test_acl_calls_without_an_authorizer_are_security_disabled(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        servers = list(cluster.addresses.values())
        async with AsyncAdminClient({"bootstrap.servers": servers}) as admin:
            created = admin.create_acls([ALICE_MAY_ALTER])[ALICE_MAY_ALTER]
            assert (await failure(created)).code is ErrorCode.SECURITY_DISABLED
            described = admin.describe_acls(AclBindingFilter())
            assert (await failure(described)).code is ErrorCode.SECURITY_DISABLED
            deleted = admin.delete_acls([AclBindingFilter()])[AclBindingFilter()]
            assert (await failure(deleted)).code is ErrorCode.SECURITY_DISABLED

    run_scenario(scenario, ControllerQuorum(tmp_path, size=1), timeout_s=60)
