"""Snapshots are serialized on a worker thread: a slow one must not stop the quorum.

At a million partitions the image takes seconds to encode. The node captures the state on its
event loop and leaves the encoding to a thread; these tests hold that thread and check that
commits and leadership go on meanwhile, and that the snapshot, once written, holds the state
as captured, not as it was when the thread finished.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from raftmeta.storage import MetadataDir, SnapshotReader
from tests.quorum.harness import Member, NodeCluster
from tests.support.scenario import run_scenario
from tests.support.waiting import wait_until_async


def held_snapshots(
    member: Member, release: threading.Event, started: threading.Event
) -> list[list[bytes]]:
    """Make ``member``'s next snapshot wait for ``release``, and take no more after it.

    Returns the capture, filled in once the node asked for it.
    """
    captures: list[list[bytes]] = []

    def source() -> Callable[[], Iterable[bytes]]:
        values = list(member.recorder.values)
        captures.append(values)
        member.client.snapshot_source = None

        def work() -> Iterable[bytes]:
            started.set()
            if not release.wait(timeout=30):
                raise TimeoutError("the test never released the snapshot")
            return values

        return work

    member.client.snapshot_source = source
    return captures


def test_commits_go_on_while_the_leader_serializes_a_snapshot(tmp_path: Path) -> None:
    release = threading.Event()
    started = threading.Event()

    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        epoch = leader.node.core.epoch
        captures = held_snapshots(leader, release, started)
        await cluster.append([b"before-0", b"before-1"])
        await wait_until_async(started.is_set, "the snapshot worker to start")
        log_start = leader.node.core.log.start_offset
        # The worker is held: everything below happens while the snapshot is being "encoded".
        for index in range(20):
            offset = await cluster.append([f"during-{index}".encode()])
            await cluster.wait_for_commit(offset)
        assert cluster.leader() is leader
        assert leader.node.core.epoch == epoch
        assert leader.node.core.log.start_offset == log_start, "the held snapshot is not in place"
        release.set()
        await wait_until_async(
            lambda: leader.node.core.log.start_offset > log_start,
            f"the leader's log start to pass {log_start}",
        )
        # The node holds its directory's lock, so open the newest snapshot file alone (names
        # are zero-padded offsets; the older one may not be deleted yet).
        path = max(cluster.data_dir(leader.node.node_id).rglob("*.checkpoint"))
        snapshot = SnapshotReader(path)
        assert list(snapshot.records()) == captures[0]
        assert snapshot.snapshot_id.end_offset == leader.node.core.log.start_offset
        assert b"during-19" not in captures[0]

    run_scenario(scenario, NodeCluster(tmp_path, max_bytes_between_snapshots=1))


def test_a_node_stopping_waits_for_its_snapshot_to_be_written(tmp_path: Path) -> None:
    release = threading.Event()
    started = threading.Event()

    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        node_id, epoch = leader.node.node_id, leader.node.core.epoch
        captures = held_snapshots(leader, release, started)
        await cluster.append([b"value"])
        await wait_until_async(started.is_set, "the snapshot worker to start")
        before = set(cluster.data_dir(node_id).rglob("*.checkpoint"))
        stopping = asyncio.create_task(cluster.stop(node_id))
        # The leader resigns first; by the time the others have elected a successor, a stop
        # that did not wait for the worker would long have closed the directory.
        await cluster.wait_for_leader(newer_than=epoch)
        assert not stopping.done()
        assert set(cluster.data_dir(node_id).rglob("*.checkpoint")) == before
        release.set()
        await asyncio.wait_for(stopping, 10)
        directory = MetadataDir.open(cluster.data_dir(node_id), node_id)
        try:
            assert directory.latest_snapshot is not None
            assert list(directory.read_snapshot().records()) == captures[0]
        finally:
            directory.close()

    run_scenario(scenario, NodeCluster(tmp_path, max_bytes_between_snapshots=1))
