"""The architecture as a checked contract: imports point down the layers, and no module of the
product takes part in an import cycle.

The contract lives in one place, ``[tool.importlinter]`` in ``pyproject.toml``; ``make test``
runs ``lint-imports`` on it. These tests add what the linter does not check (cycles between any
two modules, imports inside functions and under ``TYPE_CHECKING`` included) and show that both
checks fail on a planted violation, each contract by name, so a green build means something.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT_PACKAGES = ("raftmeta", "elections", "placement", "analytics")


def import_graph(packages: Iterable[str] = PRODUCT_PACKAGES) -> dict[str, set[str]]:
    """Every product module and the product modules it imports, as grimp reads them: every
    import statement counts, wherever it stands in the file."""
    graph = grimp.build_graph(*packages, cache_dir=None)
    return {
        module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules
    }


def import_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (and self-imports): each is a
    cycle. Tarjan's algorithm, iterative so a deep graph cannot exhaust Python's stack."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, list[str]]] = [(start, sorted(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            if pending:
                child = pending.pop()
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, sorted(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1 or node in graph[node]:
                    cycles.append(sorted(group))
    return cycles


def test_no_product_module_takes_part_in_an_import_cycle() -> None:
    cycles = import_cycles(import_graph())
    assert cycles == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_cycle_finder_reports_a_cycle_through_a_function_level_import() -> None:
    graph = {"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}, "a.w": {"a.x"}}
    assert import_cycles(graph) == [["a.x", "a.y", "a.z"]]
    assert import_cycles({"a.x": {"a.y"}, "a.y": set()}) == []


def _copy_of_the_product(tmp_path: Path) -> Path:
    for package in PRODUCT_PACKAGES:
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def _module_file(tree: Path, module: str) -> Path:
    base = tree / module.replace(".", "/")
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _plant(tree: Path, module: str, statement: str) -> None:
    """Add an import inside a function at the end of ``module``, where it is easiest to miss."""
    path = _module_file(tree, module)
    path.write_text(path.read_text() + f"\n\ndef _planted() -> None:\n    {statement}\n")


@contextlib.contextmanager
def _planted(tree: Path, module: str, statement: str) -> Iterator[None]:
    """:func:`_plant` for the duration of the block, then ``module`` as it was."""
    path = _module_file(tree, module)
    original = path.read_text()
    _plant(tree, module, statement)
    try:
        yield
    finally:
        path.write_text(original)


def _run(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run in a child process whose imports resolve to ``tree`` first, then to the project."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(ROOT)])}
    return subprocess.run(
        args, cwd=tree, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def _lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    return _run(tree, str(Path(sys.executable).with_name("lint-imports")), "--no-cache")


def _cycles_in(tree: Path) -> str:
    code = "from tests.test_architecture import import_cycles, import_graph\n"
    code += "print(import_cycles(import_graph()))"
    result = _run(tree, sys.executable, "-c", code)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def _contract_names() -> dict[str, str]:
    """Each import-linter contract's name, by its id, as ``pyproject.toml`` declares them."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        contracts = tomllib.load(file)["tool"]["importlinter"]["contracts"]
    return {contract["id"]: contract["name"] for contract in contracts}


def _said(result: subprocess.CompletedProcess[str]) -> str:
    """The linter's report with its line wrapping undone, so a long contract name reads whole."""
    return " ".join(result.stdout.split())


@pytest.fixture(scope="module")
def product_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One copy of the product for the planted-import cases; each restores what it planted."""
    return _copy_of_the_product(tmp_path_factory.mktemp("product"))


def test_the_unplanted_copy_keeps_every_contract(product_copy: Path) -> None:
    result = _lint_imports(product_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    for name in _contract_names().values():
        assert f"{name} KEPT" in _said(result)


# (where the import is planted, what it imports, the contracts it breaks, by id): an upward
# import, the rooms the README's table draws side by side, and the rooms that may import only
# part of what lies below them.
PLANTED_IMPORTS = [
    ("raftmeta.raft.batch", "raftmeta.image", ("layers",)),
    ("raftmeta.server", "raftmeta.devkit", ("layers",)),
    ("raftmeta.broker", "raftmeta.server", ("layers", "clients")),
    ("raftmeta.quorum", "raftmeta.image", ("runtime",)),
    ("raftmeta.quorum", "raftmeta.auth", ("runtime",)),
    ("raftmeta.quorum", "raftmeta.records", ("runtime",)),
    ("raftmeta.quorum", "raftmeta.controller", ("runtime", "layers")),
    ("raftmeta.controller", "raftmeta.quorum", ("layers", "no-network")),
    ("elections", "raftmeta.auth", ("layers",)),
    ("raftmeta.channel", "raftmeta.server", ("clients",)),
    ("raftmeta.channel", "raftmeta.quorum", ("admin-off-the-runtime",)),
    ("raftmeta.apis", "raftmeta.server", ("layers",)),
    ("raftmeta.quorum", "raftmeta.apis", ("layers",)),
    ("raftmeta.channel", "raftmeta.apis", ("layers", "clients")),
    ("raftmeta.broker", "raftmeta.apis", ("clients",)),
    ("raftmeta.server.kafka.topics", "raftmeta.rpc", ("kafka-no-protobuf",)),
    ("raftmeta.apis.topics", "raftmeta.rpc", ("apis-no-wire",)),
    ("raftmeta.apis.topics", "raftmeta.kafka_protocol", ("apis-no-wire",)),
    ("raftmeta.controller", "analytics", ("commands-only",)),
    ("analytics", "raftmeta.common", ("analytics",)),
]


@pytest.mark.parametrize(
    ("importer", "imported", "contracts"),
    PLANTED_IMPORTS,
    ids=[f"{importer}->{imported}" for importer, imported, _ in PLANTED_IMPORTS],
)
def test_a_planted_import_breaks_its_contract(
    product_copy: Path, importer: str, imported: str, contracts: tuple[str, ...]
) -> None:
    with _planted(product_copy, importer, f"import {imported}  # noqa"):
        result = _lint_imports(product_copy)
    assert result.returncode != 0, result.stdout
    names = _contract_names()
    for contract in contracts:
        assert f"{names[contract]} BROKEN" in _said(result), result.stdout
    assert f"{importer} -> {imported}" in result.stdout


def test_cycle_check_fails_on_a_planted_cycle(tmp_path: Path) -> None:
    tree = _copy_of_the_product(tmp_path)
    # A leaf of the image package: importing the package itself would pull all its modules
    # into the cycle, and the cycle reported would be that whole group.
    planted = "['raftmeta.image.features', 'raftmeta.records']"
    assert planted not in _cycles_in(tree)
    _plant(tree, "raftmeta.records", "import raftmeta.image.features  # noqa")
    assert planted in _cycles_in(tree)
