"""The BrokerLifecycle service on a real three-node quorum, with each of its Kafka errors."""

from __future__ import annotations

import uuid
from pathlib import Path

from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import broker_pb2 as bpb
from tests.support.controller_quorum import CLUSTER_ID, ControllerQuorum
from tests.support.scenario import run_scenario


def registration(broker_id: int, cluster_id: str = CLUSTER_ID) -> bpb.RegisterBrokerRequest:
    return bpb.RegisterBrokerRequest(
        broker_id=broker_id,
        cluster_id=cluster_id,
        incarnation_id=uuid.uuid4().bytes,
        listeners=[bpb.Listener(name="PLAINTEXT", host="127.0.0.1", port=9000 + broker_id)],
    )


def test_broker_lifecycle_errors_and_alter_partition(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        stub = await cluster.active_lifecycle()

        wrong = await stub.RegisterBroker(registration(1, "another-cluster"))
        assert wrong.header.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
        assert "another-cluster" in wrong.header.error_message
        bad_id = registration(1)
        bad_id.incarnation_id = b"short"
        malformed = await stub.RegisterBroker(bad_id)
        assert malformed.header.error_code == ErrorCode.INVALID_REQUEST

        epoch1 = await cluster.register(1)
        epoch2 = await cluster.register(2)
        duplicate = await stub.RegisterBroker(registration(1))
        assert duplicate.header.error_code == ErrorCode.DUPLICATE_BROKER_REGISTRATION

        stale = await stub.BrokerHeartbeat(
            bpb.BrokerHeartbeatRequest(broker_id=1, broker_epoch=epoch1 - 1)
        )
        assert stale.header.error_code == ErrorCode.STALE_BROKER_EPOCH
        assert stale.is_fenced
        unknown = await stub.BrokerHeartbeat(
            bpb.BrokerHeartbeatRequest(broker_id=42, broker_epoch=1)
        )
        assert unknown.header.error_code == ErrorCode.STALE_BROKER_EPOCH
        alive = await stub.BrokerHeartbeat(
            bpb.BrokerHeartbeatRequest(
                broker_id=1, broker_epoch=epoch1, current_metadata_offset=epoch1
            )
        )
        assert alive.header.error_code == 0
        assert (alive.is_caught_up, alive.is_fenced, alive.should_shut_down) == (
            True,
            False,
            False,
        )

        admin = await cluster.active_admin()
        created = await admin.CreateTopics(
            apb.CreateTopicsRequest(
                topics=[
                    apb.NewTopic(
                        name="t",
                        num_partitions=-1,
                        replication_factor=-1,
                        assignments={0: apb.BrokerIds(broker_ids=[1, 2])},
                    )
                ]
            )
        )
        topic_id = created.topics[0].topic_id
        described = await admin.DescribeTopics(apb.DescribeTopicsRequest(topic_names=["t"]))
        partition = described.topics[0].partitions[0]
        assert (partition.leader_id, list(partition.isr)) == (1, [1, 2])

        def shrink(
            broker_id: int,
            epoch: int,
            leader_epoch: int,
            partition_epoch: int,
            isr: list[int],
            topic: bytes = topic_id,
        ) -> bpb.AlterPartitionRequest:
            return bpb.AlterPartitionRequest(
                broker_id=broker_id,
                broker_epoch=epoch,
                topic_id=topic,
                partitions=[
                    bpb.PartitionIsrChange(
                        partition_index=0,
                        leader_epoch=leader_epoch,
                        partition_epoch=partition_epoch,
                        new_isr=[bpb.IsrMember(broker_id=b, broker_epoch=-1) for b in isr],
                    )
                ],
            )

        le, pe = partition.leader_epoch, partition.partition_epoch
        results = {}
        for name, request in {
            "stale broker epoch": shrink(1, epoch1 + 100, le, pe, [1]),
            "fenced leader epoch": shrink(1, epoch1, le - 1, pe, [1]),
            "not the leader": shrink(2, epoch2, le, pe, [2]),
            "old partition epoch": shrink(1, epoch1, le, pe - 1, [1]),
            "unknown topic": shrink(1, epoch1, le, pe, [1], uuid.uuid4().bytes),
            "not a replica": shrink(1, epoch1, le, pe, [1, 7]),
        }.items():
            reply = await stub.AlterPartition(request)
            if reply.header.error_code:
                results[name] = reply.header.error_code
            else:
                results[name] = reply.partitions[0].error_code
                assert reply.partitions[0].error_message
        assert results == {
            "stale broker epoch": ErrorCode.STALE_BROKER_EPOCH,
            "fenced leader epoch": ErrorCode.FENCED_LEADER_EPOCH,
            "not the leader": ErrorCode.INVALID_REQUEST,
            "old partition epoch": ErrorCode.INVALID_UPDATE_VERSION,
            "unknown topic": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            "not a replica": ErrorCode.INVALID_REQUEST,
        }
        shrunk = await stub.AlterPartition(shrink(1, epoch1, le, pe, [1]))
        result = shrunk.partitions[0]
        assert (result.error_code, result.error_message) == (0, "")
        assert (result.leader_id, list(result.isr)) == (1, [1])
        assert result.partition_epoch == pe + 1

        # A broker still registered but gone from the ISR cannot be added while it is fenced.
        fenced = await stub.BrokerHeartbeat(
            bpb.BrokerHeartbeatRequest(
                broker_id=2, broker_epoch=epoch2, current_metadata_offset=epoch2, want_fence=True
            )
        )
        assert fenced.header.error_code == 0 and fenced.is_fenced
        grow = await stub.AlterPartition(shrink(1, epoch1, le, pe + 1, [1, 2]))
        assert grow.partitions[0].error_code == ErrorCode.INELIGIBLE_REPLICA

        gone = await stub.UnregisterBroker(bpb.UnregisterBrokerRequest(broker_id=42))
        assert gone.header.error_code == ErrorCode.BROKER_ID_NOT_REGISTERED
        assert gone.header.error_message == "Broker ID 42 is not currently registered"
        removed = await stub.UnregisterBroker(bpb.UnregisterBrokerRequest(broker_id=2))
        assert removed.header.error_code == 0
        info = await admin.DescribeCluster(apb.DescribeClusterRequest())
        assert [b.broker_id for b in info.brokers] == [1]

        # A follower points brokers at the active controller.
        follower = await cluster.follower()
        active = await cluster.wait_for_active()
        redirected = await cluster.lifecycle(follower.node_id).RegisterBroker(registration(5))
        assert redirected.header.error_code == ErrorCode.NOT_CONTROLLER
        assert redirected.header.controller_endpoint == active.address

    run_scenario(scenario, ControllerQuorum(tmp_path))
