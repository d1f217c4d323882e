"""The time trigger for snapshots: a quiet cluster still snapshots what it committed."""

from __future__ import annotations

from pathlib import Path

from raftmeta.config.node import parse_config
from raftmeta.quorum import NodeSettings, Peers, RaftClient, RaftNode
from tests.quorum.harness import Changes, NodeCluster, Recorder
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async


def test_snapshot_is_taken_after_the_interval_even_below_the_byte_threshold(
    tmp_path: Path,
) -> None:
    """With a byte threshold no test reaches, only the interval can have caused the snapshot;
    each node's log start then moves past what it committed, and a restart loads it."""

    async def scenario(cluster: NodeCluster) -> None:
        for i in range(5):
            await cluster.append([f"record-{i}".encode()])
        target = max(m.recorder.committed_offset for m in cluster.members.values())
        await cluster.wait_for_commit(target)
        await wait_until_async(
            lambda: all(
                m.node.running and m.node.core.log.start_offset >= target
                for m in cluster.members.values()
            ),
            f"every node to snapshot and trim its log to offset {target}",
        )
        for node_id in cluster.ids:
            assert list(cluster.data_dir(node_id).rglob("*.checkpoint"))
        follower_id = next(
            m.node.node_id for m in cluster.members.values() if m is not cluster.leader()
        )
        await cluster.stop(follower_id)
        restarted = await cluster.restart(follower_id)
        await cluster.wait_until(
            lambda: restarted.recorder.snapshots_loaded >= 1,
            "the restarted node to load a snapshot",
        )
        assert restarted.recorder.values[:5] == [f"record-{i}".encode() for i in range(5)]

    run_scenario(
        scenario,
        NodeCluster(tmp_path, max_bytes_between_snapshots=1 << 40, max_snapshot_interval_ms=200),
    )


def test_interval_is_read_from_the_configuration(tmp_path: Path) -> None:
    config = parse_config(
        {
            "node.id": 1,
            "controller.quorum.voters": "1@127.0.0.1:9093",
            "metadata.log.dir": str(tmp_path),
            "metadata.log.max.snapshot.interval.ms": 1234,
        }
    )
    assert NodeSettings.from_config(config).max_snapshot_interval_ms == 1234


def test_a_snapshot_the_node_cannot_take_keeps_the_byte_count(tmp_path: Path) -> None:
    """A stopped node cannot snapshot: the bytes already committed must still count toward
    the next snapshot instead of starting a whole threshold over."""
    settings = NodeSettings(node_id=1, voters={}, data_dir=tmp_path, max_bytes_between_snapshots=10)
    node = RaftNode(settings, Peers)
    client = RaftClient(node, Recorder(1, Changes()), snapshot_source=lambda: lambda: [b"state"])
    client.bytes_since_snapshot = 100
    client.committed_offset = 5
    assert client.snapshot_due() is None
    assert client.bytes_since_snapshot == 100


def test_the_log_rolls_segments_at_the_configured_size(tmp_path: Path) -> None:
    """``metadata.log.segment.bytes`` reaches the log: small segments give many files."""

    async def scenario(cluster: NodeCluster) -> None:
        for i in range(20):
            await cluster.append([f"record-{i:03d}".encode() * 10])
        target = max(m.recorder.committed_offset for m in cluster.members.values())
        await cluster.wait_for_commit(target)
        for node_id in cluster.ids:
            segments = list(cluster.data_dir(node_id).rglob("*.log"))
            assert len(segments) >= 2, (node_id, segments)

    run_scenario(scenario, NodeCluster(tmp_path, segment_bytes=1024))


def test_segment_size_is_read_from_the_configuration(tmp_path: Path) -> None:
    config = parse_config(
        {
            "node.id": 1,
            "controller.quorum.voters": "1@127.0.0.1:9093",
            "metadata.log.dir": str(tmp_path),
            "metadata.log.segment.bytes": 4096,
        }
    )
    assert NodeSettings.from_config(config).segment_bytes == 4096
