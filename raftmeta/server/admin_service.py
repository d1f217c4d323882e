"""The gRPC ``Admin`` service of proto/raftmeta/admin.proto, over the node's controller.

Every answer is a Kafka-level answer: a node that is not the active controller says
NOT_CONTROLLER with the controller's id and endpoint (except DescribeQuorum, which any node
answers as Raft.DescribeQuorum does); a ``KafkaError`` becomes the header's code and message;
per-item errors go on their items; anything unexpected becomes UNKNOWN_SERVER_ERROR with a
message. No Kafka-level failure ever surfaces as a raw gRPC status.

Reads (DescribeTopics, DescribeCluster) first wait for the controller's own pending records to
commit, then read its committed image, so a client sees its own writes and never a state that
may still be lost.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from raftmeta.auth import CLUSTER_NAME, Operation, ResourceType
from raftmeta.common.configs import AlterConfig, ConfigResourceRef, DescribeConfigsResult
from raftmeta.common.elections import ElectionType, TopicPartition
from raftmeta.common.items import ItemError, duplicated
from raftmeta.common.topics import CreateTopicResult, TopicResult
from raftmeta.controller import QuorumController
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.quorum.raft_service import RaftService
from raftmeta.records import ConfigResourceType
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import admin_pb2_grpc as apb_grpc
from raftmeta.rpc import raft_pb2 as rpb
from raftmeta.server import convert
from raftmeta.server.acl_service import AclMethods
from raftmeta.server.service_base import (
    AUTHORIZATION_FAILED,
    CLUSTER_DENIED,
    remembered,
    timeout_of,
)

log = logging.getLogger(__name__)

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")


async def for_permitted(
    items: Sequence[_Item],
    permitted: Callable[[_Item], bool],
    refused: Callable[[_Item], _Result],
    run: Callable[[list[_Item]], Awaitable[Sequence[_Result]]],
) -> list[_Result]:
    """Send the permitted items to the controller in one call and answer the others with
    their authorization error, in the request's order (Kafka answers per item)."""
    allowed = [permitted(item) for item in items]
    chosen = [item for item, ok in zip(items, allowed, strict=True) if ok]
    results = iter(await run(chosen) if chosen else [])
    return [next(results) if ok else refused(item) for item, ok in zip(items, allowed, strict=True)]


DENIED = ItemError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, AUTHORIZATION_FAILED)


def _create_topics_failed(header: apb.ResponseHeader) -> apb.CreateTopicsResponse:
    return apb.CreateTopicsResponse(header=header)


def _create_topics_reply(results: Sequence[CreateTopicResult]) -> apb.CreateTopicsResponse:
    """The controller's results as the reply (the one kept for retries, too)."""
    return apb.CreateTopicsResponse(topics=[convert.create_result_to_pb(r) for r in results])


