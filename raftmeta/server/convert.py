"""Protocol messages to controller values and back, one function per shape.

The gRPC services stay thin: they authenticate, call the controller, and use these to translate.
Anything a request can get wrong in shape (a bad UUID, an unknown config operation) is found
here and reported as INVALID_REQUEST with a message, never as a gRPC failure.
"""

from __future__ import annotations

from collections.abc import Iterable

from raftmeta.common.brokers import (
    AlterPartitionRequest,
    AlterPartitionResult,
    BrokerRegistrationRequest,
    IsrMember,
    PartitionIsrChange,
)
from raftmeta.common.configs import (
    AlterConfig,
    AlterConfigOp,
    ConfigResourceRef,
    DescribeConfigsResult,
)
from raftmeta.common.elections import TopicPartition, TopicResults
from raftmeta.common.features import FeatureUpdate
from raftmeta.common.items import ItemError
from raftmeta.common.topics import CreateTopicResult, NewPartitions, NewTopic, TopicResult
from raftmeta.controller.registration import ControllerRegistrationRequest
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage, TopicImage
from raftmeta.records import BrokerEndpoint, BrokerFeature, Uuid
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import broker_pb2 as bpb

UUID_BYTES = 16


def header(
    code: ErrorCode = ErrorCode.NONE,
    message: str = "",
    *,
    controller_id: int | None = None,
    controller_endpoint: str = "",
) -> apb.ResponseHeader:
    return apb.ResponseHeader(
        error_code=int(code),
        error_message="" if code is ErrorCode.NONE else message,
        controller_id=-1 if controller_id is None else controller_id,
        controller_endpoint=controller_endpoint,
    )


OK_HEADER = header()
"""The header of every successful answer, made once; a response copies it in. Never change
it in place."""


def item_message(error: ItemError) -> str:
    return "" if error.ok else (error.message or error.code.name)


def uuid_from_pb(value: bytes, what: str) -> Uuid:
    if len(value) != UUID_BYTES:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST, f"{what} must be {UUID_BYTES} bytes, got {len(value)}."
        )
    return bytes(value)


# --- topics ---------------------------------------------------------------------------------


def new_topic_from_pb(topic: apb.NewTopic) -> NewTopic:
    assignments = None
    if topic.assignments:
        assignments = {
            partition: tuple(replicas.broker_ids)
            for partition, replicas in topic.assignments.items()
        }
    return NewTopic(
        topic.name,
        topic.num_partitions,
        topic.replication_factor,
        assignments,
        dict(topic.configs),
    )


def create_result_to_pb(result: CreateTopicResult) -> apb.CreatableTopicResult:
    return apb.CreatableTopicResult(
        name=result.name,
        topic_id=result.topic_id,
        error_code=int(result.error.code),
        error_message=item_message(result.error),
        num_partitions=result.num_partitions,
        replication_factor=result.replication_factor,
        configs=dict(result.configs),
    )


def new_partitions_from_pb(topic: apb.CreatePartitionsTopic) -> NewPartitions:
    assignments = None
    if topic.assignments:
        assignments = tuple(tuple(replicas.broker_ids) for replicas in topic.assignments)
    return NewPartitions(topic.name, topic.count, assignments)


def topic_result_to_pb(result: TopicResult) -> apb.TopicError:
    return apb.TopicError(
        name=result.name,
        error_code=int(result.error.code),
        error_message=item_message(result.error),
    )


def topic_description(image: MetadataImage, topic: TopicImage) -> apb.TopicDescription:
    return apb.TopicDescription(
        name=topic.name,
        topic_id=topic.topic_id,
        partitions=[
            apb.PartitionDescription(
                partition_index=partition_id,
                leader_id=partition.leader,
                leader_epoch=partition.leader_epoch,
                partition_epoch=partition.partition_epoch,
                replicas=partition.replicas,
                isr=partition.isr,
                leader_recovery_state=partition.leader_recovery_state,
                eligible_leader_replicas=partition.elr,
                last_known_elr=partition.last_known_elr,
            )
            for partition_id, partition in sorted(topic.partitions.items())
        ],
        configs=dict(image.configs(2, topic.name)),
    )


