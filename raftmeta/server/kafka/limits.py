"""What the KAFKA listener admits: connections (in all, per client address, and within the
process's descriptor limit) and bytes of requests held at once.

Kafka's keys and defaults: ``max.connections`` and ``max.connections.per.ip`` (no limit),
``connections.max.idle.ms`` (10 minutes), ``queued.max.request.bytes`` (-1: no limit) and, on a
SASL listener before the login, ``sasl.server.max.receive.size`` (512 KiB). A request begun
must be finished within ``raftmeta.kafka.partial.request.timeout.ms``, so a client trickling
bytes cannot hold a connection (and its buffered frame) for ever.

The node's Raft and gRPC traffic shares the process's descriptors with the listener: whatever
the keys say, a connection is refused while the process is within ``DESCRIPTOR_RESERVE`` of
``RLIMIT_NOFILE``, so a flood of Kafka connections cannot starve the quorum of sockets.
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import time
from collections import Counter
from dataclasses import dataclass

log = logging.getLogger(__name__)

NO_LIMIT = 2**31 - 1
"""Kafka's default for ``max.connections`` and ``max.connections.per.ip``."""
DEFAULT_IDLE_MS = 600_000
DEFAULT_PARTIAL_REQUEST_MS = 30_000
DEFAULT_SASL_MAX_RECEIVE = 524_288
DESCRIPTOR_RESERVE_MIN = 64
"""Descriptors always kept for Raft, gRPC and the log: at least this many, or an eighth of
``RLIMIT_NOFILE`` when that is more."""
DESCRIPTOR_RECOUNT_S = 0.1
"""How long a count of the process's open descriptors is trusted (accepts since are added)."""
REFUSAL_LOG_INTERVAL_S = 10.0
"""Refused connections are logged once per this interval, with how many were refused."""


@dataclass(frozen=True, slots=True)
class ListenerLimits:
    """The KAFKA listener's limits, as the keys set them."""

    max_connections: int = NO_LIMIT
    max_connections_per_ip: int = NO_LIMIT
    idle_ms: int = DEFAULT_IDLE_MS
    partial_request_ms: int = DEFAULT_PARTIAL_REQUEST_MS
    queued_max_request_bytes: int = -1
    sasl_max_receive_bytes: int = DEFAULT_SASL_MAX_RECEIVE


def descriptor_limit() -> int:
    """The process's soft ``RLIMIT_NOFILE`` (a large number when unlimited)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return NO_LIMIT if soft == resource.RLIM_INFINITY else int(soft)


def open_descriptors() -> int | None:
    """How many descriptors the process holds, or ``None`` where it cannot be counted."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return None


class Admission:
    """Counts the listener's connections and decides whether one more may stay open."""

    def __init__(self, limits: ListenerLimits, node_id: int) -> None:
        self.limits = limits
        self.node_id = node_id
        self.total = 0
        self.by_address: Counter[str] = Counter()
        self._counted_at = -DESCRIPTOR_RECOUNT_S
        self._counted = 0
        self._admitted_since_count = 0
        self._refused = 0
        self._refusal_logged_at = -REFUSAL_LOG_INTERVAL_S

    def _descriptors_short(self) -> bool:
        limit = descriptor_limit()
        reserve = max(DESCRIPTOR_RESERVE_MIN, limit // 8)
        now = time.monotonic()
        if now - self._counted_at >= DESCRIPTOR_RECOUNT_S:
            counted = open_descriptors()
            self._counted = self.total if counted is None else counted
            self._counted_at = now
            self._admitted_since_count = 0
        return self._counted + self._admitted_since_count >= limit - reserve

    def admit(self, address: str) -> str | None:
        """Count a new connection from ``address``; or why it must be closed (not counted)."""
        reason = None
        if self.total >= self.limits.max_connections:
            reason = f"max.connections ({self.limits.max_connections}) reached"
        elif self.by_address[address] >= self.limits.max_connections_per_ip:
            reason = f"max.connections.per.ip ({self.limits.max_connections_per_ip}) reached"
        elif self._descriptors_short():
            reason = "the process is near its open-file limit; descriptors are kept for Raft"
        if reason is not None:
            self._note_refusal(address, reason)
            return reason
        self.total += 1
        self.by_address[address] += 1
        self._admitted_since_count += 1
        return None

    def release(self, address: str) -> None:
        self.total -= 1
        self.by_address[address] -= 1
        if self.by_address[address] <= 0:
            del self.by_address[address]

    def _note_refusal(self, address: str, reason: str) -> None:
        self._refused += 1
        now = time.monotonic()
        if now - self._refusal_logged_at >= REFUSAL_LOG_INTERVAL_S:
            log.warning(
                "node %d: Kafka listener refused %d connection(s) (the last from %s): %s",
                self.node_id,
                self._refused,
                address,
                reason,
            )
            self._refused = 0
            self._refusal_logged_at = now


class RequestBytes:
    """``queued.max.request.bytes``: request bytes held across the listener's connections.

    A frame's size is taken before its body is read and given back once it is answered. While
    the bytes held reach the limit, readers wait before reading another body (their sockets'
    buffers fill and the clients stop sending). As Kafka's memory pool does, one frame may
    take the total past the limit, so a frame larger than the limit is still served.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self._changed = asyncio.Condition()

    async def take(self, size: int) -> None:
        if self.limit < 0:
            return
        async with self._changed:
            await self._changed.wait_for(lambda: self.held < self.limit)
            self.held += size

    async def give_back(self, size: int) -> None:
        if self.limit < 0 or size == 0:
            return
        async with self._changed:
            self.held -= size
            self._changed.notify_all()
