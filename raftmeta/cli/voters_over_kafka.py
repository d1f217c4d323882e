"""``raftmeta quorum add-controller`` / ``remove-controller`` with ``--bootstrap-controller``:
the voter change through the controllers' KAFKA listeners, with Kafka's AddRaftVoter and
RemoveRaftVoter (as ``kafka-metadata-quorum --bootstrap-controller`` sends them), instead of the
Raft service's gRPC methods (:mod:`raftmeta.cli.quorum_membership`).

The same promises as over gRPC: a REQUEST_TIMED_OUT (the new voter still catching up, or
another change committing) is retried until the deadline; a DUPLICATE_VOTER for an add whose
voter id is already among the voters, or a VOTER_NOT_FOUND for a remove whose id no longer is,
means an earlier attempt's change committed, and is reported as made before. The leader's
voters are read with DescribeQuorum, which names voters by id only on Kafka's wire.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping

from raftmeta.admin import AsyncAdminClient, QuorumInfo
from raftmeta.cli.quorum_membership import RETRY_PAUSE_S, VoterChangeError
from raftmeta.errors import ErrorCode, KafkaError

Change = Callable[[AsyncAdminClient, float], Awaitable[None]]
"""Send the change once, with this many seconds to commit."""
AlreadyMade = Callable[[QuorumInfo], bool]
"""Whether the leader's voters already are as asked."""


def change_voters_over_kafka(
    config: Mapping[str, object], change: Change, already_made: AlreadyMade, deadline_s: float
) -> bool:
    """Make the change; True when it had been made before. ``VoterChangeError`` with the
    leader's code and message when it is refused, or not made by ``deadline_s``."""

    async def run() -> bool:
        deadline = time.monotonic() + deadline_s
        async with AsyncAdminClient(dict(config)) as client:
            last = "no answer"
            while (remaining := deadline - time.monotonic()) > 0:
                try:
                    await change(client, remaining)
                    return False
                except KafkaError as error:
                    last = f"{error.code.name}: {error.message}".rstrip(": ")
                    if error.code in (ErrorCode.DUPLICATE_VOTER, ErrorCode.VOTER_NOT_FOUND):
                        if already_made(await client.describe_quorum()):
                            return True
                        raise VoterChangeError(last) from None
                    if error.code is not ErrorCode.REQUEST_TIMED_OUT:
                        raise VoterChangeError(last) from None
                await asyncio.sleep(min(RETRY_PAUSE_S, max(0.0, deadline - time.monotonic())))
            raise VoterChangeError(f"gave up after {deadline_s:g} s: {last}")

    try:
        return asyncio.run(run())
    except KafkaError as error:
        raise VoterChangeError(f"{error.code.name}: {error.message}".rstrip(": ")) from None
