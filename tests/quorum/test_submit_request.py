"""``RaftNode.submit_request``: an inbound request answered through a callback, which the
stream listener uses to write a frame without a task per call.

The claim that matters for commit latency: a parked Fetch is answered as the driver sends the
Ready holding the new batch, before that Ready's disk work, so the leader's own fsync overlaps
replication instead of preceding it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from raftmeta.quorum import RaftClient, RaftNode
from raftmeta.quorum.settings import NodeSettings
from raftmeta.raft.batch import Batch
from raftmeta.raft.messages import FetchRequest, FetchResponse, Response
from raftmeta.raft.roles import Role
from raftmeta.storage import MetadataDir, SnapshotReader
from tests.quorum.harness import CLUSTER_ID, DEADLINE_S
from tests.quorum.test_vote_answers import silent
from tests.support.waiting import wait_until_async

OBSERVER = 9


class Quiet:
    def handle_commit(self, batches: Sequence[Batch]) -> None:
        pass

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        pass

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        pass


async def _leader(tmp_path: Path) -> tuple[RaftNode, RaftClient]:
    MetadataDir.format(tmp_path, 1, CLUSTER_ID)
    node = RaftNode(NodeSettings(node_id=1, voters={1: "memory:1"}, data_dir=tmp_path), silent)
    client = RaftClient(node, Quiet())
    await node.start()
    await wait_until_async(
        lambda: node.core.role is Role.LEADER and node.core.high_watermark > 0,
        "the single voter to lead",
        DEADLINE_S,
    )
    return node, client


def _fetch_at_end(node: RaftNode) -> FetchRequest:
    log = node.core.log
    return FetchRequest(node.core.epoch, log.end_offset, log.last_epoch, 250, 1 << 20)


def test_a_parked_fetch_is_answered_before_the_leader_writes_the_batch(tmp_path: Path) -> None:
    async def main() -> None:
        node, client = await _leader(tmp_path)
        try:
            seen: list[tuple[Response | BaseException, int]] = []
            answered = asyncio.get_running_loop().create_future()

            def answer(outcome: Response | BaseException) -> None:
                seen.append((outcome, node.written_offset))
                answered.set_result(None)

            node.submit_request(OBSERVER, _fetch_at_end(node), answer)
            offset, committed = client.append([b"news"])
            await asyncio.wait_for(answered, DEADLINE_S)
            await asyncio.wait_for(committed, DEADLINE_S)
        finally:
            await node.stop()
        [(response, written_when_answered)] = seen
        assert isinstance(response, FetchResponse) and response.batches
        assert response.batches[-1].last_offset == offset
        # Answered before the leader's own write of that batch was done.
        assert written_when_answered <= offset

    asyncio.run(main())


def test_a_withdrawn_request_gets_no_answer(tmp_path: Path) -> None:
    async def main() -> list[Response | BaseException]:
        node, client = await _leader(tmp_path)
        seen: list[Response | BaseException] = []
        try:
            withdraw = node.submit_request(OBSERVER, _fetch_at_end(node), seen.append)
            withdraw()
            _, committed = client.append([b"news"])
            await asyncio.wait_for(committed, DEADLINE_S)
        finally:
            await node.stop()
        return seen

    assert asyncio.run(main()) == []


def test_a_second_request_of_a_kind_supersedes_the_first(tmp_path: Path) -> None:
    async def main() -> tuple[list[Response | BaseException], list[Response | BaseException]]:
        node, client = await _leader(tmp_path)
        first: list[Response | BaseException] = []
        second: list[Response | BaseException] = []
        try:
            node.submit_request(OBSERVER, _fetch_at_end(node), first.append)
            node.submit_request(OBSERVER, _fetch_at_end(node), second.append)
            _, committed = client.append([b"news"])
            await asyncio.wait_for(committed, DEADLINE_S)
            await wait_until_async(lambda: bool(second), "the second fetch's answer", DEADLINE_S)
        finally:
            await node.stop()
        return first, second

    first, second = asyncio.run(main())
    assert len(first) == 1 and isinstance(first[0], ConnectionError)
    assert len(second) == 1 and isinstance(second[0], FetchResponse)
