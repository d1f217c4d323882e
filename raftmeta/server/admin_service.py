"""The gRPC ``Admin`` service of proto/raftmeta/admin.proto: an adapter over the API layer.

Each method decodes its request into :mod:`raftmeta.common` values, names the caller once, calls
:class:`~raftmeta.apis.ControllerApis` and encodes what it returns; a request that fails as a
whole is answered with its header (NOT_CONTROLLER with the controller's id and endpoint, a
``KafkaError``'s code and message, UNKNOWN_SERVER_ERROR with a message), per-item errors go
on their items. What each operation means (authorization, validation, retries, reads after
the controller's pending records commit) lives in :mod:`raftmeta.apis`.
"""

from __future__ import annotations

from typing import Any

from raftmeta.common.elections import failed_election
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.quorum.raft_service import RaftService
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import admin_pb2_grpc as apb_grpc
from raftmeta.rpc import raft_pb2 as rpb
from raftmeta.server import convert
from raftmeta.server.acl_service import AclMethods
from raftmeta.server.quota_service import QuotaMethods
from raftmeta.server.scram_service import ScramMethods


def _quorum_error(code: ErrorCode) -> rpb.DescribeQuorumResponse:
    return rpb.DescribeQuorumResponse(
        error_code=int(code), leader_id=-1, leader_epoch=-1, high_watermark=-1
    )


