"""Forged requests at the last epoch but one, over plaintext, against real ``raftmeta serve``
processes: taken in, they left the quorum unable to elect a leader ever again, restarts
included (the next election needs 2^31 - 1, which no node accepts). Each node now refuses a
request that would move it more than ``max_epoch_leap`` epochs ahead."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import grpc

from raftmeta.errors import ErrorCode
from raftmeta.raft.limits import EPOCH_LIMIT
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from tests.process.helpers import DEADLINE_S, ProcessQuorum, running
from tests.support.waiting import wait_until

NEAR_LIMIT = EPOCH_LIMIT - 2


def _forge(quorum: ProcessQuorum, target: int, claimant: int) -> list[int]:
    """A Vote and a BeginQuorumEpoch at NEAR_LIMIT in ``claimant``'s name; their error codes."""
    address = f"127.0.0.1:{quorum.cluster.ports[target]}"
    with grpc.insecure_channel(address) as channel:
        # A quorum has a leader once two nodes are up: the third may still be starting.
        grpc.channel_ready_future(channel).result(timeout=DEADLINE_S)
        stub: Any = pb_grpc.RaftStub(channel)
        vote = stub.Vote(
            pb.VoteRequest(
                cluster_id=quorum.cluster_id,
                candidate_epoch=NEAR_LIMIT,
                candidate_id=claimant,
                last_offset_epoch=NEAR_LIMIT - 1,
                last_offset=1 << 40,
            ),
            timeout=DEADLINE_S,
        )
        begin = stub.BeginQuorumEpoch(
            pb.BeginQuorumEpochRequest(
                cluster_id=quorum.cluster_id, leader_id=claimant, leader_epoch=NEAR_LIMIT
            ),
            timeout=DEADLINE_S,
        )
    return [vote.error_code, begin.error_code]


def test_forged_near_limit_epochs_neither_stop_elections_nor_survive_a_restart(
    tmp_path: Path,
) -> None:
    with running(ProcessQuorum(tmp_path)) as quorum:
        quorum.start_all(load_rate=50.0)
        first = quorum.wait_for_leader()
        for target in quorum.nodes:
            claimant = next(node for node in quorum.nodes if node != target)
            assert _forge(quorum, target, claimant) == [ErrorCode.INVALID_REQUEST] * 2

        quorum.nodes[first.leader_id].kill()
        second = quorum.wait_for_leader(newer_than=first.leader_epoch)
        assert second.leader_id != first.leader_id
        assert second.leader_epoch < NEAR_LIMIT
        wait_until(
            lambda: quorum.acked_by(second.leader_id) >= 20,
            "writes under the new leader",
            DEADLINE_S,
        )

        before = {node_id: quorum.acked_by(node_id) for node_id in quorum.nodes}
        for node in quorum.nodes.values():
            if node.running:
                node.signal(signal.SIGKILL)
        for node in quorum.nodes.values():
            node.wait(10)
        quorum.start_all(load_rate=50.0)
        third = quorum.wait_for_leader(newer_than=second.leader_epoch)
        assert third.leader_epoch < NEAR_LIMIT
        wait_until(
            lambda: quorum.acked_by(third.leader_id) >= before[third.leader_id] + 20,
            "writes after a full restart",
            DEADLINE_S,
        )
