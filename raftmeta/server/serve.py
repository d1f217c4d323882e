"""``raftmeta serve``: one controller node as an operating-system process, from its
``.properties`` file.

The process owns a ``ControllerNode`` (Raft, the controller and the Admin and BrokerLifecycle
services on one port), or with ``process.roles=broker,controller`` a ``CombinedNode`` (that and
the node's broker) until SIGTERM or SIGINT, then leaves the quorum gracefully: a leader
resigns with EndQuorumEpoch so the others elect a successor in a few round trips instead of
waiting out the fetch timeout, and the directory is flushed and unlocked before exit.

Everything a user can get wrong at start-up (an unformatted or foreign directory, a port that
is taken, an unusable placer or authorizer) ends as a ``ServeError`` or ``ConfigError`` with
one line for the terminal, never a traceback.

The optional load generator is a testing aid: process-level failover tests need appends that
come from inside the leader (only the leader appends), and a durable record of which appends
were acknowledged, so they can check after ``kill -9`` that no acknowledged append was lost.
SIGUSR1 stops it while the node keeps running. Its records go through the controller's queue
like any request (the controller must be the log's only writer) and are ConfigRecords of a
topic resource, one name per value, which the image keeps, so snapshots carry every one.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import signal
import socket
from dataclasses import dataclass
from pathlib import Path

from raftmeta.common.config_defs import broker_config_def
from raftmeta.config.errors import ConfigError
from raftmeta.config.node import RaftmetaConfig
from raftmeta.errors import KafkaError
from raftmeta.quorum import collector
from raftmeta.quorum.settings import NodeSettings
from raftmeta.raft.roles import Role
from raftmeta.records import ConfigRecord, ConfigResourceType
from raftmeta.security.exposure import exposure_problem, exposure_warning
from raftmeta.server.combined_node import CombinedNode
from raftmeta.server.controller_node import ControllerNode
from raftmeta.storage.errors import StorageError

log = logging.getLogger("raftmeta.serve")

LOAD_RESOURCE = "raftmeta-load"
"""The topic name the load generator's ConfigRecords are written under."""
PLUGIN_PREFIXES = ("replica.placer.", "authorizer.", "listener.name.")
"""Keys under these belong to plug-ins, which read their own settings, or to one listener
(``listener.name.controller.ssl.keystore.location``), which the TLS settings read."""
NO_CLIENT_AUTH_WARNING = (
    "the controller listener is SSL without ssl.client.auth=required: traffic is encrypted "
    "but callers are not authenticated, so its port must not be reachable by untrusted hosts"
)
LOAD_STOPPED = "node %d: load generator stopped"
"""Logged once the load generator has ended and awaited its own writes (SIGUSR1)."""
LOAD_CONFIG_PREFIX = "sequence."
"""Each load record sets ``sequence.<value>`` to ``<value>``: a name per value, so the image
(and so every snapshot) keeps all of them."""


class ServeError(Exception):
    """A start-up or run-time failure that ends the process with one line and status 1."""


@dataclass(frozen=True, slots=True)
class LoadGenerator:
    """While this node leads, append ``rate`` numbered records a second and, once each one
    commits, add its value to ``acked_log`` with an fsync (a testing aid, see the module)."""

    rate: float
    acked_log: Path


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


def unread_keys(config: RaftmetaConfig) -> list[str]:
    """The supplied keys nothing reads, each worth a warning (often a typo of a real key).
    A plug-in's keys are its own, and a static broker config the table knows is read:
    DescribeConfigs shows it and the node's broker takes its value from it."""
    return [
        key
        for key in config.unknown_keys
        if not key.startswith(PLUGIN_PREFIXES) and broker_config_def(key) is None
    ]


