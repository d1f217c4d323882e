"""``raftmeta serve``: one node as an operating-system process, from its ``.properties`` file.

The process owns a ``RaftNode`` until SIGTERM or SIGINT, then leaves the quorum gracefully: a
leader resigns with EndQuorumEpoch so the others elect a successor in a few round trips instead
of waiting out the fetch timeout, and the directory is flushed and unlocked before exit.

Everything a user can get wrong at start-up (an unformatted or foreign directory, a port that
is taken) ends as a ``ServeError`` with one line for the terminal, never a traceback.

The optional load generator is a testing aid: process-level failover tests need appends that
come from inside the leader (only the leader appends), and a durable record of which appends
were acknowledged, so they can check after ``kill -9`` that no acknowledged append was lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import logging
import os
import signal
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from raftmeta.config import RaftmetaConfig
from raftmeta.raft.batch import Batch
from raftmeta.raft.core import NotLeaderError
from raftmeta.raft.roles import Role
from raftmeta.records import ConfigRecord, ConfigResourceType, encode_record
from raftmeta.server.client import RaftClient
from raftmeta.server.node import RaftNode, monotonic_ms
from raftmeta.server.settings import NodeSettings
from raftmeta.storage.errors import StorageError
from raftmeta.storage.snapshots import SnapshotReader

log = logging.getLogger("raftmeta.serve")

LOAD_RESOURCE = "raftmeta-load"
"""The topic name the load generator's ConfigRecords are written under."""


class ServeError(Exception):
    """A start-up or run-time failure that ends the process with one line and status 1."""


@dataclass(frozen=True, slots=True)
class LoadGenerator:
    """While this node leads, append ``rate`` numbered records a second and, once each one
    commits, add its value to ``acked_log`` with an fsync (a testing aid, see the module)."""

    rate: float
    acked_log: Path


class _Changes:
    """Wakes every waiter whenever the node's state may have moved."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        event, self._event = self._event, asyncio.Event()
        event.set()

    async def wait(self) -> None:
        await self._event.wait()


class _Announcer:
    """The listener of a served node: it keeps no state machine yet, it reports leadership."""

    def __init__(self, node_id: int, changes: _Changes) -> None:
        self.node_id = node_id
        self.changes = changes
        self.leader: tuple[int | None, int] = (None, -1)

    def handle_commit(self, batches: Sequence[Batch]) -> None:
        pass

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        pass

    def handle_leader_change(self, leader_id: int | None, epoch: int) -> None:
        if (leader_id, epoch) == self.leader:
            return
        self.leader = (leader_id, epoch)
        if leader_id is None:
            log.info("epoch %d: no leader known", epoch)
        elif leader_id == self.node_id:
            log.info("epoch %d: this node (%d) leads", epoch, leader_id)
        else:
            log.info("epoch %d: node %d leads", epoch, leader_id)
        self.changes.notify()


class _NotifyingClient(RaftClient):
    """A ``RaftClient`` that also wakes the serve loop whenever the node's state moves."""

    def __init__(self, node: RaftNode, listener: _Announcer, changes: _Changes) -> None:
        self.changes = changes
        super().__init__(node, listener)

    def state_changed(self) -> None:
        super().state_changed()
        self.changes.notify()


def check_port_free(host: str, port: int) -> None:
    """Fail early and clearly if the listener's port is taken.

    gRPC binds with SO_REUSEPORT, so a second node on the same port would silently share it;
    a plain bind without that option is refused while any other process listens there.
    """
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise ServeError(f"cannot listen on {host}:{port}: the port is in use") from None
            raise ServeError(f"cannot listen on {host}:{port}: {error.strerror}") from None


