"""Where a node serves the Raft stream and how it calls its peers, from its configuration:
``controller.quorum.transport`` and a ``RAFT`` listener, with one-line errors for the
contradictions, and the stream listener under the controller listener's TLS."""

from __future__ import annotations

import socket
import ssl
from pathlib import Path

import pytest

from raftmeta.config.errors import ConfigError
from raftmeta.config.node import parse_config
from raftmeta.quorum.settings import NodeSettings
from raftmeta.security.listener import controller_listener_tls
from raftmeta.security.ssl_contexts import client_ssl_context, server_ssl_context
from raftmeta.storage import MetadataDir
from tests.process.helpers import free_base_port, raftmeta
from tests.security.support import TestPki

BASE = {
    "node.id": "1",
    "controller.quorum.voters": "1@127.0.0.1:19999",
    "metadata.log.dir": "/nonexistent",
}


def test_the_stream_is_the_default_on_a_port_the_os_chooses() -> None:
    settings = NodeSettings.from_config(parse_config(BASE))
    assert settings.transport == "stream"
    assert settings.stream_listen == ("127.0.0.1", 0)


def test_a_raft_listener_names_the_stream_port_and_needs_no_protocol_map_entry() -> None:
    config = parse_config({**BASE, "listeners": "CONTROLLER://:19999,RAFT://:19998"})
    assert NodeSettings.from_config(config).stream_listen == ("0.0.0.0", 19998)
    assert controller_listener_tls(config) is None


def test_grpc_serves_no_stream() -> None:
    config = parse_config({**BASE, "controller.quorum.transport": "grpc"})
    settings = NodeSettings.from_config(config)
    assert settings.transport == "grpc" and settings.stream_listen is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"controller.quorum.transport": "udp"},
            "Invalid value 'udp' for configuration controller.quorum.transport: must be grpc "
            "or stream",
        ),
        (
            {"controller.quorum.transport": "grpc", "listeners": "RAFT://:19998"},
            "Invalid configuration listeners: a RAFT listener serves the Raft stream, but "
            "controller.quorum.transport=grpc",
        ),
    ],
)
def test_contradictions_are_one_line_errors(extra: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        NodeSettings.from_config(parse_config({**BASE, **extra}))
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_the_raft_listener_cannot_be_plaintext_beside_an_ssl_controller_listener(
    tmp_path: Path,
) -> None:
    pki = TestPki.create(tmp_path)
    config = parse_config(
        {
            **BASE,
            "listeners": "CONTROLLER://:19999,RAFT://:19998",
            "listener.security.protocol.map": "CONTROLLER:SSL,RAFT:PLAINTEXT",
            **pki.properties("controller-1"),
        }
    )
    with pytest.raises(ConfigError, match="listener RAFT must speak what CONTROLLER speaks"):
        controller_listener_tls(config)


def test_stream_tls_contexts_require_and_present_the_node_certificates(tmp_path: Path) -> None:
    pki = TestPki.create(tmp_path)
    config = parse_config(
        {
            **BASE,
            "listener.security.protocol.map": "CONTROLLER:SSL",
            **pki.properties("controller-1"),
        }
    )
    tls = controller_listener_tls(config)
    assert tls is not None
    server = server_ssl_context(tls)
    assert server.verify_mode is ssl.CERT_REQUIRED
    assert [c["subject"] for c in server.get_ca_certs()] == [
        c["subject"] for c in client_ssl_context(tls).get_ca_certs()
    ]
    assert client_ssl_context(tls).check_hostname


def test_serve_refuses_a_raft_listener_on_a_taken_port_in_one_line(tmp_path: Path) -> None:
    base = free_base_port(2)
    MetadataDir.format(tmp_path / "data", 1, "stream-cluster")
    config = tmp_path / "node.properties"
    config.write_text(
        "node.id=1\n"
        f"controller.quorum.voters=1@127.0.0.1:{base}\n"
        f"listeners=CONTROLLER://127.0.0.1:{base},RAFT://127.0.0.1:{base + 1}\n"
        f"metadata.log.dir={tmp_path / 'data'}\n"
    )
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind(("127.0.0.1", base + 1))
        holder.listen()
        result = raftmeta("serve", "--config", str(config))
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"127.0.0.1:{base + 1}" in lines[0] and "in use" in lines[0], lines[0]
