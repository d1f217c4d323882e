"""ControllerApis alone, without a wire: authorization per item, NOT_CONTROLLER from a node
that is not the active controller, the election type read once."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any, cast

import pytest

from raftmeta.apis import ControllerApis, ControllerHost, NotActiveController
from raftmeta.apis.base import LEADER_WAIT_S
from raftmeta.auth import AccessControl
from raftmeta.common.elections import ElectLeadersRequest, TopicPartition
from raftmeta.common.items import ItemError
from raftmeta.common.topics import CreateTopicResult, CreateTopicsRequest, NewTopic
from raftmeta.errors import ErrorCode, KafkaError


class _TopicOwners:
    """Allows each principal only what it owns: ``User:alice`` may create topics ``a*``."""

    def authorize(self, principal: str, operation: str, resource_type: str, name: str) -> bool:
        return principal == "User:alice" and resource_type == "Topic" and name.startswith("a")


class _Controller:
    """The controller's public surface that these operations call."""

    def __init__(self, *, active: bool = True, leader_id: int | None = 1) -> None:
        self.is_active = active
        self.leader_id = leader_id
        self.created: list[list[str]] = []
        self.elections: list[Any] = []

    async def create_topics(self, topics: Sequence[NewTopic], **_: Any) -> list[CreateTopicResult]:
        self.created.append([topic.name for topic in topics])
        return [CreateTopicResult(topic.name, topic_id=bytes(16)) for topic in topics]

    async def elect_leaders(self, election_type: Any, partitions: Any, **_: Any) -> tuple[()]:
        self.elections.append((election_type, partitions))
        return ()


def _apis(controller: _Controller | None, node_id: int = 1) -> ControllerApis:
    host = SimpleNamespace(
        node_id=node_id,
        access=AccessControl(authorizer=_TopicOwners()),
        maybe_controller=controller,
        endpoint_of=lambda node: "" if node is None else f"host-{node}:9093",
    )
    return ControllerApis(cast(ControllerHost, host))


def _create(names: Sequence[str]) -> CreateTopicsRequest:
    return CreateTopicsRequest(tuple(NewTopic(name, 1, 1) for name in names))


def test_a_topic_the_principal_may_not_create_is_refused_on_its_own_item() -> None:
    controller = _Controller()
    results = asyncio.run(
        _apis(controller).create_topics("User:alice", _create(["apples", "bananas", "avocados"]))
    )
    assert [result.name for result in results] == ["apples", "bananas", "avocados"]
    assert [result.error.code for result in results] == [
        ErrorCode.NONE,
        ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        ErrorCode.NONE,
    ]
    assert results[1].error == ItemError(
        ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed."
    )
    assert controller.created == [["apples", "avocados"]]  # only the permitted ones, at once


def test_an_unauthorized_principal_gets_topic_authorization_failed_on_every_item() -> None:
    controller = _Controller()
    results = asyncio.run(
        _apis(controller).create_topics("User:mallory", _create(["apples", "bananas"]))
    )
    assert [result.error.code for result in results] == [
        ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    ]
    assert controller.created == []  # the controller is not asked


def test_a_follower_answers_not_controller_naming_the_active_one() -> None:
    follower = _Controller(active=False, leader_id=2)
    with pytest.raises(NotActiveController) as raised:
        asyncio.run(_apis(follower).create_topics("User:alice", _create(["apples"])))
    assert raised.value.code is ErrorCode.NOT_CONTROLLER
    assert raised.value.controller_id == 2
    assert raised.value.controller_endpoint == "host-2:9093"
    assert follower.created == []


def test_a_node_without_a_controller_knows_no_active_one() -> None:
    with pytest.raises(NotActiveController) as raised:
        asyncio.run(_apis(None).create_topics("User:alice", _create(["apples"])))
    assert raised.value.controller_id is None and raised.value.controller_endpoint == ""


