"""A quorum of real ``RaftNode``s on loopback gRPC (and, with ``transport="stream"``, the
Raft stream) and real directories, in one event loop.

Tests wait on conditions the listeners signal, each with a deadline, never on sleeps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from raftmeta.auth import AccessControl
from raftmeta.quorum import NodeSettings, RaftClient, RaftNode, RaftServer, serve_raft
from raftmeta.quorum.identity import IdentityRule
from raftmeta.quorum.settings import GRPC, STREAM
from raftmeta.quorum.transport_choice import node_connect, stream_server_ssl
from raftmeta.raft.batch import Batch
from raftmeta.raft.config import RaftConfig
from raftmeta.raft.roles import Role
from raftmeta.security.credentials import server_credentials
from raftmeta.security.tls import TlsSettings
from raftmeta.storage import MetadataDir, SnapshotReader
from raftmeta.storage.log import DEFAULT_SEGMENT_BYTES
from tests.support.waiting import wait_until_async

CLUSTER_ID = "raftmeta-server-test"
DEADLINE_S = 10.0


class Changes:
    """Wakes every waiter whenever any listener saw something."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        event, self._event = self._event, asyncio.Event()
        event.set()

    def next_change(self) -> asyncio.Event:
        """An event set at the next notification (for ``wait_until_async(changed=...)``)."""
        return self._event


@dataclass(eq=False)
class Recorder:
    """A listener whose state machine is the list of committed records."""

    node_id: int
    changes: Changes
    batches: list[Batch] = field(default_factory=list)
    values: list[bytes] = field(default_factory=list)
    leader: tuple[int | None, int] = (None, -1)
    snapshot_end: int = 0
    snapshots_loaded: int = 0

    @property
    def committed_offset(self) -> int:
        return self.batches[-1].next_offset if self.batches else self.snapshot_end

    def handle_commit(self, batches: Sequence[Batch]) -> None:
        self.batches.extend(batches)
        self.values.extend(r for b in batches if not b.is_control for r in b.records())
        self.changes.notify()

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        self.values = list(reader.records())
        self.batches = []
        self.snapshot_end = reader.snapshot_id.end_offset
        self.snapshots_loaded += 1
        self.changes.notify()

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        self.leader = (leader_id, epoch)
        self.changes.notify()

    def snapshot(self) -> Callable[[], Iterable[bytes]]:
        values = list(self.values)
        return lambda: values


@dataclass(eq=False)
class Member:
    node: RaftNode
    client: RaftClient
    recorder: Recorder
    server: RaftServer | None = None
    tls: TlsSettings | None = None
    """With TLS, the node's listeners require client certificates under the node rule."""
    access: AccessControl | None = None
    """Who may change the voters (every caller when None)."""

    async def serve(self) -> int:
        """Open the node's directory and serve it on its configured port; the port bound."""
        tls = self.tls
        if tls is None:
            self.server = await serve_raft(self.node, access=self.access)
        else:
            self.server = await serve_raft(
                self.node,
                credentials=server_credentials(tls),
                identity=IdentityRule.for_listener(tls),
                stream_ssl=stream_server_ssl(tls),
                access=self.access,
            )
        assert self.server.port is not None
        return self.server.port

    async def stop(self, *, graceful: bool) -> None:
        await self.node.stop(graceful=graceful)
        if self.server is not None:
            await self.server.stop()


