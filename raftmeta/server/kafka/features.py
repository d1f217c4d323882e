"""UpdateFeatures (key 57, versions 0-2), over the API layer.

v1+ rows carry Kafka's upgrade types as they are; a v0 row's ``AllowDowngrade`` means a safe
downgrade, as Kafka reads it. The controller applies every update or none: a refusal is the
top-level error code and message, and the per-feature results (v0-1; v2 dropped them) carry no
error of their own, as Kafka's answers do. Reading the levels is ApiVersions' job
(:mod:`raftmeta.server.kafka.versions`), as in Kafka.
"""

from __future__ import annotations

from typing import Any

from raftmeta.common.features import (
    SAFE_DOWNGRADE,
    UPGRADE,
    RequestedFeatureUpdate,
    UpdateFeaturesRequest,
)
from raftmeta.errors import KafkaError
from raftmeta.server.kafka.context import Fields, KafkaContext, error_fields


def _upgrade_type(update: Any, version: int) -> int:
    if version == 0:
        return SAFE_DOWNGRADE if update.allow_downgrade else UPGRADE
    return int(update.upgrade_type)


async def update_features(context: KafkaContext, request: Any, version: int) -> Fields:
    updates = list(request.feature_updates or ())
    wanted = UpdateFeaturesRequest(
        tuple(
            RequestedFeatureUpdate(
                update.feature, update.max_version_level, _upgrade_type(update, version)
            )
            for update in updates
        ),
        bool(request.validate_only) if version >= 1 else False,
        request.timeout_ms,
    )
    code, message = 0, None
    try:
        await context.apis.update_features(context.principal, wanted)
    except KafkaError as error:
        code, message = error_fields(error)
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "error_message": message,
        "results": [
            {"feature": update.feature, "error_code": 0, "error_message": None}
            for update in updates
        ],
    }
