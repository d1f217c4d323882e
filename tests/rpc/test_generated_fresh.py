"""The committed gRPC modules must match what the committed .proto files generate."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest

from raftmeta.rpc import generate

pytest.importorskip("grpc_tools", reason="grpcio-tools (a dev dependency) is not installed")

COMMITTED = generate.REPO_ROOT / generate.PACKAGE_PATH


def _committed_generator_version() -> str | None:
    stub_modules = sorted(COMMITTED.glob("*_pb2_grpc.py"))
    if not stub_modules:
        return None
    found = re.search(r"^GRPC_GENERATED_VERSION = '([^']+)'", stub_modules[0].read_text(), re.M)
    return found.group(1) if found else None


def test_committed_generated_code_is_fresh(tmp_path: Path) -> None:
    committed_version = _committed_generator_version()
    installed_version = metadata.version("grpcio-tools")
    if committed_version is not None and committed_version != installed_version:
        pytest.skip(
            f"committed code comes from grpcio-tools {committed_version}, "
            f"{installed_version} is installed; output differs between versions"
        )
    generate.generate(out_root=tmp_path)
    fresh_dir = tmp_path / generate.PACKAGE_PATH
    expected = sorted(path.name for path in fresh_dir.iterdir() if path.is_file())
    committed = sorted(
        path.name for path in COMMITTED.iterdir() if path.name.endswith(generate.GENERATED_SUFFIXES)
    )
    stale = [
        name
        for name in expected
        if name not in committed
        or (COMMITTED / name).read_bytes() != (fresh_dir / name).read_bytes()
    ]
    leftover = [name for name in committed if name not in expected]
    assert not stale and not leftover, (
        f"Generated gRPC code in {generate.PACKAGE_PATH}/ is out of date "
        f"(stale: {stale}, no longer generated: {leftover}). "
        f"Run `{generate.REGENERATE_COMMAND}`, delete files no longer generated, and commit."
    )


def test_generated_names_match_the_proto_files() -> None:
    assert generate.generated_names() == [
        f"{name}{suffix}"
        for name in ("admin", "broker", "raft")
        for suffix in ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")
    ]
