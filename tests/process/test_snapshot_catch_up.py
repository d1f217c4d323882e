"""A follower killed with ``kill -9`` while the others snapshot past its log end comes back
through FetchSnapshot and ends with the same committed records as the others."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from raftmeta.devcluster import NodeProcess, _die_with_parent
from raftmeta.server.serve import LOAD_RESOURCE
from tests.process.helpers import Quorum, raftmeta, running, wait_until

LOAD_RATE = 200.0
SNAPSHOT_BYTES = 2000
"""A few dozen load records: several snapshots a second at the load rate."""


class SnapshottingNode(NodeProcess):
    """Starts ``tests.process.snapshotting_serve``: ``raftmeta serve`` with a snapshot source."""

    def start(self, extra_args: Sequence[str] = ()) -> None:
        if self.running:
            raise RuntimeError(f"node {self.node_id} is already running")
        command = [sys.executable, "-m", "tests.process.snapshotting_serve", "serve"]
        with self.log_path.open("ab") as output:
            self.process = subprocess.Popen(
                [*command, "--config", str(self.config), *extra_args],
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                start_new_session=True,
                # As ``raftmeta dev`` does: a node must not outlive a test runner that died.
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
            )


def dump(*args: str) -> list[dict[str, Any]]:
    result = raftmeta(*args, "--json")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def checkpoints(quorum: Quorum, node_id: int) -> list[tuple[int, Path]]:
    """Each snapshot file of a node with its end offset, oldest first."""
    found = []
    for path in quorum.cluster.data_dir(node_id).rglob("*.checkpoint"):
        found.append((int(path.stem.split("-")[0]), path))
    return sorted(found)


def log_end(quorum: Quorum, node_id: int) -> int:
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


def committed_values(quorum: Quorum, node_id: int) -> list[str]:
    """A stopped node's load records: its latest snapshot's, then its log's after that."""
    snapshots = checkpoints(quorum, node_id)
    values: list[str] = []
    start = 0
    if snapshots:
        start, path = snapshots[-1]
        values = load_values(dump("snapshot", "dump", str(path)))
    entries = dump("log", "dump", str(quorum.cluster.data_dir(node_id)))
    assert not any("stopped" in e for e in entries), entries
    return values + load_values(entries, start)


def test_restarted_follower_catches_up_through_a_snapshot(tmp_path: Path) -> None:
    quorum = Quorum(
        tmp_path, {"metadata.log.max.record.bytes.between.snapshots": str(SNAPSHOT_BYTES)}
    )
    for node_id, node in list(quorum.nodes.items()):
        quorum.nodes[node_id] = SnapshottingNode(node.node_id, node.config, node.log_path)
    with running(quorum):
        quorum.start_all(load_rate=LOAD_RATE)
        first = quorum.wait_for_leader()
        follower = next(f.node_id for f in first.followers)
        others = [n for n in quorum.nodes if n != follower]
        wait_until(lambda: quorum.acked_by(first.leader_id) >= 20, "appends with every node up")
        quorum.nodes[follower].kill()
        old_end = log_end(quorum, follower)
        old_snapshots = {path for _, path in checkpoints(quorum, follower)}

        def snapshotted_past(node_id: int) -> bool:
            snapshots = checkpoints(quorum, node_id)
            return bool(snapshots) and snapshots[-1][0] > old_end

        wait_until(
            lambda: all(snapshotted_past(n) for n in others),
            f"the others to snapshot past offset {old_end}",
        )
        quorum.start(follower, load_rate=LOAD_RATE)
        wait_until(
            lambda: any(
                end > old_end and path not in old_snapshots
                for end, path in checkpoints(quorum, follower)
            ),
            f"node {follower} to fetch a snapshot past its old log end {old_end}",
        )

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

        wait_until(converged, "every voter to hold the whole, committed log")
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