class AdminService(AclMethods, apb_grpc.AdminServicer):
    # ------------------------------------------------------------------------ topics

    async def CreateTopics(
        self, request: apb.CreateTopicsRequest, context: Any
    ) -> apb.CreateTopicsResponse:
        return await self.serve_request(
            context, request, _create_topics_failed, self._create_topics
        )

    async def _create_topics(
        self, controller: QuorumController, principal: str, request: apb.CreateTopicsRequest
    ) -> apb.CreateTopicsResponse:
        topics = request.topics
        if not topics:
            return apb.CreateTopicsResponse(header=convert.OK_HEADER)
        if self.allowed(principal, Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME):
            # CREATE on the cluster allows every topic: the controller's reply is the answer.
            reply = await self._create_permitted(controller, request, topics)
            reply.header.CopyFrom(convert.OK_HEADER)
            return reply

        async def create(chosen: list[apb.NewTopic]) -> list[apb.CreatableTopicResult]:
            return list((await self._create_permitted(controller, request, chosen)).topics)

        ordered = await for_permitted(
            topics,
            lambda topic: self.allowed(principal, Operation.CREATE, ResourceType.TOPIC, topic.name),
            lambda topic: convert.create_result_to_pb(CreateTopicResult(topic.name, DENIED)),
            create,
        )
        return apb.CreateTopicsResponse(header=convert.OK_HEADER, topics=ordered)

    async def _create_permitted(
        self,
        controller: QuorumController,
        request: apb.CreateTopicsRequest,
        topics: Sequence[apb.NewTopic],
    ) -> apb.CreateTopicsResponse:
        """The controller's answer for ``topics`` (all of them permitted), without a header."""
        validate_only = request.validate_only
        new_topics = [convert.new_topic_from_pb(topic) for topic in topics]
        timeout_ms = timeout_of(request.timeout_ms)
        request_id = b"" if validate_only else request.request_id
        if not request_id:  # the common case, without the bookkeeping of request ids
            results = await controller.create_topics(
                new_topics, validate_only=validate_only, timeout_ms=timeout_ms
            )
            return _create_topics_reply(results)
        return await remembered(
            request_id,
            "CreateTopics",
            lambda tag: controller.create_topics(
                new_topics, validate_only=validate_only, timeout_ms=timeout_ms, request=tag
            ),
            _create_topics_reply,
            apb.CreateTopicsResponse.FromString,
        )

    async def CreatePartitions(
        self, request: apb.CreatePartitionsRequest, context: Any
    ) -> apb.CreatePartitionsResponse:
        def fail(header: apb.ResponseHeader) -> apb.CreatePartitionsResponse:
            return apb.CreatePartitionsResponse(header=header)

        async def body(
            controller: QuorumController, principal: str
        ) -> apb.CreatePartitionsResponse:
            async def grow(topics: list[apb.CreatePartitionsTopic]) -> list[apb.TopicError]:
                reply = await remembered(
                    b"" if request.validate_only else request.request_id,
                    "CreatePartitions",
                    lambda tag: controller.create_partitions(
                        [convert.new_partitions_from_pb(topic) for topic in topics],
                        validate_only=request.validate_only,
                        timeout_ms=timeout_of(request.timeout_ms),
                        request=tag,
                    ),
                    lambda results: apb.CreatePartitionsResponse(
                        results=[convert.topic_result_to_pb(result) for result in results]
                    ),
                    apb.CreatePartitionsResponse.FromString,
                )
                return list(reply.results)

            ordered = await for_permitted(
                request.topics,
                lambda topic: self.allowed(
                    principal, Operation.ALTER, ResourceType.TOPIC, topic.name
                ),
                lambda topic: convert.topic_result_to_pb(TopicResult(topic.name, DENIED)),
                grow,
            )
            return apb.CreatePartitionsResponse(header=convert.OK_HEADER, results=ordered)

        return await self.serve(context, fail, body)

    async def DeleteTopics(
        self, request: apb.DeleteTopicsRequest, context: Any
    ) -> apb.DeleteTopicsResponse:
        def fail(header: apb.ResponseHeader) -> apb.DeleteTopicsResponse:
            return apb.DeleteTopicsResponse(header=header)

        async def body(controller: QuorumController, principal: str) -> apb.DeleteTopicsResponse:
            async def delete(names: list[str]) -> list[apb.TopicError]:
                reply = await remembered(
                    request.request_id,
                    "DeleteTopics",
                    lambda tag: controller.delete_topics(
                        names, timeout_ms=timeout_of(request.timeout_ms), request=tag
                    ),
                    lambda results: apb.DeleteTopicsResponse(
                        results=[convert.topic_result_to_pb(result) for result in results]
                    ),
                    apb.DeleteTopicsResponse.FromString,
                )
                return list(reply.results)

            ordered = await for_permitted(
                list(request.topic_names),
                lambda name: self.allowed(principal, Operation.DELETE, ResourceType.TOPIC, name),
                lambda name: convert.topic_result_to_pb(TopicResult(name, DENIED)),
                delete,
            )
            return apb.DeleteTopicsResponse(header=convert.OK_HEADER, results=ordered)

        return await self.serve(context, fail, body)

    # ------------------------------------------------------------------------ reads

    async def DescribeTopics(
        self, request: apb.DescribeTopicsRequest, context: Any
    ) -> apb.DescribeTopicsResponse:
        def fail(header: apb.ResponseHeader) -> apb.DescribeTopicsResponse:
            return apb.DescribeTopicsResponse(header=header)

        async def body(controller: QuorumController, principal: str) -> apb.DescribeTopicsResponse:
            await controller.sync()
            return self._describe_topics(controller.committed_image, principal, request)

        return await self.serve(context, fail, body)

    def describe_topics_here(
        self, request: apb.DescribeTopicsRequest, context: Any
    ) -> apb.DescribeTopicsResponse | None:
        """DescribeTopics from this controller's committed image, active or not (a standby
        answering a Kafka client bootstrapped to it, KIP-919); None before the controller
        runs. Without the active controller's sync, so it may trail it by the commits in
        flight."""
        controller = self._owner.maybe_controller
        if controller is None:
            return None
        principal = self._owner.access.call_principal(context)
        return self._describe_topics(controller.committed_image, principal, request)

    def _describe_topics(
        self, image: MetadataImage, principal: str, request: apb.DescribeTopicsRequest
    ) -> apb.DescribeTopicsResponse:
        def may_describe(name: str) -> bool:
            return self.allowed(principal, Operation.DESCRIBE, ResourceType.TOPIC, name)

        described: list[apb.TopicDescription] = []
        if request.all_topics:
            for name in sorted(image.topic_ids_by_name):
                topic = image.topic_by_name(name)
                if topic is not None and may_describe(name):
                    described.append(convert.topic_description(image, topic))
        else:
            for name in dict.fromkeys(request.topic_names):
                topic = image.topic_by_name(name)
                if not may_describe(name):
                    described.append(
                        apb.TopicDescription(
                            name=name,
                            error_code=int(ErrorCode.TOPIC_AUTHORIZATION_FAILED),
                            error_message=AUTHORIZATION_FAILED,
                        )
                    )
                elif topic is None:
                    described.append(convert.unknown_topic(name))
                else:
                    described.append(convert.topic_description(image, topic))
        return apb.DescribeTopicsResponse(
            header=convert.OK_HEADER, topics=described, metadata_offset=image.offset
        )

    async def DescribeCluster(
        self, request: apb.DescribeClusterRequest, context: Any
    ) -> apb.DescribeClusterResponse:
        def fail(header: apb.ResponseHeader) -> apb.DescribeClusterResponse:
            return apb.DescribeClusterResponse(header=header, controller_id=header.controller_id)

        async def body(controller: QuorumController, principal: str) -> apb.DescribeClusterResponse:
            self.require_cluster(principal, Operation.DESCRIBE)
            await controller.sync()
            image = controller.committed_image
            return apb.DescribeClusterResponse(
                header=convert.OK_HEADER,
                cluster_id=controller.settings.cluster_id,
                controller_id=controller.settings.node_id,
                brokers=convert.broker_descriptions(image),
                metadata_offset=image.offset,
                image_digest=image.digest() if request.include_image_digest else "",
            )

        return await self.serve(context, fail, body)

    async def DescribeQuorum(
        self, request: rpb.DescribeQuorumRequest, context: Any
    ) -> rpb.DescribeQuorumResponse:
        """Any node answers, as Raft.DescribeQuorum does (NOT_LEADER_OR_FOLLOWER from a
        follower, naming the leader)."""
        owner = self._owner
        try:
            principal = owner.access.call_principal(context)
        except KafkaError as error:
            return rpb.DescribeQuorumResponse(
                error_code=int(error.code), leader_id=-1, leader_epoch=-1, high_watermark=-1
            )
        if not self.allowed(principal, Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
            return rpb.DescribeQuorumResponse(
                error_code=int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                leader_id=-1,
                leader_epoch=-1,
                high_watermark=-1,
            )
        try:
            return await RaftService(owner.node).DescribeQuorum(request, context)
        except ConnectionError:
            return rpb.DescribeQuorumResponse(
                error_code=int(ErrorCode.BROKER_NOT_AVAILABLE),
                leader_id=-1,
                leader_epoch=-1,
                high_watermark=-1,
            )

    # ------------------------------------------------------------------------ configs

    def _config_allowed(
        self, principal: str, operation: Operation, resource: ConfigResourceRef
    ) -> ItemError | None:
        """``None`` if allowed, else the resource's authorization error."""
        if resource.resource_type == ConfigResourceType.TOPIC:
            if self.allowed(principal, operation, ResourceType.TOPIC, resource.name):
                return None
            return DENIED
        if self.allowed(principal, operation, ResourceType.CLUSTER, CLUSTER_NAME):
            return None
        return ItemError(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_DENIED)

    async def DescribeConfigs(
        self, request: apb.DescribeConfigsRequest, context: Any
    ) -> apb.DescribeConfigsResponse:
        def fail(header: apb.ResponseHeader) -> apb.DescribeConfigsResponse:
            return apb.DescribeConfigsResponse(header=header)

        async def body(controller: QuorumController, principal: str) -> apb.DescribeConfigsResponse:
            await controller.sync()
            return await self._describe_configs(controller, principal, request)

        return await self.serve(context, fail, body)

    async def describe_configs_here(
        self, request: apb.DescribeConfigsRequest, context: Any
    ) -> apb.DescribeConfigsResponse | None:
        """DescribeConfigs from this controller's committed image, active or not (a standby
        answering a Kafka client bootstrapped to it, KIP-919, as Kafka's controllers answer
        it); None before the controller runs. Without the active controller's sync, so it
        may trail it by the commits in flight."""
        controller = self._owner.maybe_controller
        if controller is None:
            return None
        try:
            principal = self._owner.access.call_principal(context)
        except KafkaError as error:
            return apb.DescribeConfigsResponse(header=convert.header(error.code, error.message))
        return await self._describe_configs(controller, principal, request)

    async def _describe_configs(
        self, controller: QuorumController, principal: str, request: apb.DescribeConfigsRequest
    ) -> apb.DescribeConfigsResponse:
        resources = [convert.resource_from_pb(r) for r in request.resources]
        errors = [
            self._config_allowed(principal, Operation.DESCRIBE_CONFIGS, resource)
            for resource in resources
        ]
        allowed = [r for r, e in zip(resources, errors, strict=True) if e is None]
        described = iter(await controller.describe_configs(allowed) if allowed else [])
        results = [
            next(described) if error is None else DescribeConfigsResult(resource, error)
            for resource, error in zip(resources, errors, strict=True)
        ]
        return apb.DescribeConfigsResponse(
            header=convert.OK_HEADER,
            results=[convert.describe_result_to_pb(result) for result in results],
        )

    async def IncrementalAlterConfigs(
        self, request: apb.IncrementalAlterConfigsRequest, context: Any
    ) -> apb.IncrementalAlterConfigsResponse:
        def fail(header: apb.ResponseHeader) -> apb.IncrementalAlterConfigsResponse:
            return apb.IncrementalAlterConfigsResponse(header=header)

        async def body(
            controller: QuorumController, principal: str
        ) -> apb.IncrementalAlterConfigsResponse:
            resources = [convert.resource_from_pb(item.resource) for item in request.resources]
            twice = duplicated(resources)
            errors: list[ItemError | None] = []
            changes: dict[ConfigResourceRef, list[AlterConfig]] = {}
            for resource, item in zip(resources, request.resources, strict=True):
                error = self._config_allowed(principal, Operation.ALTER_CONFIGS, resource)
                if error is None and resource in twice:
                    error = ItemError(
                        ErrorCode.INVALID_REQUEST, "Duplicate resource in the request."
                    )
                if error is None:
                    try:
                        changes[resource] = convert.alter_ops_from_pb(item.configs)
                    except KafkaError as bad:
                        error = ItemError(bad.code, bad.message)
                errors.append(error)
            outcome: dict[ConfigResourceRef, apb.AlterConfigsResult] = {}
            if changes:
                reply = await remembered(
                    b"" if request.validate_only else request.request_id,
                    "IncrementalAlterConfigs",
                    lambda tag: controller.incremental_alter_configs(
                        changes,
                        validate_only=request.validate_only,
                        timeout_ms=timeout_of(request.timeout_ms),
                        request=tag,
                    ),
                    lambda results: apb.IncrementalAlterConfigsResponse(
                        results=[
                            convert.alter_result_to_pb(result.resource, result.error)
                            for result in results
                        ]
                    ),
                    apb.IncrementalAlterConfigsResponse.FromString,
                )
                for result in reply.results:
                    outcome[convert.resource_from_pb(result.resource)] = result
            return apb.IncrementalAlterConfigsResponse(
                header=convert.OK_HEADER,
                results=[
                    convert.alter_result_to_pb(resource, error)
                    if error is not None
                    else outcome[resource]
                    for resource, error in zip(resources, errors, strict=True)
                ],
            )

        return await self.serve(context, fail, body)

    # ------------------------------------------------------------------------ elections

    # ------------------------------------------------------------------------ features

    async def DescribeFeatures(
        self, request: apb.DescribeFeaturesRequest, context: Any
    ) -> apb.DescribeFeaturesResponse:
        def fail(header: apb.ResponseHeader) -> apb.DescribeFeaturesResponse:
            return apb.DescribeFeaturesResponse(header=header)

        async def body(
            controller: QuorumController, principal: str
        ) -> apb.DescribeFeaturesResponse:
            self.require_cluster(principal, Operation.DESCRIBE)
            finalized, supported, epoch = await controller.describe_features()
            return apb.DescribeFeaturesResponse(
                header=convert.OK_HEADER,
                finalized=[
                    apb.FinalizedFeature(name=name, level=level)
                    for name, level in sorted(finalized.items())
                ],
                supported=[
                    apb.SupportedFeature(
                        name=name, min_version=span.min_version, max_version=span.max_version
                    )
                    for name, span in sorted(supported.items())
                ],
                finalized_epoch=epoch,
            )

        return await self.serve(context, fail, body)

    async def UpdateFeatures(
        self, request: apb.UpdateFeaturesRequest, context: Any
    ) -> apb.UpdateFeaturesResponse:
        def fail(header: apb.ResponseHeader) -> apb.UpdateFeaturesResponse:
            return apb.UpdateFeaturesResponse(header=header)

        async def body(controller: QuorumController, principal: str) -> apb.UpdateFeaturesResponse:
            self.require_cluster(principal, Operation.ALTER)
            updates = [convert.feature_update_from_pb(update) for update in request.feature_updates]
            await controller.update_features(
                updates,
                validate_only=request.validate_only,
                timeout_ms=timeout_of(request.timeout_ms),
            )
            return apb.UpdateFeaturesResponse(
                header=convert.OK_HEADER,
                results=[apb.UpdatableFeatureResult(feature=update.name) for update in updates],
            )

        return await self.serve(context, fail, body)

    async def ElectLeaders(
        self, request: apb.ElectLeadersRequest, context: Any
    ) -> apb.ElectLeadersResponse:
        partitions: list[TopicPartition] | None = convert.election_partitions_from_pb(request)

        def fail(header: apb.ResponseHeader) -> apb.ElectLeadersResponse:
            # Kafka's ElectLeaders error response: the top-level code on every requested
            # partition too, and no results for an all-partitions request.
            return apb.ElectLeadersResponse(
                header=header,
                replica_election_results=convert.election_error_to_pb(
                    partitions, ErrorCode(header.error_code), header.error_message
                ),
            )

        async def body(controller: QuorumController, principal: str) -> apb.ElectLeadersResponse:
            self.require_cluster(principal, Operation.ALTER)
            election_type = ElectionType.from_request(request.election_type)
            if partitions is not None and not partitions:
                return apb.ElectLeadersResponse(header=convert.OK_HEADER)
            reply: apb.ElectLeadersResponse = await remembered(
                request.request_id,
                "ElectLeaders",
                lambda tag: controller.elect_leaders(
                    election_type,
                    partitions,
                    timeout_ms=timeout_of(request.timeout_ms),
                    request=tag,
                ),
                lambda results: apb.ElectLeadersResponse(
                    replica_election_results=convert.election_results_to_pb(results)
                ),
                apb.ElectLeadersResponse.FromString,
            )
            reply.header.CopyFrom(convert.OK_HEADER)
            return reply

        return await self.serve(context, fail, body)
