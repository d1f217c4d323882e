"""Which TLS settings a controller listener and a client get from Kafka's keys, and the
one-line configuration errors (exit status 2 from ``raftmeta serve``) for unusable ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.cli.main import main
from raftmeta.config.errors import ConfigError
from raftmeta.config.node import parse_config
from raftmeta.security.listener import client_tls, controller_listener_tls
from raftmeta.security.tls import ClientAuth
from tests.security.support import TestPki

BASE = {
    "node.id": "1",
    "controller.quorum.voters": "1@127.0.0.1:19999",
    "metadata.log.dir": "/nonexistent",
}


def test_plaintext_by_default_and_ssl_with_the_node_certificate(tmp_path: Path) -> None:
    assert controller_listener_tls(parse_config(BASE)) is None
    pki = TestPki.create(tmp_path)
    config = parse_config(
        {
            **BASE,
            "listener.security.protocol.map": "CONTROLLER:SSL",
            **pki.properties("controller-1"),
        }
    )
    tls = controller_listener_tls(config)
    assert tls is not None and tls.keystore is not None
    assert tls.client_auth is ClientAuth.REQUIRED


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            {"listeners": "INTERNAL://127.0.0.1:19999"},
            "Invalid configuration listeners: listener INTERNAL has no entry in "
            "listener.security.protocol.map",
        ),
        (
            {"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT"},
            "Invalid configuration listeners: listener CONTROLLER has no entry in "
            "listener.security.protocol.map",
        ),
        (
            {"listener.security.protocol.map": "CONTROLLER:SSL"},
            "Invalid configuration ssl.keystore.location: listener CONTROLLER is SSL and needs "
            "this node's certificate",
        ),
        (
            {"listener.security.protocol.map": "CONTROLLER:SASL_SSL"},
            "Invalid configuration listener.security.protocol.map: listener CONTROLLER has "
            "protocol SASL_SSL (SASL is served on the KAFKA listener only",
        ),
    ],
)
def test_unusable_listener_settings_are_one_line_errors(
    extra: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        controller_listener_tls(parse_config({**BASE, **extra}))
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value)


def test_serve_exits_2_for_an_ssl_listener_without_a_keystore(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    properties = tmp_path / "node.properties"
    settings = {**BASE, "metadata.log.dir": str(tmp_path / "data")}
    settings["listener.security.protocol.map"] = "CONTROLLER:SSL"
    properties.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
    assert main(["serve", "--config", str(properties)]) == 2
    err = capsys.readouterr().err
    assert "ssl.keystore.location" in err and "Traceback" not in err


def test_a_client_speaks_ssl_when_asked_and_refuses_ssl_keys_over_plaintext(
    tmp_path: Path,
) -> None:
    pki = TestPki.create(tmp_path)
    assert client_tls({}) is None
    tls = client_tls({"security.protocol": "SSL", **pki.properties("admin")})
    assert tls is not None and tls.keystore is not None
    node_file = {"listener.security.protocol.map": "CONTROLLER:SSL", **pki.properties("broker-1")}
    assert client_tls(node_file) is not None
    with pytest.raises(ConfigError, match=r"security\.protocol is PLAINTEXT"):
        client_tls({"security.protocol": "PLAINTEXT", **pki.properties("admin")})
    with pytest.raises(ConfigError, match="expected PLAINTEXT or SSL"):
        client_tls({"security.protocol": "SASL_SSL"})
