"""Three ``raftmeta serve`` processes: kill -9, restarts and graceful handover, checked
against what the leader acknowledged and what every node's log holds afterwards."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from raftmeta.admin.quorum import DescribeError, describe_quorum
from tests.process.helpers import (
    DEADLINE_S,
    ProcessQuorum,
    assert_nothing_acknowledged_lost,
    running,
)
from tests.support.waiting import wait_until

LOAD_RATE = 200.0
KILL_LOAD_RATE = 500.0
"""Appends per second while the leader is killed: one every 2 ms, against a commit that takes
longer (an fsync on two voters, a round trip, and the acknowledgement's own fsync), so the
kill always lands with appends in flight on the Raft stream."""


def converge_and_stop(quorum: ProcessQuorum) -> dict[int, list[str]]:
    """Wait until every voter holds the leader's whole log and it is all committed, then stop
    every node gracefully and read each node's load records from its files."""

    def converged() -> bool:
        info = quorum.describe()
        if info is None or info.leader is None:
            return False
        end = info.leader.log_end_offset
        return info.high_watermark == end and all(v.log_end_offset == end for v in info.voters)

    wait_until(converged, "every voter to hold the whole, committed log", DEADLINE_S)
    quorum.stop_all()
    return {node_id: quorum.logged_values(node_id) for node_id in quorum.nodes}


@pytest.mark.parametrize("tls", [False, True], ids=["plaintext", "mtls"])
def test_leader_kill_9_under_load_then_full_cluster_kill_9_loses_nothing_acknowledged(
    tmp_path: Path, tls: bool
) -> None:
    """The main crash scenario, also over mutual TLS: the peers' Fetch, Vote and
    BeginQuorumEpoch calls then go through the identity rule on every hop. The voters speak
    the shipped transport, the Raft stream, and the leader dies mid-stream."""
    with running(ProcessQuorum(tmp_path, tls=tls)) as quorum:
        if tls:
            config = quorum.cluster.nodes[3000].config.read_text()
            assert "listener.security.protocol.map=CONTROLLER\\:SSL" in config, config
        quorum.start_all(load_rate=KILL_LOAD_RATE)
        first = quorum.wait_for_leader()
        if tls:
            with pytest.raises(DescribeError):  # the listener speaks nothing but TLS
                describe_quorum(quorum.cluster.bootstrap_servers, quorum.cluster_id, timeout_s=1.0)
        wait_until(
            lambda: quorum.acked_by(first.leader_id) >= 40,
            "appends under the first leader",
            DEADLINE_S,
        )

        # Kill while acknowledgements are coming in: the stream is busy at that moment.
        streaming = quorum.acked_by(first.leader_id)
        wait_until(
            lambda: quorum.acked_by(first.leader_id) >= streaming + 10,
            "the leader to be acknowledging appends right now",
            DEADLINE_S,
        )
        killed_at = time.monotonic()
        quorum.nodes[first.leader_id].kill()
        acked_before_kill = set(quorum.acked())
        second = quorum.wait_for_leader(newer_than=first.leader_epoch)
        failover_s = time.monotonic() - killed_at
        assert second.leader_id != first.leader_id
        wait_until(
            lambda: quorum.acked_by(second.leader_id) >= 40,
            "appends under the new leader",
            DEADLINE_S,
        )

        # The old leader comes back as a follower; then every node dies at once.
        quorum.start(first.leader_id, load_rate=LOAD_RATE)
        wait_until(
            lambda: (
                (i := quorum.describe()) is not None
                and all(v.log_end_offset >= 0 for v in i.voters)
            ),
            "the restarted node to fetch",
            DEADLINE_S,
        )
        for node in quorum.nodes.values():
            node.signal(signal.SIGKILL)
        for node in quorum.nodes.values():
            node.wait(10)
        acked = quorum.acked()

        quorum.start_all()
        quorum.wait_for_leader()
        logs = converge_and_stop(quorum)

    for node in quorum.nodes.values():
        # The start-up warning names a plaintext listener, and only a plaintext one.
        text = node.log_path.read_text()
        assert "Raft stream (controller.quorum.transport=stream)" in text, node.node_id
        warned = "plaintext and unauthenticated" in text
        assert warned is not tls, f"node {node.node_id}: plaintext warning {warned} with tls={tls}"
    transport = "mTLS" if tls else "plaintext"
    killed_epoch = f"{first.leader_id}-{first.leader_epoch}-"
    unacked_survivors = [
        v for v in next(iter(logs.values())) if v.startswith(killed_epoch) and v not in acked
    ]
    print(
        f"\nkill -9 failover ({transport}): {failover_s * 1000:.0f} ms, "
        f"{len(acked)} appends acknowledged ({len(acked_before_kill)} before the kill); "
        f"{len(unacked_survivors)} appends in flight at the kill were committed by the successor"
    )
    assert len(acked) >= 80
    assert_nothing_acknowledged_lost(acked, logs)


def test_killed_follower_catches_up_and_graceful_leader_stop_hands_over(tmp_path: Path) -> None:
    # A fetch timeout of 3 s makes a handover by timeout easy to tell from one by EndQuorumEpoch.
    quorum = ProcessQuorum(tmp_path, {"controller.quorum.fetch.timeout.ms": "3000"})
    with running(quorum):
        quorum.start_all(load_rate=LOAD_RATE)
        first = quorum.wait_for_leader()
        follower = next(f.node_id for f in first.followers)
        quorum.nodes[follower].kill()
        wait_until(
            lambda: quorum.acked_by(first.leader_id) >= 60,
            "appends without the follower",
            DEADLINE_S,
        )
        behind = quorum.describe()
        assert behind is not None and behind.leader_id == first.leader_id

        quorum.start(follower, load_rate=LOAD_RATE)

        def caught_up() -> bool:
            info = quorum.describe()
            if info is None:
                return False
            replica = next(v for v in info.voters if v.node_id == follower)
            return replica.log_end_offset >= behind.high_watermark

        wait_until(caught_up, f"node {follower} to catch up", DEADLINE_S)

        stopped_at = time.monotonic()
        quorum.nodes[first.leader_id].signal(signal.SIGTERM)
        second = quorum.wait_for_leader(newer_than=first.leader_epoch)
        handover_s = time.monotonic() - stopped_at
        assert quorum.nodes[first.leader_id].wait(10) == 0
        assert second.leader_id != first.leader_id
        wait_until(
            lambda: quorum.acked_by(second.leader_id) >= 20,
            "appends after the handover",
            DEADLINE_S,
        )
        acked = quorum.acked()
        quorum.start(first.leader_id)
        # The others still generate load: stop it, or the log end never settles.
        for node_id, node in quorum.nodes.items():
            if node_id != first.leader_id:
                node.signal(signal.SIGUSR1)
        logs = converge_and_stop(quorum)

    print(f"\ngraceful handover: {handover_s * 1000:.0f} ms")
    assert handover_s < 1.5, "the handover waited for a timeout instead of EndQuorumEpoch"
    for node_id, values in logs.items():
        assert set(acked) <= set(values), f"node {node_id} lost acknowledged appends"
        assert len(set(values)) == len(values), f"node {node_id} holds an append twice"
