"""A candidate's pre-vote and real vote arriving back to back each get their own answer.

One inbound request per (peer, kind) waits for the core's answer; a candidate whose pre-vote
won a majority elsewhere sends its real vote at once, often before this node's answer to the
pre-vote went out. That answer belongs to the superseded pre-vote and must not be handed to
the vote's caller, who would otherwise read a pre-vote grant as the vote's answer and wait out
an election timeout (seen as slow graceful handovers after a voter was restarted).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from raftmeta.quorum import NodeSettings, NodeStoppedError, RaftNode
from raftmeta.quorum.transport import RaftChannel
from raftmeta.raft.messages import Request, Response, VoteRequest, VoteResponse
from raftmeta.storage import MetadataDir
from tests.quorum.harness import CLUSTER_ID, DEADLINE_S

VOTERS = {1: "memory:1", 2: "memory:2", 3: "memory:3"}


class SilentChannel:
    """Peers that never answer: the node under test only answers."""

    async def call(self, destination: int, request: Request) -> Response | None:
        return None

    def heard_from(self, peer_id: int) -> None:
        pass

    async def close(self) -> None:
        pass


def silent(
    local_id: int, cluster_id: str, addresses: object, request_timeout_ms: int
) -> RaftChannel:
    return SilentChannel()


def test_a_vote_that_overtakes_the_answer_to_its_pre_vote_gets_the_vote_answer(
    tmp_path: Path,
) -> None:
    async def main() -> None:
        MetadataDir.format(tmp_path, 1, CLUSTER_ID)
        node = RaftNode(NodeSettings(node_id=1, voters=VOTERS, data_dir=tmp_path), silent)
        await node.start()
        try:
            epoch = node.core.epoch + 1
            pre_vote = VoteRequest(epoch, 2, 0, 0, pre_vote=True)
            vote = VoteRequest(epoch, 2, 0, 0)
            # Both are stepped before the node's driver sends the first answer out.
            answers = await asyncio.wait_for(
                asyncio.gather(
                    node.handle_request(2, pre_vote),
                    node.handle_request(2, vote),
                    return_exceptions=True,
                ),
                DEADLINE_S,
            )
        finally:
            await node.stop()
        superseded, answer = answers
        assert isinstance(superseded, NodeStoppedError)
        assert isinstance(answer, VoteResponse)
        assert (answer.pre_vote, answer.vote_granted, answer.epoch) == (False, True, epoch)

    asyncio.run(main())


def test_the_answer_to_a_lone_pre_vote_still_reaches_its_caller(tmp_path: Path) -> None:
    async def main() -> VoteResponse:
        MetadataDir.format(tmp_path, 1, CLUSTER_ID)
        node = RaftNode(NodeSettings(node_id=1, voters=VOTERS, data_dir=tmp_path), silent)
        await node.start()
        try:
            answer = await asyncio.wait_for(
                node.handle_request(2, VoteRequest(node.core.epoch + 1, 2, 0, 0, pre_vote=True)),
                DEADLINE_S,
            )
        finally:
            await node.stop()
        assert isinstance(answer, VoteResponse)
        return answer

    answer = asyncio.run(main())
    assert answer.pre_vote and answer.vote_granted
