"""A node whose directory is damaged in a way it cannot repair stops at start-up with one line
naming the file, instead of running on in a state that neither serves nor rejoins."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from raftmeta.storage.data_dir import METADATA_PARTITION_DIR
from raftmeta.storage.meta_properties import META_PROPERTIES_FILE
from raftmeta.storage.quorum_state import QUORUM_STATE_FILE
from tests.process.helpers import DEADLINE_S, ProcessQuorum, running
from tests.support.waiting import wait_until


def serve(config: Path) -> subprocess.CompletedProcess[str]:
    """Run ``raftmeta serve`` to its end; a node that starts instead of refusing times out."""
    return subprocess.run(
        [sys.executable, "-m", "raftmeta", "serve", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_voter_restarted_without_its_quorum_state_refuses_in_one_line(tmp_path: Path) -> None:
    """It used to start at epoch 0 beside a log of a later epoch, campaign with a vote request
    every peer refuses as malformed (a last epoch not below the candidate's), refuse their
    answers in turn (an error answer carries epoch -1), and never catch up."""
    with running(ProcessQuorum(tmp_path)) as quorum:
        quorum.start_all()
        info = quorum.wait_for_leader()
        follower = next(node for node in quorum.nodes if node != info.leader_id)
        wait_until(
            lambda: (
                (described := quorum.describe()) is not None
                and all(v.log_end_offset > 0 for v in described.voters)
            ),
            "every voter holding the leader's first records",
            DEADLINE_S,
        )
        node = quorum.nodes[follower]
        node.signal(signal.SIGTERM)
        assert node.wait(DEADLINE_S) == 0, node.log_tail()
        state = quorum.cluster.data_dir(follower) / METADATA_PARTITION_DIR / QUORUM_STATE_FILE
        state.unlink()
        finished = serve(node.config)
    assert finished.returncode == 1, finished.stderr
    lines = finished.stderr.strip().splitlines()
    assert "Traceback" not in finished.stderr, finished.stderr
    assert len(lines) == 1 and str(state) in lines[0] and "missing" in lines[0], lines


def test_a_meta_properties_grown_by_zeros_is_refused_in_one_line(tmp_path: Path) -> None:
    """With a gigabyte of zeros appended, the node read and parsed it for minutes, logging
    nothing and serving nothing. A damaged identity file is a configuration error: exit 2.
    (The test's file is smaller, so that code without the limit starts and times out.)"""
    quorum = ProcessQuorum(tmp_path)
    node = next(iter(quorum.nodes.values()))
    meta = quorum.cluster.data_dir(node.node_id) / META_PROPERTIES_FILE
    with meta.open("ab") as file:
        file.truncate(2**26)  # sparse: zeros that cost no disk
    finished = serve(node.config)
    assert finished.returncode == 2, finished.stderr
    lines = finished.stderr.strip().splitlines()
    assert len(lines) == 1 and str(meta) in lines[0] and str(2**26) in lines[0], lines
