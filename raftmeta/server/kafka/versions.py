"""ApiVersions: which APIs and versions this listener serves (Kafka's key 18, versions 0-4).

An ApiVersions request of a version we do not serve is answered as Kafka answers it: a v0
body with UNSUPPORTED_VERSION and our version ranges, so the client can retry with one we do.

From v3 the answer also carries feature levels, as a KRaft node's does: the ranges this build
supports (``SupportedFeatures``; a range starting at 0 is left out before v4, as Kafka leaves
it out for clients that cannot read one), the levels the cluster has finalized as this node's
committed image holds them (``metadata.version`` among them; a level of 0 is not finalized and
not listed), and as ``FinalizedFeaturesEpoch`` that image's offset, the value Kafka's metadata
cache reports and the one raftmeta's gRPC DescribeFeatures answers with. A node whose
controller is not running yet knows no finalized levels: epoch -1 and none listed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raftmeta.common.features import SUPPORTED_FEATURES
from raftmeta.errors import ErrorCode
from raftmeta.server.kafka.context import Fields, KafkaContext

API_VERSIONS_KEY = 18
API_VERSIONS_RANGE = (0, 4)
UNKNOWN_FEATURES_EPOCH = -1
FIRST_VERSION_WITH_ZERO_MINIMUMS = 4
"""ApiVersions v4 (KIP-1022) may list a supported range whose minimum is 0; before it such a
range is left out."""


def api_versions_body(served: Mapping[int, tuple[int, int]], code: ErrorCode) -> Fields:
    return {
        "error_code": int(code),
        "api_keys": [
            {"api_key": key, "min_version": low, "max_version": high}
            for key, (low, high) in sorted(served.items())
        ],
        "throttle_time_ms": 0,
        "supported_features": [],
        "finalized_features_epoch": UNKNOWN_FEATURES_EPOCH,
        "finalized_features": [],
        "zk_migration_ready": False,
    }


def supported_features(version: int) -> list[Fields]:
    """This build's ranges, as ApiVersions ``version`` may carry them."""
    return [
        {
            "name": feature.name,
            "min_version": feature.min_supported_version,
            "max_version": feature.max_supported_version,
        }
        for feature in sorted(SUPPORTED_FEATURES, key=lambda feature: feature.name)
        if feature.min_supported_version > 0 or version >= FIRST_VERSION_WITH_ZERO_MINIMUMS
    ]


def finalized_features(context: KafkaContext) -> tuple[list[Fields], int]:
    """The finalized levels of this node's committed image and its offset (the epoch), or
    none and -1 before the controller runs. Kafka finalizes one level per feature, so the
    minimum and maximum level are the same."""
    controller = context.owner.maybe_controller
    if controller is None:
        return [], UNKNOWN_FEATURES_EPOCH
    image = controller.committed_image
    levels = [
        {"name": name, "max_version_level": level, "min_version_level": level}
        for name, level in sorted(image.features.items())
        if level > 0
    ]
    return levels, image.offset


def make_api_versions(served: Mapping[int, tuple[int, int]]) -> Any:
    async def api_versions(context: KafkaContext, request: Any, version: int) -> Fields:
        body = api_versions_body(served, ErrorCode.NONE)
        finalized, epoch = finalized_features(context)
        body["supported_features"] = supported_features(version)
        body["finalized_features"] = finalized
        body["finalized_features_epoch"] = epoch
        return body

    return api_versions
