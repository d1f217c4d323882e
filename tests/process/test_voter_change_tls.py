"""Voter changes on a dynamic quorum of real ``raftmeta serve`` processes over mutual TLS with
an authorizer: only a client certificate allowed ALTER on the cluster removes and adds a
controller through ``quorum remove-controller`` / ``add-controller --command-config``; any
other certificate from the cluster's own CA is refused CLUSTER_AUTHORIZATION_FAILED (one line,
exit 1) and the voters stay as they were. A retried change that was already made succeeds. A
broker given only the bootstrap servers finds the voters over TLS."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from raftmeta.admin.quorum import DescribeError, QuorumInfo, describe_quorum
from raftmeta.config.properties import format_properties
from raftmeta.devkit.cluster import DevCluster
from raftmeta.devkit.ports import free_port_run
from raftmeta.security.certs import CertificateAuthority, write_node_files
from raftmeta.storage.meta_properties import read_meta_properties
from tests.support.waiting import wait_until

DEADLINE_S = 30.0
OPERATOR_ACL = "User:CN=admin:Alter:Cluster:kafka-cluster"
"""The dev cluster's client certificate (``CN=admin``) may change the voters."""
NODES_ACL = "User:ANONYMOUS:ClusterAction:Cluster:kafka-cluster"
"""The controllers register themselves on the Admin side without a token."""


def raftmeta(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "raftmeta", *args], capture_output=True, text=True, timeout=90
    )


def client_properties(cluster: DevCluster, common_name: str) -> Path:
    """A client settings file like the dev cluster's, for a new certificate ``common_name``
    signed by the cluster's own CA."""
    tls = cluster.root / "tls"
    ca = CertificateAuthority(
        x509.load_pem_x509_certificate((tls / "ca.pem").read_bytes()),
        _ec_key(tls / "ca.key"),
    )
    files = write_node_files(ca, cluster.root / common_name, common_name)
    path = cluster.root / f"{common_name}.properties"
    path.write_text(format_properties({"security.protocol": "SSL", **files.properties()}))
    return path


def _ec_key(path: Path) -> ec.EllipticCurvePrivateKey:
    key = load_pem_private_key(path.read_bytes(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return key


def test_only_a_certificate_allowed_alter_on_the_cluster_changes_the_voters(
    tmp_path: Path,
) -> None:
    cluster = DevCluster(
        tmp_path / "dev",
        free_port_run(3),
        {
            "authorizer.class.name": "raftmeta.auth.AclAuthorizer",
            "raftmeta.acls": f"{OPERATOR_ACL},{NODES_ACL}",
        },
        tls=True,
        dynamic=True,
        brokers=1,
    )
    cluster.prepare()
    tls = cluster.client_tls()
    bootstrap = cluster.bootstrap_servers

    def voters_are(expected: set[int]) -> QuorumInfo:
        def found() -> QuorumInfo | None:
            for node in cluster.nodes.values():
                assert node.exit_status is None, node.log_tail()
            try:
                info = describe_quorum(bootstrap, cluster.cluster_id, timeout_s=1.0, tls=tls)
            except DescribeError:
                return None
            leader = info.leader
            caught_up = leader is not None and all(
                v.log_end_offset == leader.log_end_offset for v in info.voters
            )
            return info if caught_up and {v.node_id for v in info.voters} == expected else None

        return wait_until(found, f"voters {sorted(expected)}", DEADLINE_S)

    cluster.start()
    try:
        voters_are({3000, 3001, 3002})
        # The broker knows only the bootstrap servers, and asks them for the voters over TLS.
        cluster.start_brokers()
        wait_until(
            lambda: any(o.node_id == 1 for o in voters_are({3000, 3001, 3002}).observers),
            "the broker to fetch as an observer",
            DEADLINE_S,
        )
        intruder = client_properties(cluster, "intruder")
        admin = cluster.client_config
        directory = read_meta_properties(cluster.data_dir(3002) / "meta.properties").directory_id
        assert directory is not None

        def remove(config: Path) -> subprocess.CompletedProcess[str]:
            return raftmeta(
                "quorum",
                "remove-controller",
                "--bootstrap-server",
                bootstrap,
                "--controller-id",
                "3002",
                "--controller-directory-id",
                directory,
                "--timeout",
                "10",
                "--command-config",
                str(config),
            )

        def add(config: Path) -> subprocess.CompletedProcess[str]:
            return raftmeta(
                "quorum",
                "add-controller",
                "--config",
                str(cluster.nodes[3002].config),
                "--timeout",
                "20",
                "--command-config",
                str(config),
            )

        for refused in (remove(intruder), add(intruder)):
            assert refused.returncode == 1, refused
            assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
            assert "CLUSTER_AUTHORIZATION_FAILED" in refused.stderr, refused.stderr
            assert "User:CN=intruder" in refused.stderr, refused.stderr
        voters_are({3000, 3001, 3002})

        removed = remove(admin)
        assert removed.returncode == 0, removed.stderr
        assert "Removed controller 3002" in removed.stdout
        voters_are({3000, 3001})
        # A retry of a change that was made (say after the first attempt timed out while
        # the change went on to commit) succeeds and says so; the leader's code is Kafka's.
        again = remove(admin)
        assert again.returncode == 0, again.stderr
        assert "Nothing to change: controller 3002" in again.stdout, again.stdout
        added = add(admin)
        assert added.returncode == 0, added.stderr
        assert "Added controller 3002" in added.stdout
        voters_are({3000, 3001, 3002})
        again = add(admin)
        assert again.returncode == 0, again.stderr
        assert "Nothing to change: controller 3002" in again.stdout, again.stdout
    finally:
        cluster.stop()
