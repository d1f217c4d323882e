"""The grammar of ``raftmeta configs --add-config``, as ``kafka-configs.sh`` reads it.

``K=V[,K=V...]``: pairs split on the commas outside square brackets, each on its first ``=``.
A value in brackets holds commas of its own: ``cleanup.policy=[compact,delete]`` sets
``compact,delete``, and ``SCRAM-SHA-256=[iterations=8192,password=secret]`` is one pair whose
value is itself a list of pairs (:attr:`AddedConfig.items`). A malformed line (a pair without
``=``, an empty key, brackets that do not close, text after a closing bracket) is a
:class:`ConfigValueError` naming the part that is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")


class ConfigValueError(ValueError):
    """A ``--add-config`` or ``--delete-config`` that cannot be read; one line."""


@dataclass(frozen=True, slots=True)
class AddedConfig:
    """One ``K=V`` of ``--add-config``. ``bracketed`` says the value was written in square
    brackets; ``value`` is then the text inside them."""

    key: str
    value: str
    bracketed: bool = False

    @property
    def items(self) -> list[str]:
        """A bracketed value's comma-separated items (``["iterations=8192", ...]``)."""
        return split_outside_brackets(self.value) if self.bracketed else [self.value]


def split_outside_brackets(text: str) -> list[str]:
    """``text`` split on the commas that are not inside square brackets."""
    parts: list[str] = []
    depth = 0
    start = 0
    for index, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise ConfigValueError(f"an unopened ']' at character {index + 1} of {text!r}")
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    if depth != 0:
        raise ConfigValueError(f"a '[' that is never closed in {text!r}")
    parts.append(text[start:])
    return parts


def parse_added_configs(text: str) -> list[AddedConfig]:
    """Every pair of one ``--add-config`` argument, in order."""
    added: list[AddedConfig] = []
    for part in split_outside_brackets(text):
        key, equals, value = part.partition("=")
        key = key.strip()
        if not equals or not key:
            raise ConfigValueError(f"{part!r} is not KEY=VALUE")
        value = value.strip()
        bracketed = value.startswith("[")
        if bracketed:
            if not value.endswith("]"):
                raise ConfigValueError(f"text after the closing ']' in {part!r}")
            value = value[1:-1]
        added.append(AddedConfig(key, value, bracketed))
    return added


def plain_value(config: AddedConfig) -> str:
    """The value a config is set to: a bracketed list becomes its items joined by commas."""
    if not config.bracketed:
        return config.value
    return ",".join(item.strip() for item in config.items)


def parse_deleted_configs(text: str) -> list[str]:
    """The keys of one ``--delete-config`` argument (``K[,K...]``)."""
    keys = [key.strip() for key in text.split(",")]
    if any(not key for key in keys):
        raise ConfigValueError(f"--delete-config {text!r} names an empty key")
    return keys
