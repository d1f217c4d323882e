"""CreateTopics, CreatePartitions, DeleteTopics and DescribeTopics, for either wire.

Authorization per topic, as Kafka's: CREATE on the cluster allows every topic of a
CreateTopics, otherwise each topic needs CREATE on itself (ALTER for CreatePartitions, DELETE
for DeleteTopics, DESCRIBE for DescribeTopics); a refused topic is answered
TOPIC_AUTHORIZATION_FAILED beside the others' results, the permitted ones go to the
controller in one call. A ``validate_only`` request writes nothing, so it keeps nothing for
retries either.

Reads first wait for the controller's own pending records to commit, then read its committed
image, so a client sees its own writes and never a state that may still be lost;
:meth:`TopicApis.describe_topics_here` reads this node's committed image without that wait,
for a standby answering a Kafka client (KIP-919).
"""

from __future__ import annotations

from collections.abc import Sequence

from raftmeta.apis.base import TOPIC_DENIED, ApisBase, for_permitted
from raftmeta.apis.retries import remembered, timeout_of
from raftmeta.auth import CLUSTER_NAME, Operation, ResourceType
from raftmeta.common.items import ItemError
from raftmeta.common.topics import (
    CreatePartitionsRequest,
    CreateTopicResult,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    DescribedTopics,
    NewPartitions,
    NewTopic,
    PartitionDescription,
    TopicDescription,
    TopicResult,
)
from raftmeta.controller import QuorumController
from raftmeta.errors import ErrorCode
from raftmeta.image import MetadataImage, TopicImage

TOPIC_CONFIG_RESOURCE = 2
"""ConfigResourceType TOPIC: the image's configs of a topic."""
UNKNOWN_TOPIC = ItemError(
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."
)


def describe_topic(image: MetadataImage, topic: TopicImage) -> TopicDescription:
    return TopicDescription(
        name=topic.name,
        topic_id=topic.topic_id,
        partitions=tuple(
            PartitionDescription(
                partition_index=partition_id,
                leader_id=partition.leader,
                leader_epoch=partition.leader_epoch,
                partition_epoch=partition.partition_epoch,
                replicas=tuple(partition.replicas),
                isr=tuple(partition.isr),
                leader_recovery_state=partition.leader_recovery_state,
                eligible_leader_replicas=tuple(partition.elr),
                last_known_elr=tuple(partition.last_known_elr),
            )
            for partition_id, partition in sorted(topic.partitions.items())
        ),
        configs=dict(image.configs(TOPIC_CONFIG_RESOURCE, topic.name)),
    )


class TopicApis(ApisBase):
    async def create_topics(
        self, principal: str, request: CreateTopicsRequest
    ) -> list[CreateTopicResult]:
        """One result per requested topic, in request order."""
        return await self.on_active(self._create_topics, principal, request)

    async def _create_topics(
        self, controller: QuorumController, principal: str, request: CreateTopicsRequest
    ) -> list[CreateTopicResult]:
        topics = request.topics
        if not topics:
            return []
        if self.allowed(principal, Operation.CREATE, ResourceType.CLUSTER, CLUSTER_NAME):
            # CREATE on the cluster allows every topic: the controller's reply is the answer.
            return await self._create_permitted(controller, request, topics)
        return await for_permitted(
            topics,
            lambda topic: self.allowed(principal, Operation.CREATE, ResourceType.TOPIC, topic.name),
            lambda topic: CreateTopicResult(topic.name, TOPIC_DENIED),
            lambda chosen: self._create_permitted(controller, request, chosen),
        )

    async def _create_permitted(
        self,
        controller: QuorumController,
        request: CreateTopicsRequest,
        topics: Sequence[NewTopic],
    ) -> list[CreateTopicResult]:
        validate_only = request.validate_only
        timeout_ms = timeout_of(request.timeout_ms)
        request_id = b"" if validate_only else request.request_id
        if not request_id:  # the common case, without the bookkeeping of request ids
            return await controller.create_topics(
                topics, validate_only=validate_only, timeout_ms=timeout_ms
            )
        return await remembered(
            request_id,
            "CreateTopics",
            lambda tag: controller.create_topics(
                topics, validate_only=validate_only, timeout_ms=timeout_ms, request=tag
            ),
            self.kept,
        )

    async def create_partitions(
        self, principal: str, request: CreatePartitionsRequest
    ) -> list[TopicResult]:
        async def body(controller: QuorumController) -> list[TopicResult]:
            async def grow(topics: list[NewPartitions]) -> list[TopicResult]:
                return await remembered(
                    b"" if request.validate_only else request.request_id,
                    "CreatePartitions",
                    lambda tag: controller.create_partitions(
                        topics,
                        validate_only=request.validate_only,
                        timeout_ms=timeout_of(request.timeout_ms),
                        request=tag,
                    ),
                    self.kept,
                )

            return await for_permitted(
                request.topics,
                lambda topic: self.allowed(
                    principal, Operation.ALTER, ResourceType.TOPIC, topic.topic
                ),
                lambda topic: TopicResult(topic.topic, TOPIC_DENIED),
                grow,
            )

        return await self.on_active(body)

    async def delete_topics(
        self, principal: str, request: DeleteTopicsRequest
    ) -> list[TopicResult]:
        async def body(controller: QuorumController) -> list[TopicResult]:
            async def delete(names: list[str]) -> list[TopicResult]:
                return await remembered(
                    request.request_id,
                    "DeleteTopics",
                    lambda tag: controller.delete_topics(
                        names, timeout_ms=timeout_of(request.timeout_ms), request=tag
                    ),
                    self.kept,
                )

            return await for_permitted(
                request.names,
                lambda name: self.allowed(principal, Operation.DELETE, ResourceType.TOPIC, name),
                lambda name: TopicResult(name, TOPIC_DENIED),
                delete,
            )

        return await self.on_active(body)

    async def describe_topics(self, principal: str, names: Sequence[str] | None) -> DescribedTopics:
        """The topics ``names`` (``None``: every topic the caller may describe), on the
        active controller after its pending records commit."""

        async def body(controller: QuorumController) -> DescribedTopics:
            await controller.sync()
            return self._describe_topics(controller.committed_image, principal, names)

        return await self.on_active(body)

    def describe_topics_here(
        self, principal: str, names: Sequence[str] | None
    ) -> DescribedTopics | None:
        """DescribeTopics from this controller's committed image, active or not (a standby
        answering a Kafka client bootstrapped to it, KIP-919); None before the controller
        runs. Without the active controller's sync, so it may trail it by the commits in
        flight."""
        controller = self.host.maybe_controller
        if controller is None:
            return None
        return self._describe_topics(controller.committed_image, principal, names)

    def _describe_topics(
        self, image: MetadataImage, principal: str, names: Sequence[str] | None
    ) -> DescribedTopics:
        def may_describe(name: str) -> bool:
            return self.allowed(principal, Operation.DESCRIBE, ResourceType.TOPIC, name)

        described: list[TopicDescription] = []
        if names is None:
            for name in sorted(image.topic_ids_by_name):
                topic = image.topic_by_name(name)
                if topic is not None and may_describe(name):
                    described.append(describe_topic(image, topic))
        else:
            for name in dict.fromkeys(names):
                topic = image.topic_by_name(name)
                if not may_describe(name):
                    described.append(TopicDescription(name, TOPIC_DENIED))
                elif topic is None:
                    described.append(TopicDescription(name, UNKNOWN_TOPIC))
                else:
                    described.append(describe_topic(image, topic))
        return DescribedTopics(tuple(described), image.offset)
