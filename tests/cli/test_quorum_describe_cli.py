"""``raftmeta quorum describe --command-config``: a settings file that cannot be used is one line
and exit 2 before anything is dialled (the TLS run against ``raftmeta dev --tls`` is in
``tests/process/test_dev_tls.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.cli.main import main


def _describe(capsys: pytest.CaptureFixture[str], config: Path) -> tuple[int, list[str]]:
    status = main(
        ["quorum", "describe", "--bootstrap-server", "127.0.0.1:1", "--command-config", str(config)]
    )
    out, err = capsys.readouterr()
    assert out == ""
    return status, err.splitlines()


def test_a_missing_settings_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.properties"
    status, lines = _describe(capsys, missing)
    assert status == 2
    assert len(lines) == 1 and f"--command-config {missing}: no such file" in lines[0], lines


def test_an_unreadable_keystore_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "client.properties"
    config.write_text(
        "security.protocol=SSL\n"
        f"ssl.truststore.location={tmp_path / 'missing-ca.pem'}\n"
        "ssl.truststore.type=PEM\n"
    )
    status, lines = _describe(capsys, config)
    assert status == 2
    assert len(lines) == 1 and lines[0].startswith("--command-config "), lines
    assert "missing-ca.pem" in lines[0] and "Traceback" not in lines[0]


def test_ssl_keys_without_security_protocol_ssl_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "client.properties"
    config.write_text(f"security.protocol=PLAINTEXT\nssl.truststore.location={tmp_path}/ca.pem\n")
    status, lines = _describe(capsys, config)
    assert status == 2
    assert len(lines) == 1 and "security.protocol is PLAINTEXT" in lines[0], lines
