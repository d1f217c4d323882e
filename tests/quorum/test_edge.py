"""The runtime's edge on its own: refusal logging budgets, a request that cannot be encoded,
a stopped node's DescribeQuorum, and the plaintext listener's start-up warning."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import grpc
import pytest

from raftmeta.quorum import NodeSettings, Peers, RaftNode, serve_raft
from raftmeta.quorum.refusals import RefusalLog
from raftmeta.raft.messages import VoteRequest
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from raftmeta.storage import MetadataDir
from tests.quorum.harness import CLUSTER_ID

LOGGER = "tests.refusals"


def test_refusals_are_logged_within_a_budget_per_sender_and_the_rest_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    refusals = RefusalLog(
        logging.getLogger(LOGGER),
        1,
        lines_per_interval=2,
        interval_s=10.0,
        max_senders=3,
        clock=lambda: now[0],
    )
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        logged = [refusals.refused(7, "VoteRequest", f"flood {i}") for i in range(1000)]
        assert logged[:2] == [True, True] and not any(logged[2:])
        assert refusals.refused(8, "FetchRequest", "another sender has its own budget")
        # Random sender ids share one budget beyond max_senders: the table stays small.
        spread = [refusals.refused(1000 + i, "FetchRequest", "spread") for i in range(500)]
        assert sum(spread) <= 2 + 1
        now[0] = 10.0
        assert refusals.refused(7, "VoteRequest", "next interval")
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) <= 2 + 1 + 3 + 1
    assert lines[0] == "node 1: refused VoteRequest from 7: flood 0"
    assert lines[-1].endswith("(998 more refused from 7 went unlogged before this)")


def test_a_request_whose_values_do_not_fit_the_wire_is_dropped_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> None:
        peers = Peers(1, CLUSTER_ID, {1: "127.0.0.1:1", 2: "127.0.0.1:1"}, 100)
        try:
            # An epoch past int32 (the core refuses to persist one; this is the last guard).
            request = VoteRequest(2**31, 1, 0, 0)
            assert await peers.call(2, request) is None
        finally:
            await peers.close()

    with caplog.at_level(logging.ERROR, logger="raftmeta.quorum.peers"):
        asyncio.run(main())
    assert any("cannot encode VoteRequest to node 2" in r.getMessage() for r in caplog.records)


def test_describe_quorum_on_a_stopped_node_is_unavailable_and_plaintext_is_announced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async def main() -> None:
        MetadataDir.format(tmp_path, 1, CLUSTER_ID)
        node = RaftNode(NodeSettings(node_id=1, voters={}, data_dir=tmp_path), Peers)
        server = await serve_raft(node)
        address = f"127.0.0.1:{server.port}"
        try:
            await node.start({1: address})
            await node.stop(graceful=False)
            async with grpc.aio.insecure_channel(address) as channel:
                with pytest.raises(grpc.aio.AioRpcError) as raised:
                    await pb_grpc.RaftStub(channel).DescribeQuorum(
                        pb.DescribeQuorumRequest(cluster_id=CLUSTER_ID), timeout=5
                    )
            assert raised.value.code() is grpc.StatusCode.UNAVAILABLE
            assert "not running" in (raised.value.details() or "")
        finally:
            await node.stop(graceful=False)
            await server.stop()

    with caplog.at_level(logging.WARNING):
        asyncio.run(main())
    announced = [r.getMessage() for r in caplog.records if "plaintext" in r.getMessage()]
    assert len(announced) == 1
    assert "must not be reachable by untrusted hosts" in announced[0]
