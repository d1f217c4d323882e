"""ElectLeaders (key 43, versions 0-2; flexible from v2), through the Admin service.

PREFERRED (0) and UNCLEAN (1) from v1 (v0 is always PREFERRED); a null partition list asks for
every partition. Per-partition results carry the Admin service's codes and messages; from v1 a
failure of the whole call is the top-level error code too (and the results carry it per
requested partition, as Kafka's error response does).
"""

from __future__ import annotations

from typing import Any

from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server.kafka.context import Fields, KafkaContext, header_error


async def elect_leaders(context: KafkaContext, request: Any, version: int) -> Fields:
    grpc_request = apb.ElectLeadersRequest(
        election_type=int(request.election_type) if version >= 1 else 0,
        timeout_ms=request.timeout_ms,
    )
    if request.topic_partitions is not None:
        grpc_request.topic_partitions.CopyFrom(
            apb.TopicPartitionsList(
                topics=[
                    apb.TopicPartitions(topic=item.topic, partitions=list(item.partitions or ()))
                    for item in request.topic_partitions
                ]
            )
        )
    response = await context.admin.ElectLeaders(grpc_request, context.call)
    code, _ = header_error(response.header)
    return {
        "throttle_time_ms": 0,
        "error_code": code,
        "replica_election_results": [
            {
                "topic": result.topic,
                "partition_result": [
                    {
                        "partition_id": partition.partition_id,
                        "error_code": partition.error_code,
                        "error_message": partition.error_message or None,
                    }
                    for partition in result.partition_result
                ],
            }
            for result in response.replica_election_results
        ],
    }
