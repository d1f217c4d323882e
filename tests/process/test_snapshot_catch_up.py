"""A follower killed with ``kill -9`` while the others snapshot past its log end comes back
through FetchSnapshot and ends with the same committed records as the others.

The nodes are plain ``raftmeta serve`` processes: their snapshots are the controller's image,
which keeps every load record (one config name per value)."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from raftmeta.server.serve import LOAD_RESOURCE
from tests.process.helpers import DEADLINE_S, ProcessQuorum, raftmeta, running
from tests.support.waiting import wait_until

LOAD_RATE = 200.0
SNAPSHOT_BYTES = 2000
"""A few dozen load records: several snapshots a second at the load rate."""


def dump(*args: str) -> list[dict[str, Any]]:
    result = raftmeta(*args, "--json")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def checkpoints(quorum: ProcessQuorum, node_id: int) -> list[tuple[int, Path]]:
    """Each snapshot file of a node with its end offset, oldest first."""
    found = []
    for path in quorum.cluster.data_dir(node_id).rglob("*.checkpoint"):
        found.append((int(path.stem.split("-")[0]), path))
    return sorted(found)


def log_end(quorum: ProcessQuorum, node_id: int) -> int:
    entries = dump("log", "dump", str(quorum.cluster.data_dir(node_id)))
    return max((e["last_offset"] + 1 for e in entries if "last_offset" in e), default=0)


def load_values(batches: list[dict[str, Any]], start: int = 0) -> list[str]:
    return [
        record["value"]
        for batch in batches
        if "records" in batch and batch["base_offset"] >= start
        for record in batch["records"]
        if record.get("resource_name") == LOAD_RESOURCE
    ]


def log_order(value: str) -> tuple[int, int]:
    """Load values are ``node-epoch-sequence``; one leader writes each epoch, in sequence
    order, so (epoch, sequence) is log order. A snapshot lists them by name instead."""
    _, epoch, sequence = value.split("-")
    return int(epoch), int(sequence)


def committed_values(quorum: ProcessQuorum, node_id: int) -> list[str]:
    """A stopped node's load records in log order: its latest snapshot's, then its log's
    after that."""
    snapshots = checkpoints(quorum, node_id)
    values: list[str] = []
    start = 0
    if snapshots:
        start, path = snapshots[-1]
        values = sorted(load_values(dump("snapshot", "dump", str(path))), key=log_order)
    entries = dump("log", "dump", str(quorum.cluster.data_dir(node_id)))
    assert not any("stopped" in e for e in entries), entries
    return values + load_values(entries, start)


def test_restarted_follower_catches_up_through_a_snapshot(tmp_path: Path) -> None:
    quorum = ProcessQuorum(
        tmp_path, {"metadata.log.max.record.bytes.between.snapshots": str(SNAPSHOT_BYTES)}
    )
    with running(quorum):
        quorum.start_all(load_rate=LOAD_RATE)
        first = quorum.wait_for_leader()
        follower = next(f.node_id for f in first.followers)
        others = [n for n in quorum.nodes if n != follower]
        wait_until(
            lambda: quorum.acked_by(first.leader_id) >= 20, "appends with every node up", DEADLINE_S
        )

        def follower_holds_records() -> bool:
            # Twenty commits need only the leader and one other: the follower to be killed
            # must itself have written some, or it has no log for this test to outrun.
            info = quorum.describe()
            return info is not None and any(
                voter.node_id == follower and voter.log_end_offset > 0 for voter in info.voters
            )

        wait_until(follower_holds_records, f"node {follower} to hold records", DEADLINE_S)
        quorum.nodes[follower].kill()
        old_end = log_end(quorum, follower)
        old_snapshots = {path for _, path in checkpoints(quorum, follower)}

        def snapshotted_past(node_id: int) -> bool:
            snapshots = checkpoints(quorum, node_id)
            return bool(snapshots) and snapshots[-1][0] > old_end

        wait_until(
            lambda: all(snapshotted_past(n) for n in others),
            f"the others to snapshot past offset {old_end}",
            DEADLINE_S,
        )
        quorum.start(follower, load_rate=LOAD_RATE)
        wait_until(
            lambda: any(
                end > old_end and path not in old_snapshots
                for end, path in checkpoints(quorum, follower)
            ),
            f"node {follower} to fetch a snapshot past its old log end {old_end}",
            DEADLINE_S,
        )

        # Stop the load, or under a loaded machine the log end may never settle.
        for node in quorum.nodes.values():
            node.signal(signal.SIGUSR1)
        acked: set[str] = set()

        def converged() -> bool:
            # Read first: whatever was acknowledged by now is below the high watermark the
            # describe below sees, so every node holds it once they all reach that end.
            acked.clear()
            acked.update(quorum.acked())
            info = quorum.describe()
            if info is None or info.leader is None:
                return False
            end = info.leader.log_end_offset
            return info.high_watermark == end and all(v.log_end_offset == end for v in info.voters)

        wait_until(converged, "every voter to hold the whole, committed log", DEADLINE_S)
        quorum.stop_all()
        logs = {node_id: committed_values(quorum, node_id) for node_id in quorum.nodes}

    # The leader's generator runs until it stops, so the nodes' tails may differ by the last
    # few appends, committed or not; below the shortest they must agree record for record.
    shortest = min(len(values) for values in logs.values())
    reference = logs[others[0]][:shortest]
    assert len(acked) >= 40
    for node_id, values in logs.items():
        assert values[:shortest] == reference, f"node {node_id}'s committed records differ"
        assert acked <= set(values), f"node {node_id} lacks an acknowledged append"
