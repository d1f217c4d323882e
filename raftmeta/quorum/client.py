"""``RaftClient``: the embedding API over a ``RaftNode``.

An application implements ``Listener`` and calls ``append``; it never sees the core.

Batching is adaptive (group commit). With the leader's disk idle, an append is proposed at once,
in the same turn of the event loop (appends made in that turn share its batch): a lone write
pays no linger. Appends that arrive while the leader writes earlier batches gather into the next
batch, proposed as soon as that write is done, so a burst costs one fsync on the leader per
batch rather than one each, and the replication of one batch overlaps the write of the next.
``linger_ms`` (``controller.quorum.append.linger.ms``) stays an upper bound a user can set: a
gathering batch is proposed after that long even if the write has not finished.
``adaptive=False`` restores the fixed linger (every batch waits ``linger_ms``), for comparison.

Offsets are handed out when ``append`` is called, before the batch is proposed: only this
accumulator proposes while the node leads an epoch, so the next offset is known. That is what
lets ``append`` answer at once instead of after the linger.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from raftmeta.quorum.node import RaftNode, SnapshotInstall, SnapshotWork, monotonic_ms
from raftmeta.raft.batch import Batch
from raftmeta.raft.core import NotLeaderError
from raftmeta.raft.ready import LeaderAndEpoch
from raftmeta.raft.roles import Role
from raftmeta.raft.snapshot_policy import snapshot_id_for
from raftmeta.storage.snapshots import SnapshotReader

log = logging.getLogger(__name__)

SnapshotSource = Callable[[], SnapshotWork]
"""Captures the state machine as of the last batch handed to ``handle_commit`` and returns the
work that serializes it. The capture runs on the event loop and should be cheap (a copy); the
work runs on a worker thread while later commits go on, so it must only read the capture."""


class Listener(Protocol):
    """The state machine's side of the log. Called on the event loop, in log order."""

    def handle_commit(self, batches: Sequence[Batch]) -> None:
        """Committed batches, control batches included (``is_control``) so offsets line up."""

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        """Replace the whole state with the snapshot's; commits after it follow."""

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        """A new epoch or leader. This node hears that it leads only once it has caught up
        to the committed log, so a new leader never serves a stale state."""


@runtime_checkable
class PreparingListener(Listener, Protocol):
    """A listener that loads snapshots in two halves, so a large one never holds the loop.

    ``prepare_snapshot`` runs on a worker thread: it reads and decodes the snapshot and builds
    the new state, and returns the install, which runs on the event loop and only swaps that
    state in (and does what a swap entails, like resigning). A plain ``Listener`` has its
    ``handle_load_snapshot`` called on the loop instead, for the whole load.

    Why the worker may run alongside the loop: while it runs, the node's driver waits for it,
    so no ``handle_*`` call arrives until the install. The worker builds new objects and may
    read state that only ``handle_*`` calls change, but must write nothing the loop can see
    (the loop goes on meanwhile: an active controller keeps writing); the install does the
    writing.
    """

    def prepare_snapshot(self, reader: SnapshotReader) -> SnapshotInstall:
        """Build the state ``reader`` holds (worker thread); return what installs it (loop)."""
        ...


@dataclass(slots=True)
class _Waiting:
    last_offset: int
    epoch: int
    future: asyncio.Future[int]
    appended_at: float = field(default_factory=time.monotonic)


@dataclass(slots=True)
class _Accumulator:
    epoch: int
    base_offset: int
    records: list[bytes] = field(default_factory=list)
    size: int = 0
    waiting: list[_Waiting] = field(default_factory=list)
    flush_handle: asyncio.TimerHandle | asyncio.Handle | None = None

    @property
    def next_offset(self) -> int:
        return self.base_offset + len(self.records)


