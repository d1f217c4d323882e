"""The bytes a write keeps for its retries: its gRPC reply, serialized, as always.

:mod:`raftmeta.apis` keeps each write's results through a :class:`~raftmeta.apis.KeptReplies`
it is handed; this is the one every node uses, so outcomes written to the log before the API
layer existed (and by any node of the cluster) read back the same. Only the results are kept,
never the header: a retry gets its header from the retry's own answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server import convert

_Encode = Callable[[Sequence[Any]], Any]
_Decode = Callable[[bytes], list[Any]]


def _each(
    reply: Any, field: str, to_pb: Callable[[Any], Any], from_pb: Callable[[Any], Any]
) -> tuple[_Encode, _Decode]:
    """A reply whose repeated ``field`` holds one message per result."""

    def encode(results: Sequence[Any]) -> Any:
        return reply(**{field: [to_pb(result) for result in results]})

    def decode(data: bytes) -> list[Any]:
        return [from_pb(item) for item in getattr(reply.FromString(data), field)]

    return encode, decode


def _elections() -> tuple[_Encode, _Decode]:
    def encode(results: Sequence[Any]) -> Any:
        return apb.ElectLeadersResponse(
            replica_election_results=convert.election_results_to_pb(results)
        )

    def decode(data: bytes) -> list[Any]:
        replies = apb.ElectLeadersResponse.FromString(data).replica_election_results
        return convert.election_results_from_pb(replies)

    return encode, decode


def _reassignments() -> tuple[_Encode, _Decode]:
    def encode(results: Sequence[Any]) -> Any:
        return apb.AlterPartitionReassignmentsResponse(
            responses=convert.reassignment_results_to_pb(results, grouped=False)
        )

    def decode(data: bytes) -> list[Any]:
        responses = apb.AlterPartitionReassignmentsResponse.FromString(data).responses
        return convert.reassignment_results_from_pb(responses)

    return encode, decode


def _acl_creation_from_pb(result: apb.AclCreationResult) -> Any:
    return convert.item_error(result.error_code, result.error_message)


_CODECS: dict[str, tuple[_Encode, _Decode]] = {
    "CreateTopics": _each(
        apb.CreateTopicsResponse,
        "topics",
        convert.create_result_to_pb,
        convert.create_result_from_pb,
    ),
    "CreatePartitions": _each(
        apb.CreatePartitionsResponse,
        "results",
        convert.topic_result_to_pb,
        convert.topic_result_from_pb,
    ),
    "DeleteTopics": _each(
        apb.DeleteTopicsResponse,
        "results",
        convert.topic_result_to_pb,
        convert.topic_result_from_pb,
    ),
    "IncrementalAlterConfigs": _each(
        apb.IncrementalAlterConfigsResponse,
        "results",
        convert.alter_result_to_pb,
        convert.alter_result_from_pb,
    ),
    "AlterConfigs": _each(
        apb.AlterConfigsResponse,
        "results",
        convert.alter_result_to_pb,
        convert.alter_result_from_pb,
    ),
    "ElectLeaders": _elections(),
    "CreateAcls": _each(
        apb.CreateAclsResponse, "results", convert.acl_creation_to_pb, _acl_creation_from_pb
    ),
    "DeleteAcls": _each(
        apb.DeleteAclsResponse,
        "filter_results",
        convert.acl_deletion_to_pb,
        convert.acl_deletion_from_pb,
    ),
    "AlterPartitionReassignments": _reassignments(),
    "AlterClientQuotas": _each(
        apb.AlterClientQuotasResponse,
        "results",
        convert.quota_result_to_pb,
        convert.quota_result_from_pb,
    ),
}


class ProtobufKeptReplies:
    """Each operation's results as the results of its gRPC reply."""

    def encode(self, operation: str, results: Sequence[Any]) -> bytes:
        data: bytes = _CODECS[operation][0](results).SerializeToString()
        return data

    def decode(self, operation: str, data: bytes) -> list[Any]:
        return _CODECS[operation][1](data)


KEPT_REPLIES = ProtobufKeptReplies()