async def serve(config: RaftmetaConfig, load: LoadGenerator | None = None) -> None:
    """Run the configured node until SIGTERM or SIGINT; raise ``ServeError`` on a failure."""
    settings = NodeSettings.from_config(config)
    problem = exposure_problem(config)
    if problem is not None:
        raise ConfigError(problem)
    stop_requested = asyncio.Event()
    loop = asyncio.get_running_loop()
    check_port_free(settings.listen_host, settings.listen_port)
    if settings.stream_listen is not None:
        check_port_free(*settings.stream_listen)
    # process.roles=broker,controller: the node's broker runs in this process too.
    combined = config.is_broker and config.is_controller
    member = (CombinedNode if combined else ControllerNode)(config, settings)
    for key in unread_keys(config):
        log.warning("configuration %s was supplied but nothing reads it (a typo?)", key)
    exposure = exposure_warning(config)
    if exposure is not None:
        log.warning("%s", exposure)
    if member.tls is not None and not member.identity.enforced:
        log.warning("%s", NO_CLIENT_AUTH_WARNING)
    changes = member.changes

    def request_stop() -> None:
        stop_requested.set()
        changes.notify()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, request_stop)

    node = member.node
    address = f"{settings.listen_host}:{settings.listen_port}"
    try:
        await member.listen()
    except StorageError as error:
        raise ServeError(str(error)) from None
    except RuntimeError as error:
        raise ServeError(f"cannot listen on {address}: {error}") from None
    try:
        await member.run()
    except OSError as error:
        await member.stop(graceful=False)
        raise ServeError(
            f"cannot serve metrics on port {config.metrics_port}: {error.strerror or error}"
        ) from None
    # The snapshot's image is loaded now and lives on: keep the collector from walking it.
    collector.freeze_loaded_state()
    log.info(
        "node %d of cluster %s serving on %s (%s); voters %s",
        settings.node_id,
        node.cluster_id,
        address,
        "PLAINTEXT" if member.tls is None else "SSL",
        ",".join(f"{n}@{a}" for n, a in sorted(node.voter_addresses.items())),
    )
    if member.stream_port is not None:
        log.info(
            "node %d: Raft stream (controller.quorum.transport=%s) on port %d",
            settings.node_id,
            settings.transport,
            member.stream_port,
        )
    generator: asyncio.Task[None] | None = None
    if load is not None:
        generator = asyncio.create_task(_generate_load(member, load))

    # SIGUSR1 ends the load (if any) and keeps the node running, so a test can let the
    # quorum settle on one log end before it compares logs. The signal arrives whenever the
    # loop gets to it, so the node says in its log once no write of its own is in flight.
    def stop_load() -> None:
        if generator is None:
            log.info(LOAD_STOPPED, settings.node_id)
        else:
            generator.cancel()

    loop.add_signal_handler(signal.SIGUSR1, stop_load)
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
        # A graceful stop of the leader resigns and stays to vote and fetch until a successor
        # leads and has committed (RaftNode.stop), so the handover takes round trips.
        await member.stop(graceful=failure is None)
    if failure is not None:
        raise ServeError(f"node {settings.node_id} stopped after a fatal error: {failure}")
    log.info("node %d stopped", settings.node_id)


class _AckLog:
    """Appends each acknowledged value with an fsync, so a ``kill -9`` right after an
    acknowledgement cannot lose the fact that it was given."""

    def __init__(self, path: Path) -> None:
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def acknowledge(self, value: str) -> None:
        if self._fd is None:
            return
        os.write(self._fd, f"{value}\n".encode())
        os.fsync(self._fd)

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


async def _write_one(member: ControllerNode, value: str, acked: _AckLog) -> None:
    record = ConfigRecord(
        ConfigResourceType.TOPIC, LOAD_RESOURCE, f"{LOAD_CONFIG_PREFIX}{value}", value
    )
    try:
        await member.controller.write_records([record])
    except KafkaError:
        return  # not committed in this epoch (NOT_CONTROLLER, timed out): never acknowledged
    acked.acknowledge(value)


async def _generate_load(member: ControllerNode, load: LoadGenerator) -> None:
    node = member.node
    controller = member.controller
    interval = 1.0 / load.rate
    acked = _AckLog(load.acked_log)
    writes: set[asyncio.Task[None]] = set()
    try:
        sequence = 0
        while True:
            core = node.core
            epoch = core.epoch
            if core.role is not Role.LEADER or not controller.is_active:
                await member.changes.wait()
                continue
            value = f"{node.node_id}-{epoch}-{sequence}"
            sequence += 1
            # Queued in call order: the controller's queue keeps it, so log order is
            # sequence order within an epoch.
            write = asyncio.create_task(_write_one(member, value, acked))
            writes.add(write)
            write.add_done_callback(writes.discard)
            # Pacing, not synchronisation: the rate is what the caller asked for.
            await asyncio.sleep(interval)
    finally:
        for write in list(writes):
            write.cancel()
        if writes:
            await asyncio.wait(writes)
        acked.close()
        log.info(LOAD_STOPPED, node.node_id)
