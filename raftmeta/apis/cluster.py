"""DescribeCluster and DescribeQuorum, for either wire: DESCRIBE on the cluster.

DescribeCluster is the active controller's, read after its pending records commit.
DescribeQuorum is answered by any voter (the Raft leader tracks replication progress; another
node raises the quorum's ``NotLeaderError`` naming the leader it knows), as Kafka's Raft
client answers it.
"""

from __future__ import annotations

from raftmeta.apis.base import ApisBase
from raftmeta.auth import Operation
from raftmeta.common.cluster import BrokerDescription, ClusterDescription
from raftmeta.controller import QuorumController
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.image import MetadataImage
from raftmeta.raft.core import QuorumDescription


def describe_brokers(image: MetadataImage) -> tuple[BrokerDescription, ...]:
    """The registered brokers by id, each with its first listener and partition counts."""
    replica_counts: dict[int, int] = {}
    for _, partition in image.partitions():
        for replica in partition.replicas:
            replica_counts[replica] = replica_counts.get(replica, 0) + 1
    leader_counts = image.leader_counts
    described = []
    for broker_id, broker in sorted(image.brokers.items()):
        endpoint = broker.endpoints[0] if broker.endpoints else None
        described.append(
            BrokerDescription(
                broker_id=broker_id,
                rack=broker.rack,
                fenced=broker.fenced,
                in_controlled_shutdown=broker.in_controlled_shutdown,
                broker_epoch=broker.broker_epoch,
                host="" if endpoint is None else endpoint.host,
                port=0 if endpoint is None else endpoint.port,
                leader_count=leader_counts.get(broker_id, 0),
                replica_count=replica_counts.get(broker_id, 0),
            )
        )
    return tuple(described)


class ClusterApis(ApisBase):
    async def describe_cluster(
        self, principal: str, include_image_digest: bool = False
    ) -> ClusterDescription:
        async def body(controller: QuorumController) -> ClusterDescription:
            self.require_cluster(principal, Operation.DESCRIBE)
            await controller.sync()
            image = controller.committed_image
            return ClusterDescription(
                cluster_id=controller.settings.cluster_id,
                controller_id=controller.settings.node_id,
                brokers=describe_brokers(image),
                metadata_offset=image.offset,
                image_digest=image.digest() if include_image_digest else "",
            )

        return await self.on_active(body)

    async def live_brokers(self, principal: str) -> frozenset[int]:
        """The registered, unfenced brokers' ids, after :meth:`describe_cluster`'s check and
        wait: what a Kafka Metadata answer takes from it, without the replica counts, which
        cost a pass over every partition (milliseconds per Metadata request at 10,000)."""

        async def body(controller: QuorumController) -> frozenset[int]:
            self.require_cluster(principal, Operation.DESCRIBE)
            await controller.sync()
            brokers = controller.committed_image.brokers.items()
            return frozenset(broker_id for broker_id, broker in brokers if not broker.fenced)

        return await self.on_active(body)

    def authorize_describe_quorum(self, principal: str) -> None:
        """CLUSTER_AUTHORIZATION_FAILED unless ``principal`` may describe the cluster."""
        self.require_cluster(principal, Operation.DESCRIBE)

    def describe_quorum(self, principal: str) -> QuorumDescription:
        """The leader's view of every replica's progress; ``NotLeaderError`` on a node that
        does not lead, BROKER_NOT_AVAILABLE on one that is not running."""
        self.authorize_describe_quorum(principal)
        try:
            return self.host.node.describe_quorum()
        except ConnectionError as error:
            raise KafkaError(ErrorCode.BROKER_NOT_AVAILABLE) from error
