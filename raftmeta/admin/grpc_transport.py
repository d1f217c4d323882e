"""The admin client's gRPC transport: raftmeta's Admin service, reached through a
:class:`ControllerChannel` that finds the active controller among ``bootstrap.servers`` and
follows it when it moves.

Each operation builds the gRPC request, sends it and turns the answer into one outcome per
item, as :class:`~raftmeta.admin.transport.AdminTransport` describes.

Every write carries a fresh request id (:func:`new_request_id`), made once per call here and
so the same on every retry the channel makes of that call: the controller answers a retry of a
write that already committed with its first outcome, so a lost answer never comes back as
TOPIC_ALREADY_EXISTS for the caller's own topic.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from raftmeta.admin.scram import UserScramCredentialsDescription
from raftmeta.admin.transport import (
    Outcomes,
    config_entry,
    config_resource_of,
    not_offered,
    scram_descriptions,
    scram_outcome,
)
from raftmeta.admin.types import (
    BrokerDescription,
    ClusterDescription,
    ConfigEntry,
    ConfigResource,
    FeatureMetadata,
    KafkaException,
    NewPartitions,
    NewTopic,
    PartitionDescription,
    TopicDescription,
)
from raftmeta.channel import ControllerChannel
from raftmeta.common.acls import AclBinding, AclBindingFilter
from raftmeta.common.elections import TopicPartition
from raftmeta.common.features import FeatureUpdate
from raftmeta.common.quotas import ClientQuotaAlteration, ClientQuotaEntity, ClientQuotaFilter
from raftmeta.common.reassignments import (
    PartitionReassignment,
    ReassignmentTarget,
    grouped_by_topic,
)
from raftmeta.common.scram import ScramDeletion, ScramUpsertion
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.records import uuid_to_str
from raftmeta.rpc import admin_pb2 as pb


def new_request_id() -> bytes:
    """A write's id: 16 random bytes, unique per logical call."""
    return uuid.uuid4().bytes


def _item_error(code: int, message: str) -> KafkaException | None:
    return None if code == ErrorCode.NONE else KafkaException(code, message)


def _check_header(header: Any) -> None:
    """Raise the request-level error a response header reports, if any."""
    if header.error_code != ErrorCode.NONE:
        raise KafkaException(header.error_code, header.error_message)


def _missing(what: str) -> KafkaException:
    return KafkaException(
        ErrorCode.UNKNOWN_SERVER_ERROR, f"the controller sent no result for {what}"
    )


def _fill_missing(outcomes: dict[Any, Any], keys: Iterable[Any], describe: str) -> None:
    for key in keys:
        if key not in outcomes:
            outcomes[key] = _missing(f"{describe} {key}")


def _timeout_ms(channel: ControllerChannel, timeout_ms: int | None) -> int:
    return channel.request_timeout_ms if timeout_ms is None else timeout_ms


def _acl_to_pb(binding: AclBinding) -> pb.AclBinding:
    return pb.AclBinding(
        resource_type=int(binding.resource_type),
        resource_name=binding.resource_name,
        pattern_type=int(binding.pattern_type),
        principal=binding.principal,
        host=binding.host,
        operation=int(binding.operation),
        permission_type=int(binding.permission_type),
    )


def _acl_from_pb(message: Any) -> AclBinding:
    return AclBinding(
        message.resource_type,
        message.resource_name,
        message.pattern_type,
        message.principal,
        message.host,
        message.operation,
        message.permission_type,
    )


def _acl_filter_to_pb(acl_filter: AclBindingFilter) -> pb.AclBindingFilter:
    return pb.AclBindingFilter(
        resource_type=int(acl_filter.resource_type),
        resource_name=acl_filter.resource_name,
        pattern_type=int(acl_filter.pattern_type),
        principal=acl_filter.principal,
        host=acl_filter.host,
        operation=int(acl_filter.operation),
        permission_type=int(acl_filter.permission_type),
    )


