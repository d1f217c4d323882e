"""A node that learns of many committed records at once (a restart, a long absence) hands
them to its state machine in slices and answers its peers between them.

Replayed in one turn, a long backlog held the runtime for seconds: followers gave up on a
leader that was only reading its log, elected another, and that one stalled the same way
(seen in a fault campaign after a full restart with 370k records to replay)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from raftmeta.raft.batch import Batch
from raftmeta.raft.config import RaftConfig
from tests.quorum import harness
from tests.quorum.harness import NodeCluster
from tests.support.loop_turns import Turns
from tests.support.scenario import run_scenario

SLICE = 50
RECORDS_PER_BATCH = 25
BATCHES_WHILE_AWAY = 40


@dataclass(eq=False)
class SliceLog:
    """Per ``handle_commit`` call of the returning node: records handed over, and the turn
    count then."""

    node_id: int | None = None
    calls: list[tuple[int, int]] = field(default_factory=list)


def test_a_node_catching_up_gets_its_backlog_in_slices_between_other_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = Turns()
    slices = SliceLog()

    class SlicedRecorder(harness.Recorder):
        def handle_commit(self, batches: Sequence[Batch]) -> None:
            if self.node_id == slices.node_id:
                slices.calls.append((sum(b.record_count for b in batches), turns.count))
            super().handle_commit(batches)

    monkeypatch.setattr(harness, "Recorder", SlicedRecorder)

    async def scenario(cluster: NodeCluster) -> None:
        counter = asyncio.create_task(turns.run())
        try:
            leader = await cluster.wait_for_leader()
            away = 3 if leader.node.node_id != 3 else 2
            await cluster.stop(away, graceful=False)
            last = 0
            for i in range(BATCHES_WHILE_AWAY):
                last = await cluster.append(
                    [f"r-{i}-{j}".encode() for j in range(RECORDS_PER_BATCH)]
                )
            slices.node_id = away
            returning = await cluster.restart(away)
            await cluster.wait_for_commit(last + 1, [returning])
        finally:
            counter.cancel()

        delivered = [count for count, _ in slices.calls]
        assert sum(delivered) >= BATCHES_WHILE_AWAY * RECORDS_PER_BATCH
        assert max(delivered) <= SLICE, f"a call handed over {max(delivered)} records"
        turns_seen = [turn for _, turn in slices.calls]
        back_to_back = [i for i in range(1, len(turns_seen)) if turns_seen[i] == turns_seen[i - 1]]
        assert not back_to_back, f"slices {back_to_back} came with no turn for other work"

    run_scenario(
        scenario, NodeCluster(tmp_path, raft=RaftConfig(commit_delivery_max_records=SLICE))
    )
