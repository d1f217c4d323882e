"""DescribeConfigs, IncrementalAlterConfigs and legacy AlterConfigs, for either wire.

A topic's configs need DESCRIBE_CONFIGS (ALTER_CONFIGS to change, incrementally or by
replacing them all) on the topic, a broker's on the cluster; a refused resource is answered
with its authorization error beside the others.
A resource named twice is refused in every copy, and an operation Kafka does not define fails
its own resource, as INVALID_REQUEST.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from raftmeta.apis.base import CLUSTER_DENIED_ITEM, TOPIC_DENIED, ApisBase
from raftmeta.apis.retries import remembered, timeout_of
from raftmeta.auth import CLUSTER_NAME, Operation, ResourceType
from raftmeta.common.configs import (
    AlterConfig,
    AlterConfigOp,
    AlterConfigsRequest,
    AlterConfigsResult,
    ConfigEntry,
    ConfigResourceRef,
    DescribeConfigsResult,
    IncrementalAlterConfigsRequest,
    RequestedConfigChange,
)
from raftmeta.common.items import ItemError, duplicated
from raftmeta.controller import QuorumController, RequestTag
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.records import ConfigResourceType

DUPLICATE_RESOURCE = ItemError(ErrorCode.INVALID_REQUEST, "Duplicate resource in the request.")


def alter_ops(changes: Sequence[RequestedConfigChange]) -> list[AlterConfig]:
    """The operations of one resource; INVALID_REQUEST for an operation Kafka lacks."""
    ops = []
    for change in changes:
        try:
            op = AlterConfigOp(change.op)
        except ValueError:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST, f"Unknown config operation {change.op}."
            ) from None
        ops.append(AlterConfig(change.name, op, change.value))
    return ops


class ConfigApis(ApisBase):
    def config_refusal(
        self, principal: str, operation: Operation, resource: ConfigResourceRef
    ) -> ItemError | None:
        """``None`` if allowed, else the resource's authorization error."""
        if resource.resource_type == ConfigResourceType.TOPIC:
            if self.allowed(principal, operation, ResourceType.TOPIC, resource.name):
                return None
            return TOPIC_DENIED
        if self.allowed(principal, operation, ResourceType.CLUSTER, CLUSTER_NAME):
            return None
        return CLUSTER_DENIED_ITEM

    async def describe_configs(
        self, principal: str, resources: Sequence[ConfigResourceRef]
    ) -> list[DescribeConfigsResult]:
        """On the active controller, after its pending records commit."""

        async def body(controller: QuorumController) -> list[DescribeConfigsResult]:
            await controller.sync()
            return await self._describe_configs(controller, principal, resources)

        return await self.on_active(body)

    async def describe_configs_here(
        self, principal: str, resources: Sequence[ConfigResourceRef]
    ) -> list[DescribeConfigsResult] | None:
        """DescribeConfigs from this controller's committed image, active or not (a standby
        answering a Kafka client bootstrapped to it, KIP-919, as Kafka's controllers answer
        it); None before the controller runs. Without the active controller's sync, so it
        may trail it by the commits in flight."""
        controller = self.host.maybe_controller
        if controller is None:
            return None
        return await self._describe_configs(controller, principal, resources)

    def created_topic_configs(
        self, principal: str, name: str, own: Mapping[str, str]
    ) -> tuple[ConfigEntry, ...] | ItemError:
        """Every config of topic ``name`` created with ``own``, as DescribeConfigs shows
        them (CreateTopics v5+ answers them), or the authorization error of a caller without
        DESCRIBE_CONFIGS on the topic; none before the controller runs."""
        if not self.allowed(principal, Operation.DESCRIBE_CONFIGS, ResourceType.TOPIC, name):
            return TOPIC_DENIED
        controller = self.host.maybe_controller
        if controller is None:
            return ()
        return controller.configs.describe_topic_configs(controller.committed_image, own)

    async def _describe_configs(
        self,
        controller: QuorumController,
        principal: str,
        resources: Sequence[ConfigResourceRef],
    ) -> list[DescribeConfigsResult]:
        errors = [
            self.config_refusal(principal, Operation.DESCRIBE_CONFIGS, resource)
            for resource in resources
        ]
        allowed = [r for r, e in zip(resources, errors, strict=True) if e is None]
        described = iter(await controller.describe_configs(allowed) if allowed else [])
        return [
            next(described) if error is None else DescribeConfigsResult(resource, error)
            for resource, error in zip(resources, errors, strict=True)
        ]

    def _alter_refusals(
        self, principal: str, resources: Sequence[ConfigResourceRef]
    ) -> list[ItemError | None]:
        """Each resource's refusal (ALTER_CONFIGS denied, or named twice), ``None`` if it
        goes on."""
        twice = duplicated(resources)
        errors: list[ItemError | None] = []
        for resource in resources:
            error = self.config_refusal(principal, Operation.ALTER_CONFIGS, resource)
            if error is None and resource in twice:
                error = DUPLICATE_RESOURCE
            errors.append(error)
        return errors

    async def alter_configs(
        self, principal: str, request: AlterConfigsRequest
    ) -> list[AlterConfigsResult]:
        """Legacy AlterConfigs: each allowed resource's configs become exactly the ones given,
        checked as IncrementalAlterConfigs checks them; ``validate_only`` writes nothing."""

        async def body(controller: QuorumController) -> list[AlterConfigsResult]:
            resources = [item.resource for item in request.resources]
            errors = self._alter_refusals(principal, resources)
            replaced = {
                item.resource: {name: value for name, value in item.configs if value is not None}
                for item, error in zip(request.resources, errors, strict=True)
                if error is None
            }
            return await self._in_request_order(
                "AlterConfigs",
                request,
                resources,
                errors,
                lambda tag: controller.alter_configs(
                    replaced,
                    validate_only=request.validate_only,
                    timeout_ms=timeout_of(request.timeout_ms),
                    request=tag,
                ),
            )

        return await self.on_active(body)

    async def _in_request_order(
        self,
        operation: str,
        request: AlterConfigsRequest | IncrementalAlterConfigsRequest,
        resources: Sequence[ConfigResourceRef],
        errors: Sequence[ItemError | None],
        call: Callable[[RequestTag | None], Awaitable[Sequence[AlterConfigsResult]]],
    ) -> list[AlterConfigsResult]:
        """Run ``call`` once per request id (when any resource was allowed) and answer every
        resource (``request``'s, in its order): the refused with their error, the others with
        the controller's result."""
        outcome: dict[ConfigResourceRef, AlterConfigsResult] = {}
        if any(error is None for error in errors):
            request_id = b"" if request.validate_only else request.request_id
            for result in await remembered(request_id, operation, call, self.kept):
                outcome[result.resource] = result
        return [
            AlterConfigsResult(resource, error) if error is not None else outcome[resource]
            for resource, error in zip(resources, errors, strict=True)
        ]

    async def incremental_alter_configs(
        self, principal: str, request: IncrementalAlterConfigsRequest
    ) -> list[AlterConfigsResult]:
        async def body(controller: QuorumController) -> list[AlterConfigsResult]:
            resources = [item.resource for item in request.resources]
            errors = self._alter_refusals(principal, resources)
            changes: dict[ConfigResourceRef, list[AlterConfig]] = {}
            for index, item in enumerate(request.resources):
                if errors[index] is None:
                    try:
                        changes[item.resource] = alter_ops(item.changes)
                    except KafkaError as bad:
                        errors[index] = ItemError(bad.code, bad.message)
            return await self._in_request_order(
                "IncrementalAlterConfigs",
                request,
                resources,
                errors,
                lambda tag: controller.incremental_alter_configs(
                    changes,
                    validate_only=request.validate_only,
                    timeout_ms=timeout_of(request.timeout_ms),
                    request=tag,
                ),
            )

        return await self.on_active(body)
