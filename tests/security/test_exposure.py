"""Secure by default: a listener other hosts can reach must authenticate its callers, or the
node refuses to start in one line (exit 2) unless the operator allows it explicitly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from raftmeta.cli.main import main
from raftmeta.config.node import parse_config
from raftmeta.devkit.ports import free_ports
from raftmeta.security.exposure import (
    ALLOW_KEY,
    exposure_problem,
    is_loopback,
    unauthenticated_exposure,
)
from tests.security.support import TestPki
from tests.support.waiting import wait_until


def _config(host: str, **extra: str) -> dict[str, str]:
    return {
        "node.id": "1",
        "controller.quorum.voters": f"1@{host}:19999",
        "listeners": f"CONTROLLER://{host}:19999",
        "metadata.log.dir": "/nonexistent",
        **extra,
    }


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("", False),
        ("0.0.0.0", False),
        ("10.0.0.7", False),
        ("node-1.example", False),
    ],
)
def test_only_loopback_addresses_count_as_local(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_plaintext_on_loopback_is_fine_and_elsewhere_refused_in_one_line() -> None:
    assert exposure_problem(parse_config(_config("127.0.0.1"))) is None
    problem = exposure_problem(parse_config(_config("10.0.0.7")))
    assert problem is not None and "\n" not in problem
    assert "CONTROLLER://10.0.0.7:19999" in problem and ALLOW_KEY in problem


def test_a_node_without_listeners_is_judged_by_its_voter_address() -> None:
    implicit = {
        "node.id": "1",
        "controller.quorum.voters": "1@10.0.0.7:19999",
        "metadata.log.dir": "/nonexistent",
    }
    assert [item.host for item in unauthenticated_exposure(parse_config(implicit))] == ["10.0.0.7"]


def test_kafka_listener_needs_sasl_or_client_certificates_too() -> None:
    base = _config(
        "127.0.0.1",
        **{"listeners": "CONTROLLER://127.0.0.1:19999,KAFKA://0.0.0.0:19100"},
    )
    exposed = unauthenticated_exposure(parse_config(base))
    assert [listener.name for listener in exposed] == ["KAFKA"]
    sasl = {**base, "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,KAFKA:SASL_PLAINTEXT"}
    assert unauthenticated_exposure(parse_config(sasl)) == []


def test_tls_authenticates_only_with_client_certificates_required(tmp_path: Path) -> None:
    pki = TestPki.create(tmp_path)
    required = _config(
        "10.0.0.7",
        **{"listener.security.protocol.map": "CONTROLLER:SSL"},
        **pki.properties("controller-1"),
    )
    assert exposure_problem(parse_config(required)) is None
    optional = {**required, **pki.properties("controller-1", client_auth="none")}
    assert exposure_problem(parse_config(optional)) is not None


def test_the_operator_may_allow_it_explicitly() -> None:
    assert exposure_problem(parse_config(_config("10.0.0.7", **{ALLOW_KEY: "true"}))) is None


def _write(tmp_path: Path, settings: dict[str, str]) -> Path:
    properties = tmp_path / "node.properties"
    properties.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
    return properties


def test_serve_exits_2_for_a_plaintext_listener_on_every_interface(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (port,) = free_ports(1)
    settings = {
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{port}",
        "listeners": f"CONTROLLER://0.0.0.0:{port}",
        "metadata.log.dir": str(tmp_path / "data"),
    }
    config = _write(tmp_path, settings)
    assert main(["format", "--config", str(config), "--cluster-id", "abc"]) == 0
    capsys.readouterr()
    assert main(["serve", "--config", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and ALLOW_KEY in err and "Traceback" not in err

    allowed = _write(tmp_path, {**settings, ALLOW_KEY: "true"})
    process = subprocess.Popen(
        [sys.executable, "-m", "raftmeta", "serve", "--config", str(allowed)],
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    try:
        assert process.stderr is not None
        stderr = process.stderr

        def warned() -> bool:
            line = stderr.readline()
            lines.append(line)
            return "unauthenticated callers from other hosts" in line or process.poll() is not None

        wait_until(warned, "the exposure warning", 30)
        assert process.poll() is None, "".join(lines)
        assert any("WARNING" in line and ALLOW_KEY in line for line in lines), lines
    finally:
        process.terminate()
        process.wait(30)
