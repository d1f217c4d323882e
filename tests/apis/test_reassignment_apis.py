"""ControllerApis' reassignment operations: ALTER on the cluster to move, DESCRIBE on it to
list, as Kafka's ControllerApis asks; a refusal fails the whole request."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, cast

import pytest

from raftmeta.apis import ControllerApis, ControllerHost
from raftmeta.auth import AccessControl
from raftmeta.common.elections import TopicPartition
from raftmeta.common.items import OK
from raftmeta.common.reassignments import (
    AlterPartitionReassignmentsRequest,
    ListPartitionReassignmentsRequest,
    PartitionReassignment,
    ReassignmentResult,
    ReassignmentTarget,
)
from raftmeta.errors import ErrorCode, KafkaError

MOVED = TopicPartition("t", 0)
LISTED = {MOVED: PartitionReassignment((2, 1), (2,), (1,))}


class _ClusterGrants:
    """``User:mover`` may ALTER the cluster, ``User:viewer`` DESCRIBE it; nobody else anything."""

    def authorize(self, principal: str, operation: str, resource_type: str, name: str) -> bool:
        granted = {"User:mover": "Alter", "User:viewer": "Describe"}
        return resource_type == "Cluster" and granted.get(principal) == operation


class _Controller:
    is_active = True
    leader_id = 1

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def alter_partition_reassignments(
        self, targets: Any, **_: Any
    ) -> list[ReassignmentResult]:
        self.calls.append("alter")
        return [ReassignmentResult(target.partition, OK) for target in targets]

    async def list_partition_reassignments(
        self, partitions: Any, **_: Any
    ) -> dict[TopicPartition, PartitionReassignment]:
        self.calls.append("list")
        return LISTED


def _apis(controller: _Controller) -> ControllerApis:
    host = SimpleNamespace(
        node_id=1,
        access=AccessControl(authorizer=_ClusterGrants()),
        maybe_controller=controller,
        endpoint_of=lambda node: "",
    )
    return ControllerApis(cast(ControllerHost, host))


ALTER = AlterPartitionReassignmentsRequest((ReassignmentTarget(MOVED, (2,)),))
LIST = ListPartitionReassignmentsRequest(None)


def test_moving_needs_alter_on_the_cluster() -> None:
    controller = _Controller()
    apis = _apis(controller)
    results = asyncio.run(apis.alter_partition_reassignments("User:mover", ALTER))
    assert results == [ReassignmentResult(MOVED, OK)]
    for refused in ("User:viewer", "User:nobody"):
        with pytest.raises(KafkaError) as raised:
            asyncio.run(apis.alter_partition_reassignments(refused, ALTER))
        assert raised.value.code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert controller.calls == ["alter"]


def test_listing_needs_describe_on_the_cluster() -> None:
    controller = _Controller()
    apis = _apis(controller)
    assert asyncio.run(apis.list_partition_reassignments("User:viewer", LIST)) == LISTED
    for refused in ("User:mover", "User:nobody"):
        with pytest.raises(KafkaError) as raised:
            asyncio.run(apis.list_partition_reassignments(refused, LIST))
        assert raised.value.code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert controller.calls == ["list"]
