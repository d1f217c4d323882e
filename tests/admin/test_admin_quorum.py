"""AdminClient and AsyncAdminClient against a real three-node quorum in one process: every
operation, per-item Kafka errors reaching the right futures, NOT_CONTROLLER followed from a
follower, a controller failover ridden out, a timeout, and leader elections of both types."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from raftmeta.admin import (
    AdminClient,
    AlterConfigOpType,
    AsyncAdminClient,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ElectionType,
    ErrorCode,
    KafkaException,
    NewPartitions,
    NewTopic,
    TopicPartition,
)
from raftmeta.channel import ControllerChannel
from raftmeta.records import uuid_from_str
from raftmeta.rpc import broker_pb2 as bpb
from raftmeta.rpc import raft_pb2 as rpb
from tests.admin.brokers import register_unfenced, set_fenced
from tests.support.controller_quorum import CLUSTER_ID, ControllerQuorum
from tests.support.scenario import run_scenario

T = TypeVar("T")

QUIET = {
    # Nothing moves leaders but the test itself, and brokers stay registered between beats.
    "auto.leader.rebalance.enable": False,
    "broker.session.timeout.ms": 60_000,
}


async def failure(future: Awaitable[Any]) -> KafkaException:
    with pytest.raises(KafkaException) as caught:
        await future
    return caught.value


async def code_of(future: Awaitable[Any]) -> ErrorCode:
    return (await failure(future)).code


def test_the_async_client_manages_topics_and_configs_with_per_item_errors(
    tmp_path: Path,
) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        follower = await cluster.follower()
        async with ControllerChannel(cluster.addresses.values()) as lifecycle:
            await register_unfenced(lifecycle, [1, 2, 3])
        # Bootstrapped at a follower only: every request is redirected to the controller,
        # DescribeQuorum too (whose answer speaks of the Raft leader, not the controller).
        async with ControllerChannel(follower.address) as channel:
            quorum = await channel.call(
                "Admin/DescribeQuorum", rpb.DescribeQuorumRequest(cluster_id=CLUSTER_ID)
            )
            assert quorum.error_code == ErrorCode.NONE
            assert quorum.leader_id == (await cluster.wait_for_active()).node_id
            assert channel.controller_endpoint != follower.address
        async with AsyncAdminClient({"bootstrap.servers": follower.address}) as admin:
            created = admin.create_topics(
                [
                    NewTopic("orders", 3, 3, config={"min.insync.replicas": "2"}),
                    NewTopic("bad/name", 1, 1),
                    NewTopic("wide", 1, 4),
                    NewTopic("none", 0, 1),
                    NewTopic("manual", replica_assignment=[[1, 2], [2, 3], [3, 1]]),
                    NewTopic("badconf", 1, 1, config={"min.insync.replicas": "zero"}),
                ]
            )
            await created["orders"]
            await created["manual"]
            assert await code_of(created["bad/name"]) is ErrorCode.INVALID_TOPIC_EXCEPTION
            assert await code_of(created["wide"]) is ErrorCode.INVALID_REPLICATION_FACTOR
            assert await code_of(created["none"]) is ErrorCode.INVALID_PARTITIONS
            assert await code_of(created["badconf"]) is ErrorCode.INVALID_CONFIG
            again = await failure(admin.create_topics([NewTopic("orders", 1, 1)])["orders"])
            assert (again.code, again.name) == (
                ErrorCode.TOPIC_ALREADY_EXISTS,
                "TOPIC_ALREADY_EXISTS",
            )
            assert "orders" in again.message
            checked = admin.create_topics([NewTopic("dry", 2, 2)], validate_only=True)
            await checked["dry"]

            described = admin.describe_topics(["orders", "manual", "dry"])
            orders = await described["orders"]
            assert [p.id for p in orders.partitions] == [0, 1, 2]
            assert orders.replication_factor == 3 and len(orders.topic_id) == 22
            assert dict(orders.configs) == {"min.insync.replicas": "2"}
            for partition in orders.partitions:
                assert sorted(partition.replicas) == [1, 2, 3]
                assert partition.leader == partition.replicas[0]
                assert sorted(partition.isr) == [1, 2, 3]
            manual = await described["manual"]
            assert [p.replicas for p in manual.partitions] == [(1, 2), (2, 3), (3, 1)]
            assert await code_of(described["dry"]) is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            assert sorted(await admin.describe_topics()) == ["manual", "orders"]

            grown = admin.create_partitions(
                [NewPartitions("orders", 5), NewPartitions("manual", 2), NewPartitions("x", 2)]
            )
            await grown["orders"]
            assert await code_of(grown["manual"]) is ErrorCode.INVALID_PARTITIONS
            assert await code_of(grown["x"]) is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            assert len((await admin.describe_topics(["orders"])["orders"]).partitions) == 5

            topic = ConfigResource("topic", "orders")
            changes = admin.incremental_alter_configs(
                [
                    ConfigResource(
                        "topic",
                        "orders",
                        [
                            ConfigEntry(
                                "retention.ms", "1000", incremental_operation=AlterConfigOpType.SET
                            ),
                            ConfigEntry(
                                "min.insync.replicas",
                                None,
                                incremental_operation=AlterConfigOpType.DELETE,
                            ),
                        ],
                    ),
                    ConfigResource(
                        "topic",
                        "ghost",
                        [
                            ConfigEntry(
                                "retention.ms", "1", incremental_operation=AlterConfigOpType.SET
                            )
                        ],
                    ),
                ]
            )
            await changes[topic]
            assert await code_of(changes[ConfigResource("topic", "ghost")]) is (
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            )
            configs = admin.describe_configs([topic, ConfigResource("topic", "ghost")])
            entries = await configs[topic]
            assert entries["retention.ms"].value == "1000"
            assert entries["retention.ms"].source is ConfigSource.TOPIC_CONFIG
            assert entries["min.insync.replicas"].source is not ConfigSource.TOPIC_CONFIG
            assert await code_of(configs[ConfigResource("topic", "ghost")]) is (
                ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            )

            cluster_view = await admin.describe_cluster()
            active = await cluster.wait_for_active()
            assert cluster_view.controller_id == active.node_id
            assert [b.id for b in cluster_view.brokers] == [1, 2, 3]
            assert [b.rack for b in cluster_view.brokers] == ["a", "b", "c"]
            assert not any(b.fenced for b in cluster_view.brokers)
            assert sum(b.leader_count for b in cluster_view.brokers) == 5 + 3

            deleted = admin.delete_topics(["manual", "ghost"])
            await deleted["manual"]
            assert await code_of(deleted["ghost"]) is ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            assert sorted(await admin.describe_topics()) == ["orders"]

    run_scenario(scenario, ControllerQuorum(tmp_path, QUIET), 60)


def test_the_thread_client_rides_out_a_controller_failover_and_times_out_without_a_quorum(
    tmp_path: Path,
) -> None:
    async def result(future: Any) -> Any:
        return await asyncio.wrap_future(future)

    async def scenario(cluster: ControllerQuorum) -> None:
        async with ControllerChannel(cluster.addresses.values()) as lifecycle:
            await register_unfenced(lifecycle, [1, 2, 3])
        servers = ",".join(cluster.addresses.values())
        with AdminClient({"bootstrap.servers": servers}) as admin:
            await result(admin.create_topics([NewTopic("before", 1, 3)])["before"])
            first = await cluster.wait_for_active()
            await cluster.stop(first.node_id, graceful=False)
            created = admin.create_topics([NewTopic("after", 2, 2)])["after"]
            await result(created)
            second = await cluster.wait_for_active()
            assert second.node_id != first.node_id
            view = await result(admin.describe_cluster())
            assert view.controller_id == second.node_id
            names = await result(admin.describe_topics())
            assert sorted(names) == ["after", "before"]

            # Two of three voters down: nothing can commit, so the request times out.
            await cluster.stop(second.node_id, graceful=False)
            pending = admin.create_topics([NewTopic("never", 1, 1)], request_timeout=0.5)
            error = await failure(result(pending["never"]))
            assert error.code is ErrorCode.REQUEST_TIMED_OUT

    run_scenario(scenario, ControllerQuorum(tmp_path, QUIET), 60)


def test_elect_leaders_preferred_and_unclean_with_the_deprecated_alias(tmp_path: Path) -> None:
    async def result(future: Any) -> Any:
        return await asyncio.wrap_future(future)

    async def scenario(cluster: ControllerQuorum) -> None:
        lifecycle = ControllerChannel(cluster.addresses.values())
        epochs = await register_unfenced(lifecycle, [1, 2, 3])
        servers = ",".join(cluster.addresses.values())
        with AdminClient({"bootstrap.servers": servers}) as admin:
            layout = [[1, 2, 3], [2, 3, 1], [3, 1, 2]]
            assert (
                await result(admin.create_topics([NewTopic("e", replica_assignment=layout)])["e"])
                is None
            )
            e0, e1, e2 = (TopicPartition("e", i) for i in range(3))

            # Every leader is already preferred.
            settled = admin.elect_leaders(ElectionType.PREFERRED, [e0, e1])
            outcomes = await result(settled.partitions())
            assert {tp: err.code for tp, err in outcomes.items()} == {
                e0: ErrorCode.ELECTION_NOT_NEEDED,
                e1: ErrorCode.ELECTION_NOT_NEEDED,
            }
            assert (await failure(result(settled.all()))).code is ErrorCode.ELECTION_NOT_NEEDED
            assert (
                await result(admin.elect_leaders(ElectionType.PREFERRED, None).partitions()) == {}
            )

            # Broker 1 fenced: it leaves every ISR and e-0's leadership moves to broker 2.
            await set_fenced(lifecycle, 1, epochs[1], fenced=True)
            moved = (await result(admin.describe_topics(["e"])["e"])).partitions[0]
            assert moved.leader == 2 and 1 not in moved.isr
            ghost = TopicPartition("ghost", 0)
            while_fenced = await result(
                admin.elect_leaders(ElectionType.PREFERRED, [e0, e1, ghost]).partitions()
            )
            assert {tp: err.code for tp, err in while_fenced.items() if err} == {
                e0: ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
                e1: ErrorCode.ELECTION_NOT_NEEDED,
                ghost: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            }
            unclean = await result(admin.elect_leaders(ElectionType.UNCLEAN, [e2]).partitions())
            assert unclean[e2] is not None and unclean[e2].code is ErrorCode.ELECTION_NOT_NEEDED

            # Broker 1 back, and back in e-0's ISR (its leader, broker 2, says so).
            await set_fenced(lifecycle, 1, epochs[1], fenced=False)
            described = await result(admin.describe_topics(["e"])["e"])
            partition = described.partitions[0]
            altered = await lifecycle.call(
                "BrokerLifecycle/AlterPartition",
                bpb.AlterPartitionRequest(
                    broker_id=2,
                    broker_epoch=epochs[2],
                    topic_id=uuid_from_str(described.topic_id),
                    partitions=[
                        bpb.PartitionIsrChange(
                            partition_index=0,
                            leader_epoch=partition.leader_epoch,
                            new_isr=[
                                bpb.IsrMember(broker_id=b, broker_epoch=epochs[b])
                                for b in (1, 2, 3)
                            ],
                            partition_epoch=partition.partition_epoch,
                        )
                    ],
                ),
            )
            assert altered.partitions[0].error_code == ErrorCode.NONE, altered

            with pytest.warns(DeprecationWarning, match="elect_leaders"):
                restored = admin.elect_preferred_leaders(None)
            assert await result(restored.partitions()) == {e0: None}
            await result(restored.all())
            after = await result(admin.describe_topics(["e"])["e"])
            assert [p.leader for p in after.partitions] == [1, 2, 3]

            # An election type Kafka does not know fails the whole request.
            odd = admin.elect_leaders(7, [e0])
            assert (await failure(result(odd.partitions()))).code is ErrorCode.INVALID_REQUEST
        await lifecycle.close()

    run_scenario(scenario, ControllerQuorum(tmp_path, QUIET), 60)


def test_the_async_client_elects_and_warns_the_same_way(tmp_path: Path) -> None:
    async def scenario(cluster: ControllerQuorum) -> None:
        async with ControllerChannel(cluster.addresses.values()) as lifecycle:
            await register_unfenced(lifecycle, [1, 2])
        servers = list(cluster.addresses.values())
        async with AsyncAdminClient({"bootstrap.servers": servers}) as admin:
            await admin.create_topics([NewTopic("t", replica_assignment=[[1, 2]])])["t"]
            with pytest.warns(DeprecationWarning):
                result = admin.elect_preferred_leaders([TopicPartition("t", 0)])
            error = (await result.partitions())[TopicPartition("t", 0)]
            assert error is not None and error.code is ErrorCode.ELECTION_NOT_NEEDED
            assert (await failure(result.all())).code is ErrorCode.ELECTION_NOT_NEEDED

    run_scenario(scenario, ControllerQuorum(tmp_path, QUIET), 60)


def test_credentials_travel_with_every_request_and_refusals_reach_every_item(
    tmp_path: Path,
) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text("alice-token=User:alice\nbob-token=User:bob\n")

    async def scenario(cluster: ControllerQuorum) -> None:
        servers = list(cluster.addresses.values())
        async with ControllerChannel(servers) as lifecycle:
            await register_unfenced(lifecycle, [1])
        async with AsyncAdminClient(
            {"bootstrap.servers": servers, "bearer.token": "alice-token"}
        ) as alice:
            await alice.create_topics([NewTopic("t", 1, 1)])["t"]
            assert (await alice.elect_leaders(ElectionType.PREFERRED, None).partitions()) == {}
        async with AsyncAdminClient(
            {"bootstrap.servers": servers, "bearer.token": "bob-token"}
        ) as bob:
            election = bob.elect_leaders(
                ElectionType.PREFERRED, [TopicPartition("t", 0), TopicPartition("t", 1)]
            )
            refused = await failure(election.partitions())
            assert refused.code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            assert (await failure(election.all())).code is ErrorCode.CLUSTER_AUTHORIZATION_FAILED
            assert (await bob.describe_topics(["t"])["t"]).name == "t"
        async with AsyncAdminClient(
            {"bootstrap.servers": servers, "bearer.token": "forged"}
        ) as stranger:
            futures = stranger.delete_topics(["t", "u"])
            for future in futures.values():
                assert await code_of(future) is ErrorCode.SASL_AUTHENTICATION_FAILED

    run_scenario(
        scenario,
        ControllerQuorum(
            tmp_path,
            {
                **QUIET,
                "authorizer.class.name": "raftmeta.auth.AclAuthorizer",
                "raftmeta.auth.tokens.file": str(tokens),
                "raftmeta.acls": "User:alice:Alter:Cluster:kafka-cluster,"
                "User:alice:Create:Topic:t,User:bob:Describe:Topic:*,"
                "User:ANONYMOUS:ClusterAction:Cluster:kafka-cluster",
            },
        ),
        timeout_s=60,
    )
