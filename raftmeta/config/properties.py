"""Java's ``.properties`` file format: reading and writing, nothing about what the keys mean.

Kafka's operators write node and client settings in this format, and a file written for Kafka
must mean the same thing here. Kept free of the key table so that readers of other
properties files (``meta.properties``, the command line's client settings) import only this.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from raftmeta.config.errors import ConfigError

_WHITESPACE = " \t\f"
_NATURAL_LINES = re.compile(r"\r\n|\r|\n")
_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def parse_properties(text: str) -> dict[str, str]:
    """Parse text in Java's ``Properties.load`` syntax; a later duplicate key wins.

    Implemented here rather than with :mod:`configparser` because the two formats disagree on
    sections, separators, continuations and escapes, and an operator's file written for Kafka
    must mean the same thing here. Values keep trailing whitespace, as Java does; the typed layer
    strips it.
    """
    properties: dict[str, str] = {}
    lines = _NATURAL_LINES.split(text)
    index = 0
    while index < len(lines):
        line_number = index + 1
        chunk = lines[index].lstrip(_WHITESPACE)
        index += 1
        if not chunk or chunk[0] in "#!":
            continue
        logical = ""
        while _ends_with_line_continuation(chunk):
            logical += chunk[:-1]
            if index >= len(lines):
                chunk = ""
                break
            chunk = lines[index].lstrip(_WHITESPACE)
            index += 1
        logical += chunk
        raw_key, raw_value = _split_key_value(logical)
        key = _unescape(raw_key, line_number, None)
        properties[key] = _unescape(raw_value, line_number, key)
    return properties


def _ends_with_line_continuation(chunk: str) -> bool:
    """An odd run of trailing backslashes continues the line; an even run is escaped ones."""
    run = len(chunk) - len(chunk.rstrip("\\"))
    return run % 2 == 1


def _split_key_value(logical: str) -> tuple[str, str]:
    position = 0
    while position < len(logical):
        char = logical[position]
        if char == "\\":
            position += 2
            continue
        if char in "=:" or char in _WHITESPACE:
            break
        position += 1
    key = logical[:position]
    seen_separator = False
    while position < len(logical):
        char = logical[position]
        if char in _WHITESPACE:
            position += 1
        elif char in "=:" and not seen_separator:
            seen_separator = True
            position += 1
        else:
            break
    return key, logical[position:]


def _unescape(raw: str, line_number: int, key: str | None) -> str:
    if "\\" not in raw:
        return raw
    out: list[str] = []
    position = 0
    while position < len(raw):
        char = raw[position]
        if char != "\\":
            out.append(char)
            position += 1
            continue
        if position + 1 >= len(raw):
            break  # a lone backslash at the end of the file escapes nothing, as in Java
        escaped = raw[position + 1]
        if escaped == "u":
            digits = raw[position + 2 : position + 6]
            if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                where = "a key" if key is None else f"the value of {key}"
                raise ConfigError(
                    f"Malformed \\uXXXX escape in {where} on line {line_number} "
                    "of the configuration"
                )
            out.append(chr(int(digits, 16)))
            position += 6
            continue
        out.append(_SIMPLE_ESCAPES.get(escaped, escaped))
        position += 2
    return "".join(out)


def format_properties(properties: Mapping[str, str]) -> str:
    """Write properties so that :func:`parse_properties` (and Java) read back the same mapping.

    Shared with the storage layer's ``meta.properties`` so that one escaping rule serves both.
    """
    return "".join(
        f"{_escape(key, is_key=True)}={_escape(value, is_key=False)}\n"
        for key, value in properties.items()
    )


def _escape(text: str, *, is_key: bool) -> str:
    out: list[str] = []
    for position, char in enumerate(text):
        if char == "\\":
            out.append("\\\\")
        elif char in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[char])
        elif char == " " and (is_key or position == 0):
            out.append("\\ ")
        elif char in "=:#!":
            out.append("\\" + char)
        elif ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return "".join(out)
