"""``raftmeta dev``: a local quorum (controllers 3000, 3001, ...; three by default) and
brokers until Ctrl-C, with where everything is printed once the quorum has a leader and every
broker is unfenced. With ``--combined`` the brokers are the controllers' own
(``process.roles=broker,controller``), under the same ids, and no broker process runs."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from raftmeta.devkit.cluster import KAFKA_PORT_OFFSET, BrokerProcess, DevCluster
from raftmeta.security.tls import TlsSettings
from raftmeta.storage.errors import StorageError


def register(commands: Any) -> None:
    dev = commands.add_parser(
        "dev", help="run a local quorum (controllers 3000, 3001, ...) and brokers until Ctrl-C"
    )
    dev.add_argument(
        "--data-dir", type=Path, default=Path("raftmeta-dev"), help="where the nodes keep data"
    )
    dev.add_argument(
        "--base-port",
        type=_port,
        default=19093,
        help="node 3000's port; the other controllers the next ones",
    )
    dev.add_argument(
        "--controllers",
        type=_controllers,
        default=3,
        help="controller processes, ids 3000.. on consecutive ports (default 3; 1 to 9)",
    )
    dev.add_argument(
        "--dynamic",
        action="store_true",
        help="a dynamic quorum (KIP-853): voters kept in the log, changed with "
        "quorum add-controller / remove-controller",
    )
    dev.add_argument(
        "--brokers",
        type=_count,
        default=None,
        help="broker processes, ids 1..N (default 3; 0: none; none with --combined)",
    )
    dev.add_argument(
        "--combined",
        action="store_true",
        help="combined nodes (process.roles=broker,controller): each controller runs its broker "
        "in its own process, under its own id, and no separate broker is started",
    )
    dev.add_argument(
        "--racks",
        type=_count,
        default=3,
        help="racks rack-1..rack-R, brokers round-robin (default 3; 0: no racks)",
    )
    dev.add_argument(
        "--tls",
        action="store_true",
        help="mutual TLS everywhere, with a throwaway CA and certificates under DATA_DIR/tls",
    )
    dev.add_argument(
        "--kafka",
        action="store_true",
        help="a Kafka-protocol listener on every controller (base port + 100 + i), for Kafka "
        "admin clients; plaintext only",
    )
    dev.set_defaults(handler=run)


MAX_PORT = 65_535


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65533:
        raise argparse.ArgumentTypeError(f"port {port} is out of range (1 to 65533)")
    return port


def _count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= count <= 100:
        raise argparse.ArgumentTypeError(f"{count} is out of range (0 to 100)")
    return count


def _controllers(text: str) -> int:
    count = _count(text)
    if not 1 <= count <= 9:
        raise argparse.ArgumentTypeError(f"{count} controllers: give 1 to 9")
    return count


def run(args: argparse.Namespace) -> int:
    kafka = bool(getattr(args, "kafka", False))
    if kafka and args.tls:
        print(
            "raftmeta dev: --kafka cannot be used with --tls: the Kafka listener is plaintext only",
            file=sys.stderr,
        )
        return 2
    combined = bool(getattr(args, "combined", False))
    brokers = args.brokers
    if combined and brokers:
        print(
            "raftmeta dev: --combined runs no separate brokers: leave out --brokers",
            file=sys.stderr,
        )
        return 2
    if combined and getattr(args, "dynamic", False):
        print("raftmeta dev: --combined runs a static quorum: leave out --dynamic", file=sys.stderr)
        return 2
    controllers = int(getattr(args, "controllers", 3))
    last = controllers - 1
    if args.base_port + last > MAX_PORT:
        print(
            f"raftmeta dev: {controllers} controllers need ports up to --base-port + {last}; "
            f"base port {args.base_port} leaves them past {MAX_PORT}",
            file=sys.stderr,
        )
        return 2
    if kafka and args.base_port + KAFKA_PORT_OFFSET + last > MAX_PORT:
        print(
            f"raftmeta dev: --kafka needs ports up to --base-port + {KAFKA_PORT_OFFSET + last}; "
            f"base port {args.base_port} leaves them past {MAX_PORT}",
            file=sys.stderr,
        )
        return 2
    return run_dev(
        args.data_dir,
        args.base_port,
        brokers=0 if combined else (3 if brokers is None else brokers),
        combined=combined,
        racks=args.racks,
        tls=args.tls,
        kafka=kafka,
        controllers=controllers,
        dynamic=bool(getattr(args, "dynamic", False)),
    )


def run_dev(
    root: Path,
    base_port: int,
    *,
    brokers: int = 0,
    racks: int = 0,
    leader_deadline_s: float = 30.0,
    tls: bool = False,
    kafka: bool = False,
    controllers: int = 3,
    dynamic: bool = False,
    combined: bool = False,
) -> int:
    """``raftmeta dev``: start the quorum and the brokers, report where everything is, and
    stop it all (brokers first) on Ctrl-C or SIGTERM."""
    import threading

    from raftmeta.admin.quorum import DescribeError, wait_for_leader

    cluster = DevCluster(
        root,
        base_port,
        brokers=brokers,
        racks=racks,
        tls=tls,
        kafka=kafka,
        controllers=controllers,
        dynamic=dynamic,
        combined=combined,
    )
    try:
        fresh = cluster.prepare()
    except (OSError, ValueError, StorageError) as error:
        print(f"cannot prepare {cluster.root}: {error}", file=sys.stderr)
        return 1
    stop = threading.Event()

    def request_stop(signum: int, frame: object) -> None:
        stop.set()

    def give_up() -> bool:
        return stop.is_set() or bool(cluster.exited())

    previous = {
        signum: signal.signal(signum, request_stop) for signum in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        cluster.start()
        for node_id, node in cluster.nodes.items():
            print(f"node {node_id}: pid {node.pid}, log {node.log_path}", flush=True)
        try:
            info = wait_for_leader(
                cluster.bootstrap_servers,
                cluster.cluster_id,
                leader_deadline_s,
                give_up=give_up,
                tls=cluster.client_tls(),
            )
        except DescribeError as error:
            if stop.is_set():
                return 0
            return _report_failure(cluster, str(error))
        state = "new cluster" if fresh else "resumed cluster"
        print(f"Cluster id: {cluster.cluster_id} ({state})", flush=True)
        print(f"Bootstrap servers: {cluster.bootstrap_servers}", flush=True)
        print(f"Leader: node {info.leader_id} (epoch {info.leader_epoch})", flush=True)
        command_config = f" --command-config {cluster.client_config}" if tls else ""
        if tls:
            print(f"TLS: mutual, client settings in {cluster.client_config}", flush=True)
        if cluster.broker_ids:
            cluster.start_brokers()
            for broker_id, broker in cluster.brokers.items():
                rack = cluster.rack_of(broker_id) or "no rack"
                print(
                    f"broker {broker_id}: pid {broker.pid}, {rack}, log {broker.log_path}",
                    flush=True,
                )
            unfenced = wait_for_brokers(
                cluster.bootstrap_servers,
                set(cluster.broker_ids),
                leader_deadline_s,
                give_up,
                tls=cluster.client_tls(),
            )
            if unfenced is None:
                if stop.is_set():
                    return 0
                return _report_failure(cluster, "the brokers did not all register in time")
            within = " (combined with the controllers)" if combined else ""
            print(f"Brokers: {len(unfenced)} registered and unfenced{within}", flush=True)
            print(
                "Create a topic with: raftmeta topics --bootstrap-server "
                f"{cluster.bootstrap_servers} --create --topic T --partitions 6 "
                f"--replication-factor {min(3, len(cluster.broker_ids))}{command_config}",
                flush=True,
            )
        print(
            "Describe with: raftmeta quorum describe --bootstrap-server "
            f"{cluster.bootstrap_servers} --cluster-id {cluster.cluster_id}{command_config}",
            flush=True,
        )
        if kafka:
            print(f"Kafka bootstrap servers: {cluster.kafka_bootstrap}", flush=True)
            print(
                "Kafka admin clients: e.g. confluent_kafka.admin.AdminClient("
                f"{{'bootstrap.servers': '{cluster.kafka_bootstrap}'}})",
                flush=True,
            )
        print("Press Ctrl-C to stop.", flush=True)
        # Wakes at once on a signal; the timeout only bounds how late a crashed node is noticed.
        while not stop.wait(0.5):
            if cluster.exited():
                return _report_failure(cluster, "a process exited")
        print("Stopping...", file=sys.stderr, flush=True)
        return 0
    finally:
        cluster.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def wait_for_brokers(
    bootstrap: str,
    broker_ids: set[int],
    deadline_s: float,
    give_up: Callable[[], bool],
    *,
    tls: TlsSettings | None = None,
) -> set[int] | None:
    """Poll DescribeCluster until every broker in ``broker_ids`` is registered and unfenced;
    None if ``give_up()`` turns true or the deadline passes first."""
    import asyncio

    from raftmeta.channel import ControllerChannel
    from raftmeta.errors import KafkaError
    from raftmeta.rpc import admin_pb2

    async def poll() -> set[int] | None:
        give_up_at = time.monotonic() + deadline_s
        async with ControllerChannel(bootstrap, request_timeout_ms=2000, tls=tls) as channel:
            while time.monotonic() < give_up_at and not give_up():
                try:
                    response = await channel.call(
                        "Admin/DescribeCluster", admin_pb2.DescribeClusterRequest()
                    )
                except KafkaError:
                    continue
                unfenced = {b.broker_id for b in response.brokers if not b.fenced}
                if broker_ids <= unfenced:
                    return unfenced & broker_ids
                # Pacing a poll of another process's progress, not synchronisation.
                await asyncio.sleep(0.1)
        return None

    return asyncio.run(poll())


def _report_failure(cluster: DevCluster, reason: str) -> int:
    print(f"dev cluster failed: {reason}", file=sys.stderr)
    for node in cluster.exited():
        tail = node.log_tail(1)
        kind = "broker" if isinstance(node, BrokerProcess) else "node"
        print(f"{kind} {node.node_id} exited with {node.exit_status}: {tail}", file=sys.stderr)
    return 1
