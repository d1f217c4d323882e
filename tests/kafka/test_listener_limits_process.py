"""The KAFKA listener's limits against floods, with real ``raftmeta serve`` processes whose
descriptor limit is lowered (``RLIMIT_NOFILE`` set in the child before it runs):

- a flood of idle connections to every controller, held, leaves the quorum leading and
  committing writes (over gRPC), since the listener keeps a reserve of descriptors for Raft;
- half-sent large frames are held within ``queued.max.request.bytes`` (the process's RSS stays
  bounded) and closed after ``raftmeta.kafka.partial.request.timeout.ms``;
- a client trickling a frame's bytes is closed at that deadline, an idle one after
  ``connections.max.idle.ms``;
and no node logs a traceback."""

from __future__ import annotations

import contextlib
import resource
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from raftmeta.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource
from raftmeta.admin.quorum import DescribeError, QuorumInfo, describe_quorum
from raftmeta.devkit.cluster import DevCluster
from raftmeta.devkit.parent import child_environment
from tests.process.helpers import DEADLINE_S, free_base_port
from tests.support.waiting import wait_until

DESCRIPTOR_LIMIT = 256
"""Each controller's ``RLIMIT_NOFILE``: a flood of this many connections per controller
would leave it none."""
FLOOD_PER_CONTROLLER = 2 * DESCRIPTOR_LIMIT
IDLE_MS = 15_000
"""Long enough that the flood is still held while the write runs."""
PARTIAL_MS = 2_000
QUEUED_BYTES = 8 * 2**20
HALF_SENT_FRAMES = 8
HALF_SENT_FRAME_BYTES = 24 * 2**20
SENT_PER_FRAME = 12 * 2**20
SEND_WINDOW_S = 1.0
"""How long a half-sent frame's sender waits for the listener to read more."""
RSS_GROWTH_BOUND = 48 * 2**20
"""Without ``queued.max.request.bytes`` the frames alone add 96 MiB."""


