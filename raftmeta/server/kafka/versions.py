"""ApiVersions: which APIs and versions this listener serves (Kafka's key 18, versions 0-3).

An ApiVersions request of a version we do not serve is answered as Kafka answers it: a v0
body with UNSUPPORTED_VERSION and our version ranges, so the client can retry with one we do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from raftmeta.errors import ErrorCode
from raftmeta.server.kafka.context import Fields, KafkaContext

API_VERSIONS_KEY = 18
API_VERSIONS_RANGE = (0, 3)


def api_versions_body(served: Mapping[int, tuple[int, int]], code: ErrorCode) -> Fields:
    return {
        "error_code": int(code),
        "api_keys": [
            {"api_key": key, "min_version": low, "max_version": high}
            for key, (low, high) in sorted(served.items())
        ],
        "throttle_time_ms": 0,
        "supported_features": [],
        "finalized_features_epoch": -1,
        "finalized_features": [],
        "zk_migration_ready": False,
    }


def make_api_versions(served: Mapping[int, tuple[int, int]]) -> Any:
    async def api_versions(context: KafkaContext, request: Any, version: int) -> Fields:
        return api_versions_body(served, ErrorCode.NONE)

    return api_versions
