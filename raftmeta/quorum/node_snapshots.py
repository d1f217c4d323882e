"""The node's snapshots: taken on a worker thread while the node goes on, loaded off the event
loop, and read chunk by chunk for a follower's FetchSnapshot."""

from __future__ import annotations

import asyncio
import logging

from raftmeta.errors import ErrorCode
from raftmeta.quorum.application import Application, SnapshotWork, build_snapshot_state
from raftmeta.quorum.disk import NodeDisk
from raftmeta.quorum.node_clock import Wakeup
from raftmeta.raft.batch import SnapshotId
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC
from raftmeta.raft.core import RaftCore
from raftmeta.raft.membership import Membership
from raftmeta.raft.messages import FetchSnapshotResponse
from raftmeta.raft.snapshot_policy import snapshot_id_for
from raftmeta.storage.errors import SnapshotError

log = logging.getLogger("raftmeta.quorum.node")
"""The node's own log: snapshots taken and failed are reported under the node's name."""


class SnapshotTaking:
    """The snapshot being written on a worker thread, and the last one written, which the
    driver hands to the core between Readys.

    Serializing a large image takes seconds (about 3 s at a million partitions). Done on the
    driver, it would stop the node answering fetches for that long and a leader would lose its
    epoch; so the application captures its state on the loop and the records are made and
    written on a worker thread while the node goes on.
    """

    __slots__ = ("_node_id", "_task", "_wakeup", "_written")

    def __init__(self, node_id: int, wakeup: Wakeup) -> None:
        self._node_id = node_id
        self._wakeup = wakeup
        """Set once a snapshot is written, so the driver hands it to the core."""
        self._task: asyncio.Task[None] | None = None
        self._written: tuple[SnapshotId, int] | None = None
        """A snapshot the worker finished, for the driver to hand to the core between Readys."""

    def take_written(self) -> tuple[SnapshotId, int] | None:
        """The snapshot written since the last call and its size in bytes, if any."""
        written, self._written = self._written, None
        return written

    def start_if_due(
        self, core: RaftCore, disk: NodeDisk, app: Application, applied_offset: int
    ) -> None:
        """Start a snapshot when the application wants one and none is being written."""
        if self._task is not None:
            return
        work = app.snapshot_due()
        if work is None:
            return
        snapshot_id = snapshot_id_for(core.log, core.high_watermark, applied_offset)
        if snapshot_id is None:
            return
        if disk.directory.snapshot_path(snapshot_id).exists():
            return
        membership = core.membership_at(snapshot_id.end_offset)
        kept = membership if membership.kraft_version >= KRAFT_VERSION_DYNAMIC else None
        self._task = asyncio.create_task(self._write(disk, snapshot_id, work, kept))

    async def finish(self) -> None:
        """Wait for the snapshot being written, if any: the worker thread cannot be
        interrupted, and the directory must outlive its writes."""
        if self._task is not None:
            await asyncio.wait({self._task})
            self._task = None

    async def _write(
        self,
        disk: NodeDisk,
        snapshot_id: SnapshotId,
        work: SnapshotWork,
        membership: Membership | None = None,
    ) -> None:
        try:
            size = await asyncio.to_thread(
                lambda: disk.write_snapshot(snapshot_id, work(), membership)
            )
        except Exception as error:
            # A snapshot is an optimization: the log still holds everything. Say so loudly
            # and let the next trigger try again.
            log.error("node %d: snapshot %s failed: %s", self._node_id, snapshot_id, error)
        else:
            log.info("node %d: took snapshot %s", self._node_id, snapshot_id.file_stem())
            self._written = (snapshot_id, size)
            self._wakeup.set()
        finally:
            self._task = None


async def load_snapshot(app: Application, disk: NodeDisk, snapshot_id: SnapshotId) -> None:
    """Read, decode and build the snapshot's state on a worker thread, then install it here.

    A large snapshot (hundreds of thousands of records) takes seconds to decode and build;
    on the loop that held every fetch and vote answer for as long, and followers timed out
    on their leader. The build is pure Python, so the worker and the loop share the
    interpreter, but the loop takes it back every switch interval (5 ms) and keeps
    answering. The driver waits here like it waits for a write: the core's contract (the
    load completes before ``advance``) holds, and inputs that arrive meanwhile queue up
    for the core as they do during any other wait.
    """
    install = await asyncio.to_thread(
        build_snapshot_state,
        lambda: app.prepare_snapshot(disk.directory.read_snapshot(snapshot_id)),
    )
    install()


async def fill_snapshot_chunk(
    disk: NodeDisk | None, response: FetchSnapshotResponse, node_id: int
) -> FetchSnapshotResponse:
    """``response`` with the chunk it names read from ``disk`` (the core leaves it unread, so
    the read happens off the driver), or SNAPSHOT_NOT_FOUND when it cannot be read."""
    try:
        if disk is None:
            raise SnapshotError("the node stopped")
        data = await asyncio.to_thread(
            disk.read_snapshot_chunk,
            response.snapshot_id,
            response.position,
            response.chunk_length,
        )
    except (OSError, SnapshotError) as error:
        log.warning("node %d: cannot serve snapshot chunk: %s", node_id, error)
        return FetchSnapshotResponse(
            ErrorCode.SNAPSHOT_NOT_FOUND,
            response.epoch,
            response.leader_id,
            response.snapshot_id,
            response.position,
        )
    return FetchSnapshotResponse(
        response.error,
        response.epoch,
        response.leader_id,
        response.snapshot_id,
        response.position,
        response.size,
        len(data),
        data,
    )
