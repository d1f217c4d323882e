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

_CODECS: dict[str, tuple[_Encode, _Decode]] = {
    "CreateTopics": (
        lambda results: apb.CreateTopicsResponse(
            topics=[convert.create_result_to_pb(result) for result in results]
        ),
        lambda data: [
            convert.create_result_from_pb(topic)
            for topic in apb.CreateTopicsResponse.FromString(data).topics
        ],
    ),
    "CreatePartitions": (
        lambda results: apb.CreatePartitionsResponse(
            results=[convert.topic_result_to_pb(result) for result in results]
        ),
        lambda data: [
            convert.topic_result_from_pb(result)
            for result in apb.CreatePartitionsResponse.FromString(data).results
        ],
    ),
    "DeleteTopics": (
        lambda results: apb.DeleteTopicsResponse(
            results=[convert.topic_result_to_pb(result) for result in results]
        ),
        lambda data: [
            convert.topic_result_from_pb(result)
            for result in apb.DeleteTopicsResponse.FromString(data).results
        ],
    ),
    "IncrementalAlterConfigs": (
        lambda results: apb.IncrementalAlterConfigsResponse(
            results=[convert.alter_result_to_pb(result) for result in results]
        ),
        lambda data: [
            convert.alter_result_from_pb(result)
            for result in apb.IncrementalAlterConfigsResponse.FromString(data).results
        ],
    ),
    "ElectLeaders": (
        lambda results: apb.ElectLeadersResponse(
            replica_election_results=convert.election_results_to_pb(results)
        ),
        lambda data: convert.election_results_from_pb(
            apb.ElectLeadersResponse.FromString(data).replica_election_results
        ),
    ),
    "CreateAcls": (
        lambda results: apb.CreateAclsResponse(
            results=[convert.acl_creation_to_pb(result) for result in results]
        ),
        lambda data: [
            convert.item_error(result.error_code, result.error_message)
            for result in apb.CreateAclsResponse.FromString(data).results
        ],
    ),
    "DeleteAcls": (
        lambda results: apb.DeleteAclsResponse(
            filter_results=[convert.acl_deletion_to_pb(result) for result in results]
        ),
        lambda data: [
            convert.acl_deletion_from_pb(result)
            for result in apb.DeleteAclsResponse.FromString(data).filter_results
        ],
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
