"""DescribeFeatures and UpdateFeatures, for either wire: DESCRIBE / ALTER on the cluster.

An upgrade type Kafka does not define is INVALID_REQUEST for the whole request, as Kafka
answers it; the controller applies every update or none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from raftmeta.apis.base import ApisBase
from raftmeta.apis.retries import timeout_of
from raftmeta.auth import Operation
from raftmeta.common.features import (
    SAFE_DOWNGRADE,
    UNSAFE_DOWNGRADE,
    UPGRADE,
    FeatureUpdate,
    RequestedFeatureUpdate,
    UpdateFeaturesRequest,
)
from raftmeta.controller import QuorumController
from raftmeta.errors import ErrorCode, KafkaError


class VersionRange(Protocol):
    """A supported range of feature levels, as the controller reports it."""

    @property
    def min_version(self) -> int: ...

    @property
    def max_version(self) -> int: ...


Features = tuple[Mapping[str, int], Mapping[str, VersionRange], int]
"""The finalized levels, this build's supported ranges, and the finalized epoch."""


def feature_update(update: RequestedFeatureUpdate) -> FeatureUpdate:
    """One row of UpdateFeatures; an unknown upgrade type is INVALID_REQUEST, as in Kafka."""
    if update.upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        raise KafkaError(
            ErrorCode.INVALID_REQUEST,
            f"Unknown upgrade type {update.upgrade_type} for feature {update.name}.",
        )
    return FeatureUpdate(update.name, update.level, allow_downgrade=update.upgrade_type != UPGRADE)


class FeatureApis(ApisBase):
    async def describe_features(self, principal: str) -> Features:
        async def body(controller: QuorumController) -> Features:
            self.require_cluster(principal, Operation.DESCRIBE)
            return await controller.describe_features()

        return await self.on_active(body)

    async def update_features(
        self, principal: str, request: UpdateFeaturesRequest
    ) -> list[FeatureUpdate]:
        """The updates applied (all of them), in request order."""

        async def body(controller: QuorumController) -> list[FeatureUpdate]:
            self.require_cluster(principal, Operation.ALTER)
            updates = [feature_update(update) for update in request.updates]
            await controller.update_features(
                updates,
                validate_only=request.validate_only,
                timeout_ms=timeout_of(request.timeout_ms),
            )
            return updates

        return await self.on_active(body)
