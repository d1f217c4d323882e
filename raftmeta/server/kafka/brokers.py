"""UnregisterBroker (key 64, version 0) as an operator sends it (Kafka's
``Admin.unregisterBroker``, ``kafka-cluster.sh unregister``), over the API layer: ALTER on the
cluster, then the broker is taken out of every ISR, its leaderships moved and its
registration removed; BROKER_ID_NOT_REGISTERED for one that is not registered."""

from __future__ import annotations

from typing import Any

from raftmeta.errors import KafkaError
from raftmeta.server.kafka.context import Fields, KafkaContext, error_fields


async def unregister_broker(context: KafkaContext, request: Any, version: int) -> Fields:
    code, message = 0, None
    try:
        await context.apis.unregister_broker_by_admin(context.principal, int(request.broker_id))
    except KafkaError as error:
        code, message = error_fields(error)
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message}
