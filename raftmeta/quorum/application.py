"""What a :class:`~raftmeta.quorum.node.RaftNode` tells the layer above it, and how that layer's
snapshot state is built off the event loop."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from raftmeta.raft.batch import Batch
from raftmeta.raft.ready import LeaderAndEpoch
from raftmeta.storage.snapshots import SnapshotReader

SnapshotWork = Callable[[], Iterable[bytes]]
"""Serializes a state captured earlier. It runs on a worker thread while the node goes on
committing, so it must read nothing that later commits change."""

SnapshotInstall = Callable[[], None]
"""The on-loop half of loading a snapshot: puts in place a state prepared on a worker thread."""


class Application(Protocol):
    """What the node tells the layer above it; ``RaftClient`` is the usual one."""

    def prepare_snapshot(self, reader: SnapshotReader) -> SnapshotInstall:
        """Builds the state ``reader`` holds, on a worker thread, and returns what installs it;
        the node calls that on the event loop before it hands over anything after the snapshot.

        While this runs the node's driver waits for it, so no other call of this protocol
        comes in meanwhile: the build may read state that only these calls change, but must
        change nothing (the loop goes on, and may read or write the application's state)."""
        ...

    def commit(self, batches: Sequence[Batch]) -> None: ...

    def leader_change(self, leader: LeaderAndEpoch) -> None: ...

    def state_changed(self) -> None:
        """The core took input: its role or epoch may have moved."""

    def snapshot_due(self) -> SnapshotWork | None:
        """When a snapshot is wanted: the work that yields the records rebuilding the state as
        of the last commit. Called on the event loop; the work runs on a worker thread."""


class NoApplication:
    """The application of a node nothing is attached to: it keeps no state."""

    def prepare_snapshot(self, reader: SnapshotReader) -> SnapshotInstall:
        return _nothing_to_install

    def commit(self, batches: Sequence[Batch]) -> None:
        pass

    def leader_change(self, leader: LeaderAndEpoch) -> None:
        pass

    def state_changed(self) -> None:
        pass

    def snapshot_due(self) -> SnapshotWork | None:
        return None


def _nothing_to_install() -> None:
    pass


def build_snapshot_state(prepare: Callable[[], SnapshotInstall]) -> SnapshotInstall:
    """Runs ``prepare`` (on a worker thread) with the cyclic collector paused, then moves what
    it built out of the collector's young generation in one step.

    Otherwise the new state (millions of objects for a large image) would sit in generation 0
    (the image's own load pauses the collector too), and the first allocation after would
    walk it all in one young collection: 0.23 s for 200k partitions, holding the interpreter,
    so the event loop as well, for all of it. ``gc.freeze`` moves every tracked object out of
    sight at once; a process that keeps its loaded state frozen (``raftmeta.quorum.collector``)
    keeps the new state frozen too (the replaced one is still freed by reference counts), and
    any other process has it moved back at once into the oldest generation, where it would
    have ended up after a few young collections (full collections walk it as before).

    The collector's switch is process-wide: while a build runs, no thread collects, as during
    any image load. Two builds at once leave it as they found it, at worst collecting the
    rest of the later one as usual.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return prepare()
    finally:
        keeps_state_frozen = gc.get_freeze_count() > 0
        gc.freeze()
        if not keeps_state_frozen:
            gc.unfreeze()
        if was_enabled:
            gc.enable()
