"""Inbound requests waiting for the core's answer: one per (peer, kind), answered from the Ready
that holds the response, expired after the caller's deadline, failed when the node stops."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from raftmeta.errors import ErrorCode
from raftmeta.raft.messages import (
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    Request,
    Response,
    VoteRequest,
    VoteResponse,
)

log = logging.getLogger("raftmeta.quorum.node")
"""The node's own log: a failed answer is the node's failure to report."""


class NodeStoppedError(ConnectionError):
    """The node is not running, so a call into it can get no answer."""


RESPONSE_TO_REQUEST: dict[type[Response], type[Request]] = {
    VoteResponse: VoteRequest,
    BeginQuorumEpochResponse: BeginQuorumEpochRequest,
    EndQuorumEpochResponse: EndQuorumEpochRequest,
    FetchResponse: FetchRequest,
    FetchSnapshotResponse: FetchSnapshotRequest,
}
"""Which request a response answers, to find the inbound call waiting for it."""


Answer = Callable[["Response | BaseException"], None]
"""Called once with the core's answer to an inbound request, or with why none will come
(``NodeStoppedError``: not running or superseded; ``TimeoutError``)."""


class Waiter:
    """An inbound request waiting for the core's answer, and whom to tell."""

    __slots__ = ("answer", "request", "timer")

    def __init__(self, request: Request, answer: Answer) -> None:
        self.request = request
        self.answer: Answer | None = answer
        self.timer: asyncio.TimerHandle | None = None

    def finish(self, outcome: Response | BaseException) -> None:
        answer, self.answer = self.answer, None
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if answer is None:
            return
        try:
            answer(outcome)
        except Exception:  # one caller's failure must not stop the driver
            log.exception("answering %s failed", type(self.request).__name__)


def answers(request: Request, response: Response) -> bool:
    """Whether ``response`` answers ``request`` rather than an earlier request of its kind.

    One request per (peer, kind) waits for its answer, so when a candidate's real vote
    arrives before the answer to its pre-vote went out, that answer must not be taken for the
    vote's: the wire echoes the waiting request's round, so the candidate would read a pre-vote
    grant in its old epoch as the vote's answer and lose the vote it was granted.
    """
    if isinstance(request, VoteRequest) and isinstance(response, VoteResponse):
        # A refusal echoes the epoch clamped into range, so only an accepted answer's must match.
        return response.pre_vote == request.pre_vote and (
            response.error is not ErrorCode.NONE
            or response.candidate_epoch == request.candidate_epoch
        )
    return True


WaiterKey = tuple[int, type[Request]]
"""(peer id, request type): the one call of that kind from that peer that may wait."""


class InboundCalls:
    """The inbound requests waiting for the core's answer, by :data:`WaiterKey`.

    One call per (peer, kind) waits at a time: a peer that asks again has given up on the
    earlier call, and the core answers only the latest (a re-sent Fetch replaces the one it
    parked).
    """

    __slots__ = ("_waiters",)

    def __init__(self) -> None:
        self._waiters: dict[WaiterKey, Waiter] = {}

    def wait(
        self, sender: int, request: Request, answer: Answer, timeout_s: float
    ) -> Callable[[], None]:
        """Files ``request`` to be answered by :meth:`answer`, or with ``TimeoutError`` after
        ``timeout_s``; the caller it supersedes is told so. Returns what withdraws it."""
        key = (sender, type(request))
        previous = self._waiters.pop(key, None)
        if previous is not None:
            previous.finish(NodeStoppedError("superseded by a newer request"))
        waiter = Waiter(request, answer)
        waiter.timer = asyncio.get_running_loop().call_later(
            timeout_s, self._expire, key, waiter, timeout_s
        )
        self._waiters[key] = waiter

        def withdraw() -> None:
            self._drop(key, waiter)
            waiter.answer = None
            if waiter.timer is not None:
                waiter.timer.cancel()

        return withdraw

    def answer(self, destination: int, response: Response) -> None:
        """Hands ``response`` to the call from ``destination`` it answers, if one waits."""
        key = (destination, RESPONSE_TO_REQUEST[type(response)])
        pending = self._waiters.get(key)
        if pending is None or not answers(pending.request, response):
            # The answer to a superseded request (a pre-vote the candidate's real vote
            # overtook before the answer went out): its caller was already told so.
            return
        del self._waiters[key]
        pending.finish(response)

    def fail_all(self, node_id: int) -> None:
        """Tells every waiting caller that node ``node_id`` stopped and will not answer."""
        waiters, self._waiters = self._waiters, {}
        for waiter in waiters.values():
            waiter.finish(NodeStoppedError(f"node {node_id} stopped"))

    def _drop(self, key: WaiterKey, waiter: Waiter) -> None:
        if self._waiters.get(key) is waiter:
            del self._waiters[key]

    def _expire(self, key: WaiterKey, waiter: Waiter, timeout_s: float) -> None:
        self._drop(key, waiter)
        waiter.timer = None
        waiter.finish(TimeoutError(f"no answer within {timeout_s:g} s"))
