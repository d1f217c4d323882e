"""The Admin service on a real three-node quorum: topics, cluster, configs and their errors."""

from __future__ import annotations

from pathlib import Path

from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import raft_pb2 as rpb
from tests.support.controller_quorum import CLUSTER_ID, ControllerQuorum
from tests.support.scenario import run_scenario


def new_topic(name: str, partitions: int = 1, rf: int = 1, **kwargs: object) -> apb.NewTopic:
    return apb.NewTopic(
        name=name,
        num_partitions=partitions,
        replication_factor=rf,
        **kwargs,  # type: ignore[arg-type]
    )


def codes(results: object) -> list[int]:
    return [item.error_code for item in results]  # type: ignore[attr-defined]


def test_topics_are_created_described_and_deleted_with_kafka_errors(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        for broker_id, rack in ((1, "a"), (2, "b"), (3, "c")):
            await cluster.register(broker_id, rack)
        admin = await cluster.active_admin()

        created = await admin.CreateTopics(
            apb.CreateTopicsRequest(
                topics=[
                    new_topic("orders", 3, 2, configs={"min.insync.replicas": "2"}),
                    new_topic("orders", 1, 1),
                    new_topic("bad/name"),
                    new_topic("zero", 0, 1),
                    new_topic("wide", 1, 4),
                    apb.NewTopic(
                        name="manual",
                        num_partitions=-1,
                        replication_factor=-1,
                        assignments={0: apb.BrokerIds(broker_ids=[1, 1])},
                    ),
                    new_topic("badconf", configs={"min.insync.replicas": "zero"}),
                ]
            )
        )
        assert created.header.error_code == 0
        assert codes(created.topics) == [
            ErrorCode.INVALID_REQUEST,
            ErrorCode.INVALID_REQUEST,
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            ErrorCode.INVALID_PARTITIONS,
            ErrorCode.INVALID_REPLICATION_FACTOR,
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            ErrorCode.INVALID_CONFIG,
        ]
        assert all(topic.error_message for topic in created.topics)

        good = await admin.CreateTopics(
            apb.CreateTopicsRequest(
                topics=[new_topic("orders", 3, 2, configs={"min.insync.replicas": "2"})]
            )
        )
        result = good.topics[0]
        assert (result.error_code, result.error_message) == (0, "")
        assert (result.num_partitions, result.replication_factor) == (3, 2)
        assert len(result.topic_id) == 16
        again = await admin.CreateTopics(apb.CreateTopicsRequest(topics=[new_topic("orders")]))
        assert codes(again.topics) == [ErrorCode.TOPIC_ALREADY_EXISTS]

        # Read-your-writes: the describe right after the create sees it.
        described = await admin.DescribeTopics(
            apb.DescribeTopicsRequest(topic_names=["orders", "missing"])
        )
        orders, missing = described.topics
        assert orders.topic_id == result.topic_id
        assert [p.partition_index for p in orders.partitions] == [0, 1, 2]
        assert all(len(p.replicas) == 2 and p.leader_id in p.replicas for p in orders.partitions)
        assert dict(orders.configs) == {"min.insync.replicas": "2"}
        assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert described.metadata_offset > 0
        listed = await admin.DescribeTopics(apb.DescribeTopicsRequest(all_topics=True))
        assert [t.name for t in listed.topics] == ["orders"]

        grown = await admin.CreatePartitions(
            apb.CreatePartitionsRequest(
                topics=[
                    apb.CreatePartitionsTopic(name="orders", count=5),
                    apb.CreatePartitionsTopic(name="orders2", count=5),
                ]
            )
        )
        assert codes(grown.results) == [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
        shrink = await admin.CreatePartitions(
            apb.CreatePartitionsRequest(topics=[apb.CreatePartitionsTopic(name="orders", count=2)])
        )
        assert codes(shrink.results) == [ErrorCode.INVALID_PARTITIONS]
        assert shrink.results[0].error_message
        five = await admin.DescribeTopics(apb.DescribeTopicsRequest(topic_names=["orders"]))
        assert len(five.topics[0].partitions) == 5

        placed = await admin.CreateTopics(
            apb.CreateTopicsRequest(
                topics=[
                    apb.NewTopic(name="spread", num_partitions=1, replication_factor=3, configs={})
                ]
            )
        )
        assert codes(placed.topics) == [0]

        cluster_info = await admin.DescribeCluster(
            apb.DescribeClusterRequest(include_image_digest=True)
        )
        active = await cluster.wait_for_active()
        assert cluster_info.cluster_id == CLUSTER_ID
        assert cluster_info.controller_id == active.node_id
        assert [b.broker_id for b in cluster_info.brokers] == [1, 2, 3]
        assert [b.rack for b in cluster_info.brokers] == ["a", "b", "c"]
        assert not any(b.fenced for b in cluster_info.brokers)
        assert sum(b.leader_count for b in cluster_info.brokers) == 6
        assert sum(b.replica_count for b in cluster_info.brokers) == 5 * 2 + 3
        assert cluster_info.image_digest == active.controller.committed_image.digest()
        assert cluster_info.brokers[0].port == 9093

        deleted = await admin.DeleteTopics(
            apb.DeleteTopicsRequest(topic_names=["spread", "nothing"])
        )
        assert codes(deleted.results) == [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]

        configs = await admin.DescribeConfigs(
            apb.DescribeConfigsRequest(
                resources=[
                    apb.ConfigResource(resource_type=2, resource_name="orders"),
                    apb.ConfigResource(resource_type=2, resource_name="nothing"),
                ]
            )
        )
        assert codes(configs.results) == [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
        values = {c.name: c.value for c in configs.results[0].configs}
        assert values["min.insync.replicas"] == "2"

        altered = await admin.IncrementalAlterConfigs(
            apb.IncrementalAlterConfigsRequest(
                resources=[
                    apb.AlterConfigsResource(
                        resource=apb.ConfigResource(resource_type=2, resource_name="orders"),
                        configs=[apb.AlterableConfig(name="retention.ms", op=0, value="1000")],
                    ),
                    apb.AlterConfigsResource(
                        resource=apb.ConfigResource(resource_type=4, resource_name=""),
                        configs=[apb.AlterableConfig(name="no.such.config", op=0, value="1")],
                    ),
                    apb.AlterConfigsResource(
                        resource=apb.ConfigResource(resource_type=4, resource_name="1"),
                        configs=[apb.AlterableConfig(name="log.retention.ms", op=9, value="1")],
                    ),
                ]
            )
        )
        assert codes(altered.results) == [0, ErrorCode.INVALID_CONFIG, ErrorCode.INVALID_REQUEST]
        after = await admin.DescribeTopics(apb.DescribeTopicsRequest(topic_names=["orders"]))
        assert after.topics[0].configs["retention.ms"] == "1000"

    run_scenario(scenario, ControllerQuorum(tmp_path))


def test_followers_answer_not_controller_with_the_leaders_endpoint(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        active = await cluster.wait_for_active()
        follower = await cluster.follower()
        admin = cluster.admin(follower.node_id)
        expected = (ErrorCode.NOT_CONTROLLER, active.node_id, active.address)

        def check(header: apb.ResponseHeader) -> None:
            assert (header.error_code, header.controller_id, header.controller_endpoint) == (
                expected
            )
            assert header.error_message == (
                f"The active controller appears to be node {active.node_id}."
            )

        check((await admin.CreateTopics(apb.CreateTopicsRequest(topics=[new_topic("t")]))).header)
        check((await admin.DescribeTopics(apb.DescribeTopicsRequest(all_topics=True))).header)
        check((await admin.DescribeCluster(apb.DescribeClusterRequest())).header)
        check((await admin.DeleteTopics(apb.DeleteTopicsRequest(topic_names=["t"]))).header)
        check((await admin.DescribeConfigs(apb.DescribeConfigsRequest())).header)
        check((await admin.CreatePartitions(apb.CreatePartitionsRequest())).header)
        check((await admin.IncrementalAlterConfigs(apb.IncrementalAlterConfigsRequest())).header)
        elected = await admin.ElectLeaders(apb.ElectLeadersRequest(election_type=0))
        check(elected.header)

        # DescribeQuorum is answered by every node, as Raft.DescribeQuorum is.
        quorum = await admin.DescribeQuorum(rpb.DescribeQuorumRequest())
        assert quorum.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert quorum.leader_id == active.node_id
        assert quorum.leader_endpoint == active.address
        leader_view = await cluster.admin(active.node_id).DescribeQuorum(
            rpb.DescribeQuorumRequest(cluster_id=CLUSTER_ID)
        )
        assert leader_view.error_code == 0
        assert sorted(v.replica_id for v in leader_view.voters) == cluster.ids

    run_scenario(scenario, ControllerQuorum(tmp_path))


def test_the_configured_placer_refusing_is_replica_placement_failed(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        await cluster.register(1)
        await cluster.register(2)
        admin = await cluster.active_admin()
        refused = await admin.CreateTopics(
            apb.CreateTopicsRequest(topics=[new_topic("t", 1, 2), new_topic("u", 1, 1)])
        )
        assert codes(refused.topics) == [ErrorCode.REPLICA_PLACEMENT_FAILED, 0]
        assert "cordoned: 2" in refused.topics[0].error_message
        described = await admin.DescribeTopics(apb.DescribeTopicsRequest(topic_names=["u"]))
        assert list(described.topics[0].partitions[0].replicas) == [1]

    run_scenario(
        scenario,
        ControllerQuorum(
            tmp_path,
            {
                "replica.placer.class.name": "placement.cordon.CordonedBrokerPlacer",
                "replica.placer.cordoned.brokers": "2",
            },
        ),
    )
