"""UpdateFeatures (key 57, versions 0-2), through the Admin service's UpdateFeatures.

The Admin service takes Kafka's upgrade types, so v1+ rows pass through as they are; a v0 row's
``AllowDowngrade`` means a safe downgrade, as Kafka reads it. The controller applies every
update or none: a refusal is the top-level error code and message, and the per-feature results
(v0-1; v2 dropped them) carry no error of their own, as Kafka's answers do. Reading the levels
is ApiVersions' job (:mod:`raftmeta.server.kafka.versions`), as in Kafka.
"""

from __future__ import annotations

from typing import Any

from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server.convert import SAFE_DOWNGRADE, UPGRADE
from raftmeta.server.kafka.context import Fields, KafkaContext, header_error


def _upgrade_type(update: Any, version: int) -> int:
    if version == 0:
        return SAFE_DOWNGRADE if update.allow_downgrade else UPGRADE
    return int(update.upgrade_type)


async def update_features(context: KafkaContext, request: Any, version: int) -> Fields:
    updates = list(request.feature_updates or ())
    response = await context.admin.UpdateFeatures(
        apb.UpdateFeaturesRequest(
            feature_updates=[
                apb.FeatureUpdate(
                    feature=update.feature,
                    max_version_level=update.max_version_level,
                    upgrade_type=_upgrade_type(update, version),
                )
                for update in updates
            ],
            validate_only=bool(request.validate_only) if version >= 1 else False,
            timeout_ms=request.timeout_ms,
        ),
        context.call,
    )
    code, message = header_error(response.header)
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "error_message": message,
        "results": [
            {"feature": update.feature, "error_code": 0, "error_message": None}
            for update in updates
        ],
    }
