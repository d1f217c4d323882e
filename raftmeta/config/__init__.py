"""Node configuration: Kafka-style ``.properties`` files with Kafka's key names.

One module per job, each importing only those listed before it:

- ``errors``: :class:`ConfigError`, the one-line problem an operator must fix;
- ``properties``: the ``.properties`` file format (no knowledge of any key), which
  ``storage/meta_properties`` and the command line's client settings read with;
- ``values``: the shapes a value can take and their parsers;
- ``validators``: checks of a parsed value that can describe themselves;
- ``keys``: the table of every key, its default, check and documentation;
- ``node``: :class:`RaftmetaConfig`, a node's validated settings, and its loaders;
- ``docs``: the README's Markdown table (``python -m raftmeta.config`` prints it).

The package imports nothing of raftmeta outside itself. Its commonly used names can still be
imported from ``raftmeta.config``; they are looked up on first use, so that importing the
file format does not load the key table.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from raftmeta.config.docs import config_table_markdown
    from raftmeta.config.errors import ConfigError
    from raftmeta.config.keys import CONFIG_KEYS, REQUIRED, ConfigKey
    from raftmeta.config.node import (
        ConfigValue,
        RaftmetaConfig,
        load_config,
        parse_config,
        parse_override,
    )
    from raftmeta.config.properties import format_properties, parse_properties
    from raftmeta.config.values import ConfigType, HostPort, Listener

__all__ = [
    "CONFIG_KEYS",
    "REQUIRED",
    "ConfigError",
    "ConfigKey",
    "ConfigType",
    "ConfigValue",
    "HostPort",
    "Listener",
    "RaftmetaConfig",
    "config_table_markdown",
    "format_properties",
    "load_config",
    "parse_config",
    "parse_override",
    "parse_properties",
]

_HOMES = {
    "CONFIG_KEYS": "keys",
    "REQUIRED": "keys",
    "ConfigError": "errors",
    "ConfigKey": "keys",
    "ConfigType": "values",
    "ConfigValue": "node",
    "HostPort": "values",
    "Listener": "values",
    "RaftmetaConfig": "node",
    "config_table_markdown": "docs",
    "format_properties": "properties",
    "load_config": "node",
    "parse_config": "node",
    "parse_override": "node",
    "parse_properties": "properties",
}
"""Which module holds each name of ``__all__``."""


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
