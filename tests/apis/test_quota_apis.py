"""The API layer's client quota operations, without a wire: Kafka's authorization
(ALTER_CONFIGS on the cluster to alter, DESCRIBE_CONFIGS to describe), an entity named twice
refused in every copy, and a malformed filter refused before anything is waited on."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any, cast

import pytest

from raftmeta.apis import ControllerApis, ControllerHost
from raftmeta.auth import AccessControl
from raftmeta.common.items import OK, ItemError
from raftmeta.common.quotas import (
    AlterClientQuotasRequest,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilter,
    QuotaFilterComponent,
    QuotaOp,
)
from raftmeta.errors import ErrorCode, KafkaError

ALICE = ClientQuotaEntity.of({"user": "alice"})
BOB = ClientQuotaEntity.of({"user": "bob"})


class _Grants:
    """``User:reader`` may describe configs on the cluster, ``User:writer`` alter them."""

    def authorize(self, principal: str, operation: str, resource_type: str, name: str) -> bool:
        if resource_type != "Cluster":
            return False
        return (principal, operation) in {
            ("User:reader", "DescribeConfigs"),
            ("User:writer", "AlterConfigs"),
        }


class _Controller:
    is_active = True
    leader_id = 1

    def __init__(self) -> None:
        self.altered: list[list[ClientQuotaEntity]] = []
        self.synced = 0

    async def alter_client_quotas(
        self, alterations: Sequence[ClientQuotaAlteration], **_: Any
    ) -> list[ItemError]:
        self.altered.append([alteration.entity for alteration in alterations])
        return [OK for _ in alterations]

    async def sync(self, **_: Any) -> None:
        self.synced += 1

    async def describe_client_quotas(self, quota_filter: ClientQuotaFilter) -> dict[Any, Any]:
        return {ALICE: {"producer_byte_rate": 1.0}}


def _apis(controller: _Controller) -> ControllerApis:
    host = SimpleNamespace(
        node_id=1,
        access=AccessControl(authorizer=_Grants()),
        maybe_controller=controller,
        endpoint_of=lambda node: "",
    )
    return ControllerApis(cast(ControllerHost, host))


def _alter(*entities: ClientQuotaEntity) -> AlterClientQuotasRequest:
    return AlterClientQuotasRequest(
        tuple(
            ClientQuotaAlteration(entity, (QuotaOp("producer_byte_rate", 1.0),))
            for entity in entities
        )
    )


@pytest.mark.parametrize("principal", ["User:reader", "User:nobody"])
def test_altering_needs_alter_configs_on_the_cluster(principal: str) -> None:
    controller = _Controller()
    with pytest.raises(KafkaError) as raised:
        asyncio.run(_apis(controller).alter_client_quotas(principal, _alter(ALICE)))
    assert raised.value.code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert controller.altered == []


@pytest.mark.parametrize("principal", ["User:writer", "User:nobody"])
def test_describing_needs_describe_configs_on_the_cluster(principal: str) -> None:
    controller = _Controller()
    with pytest.raises(KafkaError) as raised:
        asyncio.run(_apis(controller).describe_client_quotas(principal, ClientQuotaFilter()))
    assert raised.value.code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    with pytest.raises(KafkaError) as here:
        asyncio.run(_apis(controller).describe_client_quotas_here(principal, ClientQuotaFilter()))
    assert here.value.code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def test_an_allowed_caller_alters_and_describes() -> None:
    controller = _Controller()
    apis = _apis(controller)
    [result] = asyncio.run(apis.alter_client_quotas("User:writer", _alter(ALICE)))
    assert (result.entity, result.error) == (ALICE, OK)
    described = asyncio.run(apis.describe_client_quotas("User:reader", ClientQuotaFilter()))
    assert described == {ALICE: {"producer_byte_rate": 1.0}}
    assert controller.synced == 1, "describe reads after the controller's own writes commit"


def test_an_entity_named_twice_is_refused_in_every_copy_and_the_rest_go_on() -> None:
    controller = _Controller()
    results = asyncio.run(
        _apis(controller).alter_client_quotas("User:writer", _alter(ALICE, BOB, ALICE))
    )
    assert [(r.entity, r.error.code) for r in results] == [
        (ALICE, ErrorCode.INVALID_REQUEST),
        (BOB, ErrorCode.NONE),
        (ALICE, ErrorCode.INVALID_REQUEST),
    ]
    assert controller.altered == [[BOB]]


def test_a_malformed_filter_is_refused_before_waiting_on_the_controller() -> None:
    controller = _Controller()
    bad = ClientQuotaFilter((QuotaFilterComponent("user", 9),))
    with pytest.raises(KafkaError) as raised:
        asyncio.run(_apis(controller).describe_client_quotas("User:reader", bad))
    assert raised.value.code is ErrorCode.UNSUPPORTED_VERSION
    assert controller.synced == 0
