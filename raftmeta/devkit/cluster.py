"""A local three-node quorum of real ``raftmeta serve`` processes, with optional ``raftmeta
broker`` processes beside it, for ``raftmeta dev`` and for tests that need real processes, real
ports and real ``kill -9``.

Controllers are nodes 3000, 3001 and 3002 and brokers 1..N. A broker follows the log as a Raft
observer under its own id, which must never be a voter's (the leader would count its fetches as
that voter's progress); Kafka users also expect "broker 1". With ``combined`` there are no
separate brokers: each node runs ``process.roles=broker,controller``, its broker under the
node's id and reading the node's own replica (:mod:`raftmeta.server.combined_node`).

The directory holds everything, so running again on it resumes the same cluster with its data::

    cluster.id                 the cluster id, chosen on the first run
    node-<id>.properties       each controller's configuration, rewritten on every run
    node-<id>/                 each controller's metadata.log.dir
    node-<id>/broker/          a combined node's broker directory, with broker.status
    node-<id>.log              each controller's stderr, appended across runs
    broker-<id>.properties     the same for each broker
    broker-<id>/               with broker.status: "<metadata offset> <image digest>"
    broker-<id>.log

Children are started in their own sessions, so a Ctrl-C in the terminal reaches only the
parent, which then stops them in order. On Linux each child also asks the kernel to send it
SIGTERM if the parent dies (``raftmeta.devkit.parent``), so even a parent killed with ``kill -9``
leaves no node behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from raftmeta.broker.settings import COMBINED_BROKER_DIR
from raftmeta.common.features import LATEST_RELEASE, release_levels
from raftmeta.config.properties import format_properties, parse_properties
from raftmeta.devkit.parent import child_environment
from raftmeta.raft.control import KRAFT_VERSION_DYNAMIC
from raftmeta.raft.membership import Membership
from raftmeta.raft.voters import Endpoint, ReplicaKey, Voter, VoterSet
from raftmeta.security.certs import write_dev_certificates
from raftmeta.security.listener import client_tls
from raftmeta.security.tls import TlsSettings
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR, MetadataDir
from raftmeta.storage.fsutil import fsync_directory
from raftmeta.storage.markers import write_bootstrap_features
from raftmeta.storage.membership_files import bootstrap_path, write_membership
from raftmeta.storage.meta_properties import generate_id

NODE_IDS = (3000, 3001, 3002)
"""The controllers' ids: far from the brokers' 1..N."""
CLUSTER_ID_FILE = "cluster.id"
DEV_ADMIN_PRINCIPAL = "User:CN=admin"
"""The principal of a TLS dev cluster's client certificate (``CN=admin``), a super user."""
STOP_DEADLINE_S = 10.0
"""A graceful stop takes at most about three seconds; after this a node is killed."""


class NodeProcess:
    """One ``raftmeta serve`` child process and where its output goes."""

    command_name = "serve"

    def __init__(self, node_id: int, config: Path, log_path: Path) -> None:
        self.node_id = node_id
        self.config = config
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, extra_args: Sequence[str] = ()) -> None:
        if self.running:
            raise RuntimeError(f"node {self.node_id} is already running")
        command = [
            sys.executable,
            "-m",
            "raftmeta",
            self.command_name,
            "--config",
            str(self.config),
        ]
        with self.log_path.open("ab") as output:
            self.process = subprocess.Popen(
                [*command, *extra_args],
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=output,
                start_new_session=True,
                env=child_environment(),
            )

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def exit_status(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def signal(self, signum: int) -> None:
        if self.running:
            assert self.process is not None
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signum)

    def kill(self) -> None:
        """``kill -9``: no graceful step, no flush beyond what was already synced."""
        self.signal(signal.SIGKILL)
        self.wait(STOP_DEADLINE_S)

    def wait(self, timeout_s: float) -> int | None:
        if self.process is None:
            return None
        try:
            return self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def log_tail(self, lines: int = 5) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


class BrokerProcess(NodeProcess):
    """One ``raftmeta broker`` child process: SIGTERM makes it shut down under control."""

    command_name = "broker"


def stop_all(nodes: Sequence[NodeProcess], deadline_s: float = STOP_DEADLINE_S) -> None:
    """SIGTERM every node at once, then SIGKILL whatever still runs at the deadline."""
    for node in nodes:
        node.signal(signal.SIGTERM)
    give_up = time.monotonic() + deadline_s
    for node in nodes:
        if node.wait(max(0.0, give_up - time.monotonic())) is None:
            node.signal(signal.SIGKILL)
            node.wait(deadline_s)