def unknown_topic(name: str) -> apb.TopicDescription:
    return apb.TopicDescription(
        name=name,
        error_code=int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        error_message="This server does not host this topic-partition.",
    )


def broker_descriptions(image: MetadataImage) -> list[apb.BrokerDescription]:
    replica_counts: dict[int, int] = {}
    for _, partition in image.partitions():
        for replica in partition.replicas:
            replica_counts[replica] = replica_counts.get(replica, 0) + 1
    leader_counts = image.leader_counts
    described = []
    for broker_id, broker in sorted(image.brokers.items()):
        endpoint = broker.endpoints[0] if broker.endpoints else None
        described.append(
            apb.BrokerDescription(
                broker_id=broker_id,
                rack=broker.rack or "",
                has_rack=broker.rack is not None,
                fenced=broker.fenced,
                in_controlled_shutdown=broker.in_controlled_shutdown,
                broker_epoch=broker.broker_epoch,
                host="" if endpoint is None else endpoint.host,
                port=0 if endpoint is None else endpoint.port,
                leader_count=leader_counts.get(broker_id, 0),
                replica_count=replica_counts.get(broker_id, 0),
            )
        )
    return described


# --- configs --------------------------------------------------------------------------------


def resource_from_pb(resource: apb.ConfigResource) -> ConfigResourceRef:
    return ConfigResourceRef(resource.resource_type, resource.resource_name)


def resource_to_pb(resource: ConfigResourceRef) -> apb.ConfigResource:
    return apb.ConfigResource(resource_type=resource.resource_type, resource_name=resource.name)


def describe_result_to_pb(result: DescribeConfigsResult) -> apb.DescribeConfigsResult:
    return apb.DescribeConfigsResult(
        resource=resource_to_pb(result.resource),
        error_code=int(result.error.code),
        error_message=item_message(result.error),
        configs=[
            apb.DescribedConfig(
                name=entry.name,
                value=entry.value or "",
                is_null=entry.value is None,
                source=int(entry.source),
            )
            for entry in result.entries
        ],
    )


def alter_ops_from_pb(configs: Iterable[apb.AlterableConfig]) -> list[AlterConfig]:
    """The operations of one resource; INVALID_REQUEST for an operation Kafka lacks."""
    ops = []
    for config in configs:
        try:
            op = AlterConfigOp(config.op)
        except ValueError:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST, f"Unknown config operation {config.op}."
            ) from None
        value = None if config.value_is_null else config.value
        ops.append(AlterConfig(config.name, op, value))
    return ops


def alter_result_to_pb(resource: ConfigResourceRef, error: ItemError) -> apb.AlterConfigsResult:
    return apb.AlterConfigsResult(
        resource=resource_to_pb(resource),
        error_code=int(error.code),
        error_message=item_message(error),
    )


# --- elections ------------------------------------------------------------------------------


def election_partitions_from_pb(
    request: apb.ElectLeadersRequest,
) -> list[TopicPartition] | None:
    if not request.HasField("topic_partitions"):
        return None
    return [
        TopicPartition(topic.topic, partition)
        for topic in request.topic_partitions.topics
        for partition in topic.partitions
    ]


def election_results_to_pb(
    results: Iterable[TopicResults],
) -> list[apb.ReplicaElectionResult]:
    return [
        apb.ReplicaElectionResult(
            topic=topic.topic,
            partition_result=[
                apb.PartitionResult(
                    partition_id=partition,
                    error_code=int(result.error),
                    error_message="" if result.succeeded else (result.message or ""),
                )
                for partition, result in topic.partitions
            ],
        )
        for topic in results
    ]


