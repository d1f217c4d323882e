"""The README's configuration table in Markdown, rendered from the key table so that the
documentation always matches the parser (``python -m raftmeta.config`` prints it)."""

from __future__ import annotations

from collections.abc import Iterable

from raftmeta.config.keys import CONFIG_KEYS, REQUIRED, ConfigKey


def config_table_markdown(keys: Iterable[ConfigKey] = CONFIG_KEYS) -> str:
    """The README's configuration table, generated so that it always matches the parser."""
    rows = ["| Key | Type | Default | Valid values | Description |", "|---|---|---|---|---|"]
    for key in keys:
        if key.default is REQUIRED:
            default = "*required*"
        elif key.default is None or key.default == "":
            default = "*none*"
        else:
            default = f"`{key.default}`"
        cells = (f"`{key.name}`", key.type.value, default, key.valid_values(), key.doc)
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"