COMBINED_ROLES = "broker,controller"
KAFKA_PORT_OFFSET = 100
"""A controller's KAFKA listener port is its gRPC base port plus this plus its index."""


def node_properties(
    node_id: int,
    ports: dict[int, int],
    data_dir: Path,
    cluster_id: str,
    *,
    dynamic: bool = False,
    own_port: int | None = None,
    combined: bool = False,
) -> dict[str, str]:
    """A controller's settings: static voters, or for a ``dynamic`` quorum (KIP-853) the
    others as bootstrap servers and its own CONTROLLER listener on ``own_port`` (default its
    entry in ``ports``); a ``combined`` node runs its broker too."""
    if combined:
        return {
            **node_properties(
                node_id, ports, data_dir, cluster_id, dynamic=dynamic, own_port=own_port
            ),
            "process.roles": COMBINED_ROLES,
        }
    if dynamic:
        port = ports[node_id] if own_port is None else own_port
        return {
            "node.id": str(node_id),
            "process.roles": "controller",
            "controller.quorum.bootstrap.servers": ",".join(
                f"127.0.0.1:{p}" for _, p in sorted(ports.items())
            ),
            "listeners": f"CONTROLLER://127.0.0.1:{port}",
            "metadata.log.dir": str(data_dir),
            "cluster.id": cluster_id,
        }
    voters = ",".join(f"{n}@127.0.0.1:{port}" for n, port in sorted(ports.items()))
    return {
        "node.id": str(node_id),
        "process.roles": "controller",
        "controller.quorum.voters": voters,
        "metadata.log.dir": str(data_dir),
        "cluster.id": cluster_id,
    }


def broker_rack(broker_id: int, racks: int) -> str:
    """Brokers go round-robin over ``rack-1`` .. ``rack-<racks>``."""
    return f"rack-{(broker_id - 1) % racks + 1}"


def broker_properties(
    broker_id: int,
    ports: dict[int, int],
    data_dir: Path,
    cluster_id: str,
    rack: str | None,
    *,
    dynamic: bool = False,
) -> dict[str, str]:
    """A broker's settings: the static voters, or for a ``dynamic`` quorum only the
    controllers as bootstrap servers (the broker follows the voters the log names)."""
    properties = {"node.id": str(broker_id), "process.roles": "broker"}
    if dynamic:
        properties["controller.quorum.bootstrap.servers"] = ",".join(
            f"127.0.0.1:{port}" for _, port in sorted(ports.items())
        )
    else:
        properties["controller.quorum.voters"] = ",".join(
            f"{n}@127.0.0.1:{port}" for n, port in sorted(ports.items())
        )
    properties.update({"metadata.log.dir": str(data_dir), "cluster.id": cluster_id})
    if rack is not None:
        properties["broker.rack"] = rack
    return properties


