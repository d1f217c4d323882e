"""``raftmeta format`` for a dynamic quorum (KIP-853): --standalone, --initial-controllers and
--no-initial-controllers. One case runs as a user runs it (a process); the refusals run through
the same ``main`` in this process, as there are many."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from raftmeta.cli.main import main
from raftmeta.storage.data_dir import METADATA_PARTITION_DIR
from raftmeta.storage.membership_files import bootstrap_path, read_membership
from raftmeta.storage.meta_properties import read_meta_properties


def raftmeta(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "raftmeta", *args], capture_output=True, text=True, timeout=60
    )


def dynamic_config(tmp_path: Path, node_id: int = 1, port: int = 19093) -> Path:
    config = tmp_path / f"node-{node_id}.properties"
    config.write_text(
        f"node.id={node_id}\nprocess.roles=controller\n"
        f"listeners=CONTROLLER://127.0.0.1:{port}\n"
        "controller.quorum.bootstrap.servers=127.0.0.1:19093\n"
        f"metadata.log.dir={tmp_path / f'data-{node_id}'}\n"
    )
    return config


def first_voters(tmp_path: Path, node_id: int = 1) -> list[tuple[int, str | None, str]]:
    membership = read_membership(
        bootstrap_path(tmp_path / f"data-{node_id}" / METADATA_PARTITION_DIR)
    )
    assert membership is not None and membership.kraft_version == 1
    return [
        (v.node_id, v.key.directory_id, f"{v.endpoints[0].host}:{v.endpoints[0].port}")
        for v in membership.voters
    ]


def test_standalone_makes_this_controller_the_only_voter_under_its_directory_id(
    tmp_path: Path,
) -> None:
    config = dynamic_config(tmp_path)
    result = raftmeta("format", "--config", str(config), "--cluster-id", "c1", "--standalone")
    assert result.returncode == 0, result.stderr
    meta = read_meta_properties(tmp_path / "data-1" / "meta.properties")
    assert first_voters(tmp_path) == [(1, meta.directory_id, "127.0.0.1:19093")]
    assert meta.directory_id is not None and meta.directory_id in result.stdout


def test_initial_controllers_gives_this_node_the_directory_id_listed(tmp_path: Path) -> None:
    config = dynamic_config(tmp_path, node_id=2, port=19094)
    listed = "1@127.0.0.1:19093:dirAAA,2@127.0.0.1:19094:dirBBB,3@[::1]:19095:dirCCC"
    result = raftmeta(
        "format", "--config", str(config), "--cluster-id", "c1", "--initial-controllers", listed
    )
    assert result.returncode == 0, result.stderr
    assert read_meta_properties(tmp_path / "data-2" / "meta.properties").directory_id == "dirBBB"
    assert first_voters(tmp_path, 2) == [
        (1, "dirAAA", "127.0.0.1:19093"),
        (2, "dirBBB", "127.0.0.1:19094"),
        (3, "dirCCC", "::1:19095"),
    ]


def test_no_initial_controllers_writes_no_voters(tmp_path: Path) -> None:
    config = dynamic_config(tmp_path)
    result = raftmeta(
        "format", "--config", str(config), "--cluster-id", "c1", "--no-initial-controllers"
    )
    assert result.returncode == 0, result.stderr
    assert not bootstrap_path(tmp_path / "data-1" / METADATA_PARTITION_DIR).exists()


def test_bad_choices_are_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dynamic = dynamic_config(tmp_path)
    static = tmp_path / "static.properties"
    static.write_text(
        "node.id=1\nprocess.roles=controller\ncontroller.quorum.voters=1@127.0.0.1:9093\n"
        f"metadata.log.dir={tmp_path / 'static'}\n"
    )
    cases = [
        ((str(dynamic),), "needs --standalone, --initial-controllers or --no-initial-controllers"),
        ((str(static), "--standalone"), "controller.quorum.voters makes the quorum static"),
        ((str(dynamic), "--initial-controllers", "2@h:1:dirX"), "does not list this node (1)"),
        ((str(dynamic), "--initial-controllers", "1@h:dirX"), "is not id@host:port:directory-id"),
        ((str(dynamic), "--initial-controllers", "1@h:1:bad/id"), "directory id"),
        ((str(dynamic), "--initial-controllers", "1@h:1:a,1@h:2:b"), "is a voter twice"),
        ((str(dynamic), "--standalone", "--no-initial-controllers"), "not allowed with"),
    ]
    for (config, *flags), expected in cases:
        try:
            status = main(["format", "--config", config, "--cluster-id", "c1", *flags])
        except SystemExit as exit_:  # argparse's own usage errors
            status = int(exit_.code or 0)
        stderr = capsys.readouterr().err
        assert status == 2, (flags, stderr)
        assert expected in stderr, (flags, stderr)
        if "not allowed" not in expected:  # argparse's refusals come with its usage lines
            assert len(stderr.strip().splitlines()) == 1, stderr
    assert not (tmp_path / "data-1").exists(), "a refused format must leave nothing behind"
