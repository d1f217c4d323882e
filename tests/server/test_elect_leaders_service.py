"""ElectLeaders through gRPC on a real quorum: per-partition outcomes, top-level errors,
timeouts and authorization."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc

from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.rpc import admin_pb2_grpc as apb_grpc
from raftmeta.rpc import broker_pb2 as bpb
from tests.support.controller_quorum import ControllerQuorum
from tests.support.scenario import run_scenario

PREFERRED, UNCLEAN = 0, 1


def partitions(*items: tuple[str, int]) -> apb.TopicPartitionsList:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in items:
        by_topic.setdefault(topic, []).append(partition)
    return apb.TopicPartitionsList(
        topics=[apb.TopicPartitions(topic=t, partitions=p) for t, p in by_topic.items()]
    )


def outcome(reply: apb.ElectLeadersResponse) -> dict[tuple[str, int], int]:
    return {
        (topic.topic, result.partition_id): result.error_code
        for topic in reply.replica_election_results
        for result in topic.partition_result
    }


async def create(admin: apb_grpc.AdminStub, name: str, assignment: dict[int, list[int]]) -> None:
    reply = await admin.CreateTopics(
        apb.CreateTopicsRequest(
            topics=[
                apb.NewTopic(
                    name=name,
                    num_partitions=-1,
                    replication_factor=-1,
                    assignments={p: apb.BrokerIds(broker_ids=r) for p, r in assignment.items()},
                )
            ]
        )
    )
    assert reply.topics[0].error_code == 0, reply.topics[0]


def test_elect_leaders_outcomes_per_partition(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        epochs = {b: await cluster.register(b) for b in (1, 2)}
        admin = await cluster.active_admin()
        lifecycle = await cluster.active_lifecycle()
        await create(admin, "t", {0: [1, 2]})
        await create(admin, "solo", {0: [1]})

        preferred_ok = await admin.ElectLeaders(
            apb.ElectLeadersRequest(
                election_type=PREFERRED, topic_partitions=partitions(("t", 0), ("nope", 0))
            )
        )
        assert preferred_ok.header.error_code == 0
        assert outcome(preferred_ok) == {
            ("t", 0): ErrorCode.ELECTION_NOT_NEEDED,
            ("nope", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        }
        everything = await admin.ElectLeaders(apb.ElectLeadersRequest(election_type=PREFERRED))
        assert everything.header.error_code == 0 and outcome(everything) == {}

        fenced = await lifecycle.BrokerHeartbeat(
            bpb.BrokerHeartbeatRequest(
                broker_id=1,
                broker_epoch=epochs[1],
                current_metadata_offset=epochs[1],
                want_fence=True,
            )
        )
        assert fenced.is_fenced
        after = await admin.DescribeTopics(apb.DescribeTopicsRequest(topic_names=["t", "solo"]))
        assert after.topics[0].partitions[0].leader_id == 2
        assert after.topics[1].partitions[0].leader_id == -1

        reply = await admin.ElectLeaders(
            apb.ElectLeadersRequest(
                election_type=PREFERRED, topic_partitions=partitions(("t", 0), ("solo", 0))
            )
        )
        assert outcome(reply) == {
            ("t", 0): ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
            ("solo", 0): ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
        }
        unclean = await admin.ElectLeaders(
            apb.ElectLeadersRequest(
                election_type=UNCLEAN, topic_partitions=partitions(("t", 0), ("solo", 0))
            )
        )
        assert outcome(unclean) == {
            ("t", 0): ErrorCode.ELECTION_NOT_NEEDED,
            ("solo", 0): ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
        }
        messages = [
            r.error_message for t in unclean.replica_election_results for r in t.partition_result
        ]
        assert all(messages)

        # Broker 1 back and in the ISR again: the preferred election succeeds.
        back = await lifecycle.BrokerHeartbeat(
            bpb.BrokerHeartbeatRequest(
                broker_id=1, broker_epoch=epochs[1], current_metadata_offset=epochs[1]
            )
        )
        assert not back.is_fenced
        state = (await admin.DescribeTopics(apb.DescribeTopicsRequest(topic_names=["t"]))).topics
        partition = state[0].partitions[0]
        grown = await lifecycle.AlterPartition(
            bpb.AlterPartitionRequest(
                broker_id=2,
                broker_epoch=epochs[2],
                topic_id=state[0].topic_id,
                partitions=[
                    bpb.PartitionIsrChange(
                        partition_index=0,
                        leader_epoch=partition.leader_epoch,
                        partition_epoch=partition.partition_epoch,
                        new_isr=[
                            bpb.IsrMember(broker_id=2, broker_epoch=-1),
                            bpb.IsrMember(broker_id=1, broker_epoch=epochs[1]),
                        ],
                    )
                ],
            )
        )
        assert grown.partitions[0].error_code == 0, grown.partitions[0]
        success = await admin.ElectLeaders(
            apb.ElectLeadersRequest(election_type=PREFERRED, topic_partitions=partitions(("t", 0)))
        )
        assert outcome(success) == {("t", 0): 0}
        assert success.replica_election_results[0].partition_result[0].error_message == ""
        final = await admin.DescribeTopics(apb.DescribeTopicsRequest(topic_names=["t"]))
        assert final.topics[0].partitions[0].leader_id == 1

        invalid = await admin.ElectLeaders(
            apb.ElectLeadersRequest(election_type=7, topic_partitions=partitions(("t", 0)))
        )
        assert invalid.header.error_code == ErrorCode.INVALID_REQUEST
        assert outcome(invalid) == {("t", 0): ErrorCode.INVALID_REQUEST}
        empty = await admin.ElectLeaders(
            apb.ElectLeadersRequest(election_type=PREFERRED, topic_partitions=partitions())
        )
        assert empty.header.error_code == 0 and outcome(empty) == {}

    run_scenario(scenario, ControllerQuorum(tmp_path))


def test_requests_that_cannot_commit_time_out(tmp_path: Path) -> None:
    """With both followers gone the leader cannot commit; a long fetch timeout keeps it
    leading while the requests' own deadlines pass."""

    async def scenario(cluster: ControllerQuorum) -> None:
        await cluster.register(1)
        admin = await cluster.active_admin()
        await create(admin, "t", {0: [1]})
        active = await cluster.wait_for_active()
        for node_id in [n for n in cluster.ids if n != active.node_id]:
            await cluster.stop(node_id)
        created = await admin.CreateTopics(
            apb.CreateTopicsRequest(
                topics=[apb.NewTopic(name="late", num_partitions=1, replication_factor=1)],
                timeout_ms=200,
            )
        )
        assert created.header.error_code == ErrorCode.REQUEST_TIMED_OUT
        assert created.header.error_message
        elected = await admin.ElectLeaders(
            apb.ElectLeadersRequest(
                election_type=PREFERRED,
                topic_partitions=partitions(("t", 0), ("u", 1)),
                timeout_ms=200,
            )
        )
        assert elected.header.error_code == ErrorCode.REQUEST_TIMED_OUT
        assert outcome(elected) == {
            ("t", 0): ErrorCode.REQUEST_TIMED_OUT,
            ("u", 1): ErrorCode.REQUEST_TIMED_OUT,
        }

    run_scenario(
        scenario,
        ControllerQuorum(
            tmp_path,
            {"controller.quorum.fetch.timeout.ms": 5000, "metadata.max.idle.interval.ms": 100},
        ),
    )


