"""ConfigApis alone, without a wire: legacy AlterConfigs needs ALTER_CONFIGS on each resource
and refuses a resource named twice, as IncrementalAlterConfigs does; CreateTopics' described
configs need DESCRIBE_CONFIGS on the topic."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from types import SimpleNamespace
from typing import Any, cast

from raftmeta.apis import ControllerApis, ControllerHost
from raftmeta.auth import AccessControl
from raftmeta.common.configs import (
    AlterConfigsRequest,
    AlterConfigsResult,
    ConfigEntry,
    ConfigResourceRef,
    ConfigSource,
    ReplacedConfigs,
)
from raftmeta.errors import ErrorCode
from raftmeta.records import ConfigResourceType

TOPIC = int(ConfigResourceType.TOPIC)
BROKER = int(ConfigResourceType.BROKER)


class _Operators:
    """``User:alice`` may alter configs of topics ``a*``; ``User:bob`` may only describe
    them; nobody may touch the cluster's."""

    def authorize(self, principal: str, operation: str, resource_type: str, name: str) -> bool:
        if resource_type != "Topic" or not name.startswith("a"):
            return False
        if principal == "User:alice":
            return operation in ("AlterConfigs", "DescribeConfigs")
        return principal == "User:bob" and operation == "DescribeConfigs"


class _Configs:
    def describe_topic_configs(self, image: Any, own: Mapping[str, str]) -> tuple[ConfigEntry]:
        return (ConfigEntry("retention.ms", own.get("retention.ms"), ConfigSource.TOPIC_CONFIG),)


class _Controller:
    """The controller's public surface that these operations call."""

    is_active = True
    leader_id = 1
    committed_image = None

    def __init__(self) -> None:
        self.replaced: list[tuple[dict[ConfigResourceRef, dict[str, str]], bool]] = []
        self.configs = _Configs()

    async def alter_configs(
        self,
        changes: Mapping[ConfigResourceRef, Mapping[str, str]],
        *,
        validate_only: bool = False,
        **_: Any,
    ) -> list[AlterConfigsResult]:
        self.replaced.append(({r: dict(c) for r, c in changes.items()}, validate_only))
        return [AlterConfigsResult(resource) for resource in changes]


def _run(call: Awaitable[list[AlterConfigsResult]]) -> list[AlterConfigsResult]:
    async def bounded() -> list[AlterConfigsResult]:
        return await asyncio.wait_for(call, 10)

    return asyncio.run(bounded())


def _apis(controller: _Controller) -> ControllerApis:
    host = SimpleNamespace(
        node_id=1,
        access=AccessControl(authorizer=_Operators()),
        maybe_controller=controller,
        endpoint_of=lambda node: "" if node is None else f"host-{node}:9093",
    )
    return ControllerApis(cast(ControllerHost, host))


def test_legacy_alter_configs_is_authorized_and_checked_per_resource() -> None:
    controller = _Controller()
    apis = _apis(controller)
    allowed = ConfigResourceRef(TOPIC, "accounts")
    twice = ConfigResourceRef(TOPIC, "audit")
    denied = ConfigResourceRef(TOPIC, "billing")
    cluster = ConfigResourceRef(BROKER, "")
    request = AlterConfigsRequest(
        (
            ReplacedConfigs(allowed, (("retention.ms", "1000"), ("cleanup.policy", None))),
            ReplacedConfigs(twice, (("retention.ms", "1"),)),
            ReplacedConfigs(denied, (("retention.ms", "1"),)),
            ReplacedConfigs(twice, (("retention.ms", "2"),)),
            ReplacedConfigs(cluster, (("log.retention.ms", "1"),)),
        ),
        validate_only=True,
    )
    results = _run(apis.alter_configs("User:alice", request))
    assert [(r.resource, r.error.code) for r in results] == [
        (allowed, ErrorCode.NONE),
        (twice, ErrorCode.INVALID_REQUEST),
        (denied, ErrorCode.TOPIC_AUTHORIZATION_FAILED),
        (twice, ErrorCode.INVALID_REQUEST),
        (cluster, ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
    ]
    # Only the allowed resource reaches the controller; a null value sets nothing.
    assert controller.replaced == [({allowed: {"retention.ms": "1000"}}, True)]

    refused = _run(apis.alter_configs("User:bob", request))
    assert refused[0].error.code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    assert len(controller.replaced) == 1


def test_created_topic_configs_need_describe_configs_on_the_topic() -> None:
    apis = _apis(_Controller())
    shown = apis.created_topic_configs("User:bob", "accounts", {"retention.ms": "5"})
    assert shown == (ConfigEntry("retention.ms", "5", ConfigSource.TOPIC_CONFIG),)
    hidden = apis.created_topic_configs("User:carol", "accounts", {"retention.ms": "5"})
    assert not isinstance(hidden, tuple)
    assert hidden.code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