async def serve(config: RaftmetaConfig, load: LoadGenerator | None = None) -> None:
    """Run the configured node until SIGTERM or SIGINT; raise ``ServeError`` on a failure."""
    settings = NodeSettings.from_config(config)
    changes = _Changes()
    stop_requested = asyncio.Event()
    loop = asyncio.get_running_loop()

    def request_stop() -> None:
        stop_requested.set()
        changes.notify()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, request_stop)

    check_port_free(settings.listen_host, settings.listen_port)
    node = RaftNode(settings)
    announcer = _Announcer(settings.node_id, changes)
    client = _NotifyingClient(node, announcer, changes)
    address = f"{settings.listen_host}:{settings.listen_port}"
    try:
        await node.bind()
    except StorageError as error:
        raise ServeError(str(error)) from None
    except RuntimeError as error:
        raise ServeError(f"cannot listen on {address}: {error}") from None
    await node.start()
    log.info(
        "node %d of cluster %s serving on %s; voters %s",
        settings.node_id,
        node.cluster_id,
        address,
        ",".join(f"{n}@{a}" for n, a in sorted(settings.voters.items())),
    )
    generator: asyncio.Task[None] | None = None
    if load is not None:
        generator = asyncio.create_task(_generate_load(client, announcer, changes, load))
    try:
        while not stop_requested.is_set() and node.failure is None:
            await changes.wait()
    finally:
        if generator is not None:
            generator.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await generator
        failure = node.failure
        if failure is None:
            log.info("node %d stopping", settings.node_id)
            await _hand_over(node, changes)
        await node.stop(graceful=failure is None)
    if failure is not None:
        raise ServeError(f"node {settings.node_id} stopped after a fatal error: {failure}")
    log.info("node %d stopped", settings.node_id)


async def _hand_over(node: RaftNode, changes: _Changes) -> None:
    """If this node leads, resign and keep answering until a successor leads.

    ``RaftNode.stop`` resigns too, but stops serving as soon as its EndQuorumEpoch calls are
    answered; the successor's (pre-)vote request can arrive just after that, and without this
    node's vote a three-voter quorum may have to wait out a fetch timeout. Staying reachable a
    few round trips longer makes the planned failover take milliseconds.
    """
    core = node.core
    if core.role is not Role.LEADER:
        return
    epoch = core.epoch
    core.resign(monotonic_ms())
    node.wake()
    deadline_s = node.settings.raft.fetch_timeout_ms * 2 / 1000

    async def successor_known() -> None:
        while not (node.core.epoch > epoch and node.core.leader_id not in (None, node.node_id)):
            if node.failure is not None:
                return
            await changes.wait()

    try:
        await asyncio.wait_for(successor_known(), deadline_s)
    except TimeoutError:
        log.warning("node %d: no successor within %g s; stopping anyway", node.node_id, deadline_s)
    else:
        log.info("node %d handed over to node %s", node.node_id, node.core.leader_id)


class _AckLog:
    """Appends each acknowledged value with an fsync, so a ``kill -9`` right after an
    acknowledgement cannot lose the fact that it was given."""

    def __init__(self, path: Path) -> None:
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def acknowledge(self, value: str, future: asyncio.Future[int]) -> None:
        if future.cancelled() or future.exception() is not None or self._fd is None:
            return
        os.write(self._fd, f"{value}\n".encode())
        os.fsync(self._fd)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


async def _generate_load(
    client: RaftClient, announcer: _Announcer, changes: _Changes, load: LoadGenerator
) -> None:
    node = client.node
    interval = 1.0 / load.rate
    acked = _AckLog(load.acked_log)
    try:
        sequence = 0
        while True:
            core = node.core
            epoch = core.epoch
            if core.role is not Role.LEADER or announcer.leader != (node.node_id, epoch):
                await changes.wait()
                continue
            value = f"{node.node_id}-{epoch}-{sequence}"
            record = ConfigRecord(ConfigResourceType.TOPIC, LOAD_RESOURCE, "sequence", value)
            try:
                _, future = client.append([encode_record(record)])
            except NotLeaderError:
                continue
            sequence += 1
            future.add_done_callback(functools.partial(acked.acknowledge, value))
            # Pacing, not synchronisation: the rate is what the caller asked for.
            await asyncio.sleep(interval)
    finally:
        acked.close()