class AdminService(AclMethods, ScramMethods, QuotaMethods, apb_grpc.AdminServicer):
    # ------------------------------------------------------------------------ topics

    async def CreateTopics(
        self, request: apb.CreateTopicsRequest, context: Any
    ) -> apb.CreateTopicsResponse:
        try:
            results = await self.apis.create_topics(
                self.principal(context), convert.create_topics_from_pb(request)
            )
        except KafkaError as error:
            return apb.CreateTopicsResponse(header=convert.failure_header(error))
        return apb.CreateTopicsResponse(
            header=convert.OK_HEADER, topics=[convert.create_result_to_pb(r) for r in results]
        )

    async def CreatePartitions(
        self, request: apb.CreatePartitionsRequest, context: Any
    ) -> apb.CreatePartitionsResponse:
        try:
            results = await self.apis.create_partitions(
                self.principal(context), convert.create_partitions_from_pb(request)
            )
        except KafkaError as error:
            return apb.CreatePartitionsResponse(header=convert.failure_header(error))
        return apb.CreatePartitionsResponse(
            header=convert.OK_HEADER, results=[convert.topic_result_to_pb(r) for r in results]
        )

    async def DeleteTopics(
        self, request: apb.DeleteTopicsRequest, context: Any
    ) -> apb.DeleteTopicsResponse:
        try:
            results = await self.apis.delete_topics(
                self.principal(context), convert.delete_topics_from_pb(request)
            )
        except KafkaError as error:
            return apb.DeleteTopicsResponse(header=convert.failure_header(error))
        return apb.DeleteTopicsResponse(
            header=convert.OK_HEADER, results=[convert.topic_result_to_pb(r) for r in results]
        )

    # ------------------------------------------------------------------------ reads

    async def DescribeTopics(
        self, request: apb.DescribeTopicsRequest, context: Any
    ) -> apb.DescribeTopicsResponse:
        names = None if request.all_topics else list(request.topic_names)
        try:
            described = await self.apis.describe_topics(self.principal(context), names)
        except KafkaError as error:
            return apb.DescribeTopicsResponse(header=convert.failure_header(error))
        return apb.DescribeTopicsResponse(
            header=convert.OK_HEADER,
            topics=[convert.topic_description_to_pb(topic) for topic in described.topics],
            metadata_offset=described.offset,
        )

    async def DescribeCluster(
        self, request: apb.DescribeClusterRequest, context: Any
    ) -> apb.DescribeClusterResponse:
        try:
            cluster = await self.apis.describe_cluster(
                self.principal(context), request.include_image_digest
            )
        except KafkaError as error:
            header = convert.failure_header(error)
            return apb.DescribeClusterResponse(header=header, controller_id=header.controller_id)
        return apb.DescribeClusterResponse(
            header=convert.OK_HEADER,
            cluster_id=cluster.cluster_id,
            controller_id=cluster.controller_id,
            brokers=[convert.broker_description_to_pb(broker) for broker in cluster.brokers],
            metadata_offset=cluster.metadata_offset,
            image_digest=cluster.image_digest,
        )

    async def DescribeQuorum(
        self, request: rpb.DescribeQuorumRequest, context: Any
    ) -> rpb.DescribeQuorumResponse:
        """Any node answers, as Raft.DescribeQuorum does (NOT_LEADER_OR_FOLLOWER from a
        follower, naming the leader)."""
        try:
            self.apis.authorize_describe_quorum(self.principal(context))
        except KafkaError as error:
            return _quorum_error(error.code)
        try:
            return await RaftService(self._owner.node).DescribeQuorum(request, context)
        except ConnectionError:
            return _quorum_error(ErrorCode.BROKER_NOT_AVAILABLE)

    # ------------------------------------------------------------------------ configs

    async def DescribeConfigs(
        self, request: apb.DescribeConfigsRequest, context: Any
    ) -> apb.DescribeConfigsResponse:
        resources = [convert.resource_from_pb(r) for r in request.resources]
        try:
            results = await self.apis.describe_configs(self.principal(context), resources)
        except KafkaError as error:
            return apb.DescribeConfigsResponse(header=convert.failure_header(error))
        return apb.DescribeConfigsResponse(
            header=convert.OK_HEADER,
            results=[
                convert.describe_result_to_pb(
                    result, request.include_synonyms, request.include_documentation
                )
                for result in results
            ],
        )

    async def AlterConfigs(
        self, request: apb.AlterConfigsRequest, context: Any
    ) -> apb.AlterConfigsResponse:
        """Legacy AlterConfigs: each resource's configs replaced by the ones given."""
        try:
            results = await self.apis.alter_configs(
                self.principal(context), convert.replace_configs_from_pb(request)
            )
        except KafkaError as error:
            return apb.AlterConfigsResponse(header=convert.failure_header(error))
        return apb.AlterConfigsResponse(
            header=convert.OK_HEADER,
            results=[convert.alter_result_to_pb(result) for result in results],
        )

    async def IncrementalAlterConfigs(
        self, request: apb.IncrementalAlterConfigsRequest, context: Any
    ) -> apb.IncrementalAlterConfigsResponse:
        try:
            results = await self.apis.incremental_alter_configs(
                self.principal(context), convert.alter_configs_from_pb(request)
            )
        except KafkaError as error:
            return apb.IncrementalAlterConfigsResponse(header=convert.failure_header(error))
        return apb.IncrementalAlterConfigsResponse(
            header=convert.OK_HEADER,
            results=[convert.alter_result_to_pb(result) for result in results],
        )

    # ------------------------------------------------------------------------ features

    async def DescribeFeatures(
        self, request: apb.DescribeFeaturesRequest, context: Any
    ) -> apb.DescribeFeaturesResponse:
        try:
            finalized, supported, epoch = await self.apis.describe_features(self.principal(context))
        except KafkaError as error:
            return apb.DescribeFeaturesResponse(header=convert.failure_header(error))
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

    async def UpdateFeatures(
        self, request: apb.UpdateFeaturesRequest, context: Any
    ) -> apb.UpdateFeaturesResponse:
        try:
            updates = await self.apis.update_features(
                self.principal(context), convert.update_features_from_pb(request)
            )
        except KafkaError as error:
            return apb.UpdateFeaturesResponse(header=convert.failure_header(error))
        return apb.UpdateFeaturesResponse(
            header=convert.OK_HEADER,
            results=[apb.UpdatableFeatureResult(feature=update.name) for update in updates],
        )

    # ------------------------------------------------------------------------ elections

    async def ElectLeaders(
        self, request: apb.ElectLeadersRequest, context: Any
    ) -> apb.ElectLeadersResponse:
        election = convert.elect_leaders_from_pb(request)
        try:
            results = await self.apis.elect_leaders(self.principal(context), election)
        except KafkaError as error:
            header = convert.failure_header(error)
            failed = failed_election(election.partitions, error.code, header.error_message)
            return apb.ElectLeadersResponse(
                header=header, replica_election_results=convert.election_results_to_pb(failed)
            )
        return apb.ElectLeadersResponse(
            header=convert.OK_HEADER,
            replica_election_results=convert.election_results_to_pb(results),
        )

    # ------------------------------------------------------------------------ reassignments

    async def AlterPartitionReassignments(
        self, request: apb.AlterPartitionReassignmentsRequest, context: Any
    ) -> apb.AlterPartitionReassignmentsResponse:
        try:
            results = await self.apis.alter_partition_reassignments(
                self.principal(context), convert.reassignments_from_pb(request)
            )
        except KafkaError as error:
            return apb.AlterPartitionReassignmentsResponse(header=convert.failure_header(error))
        return apb.AlterPartitionReassignmentsResponse(
            header=convert.OK_HEADER, responses=convert.reassignment_results_to_pb(results)
        )

    async def ListPartitionReassignments(
        self, request: apb.ListPartitionReassignmentsRequest, context: Any
    ) -> apb.ListPartitionReassignmentsResponse:
        try:
            moving = await self.apis.list_partition_reassignments(
                self.principal(context), convert.list_reassignments_from_pb(request)
            )
        except KafkaError as error:
            return apb.ListPartitionReassignmentsResponse(header=convert.failure_header(error))
        return apb.ListPartitionReassignmentsResponse(
            header=convert.OK_HEADER, topics=convert.ongoing_reassignments_to_pb(moving)
        )
