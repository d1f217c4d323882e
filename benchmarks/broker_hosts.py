"""What the benchmarks' broker host processes share: many embedded brokers in one process."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from raftmeta.broker.replica import MetadataReplica
from raftmeta.raft.batch import Batch
from raftmeta.storage.snapshots import SnapshotReader


class Borrowed:
    """A host's shared channel as one broker sees it: the broker's stop leaves it open.

    Every broker still sends its own heartbeats, but over one HTTP/2 connection per controller
    for the whole host, with one keepalive and one leader check for all: the cheaper way to run
    hundreds of brokers in one process (``broker_scale_bench.py --channels`` compares both).
    """

    def __init__(self, channel: Any) -> None:
        self._channel = channel

    async def call(self, method: str, request: Any, *, timeout_ms: int | None = None) -> Any:
        return await self._channel.call(method, request, timeout_ms=timeout_ms)

    async def close(self) -> None:
        return None


class ReplicaFanOut:
    """One observer's Raft listener handing the committed log to many brokers' replicas.

    Each replica replays every batch into its own image, as each broker's own observer would
    have it do; only the fetching is shared.
    """

    def __init__(self, replicas: Sequence[MetadataReplica]) -> None:
        self.replicas = tuple(replicas)

    def handle_commit(self, batches: Sequence[Batch]) -> None:
        for replica in self.replicas:
            replica.handle_commit(batches)

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        self.prepare_snapshot(reader)()

    def prepare_snapshot(self, reader: SnapshotReader) -> Callable[[], None]:
        """The first replica loads the snapshot as a broker does; the others start from
        copies of its image (copy on write: they share each topic until they change it), so
        hundreds of images load in the time of one and fit in memory. Every commit after it
        is replayed into each image on its own."""
        first, *others = self.replicas
        install_first = first.prepare_snapshot(reader)
        end_offset = reader.snapshot_id.end_offset

        def install() -> None:
            install_first()
            for replica in others:
                if end_offset > replica.committed_end:
                    replica.image = first.image.copy()
                    replica.committed_end = end_offset
                    replica.content_version += 1

        return install

    def snapshot_work(self) -> Callable[[], list[bytes]]:
        """The observer's own snapshots: every image holds the same log, so the first's."""
        return self.replicas[0].image.snapshot_work()

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        for replica in self.replicas:
            replica.handle_leader_change(leader_id, epoch)