class GrpcTransport:
    """Admin operations over one :class:`ControllerChannel` (and so one event loop)."""

    def __init__(self, channel: ControllerChannel) -> None:
        self.channel = channel

    describe_quorum = not_offered(
        "DescribeQuorum", "bootstrap.controllers (or raftmeta quorum describe)"
    )
    unregister_broker = not_offered("UnregisterBroker", "bootstrap.controllers")
    add_raft_voter = not_offered(
        "AddRaftVoter", "bootstrap.controllers (or raftmeta quorum add-controller)"
    )
    remove_raft_voter = not_offered(
        "RemoveRaftVoter", "bootstrap.controllers (or raftmeta quorum remove-controller)"
    )

    async def describe_cluster_id(self, timeout_ms: int | None) -> str:
        return (await self.describe_cluster(False, timeout_ms)).cluster_id

    async def close(self) -> None:
        await self.channel.close()

    async def create_acls(
        self, bindings: Sequence[AclBinding], timeout_ms: int | None
    ) -> Outcomes[AclBinding, None]:
        budget = _timeout_ms(self.channel, timeout_ms)
        request = pb.CreateAclsRequest(
            creations=[_acl_to_pb(binding) for binding in bindings],
            timeout_ms=budget,
            request_id=new_request_id(),
        )
        response = await self._call("Admin/CreateAcls", request, budget)
        outcomes: Outcomes[AclBinding, None] = {}
        for binding, result in zip(bindings, response.results, strict=False):
            outcomes[binding] = _item_error(result.error_code, result.error_message)
        _fill_missing(outcomes, bindings, "ACL")
        return outcomes

    async def describe_acls(
        self, acl_filter: AclBindingFilter, timeout_ms: int | None
    ) -> list[AclBinding]:
        request = pb.DescribeAclsRequest(filter=_acl_filter_to_pb(acl_filter))
        response = await self._call("Admin/DescribeAcls", request, timeout_ms)
        return [_acl_from_pb(acl) for acl in response.acls]

    async def delete_acls(
        self, filters: Sequence[AclBindingFilter], timeout_ms: int | None
    ) -> Outcomes[AclBindingFilter, list[AclBinding]]:
        budget = _timeout_ms(self.channel, timeout_ms)
        request = pb.DeleteAclsRequest(
            filters=[_acl_filter_to_pb(item) for item in filters],
            timeout_ms=budget,
            request_id=new_request_id(),
        )
        response = await self._call("Admin/DeleteAcls", request, budget)
        outcomes: Outcomes[AclBindingFilter, list[AclBinding]] = {}
        for acl_filter, result in zip(filters, response.filter_results, strict=False):
            error = _item_error(result.error_code, result.error_message)
            outcomes[acl_filter] = (
                error
                if error is not None
                else [_acl_from_pb(match.acl) for match in result.matching_acls]
            )
        _fill_missing(outcomes, filters, "ACL filter")
        return outcomes

    async def describe_client_quotas(
        self, quota_filter: ClientQuotaFilter, timeout_ms: int | None
    ) -> dict[ClientQuotaEntity, dict[str, float]]:
        request = pb.DescribeClientQuotasRequest(
            components=[
                pb.QuotaFilterComponent(
                    entity_type=component.entity_type,
                    match_type=component.match_type,
                    match=component.match,
                )
                for component in quota_filter.components
            ],
            strict=quota_filter.strict,
        )
        response = await self._call("Admin/DescribeClientQuotas", request, timeout_ms)
        return {
            _quota_entity(entry.entity): {value.key: value.value for value in entry.values}
            for entry in response.entries
        }

    async def alter_client_quotas(
        self,
        alterations: Sequence[ClientQuotaAlteration],
        validate_only: bool,
        timeout_ms: int | None,
    ) -> Outcomes[ClientQuotaEntity, None]:
        budget = _timeout_ms(self.channel, timeout_ms)
        request = pb.AlterClientQuotasRequest(
            entries=[
                pb.ClientQuotaAlteration(
                    entity=pb.QuotaEntity(
                        parts=[
                            pb.QuotaEntityPart(
                                entity_type=kind, entity_name=name or "", is_default=name is None
                            )
                            for kind, name in alteration.entity.parts
                        ]
                    ),
                    ops=[
                        pb.QuotaOp(key=op.key, value=op.value, remove=op.remove)
                        for op in alteration.ops
                    ],
                )
                for alteration in alterations
            ],
            validate_only=validate_only,
            timeout_ms=budget,
            request_id=b"" if validate_only else new_request_id(),
        )
        response = await self._call("Admin/AlterClientQuotas", request, budget)
        outcomes: Outcomes[ClientQuotaEntity, None] = {}
        for result in response.results:
            outcomes[_quota_entity(result.entity)] = _item_error(
                result.error_code, result.error_message
            )
        _fill_missing(outcomes, [a.entity for a in alterations], "quota entity")
        return outcomes

    async def _call(self, method: str, request: Any, timeout_ms: int | None) -> Any:
        try:
            response = await self.channel.call(method, request, timeout_ms=timeout_ms)
        except KafkaError as error:
            raise KafkaException.of(error) from None
        _check_header(response.header)
        return response

    async def create_topics(
        self, topics: Sequence[NewTopic], validate_only: bool, timeout_ms: int | None
    ) -> Outcomes[str, None]:
        budget = _timeout_ms(self.channel, timeout_ms)
        request = pb.CreateTopicsRequest(
            topics=[_new_topic(t) for t in topics],
            timeout_ms=budget,
            validate_only=validate_only,
            request_id=new_request_id(),
        )
        response = await self._call("Admin/CreateTopics", request, budget)
        outcomes: Outcomes[str, None] = {}
        for result in response.topics:
            outcomes[result.name] = _item_error(result.error_code, result.error_message)
        _fill_missing(outcomes, (t.topic for t in topics), "topic")
        return outcomes

    async def delete_topics(
        self, topics: Sequence[str], timeout_ms: int | None
    ) -> Outcomes[str, None]:
        budget = _timeout_ms(self.channel, timeout_ms)
        request = pb.DeleteTopicsRequest(
            topic_names=topics, timeout_ms=budget, request_id=new_request_id()
        )
        response = await self._call("Admin/DeleteTopics", request, budget)
        return _topic_errors(response.results, topics)

    async def create_partitions(
        self, partitions: Sequence[NewPartitions], validate_only: bool, timeout_ms: int | None
    ) -> Outcomes[str, None]:
        budget = _timeout_ms(self.channel, timeout_ms)
        request = pb.CreatePartitionsRequest(
            topics=[
                pb.CreatePartitionsTopic(
                    name=p.topic,
                    count=p.new_total_count,
                    assignments=[
                        pb.BrokerIds(broker_ids=list(replicas))
                        for replicas in p.replica_assignment or ()
                    ],
                )
                for p in partitions
            ],
            timeout_ms=budget,
            validate_only=validate_only,
            request_id=new_request_id(),
        )
        response = await self._call("Admin/CreatePartitions", request, budget)
        return _topic_errors(response.results, [p.topic for p in partitions])

    async def describe_topics(
        self, topics: Sequence[str] | None, timeout_ms: int | None
    ) -> Outcomes[str, TopicDescription]:
        """Every named topic, or with ``topics=None`` every topic there is."""
        request = pb.DescribeTopicsRequest(topic_names=topics or (), all_topics=topics is None)
        response = await self._call("Admin/DescribeTopics", request, timeout_ms)
        outcomes: Outcomes[str, TopicDescription] = {}
        for topic in response.topics:
            error = _item_error(topic.error_code, topic.error_message)
            outcomes[topic.name] = error if error is not None else _topic_description(topic)
        _fill_missing(outcomes, topics or (), "topic")
        return outcomes

    async def describe_cluster(
        self, include_image_digest: bool, timeout_ms: int | None
    ) -> ClusterDescription:
        request = pb.DescribeClusterRequest(include_image_digest=include_image_digest)
        response = await self._call("Admin/DescribeCluster", request, timeout_ms)
        return ClusterDescription(
            cluster_id=response.cluster_id,
            controller_id=response.controller_id,
            brokers=tuple(
                BrokerDescription(
                    id=b.broker_id,
                    host=b.host,
                    port=b.port,
                    rack=b.rack if b.has_rack else None,
                    fenced=b.fenced,
                    in_controlled_shutdown=b.in_controlled_shutdown,
                    epoch=b.broker_epoch,
                    leader_count=b.leader_count,
                    replica_count=b.replica_count,
                )
                for b in sorted(response.brokers, key=lambda b: b.broker_id)
            ),
            metadata_offset=response.metadata_offset,
            image_digest=response.image_digest,
        )

    async def describe_features(self, timeout_ms: int | None) -> FeatureMetadata:
        response = await self._call(
            "Admin/DescribeFeatures", pb.DescribeFeaturesRequest(), timeout_ms
        )
        return FeatureMetadata(
            finalized={f.name: f.level for f in response.finalized},
            supported={f.name: (f.min_version, f.max_version) for f in response.supported},
            finalized_epoch=response.finalized_epoch,
        )

    async def update_features(
        self, updates: Sequence[FeatureUpdate], validate_only: bool, timeout_ms: int | None
    ) -> None:
        """All updates or none; a refused one raises its KafkaError (Kafka's top-level form).
        A downgrade is sent as a safe downgrade (upgrade type 2)."""
        request = pb.UpdateFeaturesRequest(
            feature_updates=[
                pb.FeatureUpdate(
                    feature=update.name,
                    max_version_level=update.level,
                    upgrade_type=2 if update.allow_downgrade else 1,
                )
                for update in updates
            ],
            validate_only=validate_only,
        )
        if timeout_ms is not None:
            request.timeout_ms = timeout_ms
        await self._call("Admin/UpdateFeatures", request, timeout_ms)

    async def describe_configs(
        self, resources: Sequence[ConfigResource], timeout_ms: int | None
    ) -> Outcomes[ConfigResource, dict[str, ConfigEntry]]:
        request = pb.DescribeConfigsRequest(
            resources=[_resource(r) for r in resources], include_synonyms=True
        )
        response = await self._call("Admin/DescribeConfigs", request, timeout_ms)
        outcomes: Outcomes[ConfigResource, dict[str, ConfigEntry]] = {}
        for result in response.results:
            key = config_resource_of(result.resource.resource_type, result.resource.resource_name)
            if key is None:
                continue
            error = _item_error(result.error_code, result.error_message)
            outcomes[key] = error if error is not None else _config_entries(result.configs)
        _fill_missing(outcomes, resources, "resource")
        return outcomes

    async def incremental_alter_configs(
        self, resources: Sequence[ConfigResource], validate_only: bool, timeout_ms: int | None
    ) -> Outcomes[ConfigResource, None]:
        budget = _timeout_ms(self.channel, timeout_ms)
        request = pb.IncrementalAlterConfigsRequest(
            resources=[
                pb.AlterConfigsResource(
                    resource=_resource(r),
                    configs=[_alterable(r, entry) for entry in r.incremental_configs],
                )
                for r in resources
            ],
            validate_only=validate_only,
            timeout_ms=budget,
            request_id=new_request_id(),
        )
        response = await self._call("Admin/IncrementalAlterConfigs", request, budget)
        outcomes: Outcomes[ConfigResource, None] = {}
        for result in response.results:
            key = config_resource_of(result.resource.resource_type, result.resource.resource_name)
            if key is not None:
                outcomes[key] = _item_error(result.error_code, result.error_message)
        _fill_missing(outcomes, resources, "resource")
        return outcomes

    async def elect_leaders(
        self,
        election_type: int,
        partitions: Sequence[TopicPartition] | None,
        timeout_ms: int | None,
    ) -> dict[TopicPartition, KafkaException | None]:
        """Each partition's outcome: None when a leader was elected, else the error (including
        ELECTION_NOT_NEEDED). With ``partitions=None`` (every partition) only those where an
        election happened or failed are reported, as Kafka does.

        ``election_type`` is the wire value the client's edge already made of the caller's
        argument; an unknown one goes out as it is and the controller answers INVALID_REQUEST.
        """
        budget = _timeout_ms(self.channel, timeout_ms)
        request = pb.ElectLeadersRequest(
            election_type=election_type, timeout_ms=budget, request_id=new_request_id()
        )
        if partitions is not None:
            by_topic: dict[str, list[int]] = {}
            for tp in partitions:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            request.topic_partitions.CopyFrom(
                pb.TopicPartitionsList(
                    topics=[pb.TopicPartitions(topic=t, partitions=p) for t, p in by_topic.items()]
                )
            )
        response = await self._call("Admin/ElectLeaders", request, budget)
        outcomes: dict[TopicPartition, KafkaException | None] = {}
        for topic in response.replica_election_results:
            for result in topic.partition_result:
                key = TopicPartition(topic.topic, result.partition_id)
                outcomes[key] = _item_error(result.error_code, result.error_message)
        _fill_missing(outcomes, partitions or (), "partition")
        return outcomes

    async def alter_partition_reassignments(
        self,
        targets: Sequence[ReassignmentTarget],
        allow_replication_factor_change: bool,
        timeout_ms: int | None,
    ) -> Outcomes[TopicPartition, None]:
        budget = _timeout_ms(self.channel, timeout_ms)
        topics: dict[str, pb.ReassignableTopic] = {}
        for target in targets:
            named = target.partition
            topic = topics.setdefault(named.topic, pb.ReassignableTopic(name=named.topic))
            partition = topic.partitions.add(partition=named.partition)
            if target.replicas is not None:
                partition.replicas.broker_ids.extend(target.replicas)
        request = pb.AlterPartitionReassignmentsRequest(
            topics=list(topics.values()),
            timeout_ms=budget,
            allow_replication_factor_change=allow_replication_factor_change,
            request_id=new_request_id(),
        )
        response = await self._call("Admin/AlterPartitionReassignments", request, budget)
        outcomes: Outcomes[TopicPartition, None] = {}
        for answered in response.responses:
            for result in answered.partitions:
                key = TopicPartition(answered.name, result.partition_id)
                outcomes[key] = _item_error(result.error_code, result.error_message)
        _fill_missing(outcomes, (target.partition for target in targets), "partition")
        return outcomes

    async def list_partition_reassignments(
        self, partitions: Sequence[TopicPartition] | None, timeout_ms: int | None
    ) -> dict[TopicPartition, PartitionReassignment]:
        budget = _timeout_ms(self.channel, timeout_ms)
        request = pb.ListPartitionReassignmentsRequest(timeout_ms=budget)
        if partitions is not None:
            request.topic_partitions.CopyFrom(
                pb.TopicPartitionsList(
                    topics=[
                        pb.TopicPartitions(topic=topic, partitions=numbers)
                        for topic, numbers in grouped_by_topic(tuple(partitions)).items()
                    ]
                )
            )
        response = await self._call("Admin/ListPartitionReassignments", request, budget)
        return {
            TopicPartition(topic.name, moving.partition): PartitionReassignment(
                tuple(moving.replicas),
                tuple(moving.adding_replicas),
                tuple(moving.removing_replicas),
            )
            for topic in response.topics
            for moving in topic.partitions
        }

    # ------------------------------------------------------------------------ SCRAM

    async def describe_user_scram_credentials(
        self, users: Sequence[str] | None, timeout_ms: int | None
    ) -> Outcomes[str, UserScramCredentialsDescription]:
        request = pb.DescribeUserScramCredentialsRequest(
            users=list(users or ()), timeout_ms=_timeout_ms(self.channel, timeout_ms)
        )
        response = await self._call("Admin/DescribeUserScramCredentials", request, timeout_ms)
        return scram_descriptions(response.results)

    async def alter_user_scram_credentials(
        self,
        deletions: Sequence[ScramDeletion],
        upsertions: Sequence[ScramUpsertion],
        timeout_ms: int | None,
    ) -> Outcomes[str, None]:
        budget = _timeout_ms(self.channel, timeout_ms)
        request = pb.AlterUserScramCredentialsRequest(
            deletions=[
                pb.ScramCredentialDeletion(name=d.name, mechanism=d.mechanism) for d in deletions
            ],
            upsertions=[
                pb.ScramCredentialUpsertion(
                    name=u.name,
                    mechanism=u.mechanism,
                    iterations=u.iterations,
                    salt=u.salt,
                    salted_password=u.salted_password,
                )
                for u in upsertions
            ],
            timeout_ms=budget,
        )
        response = await self._call("Admin/AlterUserScramCredentials", request, budget)
        return {
            result.user: scram_outcome(result.error_code, result.error_message)
            for result in response.results
        }


