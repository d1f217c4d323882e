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

    While the host starts, only the first replica follows the log: the snapshot's load and
    whatever the cluster's start-up writes (a broker fenced and unfenced again rewrites the
    partitions it was in) are replayed once. :meth:`spread` then gives every other replica a
    copy of that image (copy on write: they share each topic until they change it), and from
    then on each replica replays every batch into its own image, as each broker's own observer
    would have it do; only the fetching is shared.
    """

    def __init__(self, replicas: Sequence[MetadataReplica]) -> None:
        self.replicas = tuple(replicas)
        self.following: tuple[MetadataReplica, ...] = self.replicas[:1]
        """The replicas each batch is handed to: the first until :meth:`spread`, then all."""

    @property
    def spread_out(self) -> bool:
        return len(self.following) == len(self.replicas)

    def spread(self) -> None:
        """Every replica from now on holds an image of its own and replays every batch."""
        first = self.replicas[0]
        for replica in self.replicas[1:]:
            replica.image = first.image.copy()
            replica.committed_end = first.committed_end
            replica.leader = first.leader
            replica.content_version += 1
        self.following = self.replicas

    def metadata_offset(self, replica: MetadataReplica) -> int:
        """What the broker of ``replica`` has replayed: the first replica's offset until the
        spread (the image it will copy)."""
        return replica.metadata_offset if self.spread_out else self.replicas[0].metadata_offset

    def handle_commit(self, batches: Sequence[Batch]) -> None:
        for replica in self.following:
            replica.handle_commit(batches)

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        self.prepare_snapshot(reader)()

    def prepare_snapshot(self, reader: SnapshotReader) -> Callable[[], None]:
        installs = [replica.prepare_snapshot(reader) for replica in self.following]

        def install() -> None:
            for each in installs:
                each()

        return install

    def snapshot_work(self) -> Callable[[], list[bytes]]:
        """The observer's own snapshots: every image holds the same log, so the first's."""
        return self.replicas[0].image.snapshot_work()

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        for replica in self.following:
            replica.handle_leader_change(leader_id, epoch)
