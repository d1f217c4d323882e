"""``raftmeta serve`` with a state machine that snapshots, for the snapshot catch-up test.

``serve`` keeps no state machine, so its client has no snapshot source and never snapshots.
This entry point runs the same command with one: the state is every committed record in
order, which is as faithful as a snapshot can be, so a node that catches up through
FetchSnapshot must end with exactly the records the others committed.

Run as ``python -m tests.process.snapshotting_serve serve --config ...``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from raftmeta.cli import main
from raftmeta.raft.batch import Batch
from raftmeta.server import serve as serve_module
from raftmeta.server.node import RaftNode
from raftmeta.storage.snapshots import SnapshotReader


class _RecordingAnnouncer(serve_module._Announcer):
    def __init__(self, node_id: int, changes: serve_module._Changes) -> None:
        super().__init__(node_id, changes)
        self.records: list[bytes] = []

    def handle_commit(self, batches: Sequence[Batch]) -> None:
        self.records.extend(r for b in batches if not b.is_control for r in b.records())

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        self.records = list(reader.records())

    def snapshot(self) -> Iterable[bytes]:
        return list(self.records)


class _SnapshottingClient(serve_module._NotifyingClient):
    def __init__(
        self, node: RaftNode, listener: serve_module._Announcer, changes: serve_module._Changes
    ) -> None:
        super().__init__(node, listener, changes)
        if isinstance(listener, _RecordingAnnouncer):
            self.snapshot_source = listener.snapshot


if __name__ == "__main__":
    serve_module._Announcer = _RecordingAnnouncer  # type: ignore[misc]
    serve_module._NotifyingClient = _SnapshottingClient  # type: ignore[misc]
    raise SystemExit(main())
