"""What the demo's steps share: the ``DemoContext`` (where things live, what runs, what was
found so far) and the names every step agrees on (the topics, the broker that joins late).

It has a module of its own so that the steps and the modules holding groups of them
(``moves.py``) both import it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from raftmeta.config.properties import parse_properties
from raftmeta.devkit.cluster import BrokerProcess, DevCluster
from raftmeta.devkit.demo.audit import AuditOutcome
from raftmeta.devkit.demo.display import StepDisplay
from raftmeta.devkit.demo.errors import StepFailed
from raftmeta.devkit.demo.processes import ProcessBook
from raftmeta.devkit.demo.view import ClusterView, Partitions

TOPICS = ("orders", "payments", "clicks")
NEW_BROKER = 7
NEW_BROKER_RACK = "rack-4"
"""The seventh broker joins empty on a rack of its own: every partition already spans the
first three racks, so only a fourth lets it take its share without breaking rack spread."""


@dataclass
class DemoContext:
    """What the steps share: where things live, what runs, what was found so far."""

    root: Path
    display: StepDisplay
    book: ProcessBook
    cluster: DevCluster | None = None
    view: ClusterView | None = None
    victim: int | None = None
    """The broker the demo kills and brings back."""
    victim_down: bool = False
    skew_offset: int = -1
    election_offset: int = -1
    join_offset: int = -1
    """The metadata offset once the seventh broker is unfenced."""
    moves_offset: int = -1
    """The metadata offset once the reassignment has completed."""
    snapshots: dict[str, Path] = field(default_factory=dict)
    audits: dict[str, AuditOutcome] = field(default_factory=dict)
    election_log: Path | None = None
    reassignment_log: Path | None = None
    tls: bool = False
    """Mutual TLS for every process and tool (``DevCluster(tls=True)``)."""

    @property
    def bootstrap_servers(self) -> str:
        return self.require_cluster().bootstrap_servers

    def require_cluster(self) -> DevCluster:
        if self.cluster is None:
            raise StepFailed("the quorum is not running")
        return self.cluster

    def require_view(self) -> ClusterView:
        if self.view is None:
            raise StepFailed("no AdminClient: the quorum is not running")
        return self.view

    def first_brokers(self) -> list[int]:
        """The brokers that start with the cluster; broker ``NEW_BROKER`` joins later."""
        return [b for b in self.require_cluster().brokers if b != NEW_BROKER]

    def client_properties(self) -> dict[str, str]:
        """``security.protocol`` and the ``ssl.*`` keys the admin tools use (from the dev
        cluster's client properties file); empty for plaintext."""
        cluster = self.require_cluster()
        if not cluster.tls:
            return {}
        return parse_properties(cluster.client_config.read_text())

    def node_dirs(self) -> list[Path]:
        cluster = self.require_cluster()
        return [cluster.data_dir(node_id) for node_id in cluster.nodes]

    def process_died(self) -> str | None:
        """Why waiting is pointless: a controller or a broker exited on its own."""
        cluster = self.require_cluster()
        for process in cluster.exited():
            if self.victim_down and process is cluster.brokers.get(self.victim or -1):
                continue
            kind = "broker" if isinstance(process, BrokerProcess) else "controller"
            return (
                f"{kind} {process.node_id} exited with {process.exit_status}; "
                f"see {process.log_path}"
            )
        return None

    def partitions(self) -> Partitions:
        return self.require_view().partitions(TOPICS)