class DevCluster:
    """``controllers`` voters (3000, 3001, ...; three by default) on
    ``127.0.0.1:base_port..`` under one directory, and ``brokers`` brokers spread over
    ``racks`` racks (no racks when ``racks`` is 0). With ``dynamic`` the quorum keeps its
    voters in the log (KIP-853): formatted with ``--initial-controllers``, each controller
    finds the others through ``controller.quorum.bootstrap.servers``. With ``combined`` every
    controller runs its broker in its own process (``brokers`` must be 0); ``racks`` then
    spreads the nodes' brokers."""

    def __init__(
        self,
        root: Path,
        base_port: int,
        overrides: Mapping[str, str] | None = None,
        *,
        brokers: int = 0,
        racks: int = 0,
        tls: bool = False,
        kafka: bool = False,
        node_overrides: Mapping[int, Mapping[str, str]] | None = None,
        controllers: int = len(NODE_IDS),
        dynamic: bool = False,
        combined: bool = False,
        release_version: str | None = LATEST_RELEASE,
    ) -> None:
        if combined and brokers:
            raise ValueError("combined nodes run their brokers themselves: give no brokers")
        self.root = root.resolve()
        self.combined = combined
        self.release_version = release_version
        """The release whose feature levels a freshly formatted node finalizes, as `raftmeta
        format` does by default; None formats with no levels (an old cluster's start)."""
        self.node_overrides = {node: dict(items) for node, items in (node_overrides or {}).items()}
        """Settings for one node or broker by id, over ``overrides`` (a pinned listener, an
        advertised address)."""
        self.tls = tls
        """Mutual TLS everywhere, with a throwaway CA made under ``<root>/tls`` by
        :meth:`prepare` (new certificates on every start)."""
        self.dynamic = dynamic
        node_ids = tuple(NODE_IDS[0] + i for i in range(controllers))
        self.kafka_ports = (
            {node_id: base_port + KAFKA_PORT_OFFSET + i for i, node_id in enumerate(node_ids)}
            if kafka
            else {}
        )
        """Each controller's KAFKA listener port (``--kafka``), base port + 100 + i."""
        self.overrides = dict(overrides or {})
        """Extra settings for every node and broker, e.g. timeouts a test wants to tell apart."""
        self.racks = racks
        self.brokers = {
            broker_id: BrokerProcess(
                broker_id,
                self.root / f"broker-{broker_id}.properties",
                self.root / f"broker-{broker_id}.log",
            )
            for broker_id in range(1, brokers + 1)
        }
        self.ports = {node_id: base_port + i for i, node_id in enumerate(node_ids)}
        self.nodes = {
            node_id: NodeProcess(
                node_id, self.root / f"node-{node_id}.properties", self.root / f"node-{node_id}.log"
            )
            for node_id in node_ids
        }
        self.cluster_id = ""

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"127.0.0.1:{port}" for port in self.ports.values())

    @property
    def kafka_bootstrap(self) -> str:
        """The controllers' KAFKA listeners, for a Kafka client's ``bootstrap.servers``."""
        return ",".join(f"127.0.0.1:{port}" for port in self.kafka_ports.values())

    def data_dir(self, node_id: int) -> Path:
        return self.root / f"node-{node_id}"

    def broker_dir(self, broker_id: int) -> Path:
        """A broker's directory; a combined node's broker's is inside the node's."""
        if self.combined:
            return self.data_dir(broker_id) / COMBINED_BROKER_DIR
        return self.root / f"broker-{broker_id}"

    @property
    def broker_ids(self) -> tuple[int, ...]:
        """Every broker's id: the separate brokers', or with ``combined`` the nodes'."""
        return tuple(self.nodes) if self.combined else tuple(self.brokers)

    @property
    def client_config(self) -> Path:
        """The client properties file (``--command-config``) for a TLS cluster."""
        return self.root / "client-ssl.properties"

    def client_tls(self) -> TlsSettings | None:
        """What a tool needs to reach this cluster: None without TLS."""
        if not self.tls:
            return None
        return client_tls(parse_properties(self.client_config.read_text()))

    def _tls_properties(self) -> dict[str, dict[str, str]]:
        """Each node's ``ssl.*`` settings by common name, after writing a new CA and
        certificates; empty without TLS."""
        if not self.tls:
            return {}
        names = [
            *(f"controller-{n}" for n in self.nodes),
            *(f"broker-{b}" for b in self.brokers),
            "admin",
        ]
        files = write_dev_certificates(self.root / "tls", names)
        properties = {
            name: {"listener.security.protocol.map": "CONTROLLER:SSL", **item.properties()}
            for name, item in files.items()
        }
        for node_id in self.nodes:
            properties[f"controller-{node_id}"].update(self._authorizer_properties())
        client = {"security.protocol": "SSL", **files["admin"].properties()}
        self.client_config.write_text(format_properties(client))
        return properties

    def _authorizer_properties(self) -> dict[str, str]:
        """A TLS cluster's controllers authorize with the ACLs in the log: the operator's
        certificate (``CN=admin``, the client properties file's) and the controllers are
        super users; a broker's certificate holds only its own lifecycle calls and fetches,
        which its identity grants, so no ACL is needed for the cluster to run."""
        super_users = [DEV_ADMIN_PRINCIPAL, *(f"User:controller-{n}" for n in self.nodes)]
        return {
            "authorizer.class.name": "raftmeta.auth.StandardAuthorizer",
            "super.users": ";".join(super_users),
        }

    def rack_of(self, broker_id: int) -> str | None:
        if self.racks <= 0:
            return None
        if self.combined:
            return broker_rack(list(self.nodes).index(broker_id) + 1, self.racks)
        return broker_rack(broker_id, self.racks)

    def prepare(self) -> bool:
        """Choose (first run) or read the cluster id, format what is not formatted yet and
        write every node's configuration; returns whether the cluster is new."""
        self.root.mkdir(parents=True, exist_ok=True)
        id_file = self.root / CLUSTER_ID_FILE
        fresh = not id_file.exists()
        if fresh:
            temporary = id_file.with_suffix(".tmp")
            temporary.write_text(generate_id() + "\n")
            os.replace(temporary, id_file)
            fsync_directory(self.root)
        self.cluster_id = id_file.read_text().strip()
        tls = self._tls_properties()
        first_voters = self._first_voters()
        for node_id, node in self.nodes.items():
            data_dir = self.data_dir(node_id)
            directory_id = None
            if first_voters is not None:
                key = first_voters.voters.key_of(node_id)
                directory_id = None if key is None else key.directory_id
            properties_before = (data_dir / "meta.properties").exists()
            MetadataDir.format(
                data_dir,
                node_id,
                self.cluster_id,
                ignore_formatted=True,
                directory_id=directory_id,
            )
            if first_voters is not None and not properties_before:
                write_membership(bootstrap_path(data_dir / METADATA_PARTITION_DIR), first_voters)
            if self.release_version is not None and not properties_before:
                # As `raftmeta format` does: a new cluster runs at the release's feature levels
                # (metadata.version, ELR), not with none finalized.
                write_bootstrap_features(data_dir, release_levels(self.release_version))
            properties = node_properties(
                node_id,
                self.ports,
                data_dir,
                self.cluster_id,
                dynamic=self.dynamic,
                combined=self.combined,
            )
            rack = self.rack_of(node_id) if self.combined else None
            if rack is not None:
                properties["broker.rack"] = rack
            properties.update(tls.get(f"controller-{node_id}", {}))
            if node_id in self.kafka_ports:
                if self.tls:  # the KAFKA listener speaks mutual TLS with the same files
                    properties["listener.security.protocol.map"] += ",KAFKA:SSL"
                kafka_listener = f"KAFKA://127.0.0.1:{self.kafka_ports[node_id]}"
                properties["listeners"] = (
                    f"{properties['listeners']},{kafka_listener}"
                    if "listeners" in properties
                    else kafka_listener
                )
            properties.update(self.overrides)
            properties.update(self.node_overrides.get(node_id, {}))
            node.config.write_text(format_properties(properties))
        for broker_id, broker in self.brokers.items():
            data_dir = self.broker_dir(broker_id)
            MetadataDir.format(data_dir, broker_id, self.cluster_id, ignore_formatted=True)
            properties = broker_properties(
                broker_id,
                self.ports,
                data_dir,
                self.cluster_id,
                self.rack_of(broker_id),
                dynamic=self.dynamic,
            )
            properties.update(tls.get(f"broker-{broker_id}", {}))
            properties.update(self.overrides)
            properties.update(self.node_overrides.get(broker_id, {}))
            broker.config.write_text(format_properties(properties))
        return fresh

    def _first_voters(self) -> Membership | None:
        """A dynamic quorum's first voters, each with a new directory id; None for a static
        quorum (or one whose controllers are all formatted already)."""
        if not self.dynamic:
            return None
        return Membership(
            KRAFT_VERSION_DYNAMIC,
            VoterSet(
                Voter(
                    ReplicaKey(node_id, generate_id()),
                    (Endpoint("CONTROLLER", "127.0.0.1", port),),
                )
                for node_id, port in self.ports.items()
            ),
        )

    def start(self, extra_args: Sequence[str] = ()) -> None:
        """Start the controllers (with ``extra_args``); brokers start with ``start_brokers``."""
        for node in self.nodes.values():
            node.start(extra_args)

    def start_brokers(self) -> None:
        for broker in self.brokers.values():
            broker.start()

    def exited(self) -> list[NodeProcess]:
        processes = [*self.nodes.values(), *self.brokers.values()]
        return [n for n in processes if n.process is not None and not n.running]

    def stop(self, deadline_s: float = STOP_DEADLINE_S) -> None:
        """Brokers first, while the controllers can still move their leaderships away."""
        stop_all(list(self.brokers.values()), deadline_s)
        stop_all(list(self.nodes.values()), deadline_s)
