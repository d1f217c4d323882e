"""A node whose ``log-start-offset`` checkpoint is damaged stops at start-up with one line
naming the file and what is wrong with it, exit 1: never a traceback (it was one for a
directory in the file's place and for bytes that are not text)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from raftmeta.cli.main import main
from raftmeta.storage.errors import LogCorruptError
from raftmeta.storage.log import LOG_START_CHECKPOINT, FileLog

CASES = {
    "trailing garbage": (b'{"data_version": 1, "log_start_offset": 0}xyz\n', "Extra data at byte"),
    "a directory": (None, "a directory, not a file"),
    "binary": (b"\xff\xfe\x00\x01", "byte 0 is not UTF-8 text"),
    "nested": (b"[" * 100_000, "log start checkpoint"),
    "beyond int64": (b'{"data_version": 1, "log_start_offset": ' + b"9" * 30 + b"}", "log_start"),
    "huge": (b" " * 1_000_000 + b"{}", "at most 4096 expected"),
}


def damage(checkpoint: Path, contents: bytes | None) -> None:
    if checkpoint.exists():
        checkpoint.unlink()
    if contents is None:
        checkpoint.mkdir()
    else:
        checkpoint.write_bytes(contents)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_log_refuses_a_damaged_checkpoint_in_one_line(case: str, tmp_path: Path) -> None:
    contents, problem = CASES[case]
    damage(tmp_path / LOG_START_CHECKPOINT, contents)
    with pytest.raises(LogCorruptError) as raised:
        FileLog.open(tmp_path)
    message = str(raised.value)
    assert message.startswith(str(tmp_path / LOG_START_CHECKPOINT)) and problem in message
    assert "\n" not in message and len(message) < 400


def node(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    config = tmp_path / "node.properties"
    config.write_text(
        "node.id=1\nprocess.roles=controller\ncontroller.quorum.voters=1@127.0.0.1:1\n"
        f"metadata.log.dir={tmp_path / 'meta'}\nlisteners=CONTROLLER://127.0.0.1:1\n"
    )
    assert main(["format", "--config", str(config), "--cluster-id", "abc"]) == 0
    capsys.readouterr()
    return config, tmp_path / "meta" / "__cluster_metadata-0" / LOG_START_CHECKPOINT


@pytest.mark.parametrize("case", ["trailing garbage", "a directory", "binary"])
def test_a_node_stops_at_start_up_with_one_line(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, checkpoint = node(tmp_path, capsys)
    contents, problem = CASES[case]
    damage(checkpoint, contents)
    finished = subprocess.run(
        [sys.executable, "-m", "raftmeta", "serve", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert finished.returncode == 1, finished.stderr
    lines = finished.stderr.strip().splitlines()
    assert "Traceback" not in finished.stderr, finished.stderr
    assert len(lines) == 1 and str(checkpoint) in lines[0] and problem in lines[0], lines
