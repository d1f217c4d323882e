"""A forged Raft packet against real ``raftmeta serve`` processes (issue 12): a
BeginQuorumEpoch or EndQuorumEpoch naming another leader for the current epoch, sent to the
leader from an unauthenticated client, once killed the leader process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc

from raftmeta.errors import ErrorCode
from raftmeta.rpc import raft_pb2 as pb
from raftmeta.rpc import raft_pb2_grpc as pb_grpc
from tests.process.helpers import DEADLINE_S, ProcessQuorum, running
from tests.support.waiting import wait_until


def test_forged_begin_and_end_epoch_no_longer_kill_the_leader_process(tmp_path: Path) -> None:
    with running(ProcessQuorum(tmp_path)) as quorum:
        quorum.start_all(load_rate=100.0)
        info = quorum.wait_for_leader()
        leader, epoch = info.leader_id, info.leader_epoch
        wait_until(lambda: quorum.acked_by(leader) >= 20, "appends under the leader", DEADLINE_S)
        others = [node_id for node_id in quorum.nodes if node_id != leader]
        address = f"127.0.0.1:{quorum.cluster.ports[leader]}"
        with grpc.insecure_channel(address) as channel:
            stub: Any = pb_grpc.RaftStub(channel)  # a sync channel: the stub answers at once
            # Two packets in a row, as in the report, each naming a different impostor.
            begin = stub.BeginQuorumEpoch(
                pb.BeginQuorumEpochRequest(
                    cluster_id=quorum.cluster_id, leader_id=others[0], leader_epoch=epoch
                ),
                timeout=DEADLINE_S,
            )
            end = stub.EndQuorumEpoch(
                pb.EndQuorumEpochRequest(
                    cluster_id=quorum.cluster_id,
                    leader_id=others[1],
                    leader_epoch=epoch,
                    preferred_successors=[others[1]],
                ),
                timeout=DEADLINE_S,
            )
        assert begin.error_code == end.error_code == ErrorCode.INVALID_REQUEST
        acked = quorum.acked_by(leader)
        # The leader process is alive, still leads the same epoch, and goes on acknowledging.
        wait_until(
            lambda: quorum.acked_by(leader) >= acked + 20, "appends after the packets", DEADLINE_S
        )
        quorum.check_alive()
        assert quorum.nodes[leader].running
        after = quorum.wait_for_leader()
        assert (after.leader_id, after.leader_epoch) == (leader, epoch)