def _quota_entity(message: Any) -> ClientQuotaEntity:
    return ClientQuotaEntity.of(
        (part.entity_type, None if part.is_default else part.entity_name) for part in message.parts
    )


def _new_topic(topic: NewTopic) -> pb.NewTopic:
    message = pb.NewTopic(
        name=topic.topic,
        num_partitions=topic.num_partitions,
        replication_factor=topic.replication_factor,
        configs=dict(topic.config),
    )
    for index, replicas in enumerate(topic.replica_assignment or ()):
        message.assignments[index].broker_ids.extend(replicas)
    return message


def _topic_errors(results: Iterable[Any], names: Sequence[str]) -> Outcomes[str, None]:
    outcomes: Outcomes[str, None] = {}
    for result in results:
        outcomes[result.name] = _item_error(result.error_code, result.error_message)
    _fill_missing(outcomes, names, "topic")
    return outcomes


def _topic_description(topic: Any) -> TopicDescription:
    return TopicDescription(
        name=topic.name,
        topic_id=uuid_to_str(topic.topic_id) if topic.topic_id else "",
        partitions=tuple(
            PartitionDescription(
                id=p.partition_index,
                leader=p.leader_id,
                replicas=tuple(p.replicas),
                isr=tuple(p.isr),
                leader_epoch=p.leader_epoch,
                partition_epoch=p.partition_epoch,
                leader_recovery_state=p.leader_recovery_state,
                elr=tuple(p.eligible_leader_replicas),
                last_known_elr=tuple(p.last_known_elr),
            )
            for p in sorted(topic.partitions, key=lambda p: p.partition_index)
        ),
        configs=dict(sorted(topic.configs.items())),
    )


def _resource(resource: ConfigResource) -> pb.ConfigResource:
    return pb.ConfigResource(resource_type=int(resource.restype), resource_name=resource.name)


def _config_entries(configs: Iterable[Any]) -> dict[str, ConfigEntry]:
    return {
        c.name: config_entry(
            c.name,
            None if c.is_null else c.value,
            c.source,
            is_read_only=c.read_only,
            is_sensitive=c.is_sensitive,
            synonyms=[(s.name, None if s.is_null else s.value, s.source) for s in c.synonyms],
        )
        for c in configs
    }


def _alterable(resource: ConfigResource, entry: ConfigEntry) -> pb.AlterableConfig:
    if entry.incremental_operation is None:
        raise ValueError(
            f"{resource}: config {entry.name!r} needs an incremental_operation "
            "(SET, DELETE, APPEND or SUBTRACT)"
        )
    return pb.AlterableConfig(
        name=entry.name,
        op=int(entry.incremental_operation),
        value=entry.value or "",
        value_is_null=entry.value is None,
    )
