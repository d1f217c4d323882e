"""Bringing a restarted broker back into the ISRs, when the leaders do not do it themselves.

In Kafka the leader of a partition adds a follower back to the ISR (AlterPartition) once the
follower has fetched up to the leader's log end. raftmeta's brokers replicate no data, so a
replica is caught up as soon as its broker is unfenced, but ``raftmeta broker`` does not yet
send that AlterPartition. Until it does, the demo sends it on each leader's behalf, with the
leader's id and broker epoch, exactly as the leader would; the controller validates it like
any other (leader epoch, partition epoch, the new member's broker epoch).

The demo only steps in when the ISRs have not healed on their own within a grace period, so
once the brokers expand ISRs themselves this does nothing.
"""

from __future__ import annotations

import asyncio
from typing import Any

from raftmeta.controller_channel import ControllerChannel
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.rpc import admin_pb2, broker_pb2

REQUEST_TIMEOUT_MS = 5000


def expand_isrs(bootstrap_servers: str, topics: list[str]) -> int:
    """Add every unfenced replica missing from its partition's ISR; returns how many
    partitions were changed. Raises ``KafkaError`` when the controller refuses."""
    return asyncio.run(_expand(bootstrap_servers, topics))


async def _expand(bootstrap_servers: str, topics: list[str]) -> int:
    async with ControllerChannel(
        bootstrap_servers, request_timeout_ms=REQUEST_TIMEOUT_MS
    ) as channel:
        cluster = await channel.call("Admin/DescribeCluster", admin_pb2.DescribeClusterRequest())
        epochs = {b.broker_id: b.broker_epoch for b in cluster.brokers if not b.fenced}
        described = await channel.call(
            "Admin/DescribeTopics", admin_pb2.DescribeTopicsRequest(topic_names=topics)
        )
        changed = 0
        for topic in described.topics:
            by_leader: dict[int, list[Any]] = {}
            for partition in topic.partitions:
                leader = partition.leader_id
                missing = [r for r in partition.replicas if r not in partition.isr and r in epochs]
                if leader not in epochs or not missing:
                    continue
                new_isr = [*partition.isr, *missing]
                by_leader.setdefault(leader, []).append(
                    broker_pb2.PartitionIsrChange(
                        partition_index=partition.partition_index,
                        leader_epoch=partition.leader_epoch,
                        new_isr=[
                            broker_pb2.IsrMember(broker_id=b, broker_epoch=epochs[b])
                            for b in new_isr
                        ],
                        leader_recovery_state=partition.leader_recovery_state,
                        partition_epoch=partition.partition_epoch,
                    )
                )
            for leader, changes in by_leader.items():
                request = broker_pb2.AlterPartitionRequest(
                    broker_id=leader,
                    broker_epoch=epochs[leader],
                    topic_id=topic.topic_id,
                    partitions=changes,
                    timeout_ms=REQUEST_TIMEOUT_MS,
                )
                response = await channel.call("BrokerLifecycle/AlterPartition", request)
                if response.header.error_code != ErrorCode.NONE:
                    raise KafkaError(
                        ErrorCode(response.header.error_code), response.header.error_message
                    )
                changed += sum(1 for r in response.partitions if r.error_code == ErrorCode.NONE)
        return changed
