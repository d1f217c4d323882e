"""The bytes a write keeps for its retries are its gRPC reply's, as before the API layer, and
read back to the same results."""

from __future__ import annotations

from typing import Any

import pytest

from raftmeta.common.acls import AclBinding, AclDeleteResult
from raftmeta.common.configs import AlterConfigsResult, ConfigResourceRef
from raftmeta.common.elections import PartitionResult, TopicResults
from raftmeta.common.items import OK, ItemError
from raftmeta.common.topics import CreateTopicResult, TopicResult
from raftmeta.errors import ErrorCode
from raftmeta.rpc import admin_pb2 as apb
from raftmeta.server import convert
from raftmeta.server.kept_replies import KEPT_REPLIES

DENIED = ItemError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
BINDING = AclBinding(2, "t", 3, "User:alice", "*", 3, 3)

RESULTS: list[tuple[str, list[Any]]] = [
    (
        "CreateTopics",
        [CreateTopicResult("a", OK, bytes(range(16)), 3, 2, {"x": "1"}), CreateTopicResult("b")],
    ),
    ("CreatePartitions", [TopicResult("a"), TopicResult("b", DENIED)]),
    ("DeleteTopics", [TopicResult("a", DENIED)]),
    ("IncrementalAlterConfigs", [AlterConfigsResult(ConfigResourceRef(2, "a"), DENIED)]),
    (
        "ElectLeaders",
        [
            TopicResults(
                "a",
                (
                    (0, PartitionResult(ErrorCode.NONE)),
                    (1, PartitionResult(ErrorCode.ELECTION_NOT_NEEDED, "not needed")),
                ),
            )
        ],
    ),
    ("CreateAcls", [OK, ItemError(ErrorCode.INVALID_REQUEST, "bad")]),
    ("DeleteAcls", [AclDeleteResult(OK, (BINDING,)), AclDeleteResult(DENIED)]),
]


@pytest.mark.parametrize(("operation", "results"), RESULTS, ids=[name for name, _ in RESULTS])
def test_kept_results_read_back_the_same(operation: str, results: list[Any]) -> None:
    assert KEPT_REPLIES.decode(operation, KEPT_REPLIES.encode(operation, results)) == results


def test_the_kept_bytes_are_the_grpc_reply_as_servers_have_always_kept_it() -> None:
    results = RESULTS[0][1]
    reply = apb.CreateTopicsResponse(topics=[convert.create_result_to_pb(r) for r in results])
    assert KEPT_REPLIES.encode("CreateTopics", results) == reply.SerializeToString()
    elected = RESULTS[4][1]
    reply_e = apb.ElectLeadersResponse(
        replica_election_results=convert.election_results_to_pb(elected)
    )
    assert KEPT_REPLIES.encode("ElectLeaders", elected) == reply_e.SerializeToString()
