"""Protocol messages to controller values and back, one function per shape.

The gRPC services stay thin: they authenticate, call the controller, and use these to translate.
Decoding never fails: what a request can get wrong in shape (a bad UUID, an unknown config
operation) travels on as it came, and :mod:`raftmeta.apis` refuses it, for either wire.
"""

from __future__ import annotations

from collections.abc import Iterable

from raftmeta.apis import NotActiveController
from raftmeta.common.acls import AclBinding, AclBindingFilter, AclDeleteResult
from raftmeta.common.brokers import (
    AlterPartitionRequest,
    AlterPartitionResult,
    BrokerRegistrationRequest,
    IsrMember,
    PartitionIsrChange,
)
from raftmeta.common.cluster import BrokerDescription
from raftmeta.common.configs import (
    AlterConfigsRequest,
    AlterConfigsResource,
    AlterConfigsResult,
    ConfigEntry,
    ConfigResourceRef,
    DescribeConfigsResult,
    IncrementalAlterConfigsRequest,
    ReplacedConfigs,
    RequestedConfigChange,
)
from raftmeta.common.elections import (
    ElectLeadersRequest,
    PartitionResult,
    TopicPartition,
    TopicResults,
)
from raftmeta.common.features import RequestedFeatureUpdate, UpdateFeaturesRequest
from raftmeta.common.items import ItemError
from raftmeta.common.quotas import ClientQuotaEntity
from raftmeta.common.reassignments import (
    AlterPartitionReassignmentsRequest,
    ListPartitionReassignmentsRequest,
    PartitionReassignment,
    ReassignmentResult,
    ReassignmentTarget,
)
from raftmeta.common.topics import (
    CreatePartitionsRequest,
    CreateTopicResult,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    NewPartitions,
    NewTopic,
    TopicDescription,
    TopicResult,
)
from raftmeta.controller.registration import ControllerRegistrationRequest
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.records import BrokerEndpoint, BrokerFeature
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import broker_pb2 as bpb


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


def failure_header(error: KafkaError) -> apb.ResponseHeader:
    """The header of a request that failed as a whole: NOT_CONTROLLER names the controller."""
    if isinstance(error, NotActiveController):
        return header(
            error.code,
            error.message,
            controller_id=error.controller_id,
            controller_endpoint=error.controller_endpoint,
        )
    return header(error.code, error.message)


def item_message(error: ItemError) -> str:
    return "" if error.ok else (error.message or error.code.name)


def item_error(code: int, message: str) -> ItemError:
    """An item's outcome as a reply carries it (an empty message: none)."""
    return ItemError(ErrorCode(code), message or None)


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


