"""DescribeConfigs (key 32, versions 1-4) and IncrementalAlterConfigs (key 44, versions 0-1),
through the Admin service.

Each becomes the gRPC call with the same resources, so the controller validates, writes and
refuses them the same way (unknown resource, unknown config, bad value, duplicate resource,
ACLs), and ``validate_only`` checks without appending. What the gRPC call does not carry is
done here, as a Kafka broker does it while writing the answer: DescribeConfigs' key filter
(``configuration_keys``), each entry's synonym list when asked for, and the fields of later
versions (config type UNKNOWN, no documentation).

A failure of the whole call (NOT_CONTROLLER on a standby, an unknown bearer) lands on every
resource, as Kafka's error responses put it.
"""

from __future__ import annotations

from typing import Any

from raftmeta.common.configs import ConfigSource
from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server.kafka.context import Fields, KafkaContext, header_error

UNKNOWN_CONFIG_TYPE = 0
"""Kafka's ConfigType for a value whose type the answer does not state."""


def _entry(config: apb.DescribedConfig, synonyms: bool) -> Fields:
    value = None if config.is_null else config.value
    return {
        "name": config.name,
        "value": value,
        "read_only": config.source == ConfigSource.STATIC_BROKER_CONFIG,
        "config_source": config.source,
        "is_sensitive": False,
        # Kafka lists the value's sources in precedence order, the one in effect first; the
        # image keeps only the winning level, so that is the one synonym listed.
        "synonyms": [{"name": config.name, "value": value, "source": config.source}]
        if synonyms
        else [],
        "config_type": UNKNOWN_CONFIG_TYPE,
        "documentation": None,
    }


async def describe_configs(context: KafkaContext, request: Any, version: int) -> Fields:
    """Answered by any controller, as Kafka's are: the active one after its pending records
    commit, a standby from its own committed image (clients send it to any node)."""
    resources = list(request.resources or ())
    synonyms = bool(request.include_synonyms)
    wanted = apb.DescribeConfigsRequest(
        resources=[
            apb.ConfigResource(
                resource_type=resource.resource_type, resource_name=resource.resource_name
            )
            for resource in resources
        ]
    )
    response = await context.admin.DescribeConfigs(wanted, context.call)
    code, message = header_error(response.header)
    if code == ErrorCode.NOT_CONTROLLER:
        here = await context.admin.describe_configs_here(wanted, context.call)
        if here is not None:
            response = here
            code, message = header_error(response.header)
    results: list[Fields] = []
    for index, resource in enumerate(resources):
        if code:
            error, text, configs = code, message, []
        else:
            result = response.results[index]
            error, text = result.error_code, result.error_message or None
            keys = resource.configuration_keys
            configs = [
                _entry(config, synonyms)
                for config in result.configs
                if keys is None or config.name in keys
            ]
        results.append(
            {
                "error_code": error,
                "error_message": text,
                "resource_type": resource.resource_type,
                "resource_name": resource.resource_name,
                "configs": configs,
            }
        )
    return {"throttle_time_ms": 0, "results": results}


async def incremental_alter_configs(context: KafkaContext, request: Any, version: int) -> Fields:
    resources = list(request.resources or ())
    response = await context.admin.IncrementalAlterConfigs(
        apb.IncrementalAlterConfigsRequest(
            resources=[
                apb.AlterConfigsResource(
                    resource=apb.ConfigResource(
                        resource_type=resource.resource_type,
                        resource_name=resource.resource_name,
                    ),
                    configs=[
                        apb.AlterableConfig(
                            name=config.name,
                            op=config.config_operation,
                            value=config.value or "",
                            value_is_null=config.value is None,
                        )
                        for config in resource.configs or ()
                    ],
                )
                for resource in resources
            ],
            validate_only=bool(request.validate_only),
        ),
        context.call,
    )
    code, message = header_error(response.header)
    answered = list(response.results)
    return {
        "throttle_time_ms": 0,
        "responses": [
            {
                "error_code": code if code else answered[index].error_code,
                "error_message": message if code else answered[index].error_message or None,
                "resource_type": resource.resource_type,
                "resource_name": resource.resource_name,
            }
            for index, resource in enumerate(resources)
        ],
    }