def test_authorization_and_authentication(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("# principals\ns3cret=User:alice\nroot=User:admin\nbob-token=User:bob\n")

    def call(token: str | None) -> tuple[tuple[str, str], ...]:
        return () if token is None else (("authorization", f"Bearer {token}"),)

    async def scenario(cluster: ControllerQuorum) -> None:
        await cluster.register(1)
        admin = await cluster.active_admin()
        tp = partitions(("t", 0), ("t", 1))

        async def elect(token: str | None, which: apb.TopicPartitionsList | None = tp) -> Any:
            request = apb.ElectLeadersRequest(election_type=PREFERRED)
            if which is not None:
                request.topic_partitions.CopyFrom(which)
            return await admin.ElectLeaders(request, metadata=call(token))

        for token in (None, "bob-token"):
            denied = await elect(token)
            assert denied.header.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            assert outcome(denied) == {
                ("t", 0): ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                ("t", 1): ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
            }
            everything = await elect(token, None)
            assert everything.header.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            assert list(everything.replica_election_results) == []

        bad = await elect("wrong")
        assert bad.header.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        malformed = await admin.DescribeCluster(
            apb.DescribeClusterRequest(), metadata=(("authorization", "Basic xyz"),)
        )
        assert malformed.header.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED

        for token in ("s3cret", "root"):
            allowed = await elect(token)
            assert allowed.header.error_code == 0
            assert outcome(allowed) == {
                ("t", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                ("t", 1): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            }

        # Topic-level operations: alice may create t only; bob may describe anything.
        created = await admin.CreateTopics(
            apb.CreateTopicsRequest(
                topics=[
                    apb.NewTopic(name="t", num_partitions=2, replication_factor=1),
                    apb.NewTopic(name="x", num_partitions=1, replication_factor=1),
                ]
            ),
            metadata=call("s3cret"),
        )
        assert [t.error_code for t in created.topics] == [0, ErrorCode.TOPIC_AUTHORIZATION_FAILED]
        described = await admin.DescribeTopics(
            apb.DescribeTopicsRequest(all_topics=True), metadata=call("bob-token")
        )
        assert [t.name for t in described.topics] == ["t"]
        hidden = await admin.DescribeTopics(
            apb.DescribeTopicsRequest(all_topics=True), metadata=call(None)
        )
        assert list(hidden.topics) == []
        refused = await admin.DeleteTopics(
            apb.DeleteTopicsRequest(topic_names=["t"]), metadata=call("bob-token")
        )
        assert [r.error_code for r in refused.results] == [ErrorCode.TOPIC_AUTHORIZATION_FAILED]
        cluster_info = await admin.DescribeCluster(
            apb.DescribeClusterRequest(), metadata=call(None)
        )
        assert cluster_info.header.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        resources = [
            apb.ConfigResource(resource_type=2, resource_name="t"),
            apb.ConfigResource(resource_type=4, resource_name=""),
        ]
        hidden_configs = await admin.DescribeConfigs(
            apb.DescribeConfigsRequest(resources=resources), metadata=call("bob-token")
        )
        assert [r.error_code for r in hidden_configs.results] == [
            ErrorCode.TOPIC_AUTHORIZATION_FAILED,
            ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        ]
        shown = await admin.DescribeConfigs(
            apb.DescribeConfigsRequest(resources=resources), metadata=call("root")
        )
        assert [r.error_code for r in shown.results] == [0, 0]
        change = apb.AlterConfigsResource(
            resource=resources[0],
            configs=[apb.AlterableConfig(name="retention.ms", op=0, value="5")],
        )
        not_altered = await admin.IncrementalAlterConfigs(
            apb.IncrementalAlterConfigsRequest(resources=[change]), metadata=call("s3cret")
        )
        assert [r.error_code for r in not_altered.results] == [ErrorCode.TOPIC_AUTHORIZATION_FAILED]
        lifecycle = await cluster.active_lifecycle()
        heartbeat = await lifecycle.BrokerHeartbeat(
            bpb.BrokerHeartbeatRequest(broker_id=1, broker_epoch=1), metadata=call("bob-token")
        )
        assert heartbeat.header.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED

    run_scenario(
        scenario,
        ControllerQuorum(
            tmp_path,
            {
                "authorizer.class.name": "raftmeta.auth.AclAuthorizer",
                "super.users": "User:admin",
                "raftmeta.auth.tokens.file": str(tokens),
                "raftmeta.acls": "User:alice:Alter:Cluster:kafka-cluster,"
                "User:alice:Create:Topic:t,User:bob:Describe:Topic:*,"
                "User:ANONYMOUS:ClusterAction:Cluster:kafka-cluster",
            },
        ),
    )


def test_grpc_status_is_ok_for_kafka_errors(tmp_path: Path) -> None:
    """A Kafka-level failure is an answer, not a gRPC error: the call itself succeeds."""

    async def scenario(cluster: ControllerQuorum) -> None:
        admin = await cluster.active_admin()
        call: Any = admin.ElectLeaders(apb.ElectLeadersRequest(election_type=9))
        reply = await call
        assert await call.code() is grpc.StatusCode.OK
        assert reply.header.error_code == ErrorCode.INVALID_REQUEST

    run_scenario(scenario, ControllerQuorum(tmp_path))
