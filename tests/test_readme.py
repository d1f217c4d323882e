"""The README's configuration table is generated from the key table; keep them in step."""

from __future__ import annotations

from pathlib import Path

from raftmeta.config.docs import config_table_markdown


def test_readme_configuration_table_is_current() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert config_table_markdown().strip() in readme, (
        "regenerate the table: .venv/bin/python -m raftmeta.config"
    )


def test_readme_opens_with_the_two_commands() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    first_lines = readme.splitlines()[:4]
    assert any(line.startswith("make demo") for line in first_lines)
    assert any(line.startswith("make test") for line in first_lines)