class NodeCluster:
    """Voters (and observers) as ``RaftNode``s with a recording listener each."""

    scenario_timeout_s = 45.0

    def __init__(
        self,
        root: Path,
        size: int = 3,
        *,
        raft: RaftConfig | None = None,
        max_bytes_between_snapshots: int = 20 * 1024 * 1024,
        max_snapshot_interval_ms: int = 0,
        observers: int = 0,
        segment_bytes: int = DEFAULT_SEGMENT_BYTES,
        transport: str = GRPC,
        without_stream: Iterable[int] = (),
        tls: Callable[[int], TlsSettings] | None = None,
    ) -> None:
        """``transport`` is how nodes call each other; with ``stream`` every node serves a
        Raft stream listener on a port the OS chooses, except those in ``without_stream``
        (which peers then reach over gRPC). ``tls`` gives each node's TLS settings (its
        certificate, the cluster CA, client certificates required)."""
        self.tls = tls
        self.root = root
        self.transport = transport
        self.without_stream = frozenset(without_stream)
        self.ids = list(range(1, size + 1))
        """The voters."""
        self.observer_ids = list(range(size + 1, size + observers + 1))
        """Nodes that replicate the log but are not in the voter set."""
        self.raft = raft or RaftConfig()
        self.max_bytes_between_snapshots = max_bytes_between_snapshots
        self.max_snapshot_interval_ms = max_snapshot_interval_ms
        self.segment_bytes = segment_bytes
        self.changes = Changes()
        self.ports: dict[int, int] = {}
        self.members: dict[int, Member] = {}

    def data_dir(self, node_id: int) -> Path:
        return self.root / f"node-{node_id}"

    @property
    def addresses(self) -> dict[int, str]:
        """The voters' addresses: what every node, observers too, is started with."""
        return {node_id: f"127.0.0.1:{self.ports[node_id]}" for node_id in self.ids}

    def _member(self, node_id: int) -> Member:
        settings = NodeSettings(
            node_id=node_id,
            voters={},
            data_dir=self.data_dir(node_id),
            cluster_id=CLUSTER_ID,
            listen_port=self.ports.get(node_id, 0),
            raft=self.raft,
            max_bytes_between_snapshots=self.max_bytes_between_snapshots,
            max_snapshot_interval_ms=self.max_snapshot_interval_ms,
            segment_bytes=self.segment_bytes,
            transport=self.transport,
            stream_listen=(
                ("127.0.0.1", 0)
                if self.transport == STREAM and node_id not in self.without_stream
                else None
            ),
        )
        tls = None if self.tls is None else self.tls(node_id)
        node = RaftNode(settings, node_connect(self.transport, tls))
        recorder = Recorder(node_id, self.changes)
        client = RaftClient(node, recorder, snapshot_source=recorder.snapshot)
        return Member(node, client, recorder, tls=tls)

    async def serve_members(self) -> None:
        """Format every node's directory and serve it, so every port is known; no node runs
        Raft yet (a fixture may write bootstrap files first, knowing the ports)."""
        members = {}
        for node_id in [*self.ids, *self.observer_ids]:
            MetadataDir.format(self.data_dir(node_id), node_id, CLUSTER_ID)
            member = self._member(node_id)
            self.ports[node_id] = await member.serve()
            members[node_id] = member
        self.members = members

    async def start(self) -> None:
        await self.serve_members()
        for member in self.members.values():
            await member.node.start(self.addresses)

    async def restart(self, node_id: int) -> Member:
        member = self._member(node_id)
        self.members[node_id] = member
        await member.serve()
        await member.node.start(self.addresses)
        return member

    async def stop(self, node_id: int, *, graceful: bool = True) -> None:
        member = self.members.pop(node_id)
        await member.stop(graceful=graceful)

    async def close(self) -> None:
        for node_id in list(self.members):
            await self.stop(node_id, graceful=False)

    def leader(self) -> Member | None:
        """The member that leads and has announced it, i.e. caught up in its epoch."""
        for member in self.members.values():
            node = member.node
            if not node.running or node.core.role is not Role.LEADER:
                continue
            if member.recorder.leader == (node.node_id, node.core.epoch):
                return member
        return None

    async def wait_for_leader(self, *, newer_than: int = -1) -> Member:
        def found() -> bool:
            leader = self.leader()
            return leader is not None and leader.node.core.epoch > newer_than

        await self.wait_until(found, f"a leader in an epoch above {newer_than}")
        leader = self.leader()
        assert leader is not None
        return leader

    async def wait_for_commit(self, offset: int, members: Iterable[Member] | None = None) -> None:
        chosen = list(self.members.values() if members is None else members)
        await self.wait_until(
            lambda: all(m.recorder.committed_offset >= offset for m in chosen),
            f"nodes {sorted(m.node.node_id for m in chosen)} to commit offset {offset}",
        )

    async def wait_until(
        self, predicate: Callable[[], bool], what: str, timeout_s: float = DEADLINE_S
    ) -> None:
        """Wait for a condition a listener announces, checking it at each notification."""
        await wait_until_async(predicate, what, timeout_s, changed=self.changes.next_change)

    async def append(self, records: Sequence[bytes]) -> int:
        """Append through the current leader and wait for the commit."""
        leader = await self.wait_for_leader()
        _, future = leader.client.append(records)
        return await asyncio.wait_for(future, DEADLINE_S)