def election_error_to_pb(
    partitions: list[TopicPartition] | None, code: ErrorCode, message: str
) -> list[apb.ReplicaElectionResult]:
    """The same error on every requested partition, grouped by topic in request order; no
    results for an all-partitions request (Kafka's ElectLeaders error response)."""
    if partitions is None:
        return []
    by_topic: dict[str, list[int]] = {}
    for partition in partitions:
        by_topic.setdefault(partition.topic, []).append(partition.partition)
    return [
        apb.ReplicaElectionResult(
            topic=topic,
            partition_result=[
                apb.PartitionResult(
                    partition_id=partition, error_code=int(code), error_message=message
                )
                for partition in numbers
            ],
        )
        for topic, numbers in by_topic.items()
    ]


# --- brokers --------------------------------------------------------------------------------


def registration_from_pb(request: bpb.RegisterBrokerRequest) -> BrokerRegistrationRequest:
    return BrokerRegistrationRequest(
        broker_id=request.broker_id,
        cluster_id=request.cluster_id,
        incarnation_id=uuid_from_pb(request.incarnation_id, "incarnation_id"),
        endpoints=tuple(
            BrokerEndpoint(listener.name, listener.host, listener.port, listener.security_protocol)
            for listener in request.listeners
        ),
        features=tuple(
            BrokerFeature(
                feature.name, feature.min_supported_version, feature.max_supported_version
            )
            for feature in request.features
        ),
        rack=request.rack if request.HasField("rack") else None,
        previous_broker_epoch=(
            request.previous_broker_epoch if request.HasField("previous_broker_epoch") else -1
        ),
        combined=request.combined,
    )


def controller_registration_from_pb(
    request: bpb.RegisterControllerRequest,
) -> ControllerRegistrationRequest:
    """The request as the controller takes it; the controller checks every value."""
    return ControllerRegistrationRequest(
        controller_id=request.controller_id,
        cluster_id=request.cluster_id,
        incarnation_id=request.incarnation_id,
        endpoints=tuple(
            BrokerEndpoint(listener.name, listener.host, listener.port, listener.security_protocol)
            for listener in request.listeners
        ),
        features=tuple(
            BrokerFeature(
                feature.name, feature.min_supported_version, feature.max_supported_version
            )
            for feature in request.features
        ),
    )


def alter_partition_from_pb(request: bpb.AlterPartitionRequest) -> AlterPartitionRequest:
    return AlterPartitionRequest(
        broker_id=request.broker_id,
        broker_epoch=request.broker_epoch,
        topic_id=uuid_from_pb(request.topic_id, "topic_id"),
        partitions=tuple(
            PartitionIsrChange(
                partition_id=change.partition_index,
                leader_epoch=change.leader_epoch,
                new_isr=tuple(
                    IsrMember(member.broker_id, member.broker_epoch) for member in change.new_isr
                ),
                partition_epoch=change.partition_epoch,
                leader_recovery_state=change.leader_recovery_state,
            )
            for change in request.partitions
        ),
    )


def alter_partition_result_to_pb(result: AlterPartitionResult) -> bpb.AlterPartitionResult:
    return bpb.AlterPartitionResult(
        partition_index=result.partition_id,
        error_code=int(result.error.code),
        error_message=item_message(result.error),
        leader_id=result.leader,
        leader_epoch=result.leader_epoch,
        isr=result.isr,
        partition_epoch=result.partition_epoch,
        leader_recovery_state=result.leader_recovery_state,
    )


UPGRADE = 1
SAFE_DOWNGRADE = 2
UNSAFE_DOWNGRADE = 3


def feature_update_from_pb(update: apb.FeatureUpdate) -> FeatureUpdate:
    """One row of UpdateFeatures; an unknown upgrade type is INVALID_REQUEST, as in Kafka."""
    if update.upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        raise KafkaError(
            ErrorCode.INVALID_REQUEST,
            f"Unknown upgrade type {update.upgrade_type} for feature {update.feature}.",
        )
    return FeatureUpdate(
        update.feature,
        update.max_version_level,
        allow_downgrade=update.upgrade_type != UPGRADE,
    )
