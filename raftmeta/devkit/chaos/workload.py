"""The campaign's clients: a few workers, each creating topics one after another through the
``AsyncAdminClient``, every topic name used by one operation only.

Unique names are what make the history checkable: a TopicRecord in the log names the one
operation that wrote it, so the checker can tell a lost write, a duplicated one and an echo
(a write that happened although its client was told it failed) apart.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from raftmeta.admin import AsyncAdminClient
from raftmeta.admin.types import KafkaException, NewTopic
from raftmeta.devkit.chaos.history import Operation, Outcome
from raftmeta.errors import ErrorCode

INDEFINITE = frozenset(
    {
        ErrorCode.NOT_CONTROLLER,
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.UNKNOWN_SERVER_ERROR,
        ErrorCode.BROKER_NOT_AVAILABLE,
    }
)
"""Errors that do not say whether the write happened: the controller lost leadership or the
deadline passed while the records may already have been appended."""

REQUEST_TIMEOUT_MS = 8_000
"""Each call's deadline: long enough to ride out a failover, short enough that a stuck call
shows up as an unknown outcome instead of stalling a worker for the whole campaign."""


def classify(error: BaseException) -> tuple[Outcome, str]:
    """What an exception from a create says about the write."""
    if isinstance(error, KafkaException):
        described = f"{error.code.name}: {error}"
        if error.code == ErrorCode.TOPIC_ALREADY_EXISTS:
            return Outcome.ECHO, described
        if error.code in INDEFINITE:
            return Outcome.UNKNOWN, described
        return Outcome.FAILED, described
    return Outcome.UNKNOWN, f"{type(error).__name__}: {error}"


class Workload:
    """``workers`` clients creating topics until :meth:`stop`; every operation is recorded."""

    def __init__(
        self, bootstrap_servers: str, workers: int, clock: Callable[[], float], prefix: str
    ) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.workers = workers
        self.clock = clock
        self.prefix = prefix
        self.operations: list[Operation] = []
        self._stopping = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def ready(self, deadline_s: float) -> None:
        """Wait until a topic could be placed (some broker registered and unfenced), so the
        history does not open with refusals that only say the brokers were still starting."""
        async with AsyncAdminClient({"bootstrap.servers": self.bootstrap_servers}) as admin:
            give_up = self.clock() + deadline_s
            while True:
                probe = f"{self.prefix}-probe"
                futures = admin.create_topics(
                    [NewTopic(probe, num_partitions=1, replication_factor=1)], validate_only=True
                )
                try:
                    await futures[probe]
                    return
                except KafkaException:
                    if self.clock() > give_up:
                        raise
                await asyncio.sleep(0.05)

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._worker(index)) for index in range(self.workers)]

    async def stop(self) -> None:
        """Let every worker finish the call it is in (each has a deadline), then return."""
        self._stopping.set()
        await asyncio.gather(*self._tasks)

    async def _worker(self, index: int) -> None:
        admin = AsyncAdminClient(
            {
                "bootstrap.servers": self.bootstrap_servers,
                "request.timeout.ms": REQUEST_TIMEOUT_MS,
            }
        )
        number = 0
        try:
            while not self._stopping.is_set():
                topic = f"{self.prefix}-w{index}-{number}"
                number += 1
                await self._create(admin, index, topic)
        finally:
            await admin.close()

    async def _create(self, admin: AsyncAdminClient, worker: int, topic: str) -> None:
        invoked = self.clock()
        outcome, error = Outcome.OK, ""
        try:
            futures = admin.create_topics(
                [NewTopic(topic, num_partitions=1, replication_factor=1)],
                request_timeout=REQUEST_TIMEOUT_MS / 1000,
            )
            async with asyncio.timeout(REQUEST_TIMEOUT_MS / 1000 + 2):
                await futures[topic]
        except Exception as failure:  # every failure is an outcome to record, not a crash
            outcome, error = classify(failure)
            # A definite refusal repeats at once while its cause lasts (e.g. no broker is
            # unfenced): pace the retries so the history does not fill with them.
            if outcome is not Outcome.UNKNOWN:
                await asyncio.sleep(0.05)
        self.operations.append(Operation(topic, worker, invoked, self.clock(), outcome, error))


def monotonic_since(began: float) -> Callable[[], float]:
    return lambda: time.monotonic() - began
