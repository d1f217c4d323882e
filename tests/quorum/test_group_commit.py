"""Adaptive batching: a lone append is proposed at once, and appends that arrive while the leader
writes earlier ones gather into the next batch (group commit).

The linger is set to a minute here, so the only way these appends can commit within the
scenario's deadline is the adaptive path: a batch proposed because nothing was in flight, or
because the write in progress finished.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.quorum.harness import DEADLINE_S, NodeCluster
from tests.support.scenario import run_scenario

LINGER_MS = 60_000


def test_a_lone_append_does_not_wait_for_the_linger(tmp_path: Path) -> None:
    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        leader.client.linger_ms = LINGER_MS
        for i in range(5):
            _, future = leader.client.append([f"serial-{i}".encode()])
            await asyncio.wait_for(future, DEADLINE_S)
        assert leader.recorder.values[-5:] == [f"serial-{i}".encode() for i in range(5)]

    run_scenario(scenario, NodeCluster(tmp_path))


def test_appends_made_while_a_batch_is_in_flight_gather_into_the_next(tmp_path: Path) -> None:
    async def scenario(cluster: NodeCluster) -> None:
        leader = await cluster.wait_for_leader()
        await cluster.append([b"settle"])
        leader.client.linger_ms = LINGER_MS
        first_offset, first = leader.client.append([b"first"])
        await asyncio.sleep(0)  # the first batch is proposed in this turn of the loop
        assert leader.node.core.log.end_offset == first_offset + 1
        later = [leader.client.append([f"later-{i}".encode()]) for i in range(10)]
        # Held back while the leader writes the first batch...
        assert leader.node.core.log.end_offset == first_offset + 1
        await asyncio.wait_for(first, DEADLINE_S)
        # ...and proposed, as one batch, once that write is done.
        offsets = await asyncio.wait_for(asyncio.gather(*(f for _, f in later)), DEADLINE_S)
        assert offsets == [offset for offset, _ in later]
        batches = [b for b in leader.recorder.batches if b.base_offset > first_offset]
        assert len(batches) == 1 and batches[0].next_offset == first_offset + 11

    run_scenario(scenario, NodeCluster(tmp_path))