def limited_descriptors() -> None:
    """Runs in the child before ``raftmeta serve``: the lowered descriptor limit."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTOR_LIMIT, hard))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevCluster]:
    root: Path = tmp_path_factory.mktemp("kafka-limits")
    running = DevCluster(
        root / "cluster",
        free_base_port(),
        overrides={
            "connections.max.idle.ms": str(IDLE_MS),
            "raftmeta.kafka.partial.request.timeout.ms": str(PARTIAL_MS),
            "queued.max.request.bytes": str(QUEUED_BYTES),
        },
        kafka=True,
    )
    running.prepare()
    try:
        for node in running.nodes.values():
            with node.log_path.open("ab") as output:
                node.process = subprocess.Popen(
                    [sys.executable, "-m", "raftmeta", "serve", "--config", str(node.config)],
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=output,
                    start_new_session=True,
                    env=child_environment(),
                    preexec_fn=limited_descriptors,
                )
        leader(running)
        yield running
    finally:
        running.stop()
    for node in running.nodes.values():
        assert "Traceback" not in node.log_path.read_text(errors="replace"), node.log_path


def leader(cluster: DevCluster) -> QuorumInfo:
    def found() -> QuorumInfo | None:
        try:
            info = describe_quorum(cluster.bootstrap_servers, cluster.cluster_id, timeout_s=2.0)
        except DescribeError:
            return None
        return info if info.leader_id is not None else None

    return wait_until(found, "a leader", DEADLINE_S)


def kafka_address(cluster: DevCluster, node_id: int) -> tuple[str, int]:
    return "127.0.0.1", cluster.kafka_ports[node_id]


def rss_bytes(cluster: DevCluster, node_id: int) -> int:
    pid = cluster.nodes[node_id].pid
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def closed_by_peer(sock: socket.socket) -> bool:
    """Whether the listener has closed ``sock`` (reads nothing more without blocking)."""
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except ConnectionError:
        return True


def open_many(address: tuple[str, int], count: int) -> list[socket.socket]:
    opened = []
    for _ in range(count):
        with contextlib.suppress(OSError):
            opened.append(socket.create_connection(address, timeout=5.0))
    return opened


def send_for_a_while(sock: socket.socket, prefix: bytes, body_bytes: int) -> None:
    """Send ``prefix`` and up to ``body_bytes`` more, for as long as the listener reads them
    (at most ``SEND_WINDOW_S``): a listener that stops reading leaves the rest unsent."""
    sock.settimeout(SEND_WINDOW_S)
    with contextlib.suppress(TimeoutError, ConnectionError):
        sock.sendall(prefix)
        sent, chunk = 0, b"\0" * 2**20
        while sent < body_bytes:
            sent += sock.send(chunk)


def answers_api_versions(address: tuple[str, int]) -> bool:
    """Whether a new connection to ``address`` is served: an ApiVersions v0 request (key 18,
    correlation id 7, null client id) gets an answer carrying its correlation id."""
    request = struct.pack(">hhih", 18, 0, 7, -1)
    try:
        with socket.create_connection(address, timeout=2.0) as sock:
            sock.sendall(struct.pack(">i", len(request)) + request)
            answer = b""
            while len(answer) < 8:
                chunk = sock.recv(8 - len(answer))
                if not chunk:
                    return False
                answer += chunk
    except OSError:
        return False
    (correlation_id,) = struct.unpack(">i", answer[4:8])
    return bool(correlation_id == 7)


def log_text(cluster: DevCluster, node_id: int) -> str:
    return cluster.nodes[node_id].log_path.read_text(errors="replace")


def test_a_held_connection_flood_leaves_raft_committing(cluster: DevCluster) -> None:
    flood: list[socket.socket] = []
    try:
        for node_id in cluster.nodes:
            flood += open_many(kafka_address(cluster, node_id), FLOOD_PER_CONTROLLER)
        leader(cluster)
        retention = ConfigResource(
            "broker",
            "",
            [ConfigEntry("log.retention.ms", "4321", incremental_operation=AlterConfigOpType.SET)],
        )
        with AdminClient({"bootstrap.servers": cluster.bootstrap_servers}) as admin:
            (change,) = admin.incremental_alter_configs([retention]).values()
            change.result(DEADLINE_S)
        assert sum(not closed_by_peer(sock) for sock in flood) > 0, "some flood is still held"
        # Each node refuses, and logs it, as its accept loop reaches the connections the
        # kernel took for it: the line may follow the client's view by a moment.
        wait_until(
            lambda: all("near its open-file limit" in log_text(cluster, n) for n in cluster.nodes),
            "every controller to log that it is near its open-file limit",
            DEADLINE_S,
        )
    finally:
        for sock in flood:
            sock.close()
    # Once the flood is gone every controller serves new connections again (and the tests
    # after this one find the listeners as a client would).
    wait_until(
        lambda: all(answers_api_versions(kafka_address(cluster, n)) for n in cluster.nodes),
        "every controller serving new Kafka connections after the flood",
        DEADLINE_S,
    )


def test_half_sent_frames_stay_within_queued_max_request_bytes(cluster: DevCluster) -> None:
    node_id = next(iter(cluster.nodes))
    before = rss_bytes(cluster, node_id)
    senders = open_many(kafka_address(cluster, node_id), HALF_SENT_FRAMES)
    assert len(senders) == HALF_SENT_FRAMES
    try:
        for sock in senders:
            send_for_a_while(sock, struct.pack(">i", HALF_SENT_FRAME_BYTES), SENT_PER_FRAME)
        sampled_until = time.monotonic() + PARTIAL_MS / 2000
        grown = 0
        while time.monotonic() < sampled_until:  # the largest RSS over half the deadline
            grown = max(grown, rss_bytes(cluster, node_id) - before)
            time.sleep(0.05)  # the sampling pace, not a synchronisation
        assert grown < RSS_GROWTH_BOUND
        # The partial-request deadline closes them all, one budget's worth at a time.
        wait_until(
            lambda: all(closed_by_peer(sock) for sock in senders),
            "every half-sent frame's connection closed",
            DEADLINE_S + HALF_SENT_FRAMES * PARTIAL_MS / 1000,
        )
        assert rss_bytes(cluster, node_id) - before < RSS_GROWTH_BOUND
    finally:
        for sock in senders:
            sock.close()


def test_a_trickled_frame_is_closed_at_the_partial_request_deadline(cluster: DevCluster) -> None:
    address = kafka_address(cluster, list(cluster.nodes)[1])
    with socket.create_connection(address, timeout=5.0) as sock:
        sock.sendall(struct.pack(">i", 100))
        started = time.monotonic()
        closed = False
        while time.monotonic() - started < DEADLINE_S and not closed:
            try:
                sock.sendall(b"\0")  # one byte at a time: never a whole frame
            except OSError:
                closed = True
                break
            closed = closed_by_peer(sock)
            sock.setblocking(True)
            time.sleep(0.2)  # the trickle's pace, not a synchronisation
        assert closed
        assert time.monotonic() - started < PARTIAL_MS / 1000 + 5.0


def test_an_idle_connection_is_closed_after_connections_max_idle_ms(cluster: DevCluster) -> None:
    address = kafka_address(cluster, list(cluster.nodes)[2])
    with socket.create_connection(address, timeout=5.0) as sock:
        started = time.monotonic()
        wait_until(lambda: closed_by_peer(sock), "the idle connection closed", IDLE_MS / 1000 + 10)
        assert time.monotonic() - started >= IDLE_MS / 1000 - 1.0
