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

The package imports nothing of raftmeta outside itself, and this file imports nothing at all:
callers import the module that holds what they need (``raftmeta.config.node`` for a node's
settings, ``raftmeta.config.properties`` for the format), so reading a ``.properties`` file
never loads the key table.
"""
