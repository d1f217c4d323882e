"""Where a Ready is made durable: a small append on the event loop while the disk is fast,
anything else (and everything while the disk is slow) on a worker thread."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from raftmeta.quorum.disk import NodeDisk
from raftmeta.quorum.write_placement import INLINE_MAX_BYTES, INLINE_MAX_MS, WritePlacement
from raftmeta.raft.batch import make_batch
from raftmeta.raft.ready import AppendBatches, Ready, TruncateLog
from raftmeta.raft.state import ElectionState
from tests.quorum.harness import NodeCluster
from tests.support.scenario import run_scenario


def _append(size: int) -> Ready:
    return Ready(log_ops=[AppendBatches((make_batch(0, 1, [b"x" * size]),))])


def test_a_small_append_is_written_inline_and_a_large_one_on_the_thread() -> None:
    placement = WritePlacement()
    assert placement.inline(_append(100))
    assert not placement.inline(_append(INLINE_MAX_BYTES + 1))


def test_election_state_truncation_and_snapshot_work_go_to_the_thread() -> None:
    placement = WritePlacement()
    assert not placement.inline(Ready(election_state=ElectionState(epoch=3)))
    assert not placement.inline(Ready(log_ops=[TruncateLog(0)]))


def test_a_slow_disk_sends_every_write_to_the_thread_until_it_is_fast_again() -> None:
    placement = WritePlacement()
    for _ in range(5):
        placement.observe(50.0)
    assert placement.smoothed_ms > INLINE_MAX_MS
    assert not placement.inline(_append(100))
    for _ in range(40):
        placement.observe(0.3)
    assert placement.inline(_append(100))


def test_turned_off_every_write_goes_to_the_thread() -> None:
    assert not WritePlacement(inline=False).inline(_append(100))


@pytest.mark.parametrize("inline", [True, False])
def test_a_node_writes_small_appends_where_its_placement_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inline: bool
) -> None:
    threads: list[bool] = []
    persist = NodeDisk.persist

    def recording(self: NodeDisk, ready: Ready) -> None:
        if ready.log_ops and ready.election_state is None:
            threads.append(threading.current_thread() is threading.main_thread())
        persist(self, ready)

    monkeypatch.setattr(NodeDisk, "persist", recording)

    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        for member in cluster.members.values():
            # However slow the shared machine's disk is today: only the switch is tested here.
            member.node._write_placement = WritePlacement(inline=inline, max_inline_ms=1e9)
        threads.clear()
        for i in range(5):
            await cluster.append([f"r{i}".encode()])
        await cluster.wait_for_commit(leader.client.committed_offset)

    run_scenario(scenario, NodeCluster(tmp_path, transport="stream"))
    assert threads
    assert all(on_loop is inline for on_loop in threads), threads
