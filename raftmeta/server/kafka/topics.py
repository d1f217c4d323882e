"""CreateTopics (19), DeleteTopics (20) and CreatePartitions (37), through the Admin service.

Each Kafka request becomes the gRPC request the Admin service takes, so the controller sees
the same call either way. A failure of the whole call (NOT_CONTROLLER, say) lands on every
topic, as Kafka's error responses put it.
"""

from __future__ import annotations

from typing import Any

from raftmeta.errors import ErrorCode
from raftmeta.kafka_protocol import codec
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server.kafka.context import Fields, KafkaContext, header_error

TOPIC_CONFIG_SOURCE = 1
DEFAULT_CONFIG_SOURCE = 5


def _null_config(topic: Any) -> str | None:
    for config in topic.configs or ():
        if config.value is None:
            return config.name  # type: ignore[no-any-return]
    return None


async def create_topics(context: KafkaContext, request: Any, version: int) -> Fields:
    topics = list(request.topics or ())
    refused: dict[int, tuple[int, str]] = {}
    chosen: list[apb.NewTopic] = []
    for index, topic in enumerate(topics):
        null_name = _null_config(topic)
        if null_name is not None:
            refused[index] = (
                int(ErrorCode.INVALID_CONFIG),
                f"Null value not supported for topic configs: {null_name}",
            )
            continue
        chosen.append(
            apb.NewTopic(
                name=topic.name,
                num_partitions=topic.num_partitions,
                replication_factor=topic.replication_factor,
                assignments={
                    item.partition_index: apb.BrokerIds(broker_ids=list(item.broker_ids or ()))
                    for item in topic.assignments or ()
                },
                configs={config.name: config.value for config in topic.configs or ()},
            )
        )
    response = await context.admin.CreateTopics(
        apb.CreateTopicsRequest(
            topics=chosen,
            timeout_ms=request.timeout_ms,
            validate_only=bool(request.validate_only) if version >= 1 else False,
        ),
        context.call,
    )
    code, message = header_error(response.header)
    answered = iter(response.topics)
    results: list[Fields] = []
    for index, topic in enumerate(topics):
        asked = {config.name for config in topic.configs or ()}
        if index in refused:
            error, text = refused[index]
            results.append(_create_failed(topic.name, error, text))
        elif code:
            results.append(_create_failed(topic.name, code, message))
        else:
            result = next(answered)
            failed = result.error_code != 0
            results.append(
                {
                    "name": result.name,
                    "topic_id": codec.uuid_value(None if failed else result.topic_id),
                    "error_code": result.error_code,
                    "error_message": result.error_message or None,
                    "num_partitions": -1 if failed else result.num_partitions,
                    "replication_factor": -1 if failed else result.replication_factor,
                    "configs": None
                    if failed
                    else [
                        {
                            "name": name,
                            "value": value,
                            "read_only": False,
                            "config_source": TOPIC_CONFIG_SOURCE
                            if name in asked
                            else DEFAULT_CONFIG_SOURCE,
                            "is_sensitive": False,
                        }
                        for name, value in sorted(result.configs.items())
                    ],
                }
            )
    return {"throttle_time_ms": 0, "topics": results}


def _create_failed(name: str, code: int, message: str | None) -> Fields:
    return {
        "name": name,
        "topic_id": codec.uuid_value(None),
        "error_code": code,
        "error_message": message,
        "num_partitions": -1,
        "replication_factor": -1,
        "configs": None,
    }


async def delete_topics(context: KafkaContext, request: Any, version: int) -> Fields:
    """By name; v6's topic ids without a name are refused (the Admin service deletes by name)."""
    if version >= 6:
        asked = [(topic.name, topic.topic_id) for topic in request.topics or ()]
    else:
        asked = [(name, None) for name in request.topic_names or ()]
    names = [name for name, _ in asked if name]
    response = await context.admin.DeleteTopics(
        apb.DeleteTopicsRequest(topic_names=names, timeout_ms=request.timeout_ms), context.call
    )
    code, message = header_error(response.header)
    answered = iter(response.results)
    results: list[Fields] = []
    for name, topic_id in asked:
        if not name:
            results.append(
                {
                    "name": None,
                    "topic_id": topic_id,
                    "error_code": int(ErrorCode.UNSUPPORTED_VERSION),
                    "error_message": "Deleting a topic by id alone is not supported; "
                    "name the topic.",
                }
            )
            continue
        if code:
            error, text = code, message
        else:
            result = next(answered)
            error, text = result.error_code, result.error_message or None
        results.append(
            {
                "name": name,
                "topic_id": codec.uuid_value(None),
                "error_code": error,
                "error_message": text,
            }
        )
    return {"throttle_time_ms": 0, "responses": results}


async def create_partitions(context: KafkaContext, request: Any, version: int) -> Fields:
    topics = list(request.topics or ())
    response = await context.admin.CreatePartitions(
        apb.CreatePartitionsRequest(
            topics=[
                apb.CreatePartitionsTopic(
                    name=topic.name,
                    count=topic.count,
                    assignments=[
                        apb.BrokerIds(broker_ids=list(item.broker_ids or ()))
                        for item in topic.assignments or ()
                    ],
                )
                for topic in topics
            ],
            timeout_ms=request.timeout_ms,
            validate_only=bool(request.validate_only),
        ),
        context.call,
    )
    code, message = header_error(response.header)
    if code:
        results = [
            {"name": topic.name, "error_code": code, "error_message": message} for topic in topics
        ]
    else:
        results = [
            {
                "name": result.name,
                "error_code": result.error_code,
                "error_message": result.error_message or None,
            }
            for result in response.results
        ]
    return {"throttle_time_ms": 0, "results": results}
