"""``raftmeta dev --tls`` as a user runs it: a quorum and a broker over mutual TLS with a
throwaway CA, the admin CLI creating a topic and ``quorum describe`` reading the quorum with the
printed client settings (``--command-config``), and plaintext clients refused."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.process.helpers import DEADLINE_S, free_base_port
from tests.process.test_dev import run_dev_until_leader, stop_with_ctrl_c


def _topics(servers: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "raftmeta", "topics", "--bootstrap-server", servers, *args],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )


def _quorum_describe(servers: str, cluster_id: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "raftmeta",
            "quorum",
            "describe",
            "--bootstrap-server",
            servers,
            "--cluster-id",
            cluster_id,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
    )


def test_dev_tls_runs_the_cluster_with_mutual_tls(tmp_path: Path) -> None:
    base_port = free_base_port()
    data_dir = tmp_path / "dev"
    dev, output = run_dev_until_leader(data_dir, base_port, "--brokers", "1", "--tls")
    try:
        assert "Brokers: 1 registered and unfenced" in output, output
        client = data_dir / "client-ssl.properties"
        assert f"TLS: mutual, client settings in {client.resolve()}" in output
        assert (data_dir / "tls" / "ca.pem").exists()
        node_config = (data_dir / "node-3000.properties").read_text()
        assert "listener.security.protocol.map=CONTROLLER\\:SSL" in node_config, node_config
        servers = ",".join(f"127.0.0.1:{base_port + i}" for i in range(3))
        plain = tmp_path / "plain.properties"
        plain.write_text("request.timeout.ms=1000\ndefault.api.timeout.ms=2000\n")
        refused = _topics(servers, "--create", "--topic", "t", "--command-config", str(plain))
        assert refused.returncode != 0 and "Traceback" not in refused.stderr
        created = _topics(servers, "--create", "--topic", "t", "--command-config", str(client))
        assert (created.returncode, created.stdout) == (0, "Created topic t.\n"), created.stderr
        cluster_id = (data_dir / "cluster.id").read_text().strip()
        assert f"--cluster-id {cluster_id} --command-config {client.resolve()}" in output
        described = _quorum_describe(servers, cluster_id, "--command-config", str(client))
        assert described.returncode == 0, described.stderr
        assert re.search(r"^LeaderId:\s+300[012]$", described.stdout, re.M), described.stdout
        assert re.search(r"^CurrentObservers:\s+\[1\]$", described.stdout, re.M)
        unencrypted = _quorum_describe(servers, cluster_id, "--command-config", str(plain))
        assert unencrypted.returncode == 1 and "Traceback" not in unencrypted.stderr
        assert len(unencrypted.stderr.strip().splitlines()) == 1, unencrypted.stderr
        stop_with_ctrl_c(dev, output, processes=4)
    finally:
        if dev.poll() is None:
            dev.kill()
