"""raftmeta beside etcd and ZooKeeper: three voters each on loopback, measured in one run.

Every system runs as three OS processes on 127.0.0.1 with fsync on (etcd and ZooKeeper on
their defaults, which fsync every write; raftmeta on its shipped defaults, which fsync every
flush on every voter), and each is driven from this process with 100-byte values:

(a) serial writes, one at a time: p50/p99 latency, and the CPU all three server processes
    spend per write (the client's own CPU is printed apart);
(b) 1 and 16 concurrent clients, each with one write in flight: writes/s, p50 and (16) p99;
    for raftmeta also the leader's append-to-commit latency under the 16 clients, which shows
    how long Raft itself took while gRPC serving and the controller shared the process.

What a "write" is differs, and the table says so: an etcd ``Put`` and a ZooKeeper ``create``
are single keys; raftmeta's client-visible write is a ``CreateTopics`` through gRPC (one topic
of 3 partitions at RF 3, placed on 6 brokers), which does more. raftmeta's serial figure is
also taken through the embedded append API, timed inside the leader (the path its own
controller uses), as ``benchmarks/quorum_bench.py`` does.

A second raftmeta column, ``raftmeta-kafka``, takes the same CreateTopics phases through the
controllers' KAFKA listeners instead, from real Kafka clients: confluent-kafka ``AdminClient`` s,
one per client, each request one topic of 3 partitions at RF 3 on the same six brokers (see
``benchmarks/kafka_create_topics.py``). Its 16 clients run as 16 threads of one client process
by default, which reached more here than 16 processes (``--kafka-clients`` picks). It speaks
only Kafka's public protocol, so it measures whatever the listener does inside; the table
gives its ratio to etcd and to the gRPC door. Every column's server CPU per write is its server
processes' CPU time over the phase divided by the writes.

The etcd and ZooKeeper clients are Python (grpc.aio speaking etcd's v3 API; kazoo), so the
client side costs the same language runtime for all three.

Peers come from Debian's ``etcd-server`` and ``zookeeper`` packages: ``make bench-peers``
installs them (and kazoo) and runs this script. A peer that is not installed is skipped with a
line saying so. Figures are medians over runs; the systems run in turn within each run, so
every ratio is measured in one window on this machine.

The ``grpc-noop`` column is the ceiling: one ``grpc.aio`` server process whose
``CreateTopics`` answers at once (no controller, no Raft), driven by the same clients, so the
table shows how much of the 1- and N-client figures any Python gRPC server reaches here, and
``raftmeta/grpc-noop`` how close raftmeta comes to it. ``grpc-barrier`` is the
ceiling of any server that makes its clients share commits: the same server, but it holds each
answer until every client's request is in (or 5 ms passed, as the controller's wait) and then
for ``BARRIER_COMMIT_MS`` more, about raftmeta's append-to-commit time under the 16 clients.
It does no other work, so it is what raftmeta would reach if the controller, placement and
Raft cost no CPU.

Ratios are the median of the per-run ratios, each taken within one run: a peer whose speed
moves between windows on this shared machine moves every system's figure less than it moves
the ratio of medians.

Run: ``.venv/bin/python benchmarks/peers_bench.py [--runs 3] [--quick] [--only etcd,grpc-noop]``
(``--only`` also takes ``grpc``, ``kafka``, ``zk``, ``noop``, ``barrier``: ``--quick --runs 1
--only kafka,grpc,etcd`` is a check of about a minute);
``--serial`` runs the serial writes alone (a quick look at the commit path beside the peers).
``--variant NAME:KEY=VALUE`` adds a raftmeta column whose controllers run with other settings
(``--variant one-by-one:controller.append.max.in.flight=0`` compares the controller's group
commit with one append per request, in the same run).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import functools
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.machine import Report, process_cpu_seconds
from raftmeta.devkit.ports import free_ports

if TYPE_CHECKING:
    from benchmarks.metadata_bench import ControllerProcesses

RESULTS = Path(__file__).resolve().parent / "results" / "peers_bench.txt"
VALUE = b"v" * 100
ETCD = shutil.which("etcd") or "/usr/bin/etcd"
ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")
ZOOKEEPER_CONF = Path("/etc/zookeeper/conf")
START_TIMEOUT_S = 60.0
CEILING = "grpc-noop"
"""The column of the no-op ``grpc.aio`` server (see :func:`noop_server_main`)."""
KAFKA = "raftmeta-kafka"
"""The column of raftmeta's CreateTopics through its controllers' KAFKA listeners, from
confluent-kafka clients (see :func:`run_raftmeta_kafka`)."""
BARRIER = "grpc-barrier"
"""The column of the no-op server that answers a round of requests together after a commit
delay (see :func:`noop_server_main`)."""
BARRIER_COMMIT_MS = 1.0
"""The barrier server's stand-in for a commit: raftmeta's leader measures 0.9 ms from append to
commit under 16 clients (and asyncio's timers fire on millisecond ticks anyway)."""
BARRIER_WAIT_MS = 5.0
"""The longest the barrier server waits for a round to fill, as the controller's wait
(``controller.append.linger.max.ms``)."""


@dataclass(frozen=True)
class Load:
    serial: int
    single_client: int
    concurrent_clients: int
    per_concurrent_client: int
    serial_only: bool = False
    """Only the serial phase (``--serial``): the quick A/B of the commit path."""


FULL = Load(serial=500, single_client=300, concurrent_clients=16, per_concurrent_client=300)
QUICK = Load(serial=200, single_client=100, concurrent_clients=16, per_concurrent_client=30)


@dataclass
class Figures:
    """One system's figures, one entry per run."""

    serial_p50: list[float] = field(default_factory=list)
    serial_p99: list[float] = field(default_factory=list)
    serial_cpu_ms: list[float] = field(default_factory=list)
    one_rate: list[float] = field(default_factory=list)
    one_p50: list[float] = field(default_factory=list)
    one_p99: list[float] = field(default_factory=list)
    one_cpu_ms: list[float] = field(default_factory=list)
    many_rate: list[float] = field(default_factory=list)
    many_p50: list[float] = field(default_factory=list)
    many_p99: list[float] = field(default_factory=list)
    many_cpu_ms: list[float] = field(default_factory=list)
    many_commit_p50: list[float] = field(default_factory=list)
    """raftmeta only: the leader's append-to-commit latency under the N-client load."""
    many_commit_p99: list[float] = field(default_factory=list)

    def add_client_phase(self, clients: int, phase: Mapping[str, Any]) -> None:
        """Keep one phase's figures (a CreateTopics phase, or a peer's writes timed the same
        way): the 1-client ones or the N-client ones."""
        if clients == 1:
            self.one_rate.append(phase["rate"])
            self.one_p50.append(phase["p50_ms"])
            self.one_p99.append(phase["p99_ms"])
            self.one_cpu_ms.append(phase["quorum_cpu_ms"])
            return
        self.many_rate.append(phase["rate"])
        self.many_p50.append(phase["p50_ms"])
        self.many_p99.append(phase["p99_ms"])
        self.many_cpu_ms.append(phase["quorum_cpu_ms"])


def percentile(values: Sequence[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def cpu_seconds(pids: Sequence[int]) -> float:
    return sum(process_cpu_seconds(pid) for pid in pids)


def wait_for_port(port: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {START_TIMEOUT_S:.0f} s")


class Servers:
    """Three server processes of one peer system, their output in files under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.processes: list[subprocess.Popen[bytes]] = []

    def spawn(self, name: str, argv: Sequence[str], env: dict[str, str] | None = None) -> None:
        with open(self.root / f"{name}.log", "wb") as log:
            self.processes.append(
                subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
            )

    @property
    def pids(self) -> list[int]:
        return [process.pid for process in self.processes]

    def close(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# ---------------------------------------------------------------------------------- etcd


def etcd_messages() -> tuple[type[Any], type[Any], type[Any], type[Any]]:
    """etcd's v3 ``PutRequest``/``PutResponse``/``StatusRequest``/``StatusResponse``, built
    from their field numbers at run time: the PyPI etcd client does not import beside the
    protobuf this project uses, and these four messages are all the benchmark needs."""
    from google.protobuf import (  # type: ignore[import-untyped]
        descriptor_pb2,
        descriptor_pool,
        message_factory,
    )

    field_type = descriptor_pb2.FieldDescriptorProto
    spec = descriptor_pb2.FileDescriptorProto(name="peers_bench_etcd.proto", package="etcdserverpb")

    def message(name: str, *fields: tuple[str, int, int, str]) -> None:
        proto = spec.message_type.add(name=name)
        for field_name, number, kind, type_name in fields:
            added = proto.field.add(
                name=field_name, number=number, type=kind, label=field_type.LABEL_OPTIONAL
            )
            if type_name:
                added.type_name = type_name

    message(
        "ResponseHeader",
        ("cluster_id", 1, field_type.TYPE_UINT64, ""),
        ("member_id", 2, field_type.TYPE_UINT64, ""),
        ("revision", 3, field_type.TYPE_INT64, ""),
        ("raft_term", 4, field_type.TYPE_UINT64, ""),
    )
    message(
        "PutRequest",
        ("key", 1, field_type.TYPE_BYTES, ""),
        ("value", 2, field_type.TYPE_BYTES, ""),
    )
    message("PutResponse", ("header", 1, field_type.TYPE_MESSAGE, ".etcdserverpb.ResponseHeader"))
    message("StatusRequest")
    message(
        "StatusResponse",
        ("header", 1, field_type.TYPE_MESSAGE, ".etcdserverpb.ResponseHeader"),
        ("version", 2, field_type.TYPE_STRING, ""),
        ("db_size", 3, field_type.TYPE_INT64, ""),
        ("leader", 4, field_type.TYPE_UINT64, ""),
    )
    pool = descriptor_pool.DescriptorPool()
    pool.Add(spec)
    classes = [
        message_factory.GetMessageClass(pool.FindMessageTypeByName(f"etcdserverpb.{name}"))
        for name in ("PutRequest", "PutResponse", "StatusRequest", "StatusResponse")
    ]
    return classes[0], classes[1], classes[2], classes[3]


class EtcdCluster(Servers):
    """Three ``etcd`` members on loopback, on etcd's defaults (the WAL is fsynced per write)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        ports = free_ports(6)
        self.client_ports = ports[:3]
        peer_urls = [f"http://127.0.0.1:{port}" for port in ports[3:]]
        cluster = ",".join(f"m{i}={url}" for i, url in enumerate(peer_urls))
        for index in range(3):
            client_url = f"http://127.0.0.1:{self.client_ports[index]}"
            self.spawn(
                f"etcd-{index}",
                [
                    ETCD,
                    "--name",
                    f"m{index}",
                    "--data-dir",
                    str(root / f"etcd-{index}"),
                    "--listen-client-urls",
                    client_url,
                    "--advertise-client-urls",
                    client_url,
                    "--listen-peer-urls",
                    peer_urls[index],
                    "--initial-advertise-peer-urls",
                    peer_urls[index],
                    "--initial-cluster",
                    cluster,
                    "--initial-cluster-state",
                    "new",
                    "--log-level",
                    "warn",
                ],
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        for port in self.client_ports:
            wait_for_port(port, deadline)

    async def leader_address(self) -> str:
        """The client address of the member that leads: writes sent elsewhere are forwarded
        to it, an extra hop raftmeta's clients do not take either."""
        import grpc.aio

        _, _, status_request, status_response = etcd_messages()
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            for port in self.client_ports:
                address = f"127.0.0.1:{port}"
                async with grpc.aio.insecure_channel(address) as channel:
                    status = channel.unary_unary(
                        "/etcdserverpb.Maintenance/Status",
                        request_serializer=status_request.SerializeToString,
                        response_deserializer=status_response.FromString,
                    )
                    try:
                        reply = await status(status_request(), timeout=2)
                    except grpc.aio.AioRpcError:
                        continue
                    if reply.leader and reply.leader == reply.header.member_id:
                        return address
            await asyncio.sleep(0.1)
        raise RuntimeError("etcd elected no leader")


class EtcdWriter:
    """One etcd client: its own channel, one Put at a time."""

    def __init__(self, address: str) -> None:
        import grpc.aio

        put_request, put_response, _, _ = etcd_messages()
        self.request = put_request
        self.channel = grpc.aio.insecure_channel(address)
        self.put = self.channel.unary_unary(
            "/etcdserverpb.KV/Put",
            request_serializer=put_request.SerializeToString,
            response_deserializer=put_response.FromString,
        )

    async def write(self, key: str) -> None:
        await self.put(self.request(key=key.encode(), value=VALUE), timeout=30)

    async def close(self) -> None:
        await self.channel.close()


async def etcd_phase(address: str, clients: int, per_client: int, prefix: str) -> list[float]:
    """Latencies of ``clients`` concurrent writers; the first call of each is not timed."""
    writers = [EtcdWriter(address) for _ in range(clients)]
    latencies: list[float] = []

    async def run(index: int, writer: EtcdWriter) -> None:
        await writer.write(f"{prefix}/{index}/warm")
        for number in range(per_client):
            began = time.perf_counter()
            await writer.write(f"{prefix}/{index}/{number}")
            latencies.append(time.perf_counter() - began)

    try:
        await asyncio.gather(*(run(index, writer) for index, writer in enumerate(writers)))
    finally:
        for writer in writers:
            await writer.close()
    return latencies


def run_etcd(load: Load, figures: Figures, log: Callable[[str], None], run: int) -> None:
    with tempfile.TemporaryDirectory(prefix="peers-bench-etcd-") as temp:
        cluster = EtcdCluster(Path(temp))
        try:
            asyncio.run(_etcd_phases(cluster, load, figures, run))
        finally:
            cluster.close()
    log(summary("etcd", figures))


async def _etcd_phases(cluster: EtcdCluster, load: Load, figures: Figures, run: int) -> None:
    address = await cluster.leader_address()
    await etcd_phase(address, 1, 20, f"r{run}/warm")
    cpu = cpu_seconds(cluster.pids)
    serial = await etcd_phase(address, 1, load.serial, f"r{run}/serial")
    figures.serial_cpu_ms.append(1000 * (cpu_seconds(cluster.pids) - cpu) / load.serial)
    figures.serial_p50.append(1000 * percentile(serial, 0.5))
    figures.serial_p99.append(1000 * percentile(serial, 0.99))
    if load.serial_only:
        return
    await record_phase(
        figures,
        cluster.pids,
        load,
        lambda clients, count, prefix: etcd_phase(address, clients, count, f"r{run}/{prefix}"),
    )


# ----------------------------------------------------------------------------- ZooKeeper


class ZooKeeperEnsemble(Servers):
    """Three ZooKeeper servers on loopback, on its defaults (``forceSync=yes``: the
    transaction log is fsynced before a write is acknowledged)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        ports = free_ports(9)
        self.client_ports = ports[:3]
        servers = [
            f"server.{index + 1}=127.0.0.1:{ports[3 + index]}:{ports[6 + index]}"
            for index in range(3)
        ]
        for index in range(3):
            data = root / f"zk-{index + 1}"
            data.mkdir()
            (data / "myid").write_text(f"{index + 1}\n", encoding="ascii")
            config = data / "zoo.cfg"
            config.write_text(
                "\n".join(
                    [
                        "tickTime=200",
                        "initLimit=50",
                        "syncLimit=25",
                        f"dataDir={data}",
                        f"clientPort={self.client_ports[index]}",
                        "clientPortAddress=127.0.0.1",
                        "admin.enableServer=false",
                        "4lw.commands.whitelist=srvr",
                        *servers,
                    ]
                )
                + "\n",
                encoding="ascii",
            )
            self.spawn(
                f"zookeeper-{index + 1}",
                [
                    "java",
                    "-Xmx256m",
                    "-cp",
                    f"{ZOOKEEPER_CONF}:{ZOOKEEPER_JAR}",
                    "-Dzookeeper.root.logger=WARN,CONSOLE",
                    f"-Dzookeeper.log.dir={data}",
                    "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                    str(config),
                ],
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        for port in self.client_ports:
            wait_for_port(port, deadline)

    def leader_port(self) -> int:
        """The client port of the server that leads (asked with the ``srvr`` command): writes
        sent to a follower are forwarded, an extra hop."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            for port in self.client_ports:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=2) as probe:
                        probe.sendall(b"srvr")
                        answer = probe.makefile("rb").read().decode("ascii", "replace")
                except OSError:
                    continue
                if "Mode: leader" in answer:
                    return port
            time.sleep(0.1)
        raise RuntimeError("ZooKeeper elected no leader")


def zookeeper_phase(port: int, clients: int, per_client: int, prefix: str) -> list[float]:
    """Latencies of ``clients`` concurrent kazoo clients, one thread each, one ``create``
    in flight per client; the first create of each is not timed."""
    from kazoo.client import KazooClient

    connected = []
    for _ in range(clients):
        client = KazooClient(hosts=f"127.0.0.1:{port}", timeout=30)
        client.start(timeout=30)
        connected.append(client)
    connected[0].ensure_path(f"/{prefix}")
    latencies: list[float] = []
    lock = threading.Lock()
    failures: list[BaseException] = []

    def run(index: int) -> None:
        client = connected[index]
        try:
            client.create(f"/{prefix}/{index}-warm", VALUE)
            mine = []
            for number in range(per_client):
                began = time.perf_counter()
                client.create(f"/{prefix}/{index}-{number}", VALUE)
                mine.append(time.perf_counter() - began)
            with lock:
                latencies.extend(mine)
        except BaseException as failure:  # reported below, in the main thread
            failures.append(failure)

    threads = [threading.Thread(target=run, args=(index,)) for index in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for client in connected:
        client.stop()
        client.close()
    if failures:
        raise RuntimeError(f"ZooKeeper create failed: {failures[0]!r}")
    return latencies


def run_zookeeper(load: Load, figures: Figures, log: Callable[[str], None], run: int) -> None:
    with tempfile.TemporaryDirectory(prefix="peers-bench-zk-") as temp:
        ensemble = ZooKeeperEnsemble(Path(temp))
        try:
            port = ensemble.leader_port()
            zookeeper_phase(port, 1, 20, f"r{run}-warm")
            cpu = cpu_seconds(ensemble.pids)
            serial = zookeeper_phase(port, 1, load.serial, f"r{run}-serial")
            spent = cpu_seconds(ensemble.pids) - cpu
            figures.serial_cpu_ms.append(1000 * spent / load.serial)
            figures.serial_p50.append(1000 * percentile(serial, 0.5))
            figures.serial_p99.append(1000 * percentile(serial, 0.99))
            if load.serial_only:
                return

            async def phase(clients: int, count: int, prefix: str) -> list[float]:
                return await asyncio.to_thread(
                    zookeeper_phase, port, clients, count, f"r{run}-{prefix}"
                )

            asyncio.run(record_phase(figures, ensemble.pids, load, phase))
        finally:
            ensemble.close()
    log(summary("ZooKeeper", figures))


# ------------------------------------------------------------------------------ raftmeta


def run_raftmeta(
    load: Load,
    figures: Figures,
    log: Callable[[str], None],
    run: int,
    settings: dict[str, str] | None = None,
    name: str = "raftmeta",
) -> None:
    """Serial appends through the embedded API (timed inside the leader, as quorum_bench
    does), then CreateTopics through gRPC with 1 and 16 clients (as metadata_bench does).

    ``settings`` (a variant's extra controller configuration) apply to the CreateTopics
    controllers only; a variant skips the serial phase, which runs no controller."""
    from benchmarks.metadata_bench import (
        ControllerProcesses,
        create_topics_phase,
        registered_brokers,
    )

    if settings is None:
        run_raftmeta_serial(load, figures)
    if load.serial_only:
        log(summary(name, figures))
        return
    with tempfile.TemporaryDirectory(prefix="peers-bench-raftmeta-admin-") as temp:
        controllers = ControllerProcesses(Path(temp), settings=settings)
        try:

            async def phases() -> None:
                async with registered_brokers(controllers.servers):
                    await create_topics_phases(
                        load,
                        figures,
                        run,
                        controllers,
                        lambda clients, count, prefix: create_topics_phase(
                            controllers.servers, prefix, clients, count, controllers.cpu_seconds
                        ),
                    )

            asyncio.run(phases())
        finally:
            controllers.close()
    log(summary(name, figures))


def run_raftmeta_kafka(
    load: Load,
    figures: Figures,
    log: Callable[[str], None],
    run: int,
    client_mode: str | None = None,
) -> None:
    """CreateTopics through the controllers' KAFKA listeners with 1 and 16 confluent-kafka
    clients (``benchmarks/kafka_create_topics.py``); one topic of 3 partitions at RF 3 per
    request, on the gRPC column's six brokers. No serial phase: that is the Raft log's, the
    same whichever door a write came in by."""
    from benchmarks.kafka_create_topics import (
        DEFAULT_CLIENT_MODE,
        KafkaControllers,
        kafka_create_topics_phase,
        wait_for_named_controller,
    )
    from benchmarks.metadata_bench import registered_brokers

    if load.serial_only:
        return
    mode = client_mode or DEFAULT_CLIENT_MODE
    with tempfile.TemporaryDirectory(prefix="peers-bench-raftmeta-kafka-") as temp:
        controllers = KafkaControllers(Path(temp))
        try:

            async def phases() -> None:
                async with registered_brokers(controllers.servers):
                    await wait_for_named_controller(controllers.kafka_bootstrap)
                    await create_topics_phases(
                        load,
                        figures,
                        run,
                        controllers,
                        lambda clients, count, prefix: kafka_create_topics_phase(
                            controllers.kafka_bootstrap,
                            prefix,
                            clients,
                            count,
                            controllers.cpu_seconds,
                            mode,
                        ),
                    )

            asyncio.run(phases())
        finally:
            controllers.close()
    log(summary(KAFKA, figures))


async def create_topics_phases(
    load: Load,
    figures: Figures,
    run: int,
    controllers: ControllerProcesses,
    create_phase: Callable[[int, int, str], Awaitable[Mapping[str, Any]]],
) -> None:
    """The 1- and N-client CreateTopics phases on running controllers, each through
    ``create_phase(clients, count, prefix)``; under N clients also the leader's
    append-to-commit latencies."""
    for clients, count in (
        (1, load.single_client),
        (load.concurrent_clients, load.per_concurrent_client),
    ):
        controllers.commit_latencies_ms()  # from here on
        phase = await create_phase(clients, count, f"r{run}-c{clients}")
        commits = controllers.commit_latencies_ms()
        figures.add_client_phase(clients, phase)
        if clients > 1 and commits:
            figures.many_commit_p50.append(percentile(commits, 0.5))
            figures.many_commit_p99.append(percentile(commits, 0.99))


def run_raftmeta_serial(load: Load, figures: Figures) -> None:
    """Serial appends through the embedded append API, timed inside the leader."""
    from benchmarks.quorum_bench import Quorum

    with tempfile.TemporaryDirectory(prefix="peers-bench-raftmeta-") as temp:
        quorum = Quorum("raftmeta", Path(temp))
        try:
            quorum.start_all()
            node = quorum.nodes[quorum.wait_caught_up()]
            node.call("serial", count=20)
            cpu = quorum.cpu_seconds()
            serial = node.call("serial", count=load.serial)["latencies_ms"]
            figures.serial_cpu_ms.append(1000 * (quorum.cpu_seconds() - cpu) / load.serial)
            figures.serial_p50.append(percentile(serial, 0.5))
            figures.serial_p99.append(percentile(serial, 0.99))
        finally:
            quorum.close()


# ------------------------------------------------------------------ grpc.aio no-op ceiling


async def noop_server_main(round_size: int = 0) -> None:
    """A ``grpc.aio`` server whose ``Admin/CreateTopics`` answers at once: the ceiling any
    Python gRPC server reaches on this machine with these clients. It runs on the loop a
    controller runs on (uvloop where installed), with the controller's server options, and
    its answer is the smallest one the clients accept (each topic named, error code 0).

    With ``round_size`` it is the barrier server instead: requests are held until
    ``round_size`` are (or the first has waited ``BARRIER_WAIT_MS``), and the round is
    answered ``BARRIER_COMMIT_MS`` later, as a controller answers a group once it commits."""
    import grpc
    import grpc.aio

    from raftmeta.rpc import admin_pb2 as apb
    from raftmeta.rpc.options import SERVER_OPTIONS

    loop = asyncio.get_running_loop()
    held: list[asyncio.Future[None]] = []
    wait_timer: asyncio.TimerHandle | None = None

    def commit(round_: list[asyncio.Future[None]]) -> None:
        for waiting in round_:
            if not waiting.done():
                waiting.set_result(None)

    def close_round() -> None:
        nonlocal held, wait_timer
        if wait_timer is not None:
            wait_timer.cancel()
            wait_timer = None
        round_, held = held, []
        loop.call_later(BARRIER_COMMIT_MS / 1000, commit, round_)

    async def create_topics(request: Any, _context: Any) -> Any:
        nonlocal wait_timer
        if round_size:
            waiting = loop.create_future()
            held.append(waiting)
            if len(held) >= round_size:
                close_round()
            elif wait_timer is None:
                wait_timer = loop.call_later(BARRIER_WAIT_MS / 1000, close_round)
            await waiting
        return apb.CreateTopicsResponse(
            header=apb.ResponseHeader(),
            topics=[apb.CreatableTopicResult(name=topic.name) for topic in request.topics],
        )

    server = grpc.aio.server(options=SERVER_OPTIONS)
    handler = grpc.unary_unary_rpc_method_handler(
        create_topics,
        request_deserializer=apb.CreateTopicsRequest.FromString,
        response_serializer=apb.CreateTopicsResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                apb.DESCRIPTOR.services_by_name["Admin"].full_name, {"CreateTopics": handler}
            ),
        )
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await server.stop(grace=None)


def run_ceiling(
    load: Load, figures: Figures, log: Callable[[str], None], run: int, barrier: bool = False
) -> None:
    """The 1- and N-client CreateTopics phases against the no-op server (or, with
    ``barrier``, the N-client phase against the barrier server), through the same client code
    (``ControllerChannel``) raftmeta's phases use; no serial phase."""
    from benchmarks.metadata_bench import create_topics_phase

    if load.serial_only:
        return
    phases = [(load.concurrent_clients, load.per_concurrent_client)]
    if not barrier:  # one client shares no commit: its ceiling is grpc-noop's
        phases.insert(0, (1, load.single_client))
    for clients, count in phases:
        round_size = clients if barrier else 0
        process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--noop-server", str(round_size)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            servers = [f"127.0.0.1:{int(process.stdout.readline())}"]

            def server_cpu(pid: int = process.pid) -> list[float]:
                return [process_cpu_seconds(pid)]

            phase = asyncio.run(
                create_topics_phase(servers, f"r{run}-c{clients}", clients, count, server_cpu)
            )
            figures.add_client_phase(clients, phase)
        finally:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    log(summary(BARRIER if barrier else CEILING, figures))


def run_barrier(load: Load, figures: Figures, log: Callable[[str], None], run: int) -> None:
    run_ceiling(load, figures, log, run, barrier=True)


# ------------------------------------------------------------------------------- shared


async def record_phase(
    figures: Figures,
    pids: Sequence[int],
    load: Load,
    phase: Callable[[int, int, str], Any],
) -> None:
    """The 1-client and N-client phases of a peer, timed the way raftmeta's are."""
    for clients, count in (
        (1, load.single_client),
        (load.concurrent_clients, load.per_concurrent_client),
    ):
        cpu = cpu_seconds(pids)
        began = time.perf_counter()
        latencies = await phase(clients, count, f"c{clients}")
        elapsed = time.perf_counter() - began
        figures.add_client_phase(
            clients,
            {
                "rate": len(latencies) / elapsed,
                "p50_ms": 1000 * percentile(latencies, 0.5),
                "p99_ms": 1000 * percentile(latencies, 0.99),
                "quorum_cpu_ms": 1000 * (cpu_seconds(pids) - cpu) / max(1, len(latencies)),
            },
        )


def summary(name: str, figures: Figures) -> str:
    parts = []
    if figures.serial_p50:
        parts.append(
            f"serial p50/p99 {figures.serial_p50[-1]:.2f}/{figures.serial_p99[-1]:.2f} ms, "
            f"CPU {figures.serial_cpu_ms[-1]:.2f} ms per write"
        )
    if figures.one_rate:
        parts.append(f"1 client {figures.one_rate[-1]:,.0f}/s")
    if figures.many_rate:
        many = f"16 clients {figures.many_rate[-1]:,.0f}/s"
        if figures.many_p99:
            many += f" (p99 {figures.many_p99[-1]:.1f} ms)"
        if figures.many_cpu_ms:
            many += f", server CPU {figures.many_cpu_ms[-1]:.2f} ms per write"
        parts.append(many)
    return f"  {name}: {', '.join(parts)}"


def median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def table(
    results: dict[str, Figures], load: Load, runs: int, variants: Sequence[str] = ()
) -> list[str]:
    """Medians per system; raftmeta's ratio to each peer (not to its own variants), and the
    Kafka door's to etcd and to the gRPC door."""
    names = list(results)
    rows: list[tuple[str, str, Callable[[Figures], list[float]]]] = [
        ("serial write p50", "ms", lambda f: f.serial_p50),
        ("serial write p99", "ms", lambda f: f.serial_p99),
        ("server CPU per serial write (3 voters)", "ms", lambda f: f.serial_cpu_ms),
        ("1 client: writes/s", "/s", lambda f: f.one_rate),
        ("1 client: p50", "ms", lambda f: f.one_p50),
        ("1 client: p99", "ms", lambda f: f.one_p99),
        ("1 client: server CPU per write", "ms", lambda f: f.one_cpu_ms),
        (f"{load.concurrent_clients} clients: writes/s", "/s", lambda f: f.many_rate),
        (f"{load.concurrent_clients} clients: p50", "ms", lambda f: f.many_p50),
        (f"{load.concurrent_clients} clients: p99", "ms", lambda f: f.many_p99),
        (f"{load.concurrent_clients} clients: server CPU per write", "ms", lambda f: f.many_cpu_ms),
        (
            f"{load.concurrent_clients} clients: leader append-to-commit p50",
            "ms",
            lambda f: f.many_commit_p50,
        ),
        (
            f"{load.concurrent_clients} clients: leader append-to-commit p99",
            "ms",
            lambda f: f.many_commit_p99,
        ),
    ]
    pairs = ratio_pairs(names, variants)
    widths = {name: max(12, len(name) + 2) for name in names}
    header = f"{'(medians of ' + str(runs) + ' runs; ratios per run)':<50}" + "".join(
        f"{name:>{widths[name]}}" for name in names
    )
    ratio_widths = {pair: max(20, len("/".join(pair)) + 2) for pair in pairs}
    header += "".join(f"{'/'.join(pair):>{ratio_widths[pair]}}" for pair in pairs)
    lines = [header]
    for label, unit, pick in rows:
        values = {name: median(pick(results[name])) for name in names}
        if all(value is None for value in values.values()):
            continue  # a phase this run left out (--serial)
        cells = "".join(
            f"{'-' if values[name] is None else format_value(values[name], unit):>{widths[name]}}"
            for name in names
        )
        ratios = ""
        for pair in pairs:
            ratio = run_ratio(pick(results[pair[0]]), pick(results[pair[1]]))
            shown = "-" if ratio is None else f"{ratio:.2f}x"
            ratios += f"{shown:>{ratio_widths[pair]}}"
        lines.append(f"{label + ' (' + unit + ')':<50}{cells}{ratios}")
    return lines


def ratio_pairs(names: Sequence[str], variants: Sequence[str]) -> list[tuple[str, str]]:
    """The (system, reference) pairs the table gives ratios for: raftmeta (its gRPC door)
    against every peer and ceiling, then its Kafka door against etcd and the gRPC door."""
    pairs = []
    if "raftmeta" in names:
        pairs += [
            ("raftmeta", name) for name in names if name not in ("raftmeta", KAFKA, *variants)
        ]
    if KAFKA in names:
        pairs += [(KAFKA, name) for name in ("etcd", "raftmeta") if name in names]
    return pairs


def run_ratio(mine: Sequence[float], theirs: Sequence[float]) -> float | None:
    """The median of the per-run ratios when both systems have a figure from every run (each
    ratio then compares one window), else the ratio of the medians."""
    if not mine or not theirs:
        return None
    if len(mine) == len(theirs) and all(theirs):
        return statistics.median(a / b for a, b in zip(mine, theirs, strict=True))
    return (
        statistics.median(mine) / statistics.median(theirs) if statistics.median(theirs) else None
    )


def format_value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if unit == "/s" else f"{value:.2f}"


SYSTEMS: dict[str, Callable[[Load, Figures, Callable[[str], None], int], None]] = {
    "raftmeta": run_raftmeta,
    KAFKA: run_raftmeta_kafka,
    "etcd": run_etcd,
    "zookeeper": run_zookeeper,
    CEILING: run_ceiling,
    BARRIER: run_barrier,
}
ALIASES = {
    "grpc": "raftmeta",
    "kafka": KAFKA,
    "zk": "zookeeper",
    "noop": CEILING,
    "barrier": BARRIER,
}
"""Short names ``--only`` also takes."""


def missing(system: str) -> str | None:
    """Why ``system`` cannot run here, or None when it can."""
    if system == "etcd" and not Path(ETCD).exists():
        return "etcd is not installed (Debian: apt-get install etcd-server; or `make bench-peers`)"
    if system == "zookeeper":
        if not ZOOKEEPER_JAR.exists() or shutil.which("java") is None:
            return (
                "ZooKeeper is not installed (Debian: apt-get install zookeeper; "
                "or `make bench-peers`)"
            )
        try:
            import kazoo  # noqa: F401
        except ImportError:
            return "the kazoo client is not installed (pip install kazoo; or `make bench-peers`)"
    if system == KAFKA:
        try:
            import confluent_kafka  # noqa: F401
        except ImportError:
            return "confluent-kafka is not installed (pip install -e '.[dev]')"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per system (median is shown)")
    parser.add_argument("--quick", action="store_true", help="fewer writes per phase")
    parser.add_argument(
        "--serial",
        action="store_true",
        help="only the serial writes (p50/p99, CPU per write), for a quick comparison of the "
        "commit path; results go to results/peers_serial_bench.txt",
    )
    parser.add_argument(
        "--only",
        default=",".join(SYSTEMS),
        help=f"comma-separated systems to run (default: {','.join(SYSTEMS)}; also "
        f"{', '.join(f'{short} for {name}' for short, name in ALIASES.items())})",
    )
    parser.add_argument(
        "--kafka-clients",
        choices=("processes", "threads"),
        default=None,
        help="the Kafka column's N clients as N processes or as N threads of one process "
        "(default: benchmarks/kafka_create_topics.py's DEFAULT_CLIENT_MODE)",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME:KEY=VALUE[,KEY=VALUE]",
        help="also run raftmeta's CreateTopics phases with these controller settings, as a "
        "column of its own (e.g. one-by-one:controller.append.max.in.flight=0)",
    )
    parser.add_argument("--noop-server", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.noop_server is not None:
        from raftmeta.quorum import event_loop

        event_loop.run(noop_server_main(args.noop_server))
        return 0
    variants: dict[str, dict[str, str]] = {}
    for spec in args.variant:
        label, _, assignments = spec.partition(":")
        pairs = [item.partition("=") for item in assignments.split(",") if item]
        if not label or not pairs or any(not key or not sep for key, sep, _ in pairs):
            parser.error(f"--variant {spec!r}: expected NAME:KEY=VALUE[,KEY=VALUE]")
        variants[f"raftmeta[{label}]"] = {key: value for key, _, value in pairs}
    chosen = [ALIASES.get(name.strip(), name.strip()) for name in args.only.split(",")]
    chosen = list(dict.fromkeys(name for name in chosen if name))
    unknown = [name for name in chosen if name not in SYSTEMS]
    if args.runs < 1 or unknown or not chosen:
        parser.error(
            f"--runs must be at least 1 and --only a subset of {','.join(SYSTEMS)} "
            f"(or {','.join(ALIASES)})"
        )
    load = QUICK if args.quick else FULL
    if args.serial:
        load = dataclasses.replace(load, serial_only=True)
    report = Report(RESULTS.with_name("peers_serial_bench.txt") if args.serial else RESULTS)
    out = report.out
    report.start()
    systems = []
    for name in chosen:
        reason = missing(name)
        if reason is None:
            systems.append(name)
        else:
            out(f"skipped {name}: {reason}")
    phases = f"{load.serial} serial writes"
    if not load.serial_only:
        phases += (
            f", 1 client x {load.single_client}, "
            f"{load.concurrent_clients} clients x {load.per_concurrent_client}"
        )
    out(
        f"three server processes per system on 127.0.0.1, fsync on, 100-byte values; "
        f"{phases}; clients in this Python process (the Kafka column's in their own), sent "
        "to the leader"
    )
    out(
        "a write is: etcd Put of one key; ZooKeeper create of one znode; raftmeta serial = one "
        "record through the embedded append API (timed inside the leader), raftmeta 1/16 "
        "clients = CreateTopics through gRPC (1 topic, 3 partitions, RF 3, 6 brokers)"
    )
    runners = dict(SYSTEMS)
    if KAFKA in systems:
        from benchmarks.kafka_create_topics import DEFAULT_CLIENT_MODE

        kafka_mode = args.kafka_clients or DEFAULT_CLIENT_MODE
        runners[KAFKA] = functools.partial(run_raftmeta_kafka, client_mode=kafka_mode)
        many = load.concurrent_clients
        out(
            f"{KAFKA} = raftmeta's 1/{many}-client CreateTopics through its controllers' KAFKA "
            "listeners (1 topic, 3 partitions, RF 3, the same 6 brokers), each client a "
            f"confluent-kafka AdminClient of its own, the {many} clients as "
            + (f"{many} processes" if kafka_mode == "processes" else "threads of one process")
            + "; server CPU is the three controllers' over each phase, as for raftmeta"
        )
    if CEILING in systems:
        out(
            f"{CEILING} = the ceiling: one grpc.aio server process whose CreateTopics answers at "
            "once, driven by the same clients (what any Python gRPC server reaches here)"
        )
    if BARRIER in systems:
        out(
            f"{BARRIER} = the same server answering each round of requests together, once all "
            f"clients' are in (or {BARRIER_WAIT_MS:.0f} ms passed), {BARRIER_COMMIT_MS:.1f} ms "
            "later: what a server that makes its clients share commits reaches with no other work"
        )
    if variants:
        out(
            "variants (CreateTopics phases only): "
            + "; ".join(
                f"{name} = {','.join(f'{k}={v}' for k, v in settings.items())}"
                for name, settings in variants.items()
            )
        )
    # raftmeta's variants stand beside it, before the peers.
    order: list[str] = []
    for name in systems:
        order.extend([name, *variants] if name == "raftmeta" else [name])
    results = {name: Figures() for name in order}

    def say(line: str) -> None:
        print(line, flush=True)

    for run in range(args.runs):
        print(f"run {run + 1}/{args.runs}", flush=True)
        for name in systems:
            runners[name](load, results[name], say, run)
            if name == "raftmeta":
                for variant, settings in variants.items():
                    run_raftmeta(load, results[variant], say, run, settings, variant)
    out("")
    for line in table(results, load, args.runs, list(variants)):
        out(line)
    report.save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
