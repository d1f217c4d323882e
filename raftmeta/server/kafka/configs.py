"""DescribeConfigs (key 32, versions 1-4), AlterConfigs (key 33, versions 0-2) and
IncrementalAlterConfigs (key 44, versions 0-1), over the API layer.

The API layer validates, writes and refuses the resources (unknown resource, unknown config,
bad value, duplicate resource, ACLs), and ``validate_only`` checks without appending. What
only Kafka's wire carries is done here, as a Kafka broker does it while writing the answer:
DescribeConfigs' key filter (``configuration_keys``), each entry's synonyms only when
``include_synonyms`` asks for them, and from v3 the config type and, only when
``include_documentation`` asks for it, the documentation. Legacy AlterConfigs (key 33,
versions 0-2) replaces each resource's configs with the ones given.

A failure of the whole call (NOT_CONTROLLER on a standby, say) lands on every resource, as
Kafka's error responses put it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from raftmeta.common.configs import (
    AlterConfigsRequest,
    AlterConfigsResource,
    AlterConfigsResult,
    ConfigEntry,
    ConfigResourceRef,
    ConfigType,
    DescribeConfigsResult,
    IncrementalAlterConfigsRequest,
    ReplacedConfigs,
    RequestedConfigChange,
)
from raftmeta.common.items import ItemError
from raftmeta.errors import KafkaError
from raftmeta.server.kafka.context import Fields, KafkaContext, active_or_here, error_fields

FIRST_VERSION_WITH_TYPES = 3
"""DescribeConfigs v3 adds each entry's config type and, when asked, its documentation."""


def _entry(config: ConfigEntry, version: int, synonyms: bool, documentation: bool) -> Fields:
    """One described config as Kafka writes it: the fields the described entry holds, its
    synonyms (the one in effect first) only when asked for, its documentation only when
    asked for from v3."""
    typed = version >= FIRST_VERSION_WITH_TYPES
    return {
        "name": config.name,
        "value": config.value,
        "read_only": config.read_only,
        "config_source": int(config.source),
        "is_sensitive": config.is_sensitive,
        "synonyms": [
            {"name": synonym.name, "value": synonym.value, "source": int(synonym.source)}
            for synonym in config.synonyms
        ]
        if synonyms
        else [],
        "config_type": int(config.config_type) if typed else int(ConfigType.UNKNOWN),
        "documentation": config.documentation if typed and documentation else None,
    }


def _item_fields(error: ItemError) -> tuple[int, str | None]:
    return int(error.code), None if error.ok else (error.message or error.code.name)


async def _described(
    context: KafkaContext, resources: list[ConfigResourceRef]
) -> list[DescribeConfigsResult]:
    """The active controller's answer; a standby's own (or the refusal) otherwise."""
    return await active_or_here(
        lambda: context.apis.describe_configs(context.principal, resources),
        lambda: context.apis.describe_configs_here(context.principal, resources),
    )


async def describe_configs(context: KafkaContext, request: Any, version: int) -> Fields:
    """Answered by any controller, as Kafka's are: the active one after its pending records
    commit, a standby from its own committed image (clients send it to any node)."""
    resources = list(request.resources or ())
    synonyms = bool(request.include_synonyms)
    documentation = bool(request.include_documentation)
    failure: tuple[int, str | None] | None = None
    described: list[DescribeConfigsResult] = []
    try:
        described = await _described(
            context,
            [ConfigResourceRef(item.resource_type, item.resource_name) for item in resources],
        )
    except KafkaError as error:
        failure = error_fields(error)
    results: list[Fields] = []
    for index, resource in enumerate(resources):
        if failure is not None:
            (code, text), configs = failure, []
        else:
            result = described[index]
            code, text = _item_fields(result.error)
            keys = resource.configuration_keys
            configs = [
                _entry(config, version, synonyms, documentation)
                for config in result.entries
                if keys is None or config.name in keys
            ]
        results.append(
            {
                "error_code": code,
                "error_message": text,
                "resource_type": resource.resource_type,
                "resource_name": resource.resource_name,
                "configs": configs,
            }
        )
    return {"throttle_time_ms": 0, "results": results}


def _alter_answer(resources: list[Any], answered: list[tuple[int, str | None]]) -> Fields:
    """AlterConfigs' and IncrementalAlterConfigs' answer: one outcome per resource."""
    return {
        "throttle_time_ms": 0,
        "responses": [
            {
                "error_code": code,
                "error_message": text,
                "resource_type": resource.resource_type,
                "resource_name": resource.resource_name,
            }
            for (code, text), resource in zip(answered, resources, strict=True)
        ],
    }


async def _altered(
    resources: list[Any], results: Awaitable[list[AlterConfigsResult]]
) -> list[tuple[int, str | None]]:
    try:
        return [_item_fields(result.error) for result in await results]
    except KafkaError as error:
        return [error_fields(error)] * len(resources)


async def alter_configs(context: KafkaContext, request: Any, version: int) -> Fields:
    """Legacy AlterConfigs: each resource's configs become the ones given."""
    resources = list(request.resources or ())
    wanted = AlterConfigsRequest(
        tuple(
            ReplacedConfigs(
                ConfigResourceRef(resource.resource_type, resource.resource_name),
                tuple((config.name, config.value) for config in resource.configs or ()),
            )
            for resource in resources
        ),
        bool(request.validate_only),
    )
    answered = await _altered(resources, context.apis.alter_configs(context.principal, wanted))
    return _alter_answer(resources, answered)


async def incremental_alter_configs(context: KafkaContext, request: Any, version: int) -> Fields:
    resources = list(request.resources or ())
    wanted = IncrementalAlterConfigsRequest(
        tuple(
            AlterConfigsResource(
                ConfigResourceRef(resource.resource_type, resource.resource_name),
                tuple(
                    RequestedConfigChange(config.name, config.config_operation, config.value)
                    for config in resource.configs or ()
                ),
            )
            for resource in resources
        ),
        bool(request.validate_only),
    )
    answered = await _altered(
        resources, context.apis.incremental_alter_configs(context.principal, wanted)
    )
    return _alter_answer(resources, answered)


def describe_configs_failed(request: Any, version: int, code: int, message: str | None) -> Fields:
    """Kafka's error response: ``code`` on every requested resource."""
    return {"throttle_time_ms": 0, "results": _failed_resources(request, code, message, True)}


def incremental_alter_configs_failed(
    request: Any, version: int, code: int, message: str | None
) -> Fields:
    """Kafka's error response: ``code`` on every requested resource."""
    return {"throttle_time_ms": 0, "responses": _failed_resources(request, code, message, False)}


def alter_configs_failed(request: Any, version: int, code: int, message: str | None) -> Fields:
    """Kafka's error response: ``code`` on every requested resource."""
    return {"throttle_time_ms": 0, "responses": _failed_resources(request, code, message, False)}


def _failed_resources(
    request: Any, code: int, message: str | None, with_configs: bool
) -> list[Fields]:
    failed: list[Fields] = []
    for resource in request.resources or ():
        entry: Fields = {
            "error_code": code,
            "error_message": message,
            "resource_type": resource.resource_type,
            "resource_name": resource.resource_name,
        }
        if with_configs:
            entry["configs"] = []
        failed.append(entry)
    return failed
