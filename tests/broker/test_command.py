"""``raftmeta broker`` refuses bad input with one line and status 2, before any network call."""

from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.cli.main import main


def refusal(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    status = main(["broker", *args])
    captured = capsys.readouterr()
    assert status == 2, captured
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


def test_broker_needs_an_id_and_the_controllers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert "--broker-id" in refusal(capsys, "--bootstrap-server", "127.0.0.1:1")
    assert "--bootstrap-server" in refusal(capsys, "--broker-id", "1")


def test_broker_refuses_bad_servers_and_settings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    line = refusal(capsys, "--broker-id", "1", "--bootstrap-server", "localhost")
    assert "expected host:port" in line
    line = refusal(
        capsys,
        "--broker-id",
        "1",
        "--bootstrap-server",
        "127.0.0.1:1",
        "--override",
        "broker.session.timeout.ms=soon",
    )
    assert "broker.session.timeout.ms" in line
    line = refusal(capsys, "--config", str(tmp_path / "missing.properties"), "--broker-id", "1")
    assert "missing.properties" in line
