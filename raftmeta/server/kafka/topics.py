"""CreateTopics (19), DeleteTopics (20) and CreatePartitions (37), over the API layer.

A failure of the whole call (NOT_CONTROLLER, say) lands on every topic, as Kafka's error
responses put it. What only Kafka's wire can say is answered here: a null config value
(INVALID_CONFIG on its topic), from CreateTopics v5 each created topic's configs as
DescribeConfigs shows them, and from DeleteTopics v6 a topic named by id alone.
"""

from __future__ import annotations

from typing import Any

from raftmeta.common.configs import ConfigEntry
from raftmeta.common.items import ItemError
from raftmeta.common.topics import (
    CreatePartitionsRequest,
    CreateTopicResult,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    NewPartitions,
    NewTopic,
    TopicResult,
)
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.kafka_protocol import codec
from raftmeta.server.kafka.context import Fields, KafkaContext, error_fields


def _null_config(topic: Any) -> str | None:
    for config in topic.configs or ():
        if config.value is None:
            return config.name  # type: ignore[no-any-return]
    return None


def _new_topic(topic: Any) -> NewTopic:
    return NewTopic(
        topic.name,
        topic.num_partitions,
        topic.replication_factor,
        {item.partition_index: tuple(item.broker_ids or ()) for item in topic.assignments or ()}
        or None,
        {config.name: config.value for config in topic.configs or ()},
    )


FIRST_VERSION_WITH_CONFIGS = 5
"""CreateTopics v5 answers each created topic's configs."""


def _created(context: KafkaContext, result: CreateTopicResult, version: int) -> Fields:
    """A topic's answer; from v5 with every config it was created with as DescribeConfigs
    shows them, or TopicConfigErrorCode when the caller may not describe them."""
    if not result.error.ok:
        code = int(result.error.code)
        return _create_failed(result.name, code, result.error.message or result.error.code.name)
    described: tuple[ConfigEntry, ...] | ItemError = ()
    if version >= FIRST_VERSION_WITH_CONFIGS:
        described = context.apis.created_topic_configs(
            context.principal, result.name, result.configs
        )
    if isinstance(described, ItemError):
        configs: list[Fields] = []
        config_error = int(described.code)
    else:
        config_error = 0
        configs = [
            {
                "name": entry.name,
                "value": entry.value,
                "read_only": entry.read_only,
                "config_source": int(entry.source),
                "is_sensitive": entry.is_sensitive,
            }
            for entry in described
        ]
    return {
        "name": result.name,
        "topic_id": codec.uuid_value(result.topic_id),
        "error_code": 0,
        "error_message": None,
        "num_partitions": result.num_partitions,
        "replication_factor": result.replication_factor,
        "topic_config_error_code": config_error,
        "configs": configs,
    }


async def create_topics(context: KafkaContext, request: Any, version: int) -> Fields:
    topics = list(request.topics or ())
    refused: dict[int, Fields] = {}
    chosen: list[NewTopic] = []
    for index, topic in enumerate(topics):
        null_name = _null_config(topic)
        if null_name is not None:
            refused[index] = _create_failed(
                topic.name,
                int(ErrorCode.INVALID_CONFIG),
                f"Null value not supported for topic configs: {null_name}",
            )
        else:
            chosen.append(_new_topic(topic))
    validate_only = bool(request.validate_only) if version >= 1 else False
    try:
        answered = iter(
            await context.apis.create_topics(
                context.principal,
                CreateTopicsRequest(tuple(chosen), validate_only, request.timeout_ms),
            )
        )
    except KafkaError as error:
        code, message = error_fields(error)
        results = [
            refused.get(i) or _create_failed(t.name, code, message) for i, t in enumerate(topics)
        ]
        return {"throttle_time_ms": 0, "topics": results}
    results = [
        refused[index] if index in refused else _created(context, next(answered), version)
        for index in range(len(topics))
    ]
    return {"throttle_time_ms": 0, "topics": results}


def create_topics_failed(request: Any, version: int, code: int, message: str | None) -> Fields:
    """Kafka's error response: ``code`` on every requested topic."""
    topics = [_create_failed(t.name, code, message) for t in request.topics or ()]
    return {"throttle_time_ms": 0, "topics": topics}


def delete_topics_failed(request: Any, version: int, code: int, message: str | None) -> Fields:
    """Kafka's error response: ``code`` on every requested topic."""
    if version >= 6:
        asked = [(topic.name, topic.topic_id) for topic in request.topics or ()]
    else:
        asked = [(name, None) for name in request.topic_names or ()]
    return {
        "throttle_time_ms": 0,
        "responses": [
            {
                "name": name,
                "topic_id": codec.uuid_value(topic_id),
                "error_code": code,
                "error_message": message,
            }
            for name, topic_id in asked
        ],
    }


def create_partitions_failed(request: Any, version: int, code: int, message: str | None) -> Fields:
    """Kafka's error response: ``code`` on every requested topic."""
    failed = [
        {"name": t.name, "error_code": code, "error_message": message} for t in request.topics or ()
    ]
    return {"throttle_time_ms": 0, "results": failed}


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


def _topic_answer(result: TopicResult) -> tuple[int, str | None]:
    if result.error.ok:
        return 0, None
    return int(result.error.code), result.error.message or result.error.code.name


async def delete_topics(context: KafkaContext, request: Any, version: int) -> Fields:
    """By name; v6's topic ids without a name are refused (topics are deleted by name)."""
    if version >= 6:
        asked = [(topic.name, topic.topic_id) for topic in request.topics or ()]
    else:
        asked = [(name, None) for name in request.topic_names or ()]
    names = tuple(name for name, _ in asked if name)
    failure: tuple[int, str | None] | None = None
    try:
        answered = iter(
            await context.apis.delete_topics(
                context.principal, DeleteTopicsRequest(names, request.timeout_ms)
            )
        )
    except KafkaError as error:
        failure = error_fields(error)
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
        code, text = failure if failure is not None else _topic_answer(next(answered))
        results.append(
            {
                "name": name,
                "topic_id": codec.uuid_value(None),
                "error_code": code,
                "error_message": text,
            }
        )
    return {"throttle_time_ms": 0, "responses": results}


async def create_partitions(context: KafkaContext, request: Any, version: int) -> Fields:
    topics = list(request.topics or ())
    grown = CreatePartitionsRequest(
        tuple(
            NewPartitions(
                topic.name,
                topic.count,
                tuple(tuple(item.broker_ids or ()) for item in topic.assignments or ()) or None,
            )
            for topic in topics
        ),
        bool(request.validate_only),
        request.timeout_ms,
    )
    try:
        answered = await context.apis.create_partitions(context.principal, grown)
    except KafkaError as error:
        code, message = error_fields(error)
        failed = [{"name": t.name, "error_code": code, "error_message": message} for t in topics]
        return {"throttle_time_ms": 0, "results": failed}
    results = []
    for result in answered:
        code, text = _topic_answer(result)
        results.append({"name": result.name, "error_code": code, "error_message": text})
    return {"throttle_time_ms": 0, "results": results}
