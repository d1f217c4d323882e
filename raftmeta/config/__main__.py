"""``python -m raftmeta.config`` prints the README's configuration table."""

from raftmeta.config.docs import config_table_markdown

print(config_table_markdown(), end="")