class _ElectingController(_Controller):
    """A node that knows of no leader while an election runs; it ends when the API layer
    waits for it, won by ``winner`` (``None``: not within the wait)."""

    def __init__(self, winner: int | None) -> None:
        super().__init__(active=False, leader_id=None)
        self.winner = winner
        self.waited: list[float] = []

    async def await_leader(self, timeout_s: float) -> None:
        self.waited.append(timeout_s)
        self.leader_id = self.winner
        self.is_active = self.winner == 1


def test_a_request_during_an_election_runs_on_the_node_that_wins_it() -> None:
    controller = _ElectingController(winner=1)
    results = asyncio.run(_apis(controller).create_topics("User:alice", _create(["apples"])))
    assert [result.error.code for result in results] == [ErrorCode.NONE]
    assert controller.created == [["apples"]]
    assert controller.waited == [LEADER_WAIT_S]


def test_a_request_during_an_election_is_sent_to_the_node_that_wins_it() -> None:
    controller = _ElectingController(winner=2)
    with pytest.raises(NotActiveController) as raised:
        asyncio.run(_apis(controller).create_topics("User:alice", _create(["apples"])))
    assert raised.value.controller_id == 2
    assert raised.value.controller_endpoint == "host-2:9093"
    assert controller.created == []


def test_an_election_not_won_within_the_wait_names_nobody() -> None:
    controller = _ElectingController(winner=None)
    with pytest.raises(NotActiveController) as raised:
        asyncio.run(_apis(controller).create_topics("User:alice", _create(["apples"])))
    assert raised.value.controller_id is None and raised.value.controller_endpoint == ""
    assert controller.waited == [LEADER_WAIT_S]


def test_an_election_needs_alter_on_the_cluster() -> None:
    controller = _Controller()
    election = ElectLeadersRequest(0, (TopicPartition("apples", 0),))
    with pytest.raises(KafkaError) as raised:
        asyncio.run(_apis(controller).elect_leaders("User:alice", election))
    assert raised.value.code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert controller.elections == []


def test_an_unknown_election_type_is_refused_before_the_controller_is_asked() -> None:
    controller = _Controller()
    apis = _apis(controller)
    apis.host.access.super_users = frozenset({"User:admin"})
    with pytest.raises(KafkaError) as raised:
        asyncio.run(apis.elect_leaders("User:admin", ElectLeadersRequest(7, None)))
    assert raised.value.code is ErrorCode.INVALID_REQUEST
    assert controller.elections == []


class _ClusterController(_Controller):
    """A controller whose committed image holds brokers, some fenced; counts its syncs."""

    def __init__(self, fenced: dict[int, bool], *, active: bool = True) -> None:
        super().__init__(active=active)
        self.syncs = 0
        self.settings = SimpleNamespace(cluster_id="cluster", node_id=1)
        self.committed_image = SimpleNamespace(
            offset=5,
            leader_counts={},
            partitions=lambda: iter(()),
            brokers={
                broker_id: SimpleNamespace(
                    rack=None,
                    fenced=is_fenced,
                    in_controlled_shutdown=False,
                    broker_epoch=1,
                    endpoints=(),
                )
                for broker_id, is_fenced in fenced.items()
            },
        )

    async def sync(self) -> None:
        self.syncs += 1


def test_live_brokers_are_describe_clusters_unfenced_brokers_after_its_check_and_wait() -> None:
    controller = _ClusterController({1: False, 2: True, 3: False})
    apis = _apis(controller)
    apis.host.access.super_users = frozenset({"User:admin"})
    described = asyncio.run(apis.describe_cluster("User:admin"))
    live = asyncio.run(apis.live_brokers("User:admin"))
    assert live == {broker.broker_id for broker in described.brokers if not broker.fenced}
    assert live == {1, 3}
    assert controller.syncs == 2  # each waited for the pending records to commit
    with pytest.raises(KafkaError) as raised:
        asyncio.run(apis.live_brokers("User:mallory"))
    assert raised.value.code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert controller.syncs == 2  # refused before the wait, as describe_cluster is
    follower = _ClusterController({1: False}, active=False)
    with pytest.raises(NotActiveController):
        asyncio.run(_apis(follower).live_brokers("User:admin"))