def create_topics_from_pb(request: apb.CreateTopicsRequest) -> CreateTopicsRequest:
    return CreateTopicsRequest(
        tuple([new_topic_from_pb(topic) for topic in request.topics]),
        request.validate_only,
        request.timeout_ms,
        request.request_id,
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


def create_result_from_pb(result: apb.CreatableTopicResult) -> CreateTopicResult:
    return CreateTopicResult(
        result.name,
        item_error(result.error_code, result.error_message),
        result.topic_id,
        result.num_partitions,
        result.replication_factor,
        dict(result.configs),
    )


def new_partitions_from_pb(topic: apb.CreatePartitionsTopic) -> NewPartitions:
    assignments = None
    if topic.assignments:
        assignments = tuple(tuple(replicas.broker_ids) for replicas in topic.assignments)
    return NewPartitions(topic.name, topic.count, assignments)


def create_partitions_from_pb(request: apb.CreatePartitionsRequest) -> CreatePartitionsRequest:
    return CreatePartitionsRequest(
        tuple(new_partitions_from_pb(topic) for topic in request.topics),
        request.validate_only,
        request.timeout_ms,
        request.request_id,
    )


def delete_topics_from_pb(request: apb.DeleteTopicsRequest) -> DeleteTopicsRequest:
    return DeleteTopicsRequest(tuple(request.topic_names), request.timeout_ms, request.request_id)


def topic_result_to_pb(result: TopicResult) -> apb.TopicError:
    return apb.TopicError(
        name=result.name,
        error_code=int(result.error.code),
        error_message=item_message(result.error),
    )


def topic_result_from_pb(result: apb.TopicError) -> TopicResult:
    return TopicResult(result.name, item_error(result.error_code, result.error_message))


def topic_description_to_pb(topic: TopicDescription) -> apb.TopicDescription:
    return apb.TopicDescription(
        name=topic.name,
        topic_id=topic.topic_id,
        error_code=int(topic.error.code),
        error_message=item_message(topic.error),
        partitions=[
            apb.PartitionDescription(
                partition_index=partition.partition_index,
                leader_id=partition.leader_id,
                leader_epoch=partition.leader_epoch,
                partition_epoch=partition.partition_epoch,
                replicas=partition.replicas,
                isr=partition.isr,
                leader_recovery_state=partition.leader_recovery_state,
                eligible_leader_replicas=partition.eligible_leader_replicas,
                last_known_elr=partition.last_known_elr,
            )
            for partition in topic.partitions
        ],
        configs=dict(topic.configs),
    )


def broker_description_to_pb(broker: BrokerDescription) -> apb.BrokerDescription:
    return apb.BrokerDescription(
        broker_id=broker.broker_id,
        rack=broker.rack or "",
        has_rack=broker.rack is not None,
        fenced=broker.fenced,
        in_controlled_shutdown=broker.in_controlled_shutdown,
        broker_epoch=broker.broker_epoch,
        host=broker.host,
        port=broker.port,
        leader_count=broker.leader_count,
        replica_count=broker.replica_count,
    )


# --- configs --------------------------------------------------------------------------------


def resource_from_pb(resource: apb.ConfigResource) -> ConfigResourceRef:
    return ConfigResourceRef(resource.resource_type, resource.resource_name)


def resource_to_pb(resource: ConfigResourceRef) -> apb.ConfigResource:
    return apb.ConfigResource(resource_type=resource.resource_type, resource_name=resource.name)


def described_config_to_pb(
    entry: ConfigEntry, synonyms: bool, documentation: bool
) -> apb.DescribedConfig:
    """One described config; its synonyms and documentation only when asked for."""
    return apb.DescribedConfig(
        name=entry.name,
        value=entry.value or "",
        is_null=entry.value is None,
        source=int(entry.source),
        is_sensitive=entry.is_sensitive,
        read_only=entry.read_only,
        config_type=int(entry.config_type),
        documentation=(entry.documentation or "") if documentation else "",
        synonyms=[
            apb.ConfigSynonym(
                name=synonym.name,
                value=synonym.value or "",
                is_null=synonym.value is None,
                source=int(synonym.source),
            )
            for synonym in entry.synonyms
        ]
        if synonyms
        else [],
    )


def describe_result_to_pb(
    result: DescribeConfigsResult, synonyms: bool = False, documentation: bool = False
) -> apb.DescribeConfigsResult:
    return apb.DescribeConfigsResult(
        resource=resource_to_pb(result.resource),
        error_code=int(result.error.code),
        error_message=item_message(result.error),
        configs=[
            described_config_to_pb(entry, synonyms, documentation) for entry in result.entries
        ],
    )


def replace_configs_from_pb(request: apb.AlterConfigsRequest) -> AlterConfigsRequest:
    """Legacy AlterConfigs: each resource's configs as they are to become."""
    return AlterConfigsRequest(
        tuple(
            ReplacedConfigs(resource_from_pb(item.resource), tuple(sorted(item.configs.items())))
            for item in request.resources
        ),
        request.validate_only,
        request.timeout_ms,
        request.request_id,
    )


def alter_configs_from_pb(
    request: apb.IncrementalAlterConfigsRequest,
) -> IncrementalAlterConfigsRequest:
    return IncrementalAlterConfigsRequest(
        tuple(
            AlterConfigsResource(
                resource_from_pb(item.resource),
                tuple(
                    RequestedConfigChange(
                        config.name, config.op, None if config.value_is_null else config.value
                    )
                    for config in item.configs
                ),
            )
            for item in request.resources
        ),
        request.validate_only,
        request.timeout_ms,
        request.request_id,
    )


def alter_result_to_pb(result: AlterConfigsResult) -> apb.AlterConfigsResult:
    return apb.AlterConfigsResult(
        resource=resource_to_pb(result.resource),
        error_code=int(result.error.code),
        error_message=item_message(result.error),
    )


def alter_result_from_pb(result: apb.AlterConfigsResult) -> AlterConfigsResult:
    return AlterConfigsResult(
        resource_from_pb(result.resource), item_error(result.error_code, result.error_message)
    )


# --- elections ------------------------------------------------------------------------------


def elect_leaders_from_pb(request: apb.ElectLeadersRequest) -> ElectLeadersRequest:
    partitions = None
    if request.HasField("topic_partitions"):
        partitions = tuple(
            TopicPartition(topic.topic, partition)
            for topic in request.topic_partitions.topics
            for partition in topic.partitions
        )
    return ElectLeadersRequest(
        request.election_type, partitions, request.timeout_ms, request.request_id
    )


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


def election_results_from_pb(
    results: Iterable[apb.ReplicaElectionResult],
) -> list[TopicResults]:
    return [
        TopicResults(
            topic.topic,
            tuple(
                (
                    partition.partition_id,
                    PartitionResult(
                        ErrorCode(partition.error_code), partition.error_message or None
                    ),
                )
                for partition in topic.partition_result
            ),
        )
        for topic in results
    ]


# --- ACLs -----------------------------------------------------------------------------------


def binding_from_pb(message: apb.AclBinding) -> AclBinding:
    return AclBinding(
        message.resource_type,
        message.resource_name,
        message.pattern_type,
        message.principal,
        message.host,
        message.operation,
        message.permission_type,
    )


def binding_to_pb(binding: AclBinding) -> apb.AclBinding:
    return apb.AclBinding(
        resource_type=binding.resource_type,
        resource_name=binding.resource_name,
        pattern_type=binding.pattern_type,
        principal=binding.principal,
        host=binding.host,
        operation=binding.operation,
        permission_type=binding.permission_type,
    )


def filter_from_pb(message: apb.AclBindingFilter) -> AclBindingFilter:
    return AclBindingFilter(
        message.resource_type,
        message.resource_name if message.HasField("resource_name") else None,
        message.pattern_type,
        message.principal if message.HasField("principal") else None,
        message.host if message.HasField("host") else None,
        message.operation,
        message.permission_type,
    )


def acl_creation_to_pb(result: ItemError) -> apb.AclCreationResult:
    return apb.AclCreationResult(error_code=int(result.code), error_message=result.message or "")


def acl_deletion_to_pb(result: AclDeleteResult) -> apb.DeleteAclsFilterResult:
    return apb.DeleteAclsFilterResult(
        error_code=int(result.error.code),
        error_message=result.error.message or "",
        matching_acls=[
            apb.DeleteAclsMatchingAcl(acl=binding_to_pb(binding)) for binding in result.deleted
        ],
    )


def acl_deletion_from_pb(result: apb.DeleteAclsFilterResult) -> AclDeleteResult:
    return AclDeleteResult(
        item_error(result.error_code, result.error_message),
        tuple(binding_from_pb(matching.acl) for matching in result.matching_acls),
    )


# --- brokers --------------------------------------------------------------------------------


def _listeners(listeners: Iterable[bpb.Listener]) -> tuple[BrokerEndpoint, ...]:
    return tuple(
        BrokerEndpoint(listener.name, listener.host, listener.port, listener.security_protocol)
        for listener in listeners
    )


def _features(features: Iterable[bpb.Feature]) -> tuple[BrokerFeature, ...]:
    return tuple(
        BrokerFeature(feature.name, feature.min_supported_version, feature.max_supported_version)
        for feature in features
    )


def registration_from_pb(request: bpb.RegisterBrokerRequest) -> BrokerRegistrationRequest:
    """As it came: the API layer checks the incarnation id."""
    return BrokerRegistrationRequest(
        broker_id=request.broker_id,
        cluster_id=request.cluster_id,
        incarnation_id=bytes(request.incarnation_id),
        endpoints=_listeners(request.listeners),
        features=_features(request.features),
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
        endpoints=_listeners(request.listeners),
        features=_features(request.features),
    )


def alter_partition_from_pb(request: bpb.AlterPartitionRequest) -> AlterPartitionRequest:
    """As it came: the API layer checks the topic id."""
    return AlterPartitionRequest(
        broker_id=request.broker_id,
        broker_epoch=request.broker_epoch,
        topic_id=bytes(request.topic_id),
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


# --- features -------------------------------------------------------------------------------


def update_features_from_pb(request: apb.UpdateFeaturesRequest) -> UpdateFeaturesRequest:
    return UpdateFeaturesRequest(
        tuple(
            RequestedFeatureUpdate(update.feature, update.max_version_level, update.upgrade_type)
            for update in request.feature_updates
        ),
        request.validate_only,
        request.timeout_ms,
    )


# --- partition reassignment -----------------------------------------------------------------


def reassignments_from_pb(
    request: apb.AlterPartitionReassignmentsRequest,
) -> AlterPartitionReassignmentsRequest:
    targets = tuple(
        ReassignmentTarget(
            TopicPartition(topic.name, partition.partition),
            tuple(partition.replicas.broker_ids) if partition.HasField("replicas") else None,
        )
        for topic in request.topics
        for partition in topic.partitions
    )
    allow = (
        request.allow_replication_factor_change
        if request.HasField("allow_replication_factor_change")
        else True
    )
    return AlterPartitionReassignmentsRequest(
        targets, request.timeout_ms, allow, request.request_id
    )


def reassignments_to_pb(
    request: AlterPartitionReassignmentsRequest,
) -> apb.AlterPartitionReassignmentsRequest:
    topics: dict[str, apb.ReassignableTopic] = {}
    for target in request.targets:
        topic = topics.setdefault(
            target.partition.topic, apb.ReassignableTopic(name=target.partition.topic)
        )
        partition = topic.partitions.add(partition=target.partition.partition)
        if target.replicas is not None:
            partition.replicas.broker_ids.extend(target.replicas)
    return apb.AlterPartitionReassignmentsRequest(
        topics=list(topics.values()),
        timeout_ms=request.timeout_ms,
        allow_replication_factor_change=request.allow_replication_factor_change,
        request_id=request.request_id,
    )


def reassignment_results_to_pb(
    results: Iterable[ReassignmentResult], *, grouped: bool = True
) -> list[apb.ReassignableTopicResponse]:
    """Grouped by topic in first-named order, as Kafka answers; ``grouped=False`` gives one
    entry per result, so that the request's order survives (the kept replies)."""
    responses: list[apb.ReassignableTopicResponse] = []
    by_topic: dict[str, apb.ReassignableTopicResponse] = {}
    for result in results:
        name = result.partition.topic
        response = by_topic.get(name) if grouped else None
        if response is None:
            response = apb.ReassignableTopicResponse(name=name)
            responses.append(response)
            by_topic[name] = response
        response.partitions.add(
            partition_id=result.partition.partition,
            error_code=int(result.error.code),
            error_message=result.error.message or "",
        )
    return responses


def reassignment_results_from_pb(
    responses: Iterable[apb.ReassignableTopicResponse],
) -> list[ReassignmentResult]:
    return [
        ReassignmentResult(
            TopicPartition(topic.name, partition.partition_id),
            item_error(partition.error_code, partition.error_message),
        )
        for topic in responses
        for partition in topic.partitions
    ]


def list_reassignments_from_pb(
    request: apb.ListPartitionReassignmentsRequest,
) -> ListPartitionReassignmentsRequest:
    partitions = None
    if request.HasField("topic_partitions"):
        partitions = tuple(
            TopicPartition(topic.topic, partition)
            for topic in request.topic_partitions.topics
            for partition in topic.partitions
        )
    return ListPartitionReassignmentsRequest(partitions, request.timeout_ms)


def ongoing_reassignments_to_pb(
    moving: dict[TopicPartition, PartitionReassignment],
) -> list[apb.OngoingTopicReassignment]:
    topics: dict[str, apb.OngoingTopicReassignment] = {}
    for partition, reassignment in moving.items():
        topic = topics.setdefault(
            partition.topic, apb.OngoingTopicReassignment(name=partition.topic)
        )
        topic.partitions.add(
            partition=partition.partition,
            replicas=reassignment.replicas,
            adding_replicas=reassignment.adding_replicas,
            removing_replicas=reassignment.removing_replicas,
        )
    return list(topics.values())


def ongoing_reassignments_from_pb(
    topics: Iterable[apb.OngoingTopicReassignment],
) -> dict[TopicPartition, PartitionReassignment]:
    return {
        TopicPartition(topic.name, partition.partition): PartitionReassignment(
            tuple(partition.replicas),
            tuple(partition.adding_replicas),
            tuple(partition.removing_replicas),
        )
        for topic in topics
        for partition in topic.partitions
    }


# --- client quotas -------------------------------------------------------------------------


def quota_entity_from_pb(message: apb.QuotaEntity) -> ClientQuotaEntity:
    return ClientQuotaEntity.of(
        (part.entity_type, None if part.is_default else part.entity_name) for part in message.parts
    )


def quota_entity_to_pb(entity: ClientQuotaEntity) -> apb.QuotaEntity:
    return apb.QuotaEntity(
        parts=[
            apb.QuotaEntityPart(entity_type=kind, entity_name=name or "", is_default=name is None)
            for kind, name in entity.parts
        ]
    )


def quota_result_to_pb(result: ItemError) -> apb.AlterClientQuotaResult:
    """One alteration's outcome (the entity is filled in by the caller that knows it)."""
    return apb.AlterClientQuotaResult(
        error_code=int(result.code), error_message=item_message(result)
    )


def quota_result_from_pb(result: apb.AlterClientQuotaResult) -> ItemError:
    return item_error(result.error_code, result.error_message)