class RaftClient:
    def __init__(
        self,
        node: RaftNode,
        listener: Listener,
        *,
        snapshot_source: SnapshotSource | None = None,
        linger_ms: int | None = None,
        max_bytes_between_snapshots: int | None = None,
        max_snapshot_interval_ms: int | None = None,
        adaptive: bool = True,
    ) -> None:
        self.node = node
        self.adaptive = adaptive
        """Propose at once when nothing waits to commit; otherwise gather (group commit)."""
        self.listener = listener
        self.snapshot_source = snapshot_source
        settings = node.settings
        self.linger_ms = settings.append_linger_ms if linger_ms is None else linger_ms
        self.max_bytes_between_snapshots = (
            settings.max_bytes_between_snapshots
            if max_bytes_between_snapshots is None
            else max_bytes_between_snapshots
        )
        self.max_snapshot_interval_ms = (
            settings.max_snapshot_interval_ms
            if max_snapshot_interval_ms is None
            else max_snapshot_interval_ms
        )
        """0 turns the time trigger off."""
        self.max_batch_bytes = settings.raft.max_batch_bytes // 2
        """Flush early well below the core's limit: the encoded batch adds framing."""
        self.bytes_since_snapshot = 0
        self.committed_offset = 0
        """Every record below this offset has been handed to the listener."""
        self.last_snapshot_ms = monotonic_ms()
        """When the state was last snapshotted or loaded; the time trigger counts from here."""
        self.snapshot_offset = 0
        """The end offset of the state last snapshotted or loaded: a snapshot is only worth
        taking when something committed past it."""
        self._accumulator: _Accumulator | None = None
        self._in_flight: deque[_Waiting] = deque()
        self.commit_latency_observer: Callable[[float], None] | None = None
        """Called with the seconds from ``append`` to commit of each committed append."""
        node.attach(self)

    # ------------------------------------------------------------------------ reading

    def epoch(self) -> int:
        """The node's current epoch; raises ``NodeStoppedError`` when it is not running."""
        return self.node.core.epoch

    def log_end_offset(self) -> int:
        """The offset after the last record in the node's log, committed or not.

        Appends still lingering are not in the log yet: their offsets lie beyond this one.
        """
        return self.node.core.log.end_offset

    # ------------------------------------------------------------------------ appending

    def append(self, records: Sequence[bytes]) -> tuple[int, asyncio.Future[int]]:
        """Queue ``records`` for one batch; returns the offset of the last record and a future
        that resolves to it once committed.

        Raises ``NotLeaderError`` at once on a node that does not lead. The future fails with
        ``NotLeaderError`` if this node loses its epoch before the records commit; they may
        still commit under the next leader, so the outcome is then unknown, as in Kafka.
        """
        if not records:
            raise ValueError("append needs at least one record")
        core = self.node.core
        if core.role is not Role.LEADER:
            raise NotLeaderError(core.leader_id, core.epoch)
        accumulator = self._accumulator
        if accumulator is None:
            accumulator = _Accumulator(core.epoch, core.log.end_offset)
            self._accumulator = accumulator
            loop = asyncio.get_running_loop()
            if self.linger_ms > 0 and not (self.adaptive and not self._writing()):
                # Gather: the batch goes when the write in progress is done, or after the linger.
                accumulator.flush_handle = loop.call_later(self.linger_ms / 1000, self.flush)
            else:
                accumulator.flush_handle = loop.call_soon(self.flush)
        accumulator.records.extend(records)
        accumulator.size += sum(len(record) for record in records)
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        last_offset = accumulator.next_offset - 1
        accumulator.waiting.append(_Waiting(last_offset, accumulator.epoch, future))
        if accumulator.size >= self.max_batch_bytes:
            self.flush()
        return last_offset, future

    def flush(self) -> None:
        """Propose what has gathered as one batch now, without waiting out the linger."""
        accumulator, self._accumulator = self._accumulator, None
        if accumulator is None:
            return
        if accumulator.flush_handle is not None:
            accumulator.flush_handle.cancel()
        node = self.node
        try:
            core = node.core
            if core.role is not Role.LEADER or core.epoch != accumulator.epoch:
                raise NotLeaderError(core.leader_id, core.epoch)
            result = core.propose(
                accumulator.records, monotonic_ms(), timestamp_ms=time.time_ns() // 1_000_000
            )
        except (NotLeaderError, ConnectionError, ValueError) as error:
            for waiting in accumulator.waiting:
                if not waiting.future.done():
                    waiting.future.set_exception(error)
            return
        if result.base_offset != accumulator.base_offset:
            raise AssertionError(
                f"batch landed at {result.base_offset}, not at the promised "
                f"{accumulator.base_offset}: something else proposed to the core"
            )
        self._in_flight.extend(accumulator.waiting)
        node.wake()

    def _fail_all(self, error: Exception) -> None:
        accumulator, self._accumulator = self._accumulator, None
        waiting = list(self._in_flight)
        self._in_flight.clear()
        if accumulator is not None:
            if accumulator.flush_handle is not None:
                accumulator.flush_handle.cancel()
            waiting.extend(accumulator.waiting)
        for item in waiting:
            if not item.future.done():
                item.future.set_exception(error)

    # ------------------------------------------------------------------- node callbacks

    def prepare_snapshot(self, reader: SnapshotReader) -> SnapshotInstall:
        """Runs on a worker thread (see ``Application.prepare_snapshot``): only the listener's
        preparation runs here; this client's own bookkeeping moves in the install."""
        listener = self.listener
        if isinstance(listener, PreparingListener):
            install_state = listener.prepare_snapshot(reader)
        else:

            def install_state() -> None:
                listener.handle_load_snapshot(reader)

        def install() -> None:
            install_state()
            self.bytes_since_snapshot = 0
            self.committed_offset = reader.snapshot_id.end_offset
            self.snapshot_offset = self.committed_offset
            self.last_snapshot_ms = monotonic_ms()

        return install

    def commit(self, batches: Sequence[Batch]) -> None:
        self.listener.handle_commit(batches)
        in_flight = self._in_flight
        for batch in batches:
            self.bytes_since_snapshot += len(batch.payload)
            while in_flight and in_flight[0].last_offset < batch.next_offset:
                waiting = in_flight.popleft()
                if waiting.future.done():
                    continue
                if waiting.epoch == batch.epoch:
                    waiting.future.set_result(waiting.last_offset)
                    if self.commit_latency_observer is not None:
                        self.commit_latency_observer(time.monotonic() - waiting.appended_at)
                else:
                    waiting.future.set_exception(NotLeaderError(None, batch.epoch))
        self.committed_offset = batches[-1].next_offset

    def leader_change(self, leader: LeaderAndEpoch) -> None:
        self.listener.handle_leader_change(leader.leader_id, leader.epoch)

    def _writing(self) -> bool:
        """Whether the leader's log holds batches its disk has not finished writing."""
        node = self.node
        return node.running and node.core.log.end_offset > node.written_offset

    def state_changed(self) -> None:
        """Fail every pending append as soon as the epoch they were promised in is lost;
        propose what gathered while the previous write was in progress once it is done."""
        if self.adaptive and self._accumulator is not None and not self._writing():
            # Group commit: the batch that gathered during the write goes now, without
            # waiting out the rest of the linger.
            self.flush()
        pending_epoch: int | None = None
        if self._in_flight:
            pending_epoch = self._in_flight[0].epoch
        elif self._accumulator is not None:
            pending_epoch = self._accumulator.epoch
        if pending_epoch is None:
            return
        node = self.node
        if not node.running:
            self._fail_all(NotLeaderError(None, pending_epoch))
            return
        core = node.core
        if core.role is not Role.LEADER or core.epoch != pending_epoch:
            self._fail_all(NotLeaderError(core.leader_id, core.epoch))

    def snapshot_due(self) -> SnapshotWork | None:
        """Records for a snapshot when enough bytes committed, or enough time passed with
        something committed, since the last one.

        The node skips a snapshot it cannot take (nothing past the log start, or the applied
        state not yet below the high watermark); those checks are made here first so that a
        skipped snapshot does not reset the triggers and postpone the next one by a whole
        interval.
        """
        if self.snapshot_source is None:
            return None
        end = self.committed_offset
        if end <= self.snapshot_offset:
            return None
        now = monotonic_ms()
        by_bytes = self.bytes_since_snapshot >= self.max_bytes_between_snapshots
        interval = self.max_snapshot_interval_ms
        by_time = interval > 0 and now - self.last_snapshot_ms >= interval
        if not (by_bytes or by_time):
            return None
        node = self.node
        if not node.running:
            return None
        core = node.core
        if snapshot_id_for(core.log, core.high_watermark, end) is None:
            return None
        self.bytes_since_snapshot = 0
        self.snapshot_offset = end
        self.last_snapshot_ms = now
        return self.snapshot_source()
