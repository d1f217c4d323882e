"""The shapes a setting's text can take (integers, booleans, lists, class paths, voters,
listeners) and the parser of each.

A parser raises :class:`BadValue` with the problem only; the caller, which knows the key and
the raw text, turns it into a :class:`~raftmeta.config.errors.ConfigError`.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final, NamedTuple


class ConfigType(enum.Enum):
    INT = "int"
    LONG = "long"
    BOOLEAN = "boolean"
    STRING = "string"
    LIST = "list"
    CLASS = "class"
    VOTERS = "voters"
    LISTENERS = "listeners"
    ADVERTISED_LISTENERS = "advertised listeners"


class HostPort(NamedTuple):
    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


class Listener(NamedTuple):
    """One ``NAME://host:port`` entry; an empty host means every interface, as in Kafka."""

    name: str
    host: str
    port: int

    @property
    def address(self) -> HostPort:
        return HostPort(self.host, self.port)


class BadValue(Exception):
    """Raised by parsers and validators with the problem only; the caller adds key and value."""


_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_INTEGER = re.compile(r"[+-]?[0-9]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LISTENER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_HOST = re.compile(r"[A-Za-z0-9._-]+")
_HOST_PORT = re.compile(r"(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?P<host>[^:\[\]]*)):(?P<port>[0-9]+)")


def _parse_integer(raw: str, low: int, high: int, kind: str) -> int:
    if not _INTEGER.fullmatch(raw):
        raise BadValue(f"not {kind}")
    value = int(raw)
    if not low <= value <= high:
        raise BadValue(f"out of range for {kind} ({low} to {high})")
    return value


def _parse_boolean(raw: str) -> bool:
    lowered = raw.lower()
    if lowered not in ("true", "false"):
        raise BadValue("not a boolean (expected true or false)")
    return lowered == "true"


def _split_list(raw: str, separator: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in raw.split(separator) if item.strip())


def _parse_class(raw: str) -> str:
    """Accept Kafka's ``package.module.Class`` and the entry-point style ``package.module:Class``;
    importing is left to the loader, which can say more about a class it cannot use."""
    module, colon, qualified_name = raw.partition(":")
    module_parts = module.split(".")
    name_parts = qualified_name.split(".") if colon else []
    if (len(module_parts) < 2 and not colon) or not all(
        _IDENTIFIER.fullmatch(part) for part in module_parts + name_parts
    ):
        raise BadValue(
            "not a class path such as package.module.ClassName or package.module:ClassName"
        )
    return raw


def _parse_port(text: str, low: int) -> int:
    port = int(text)
    if not low <= port <= 65535:
        raise BadValue(f"port {port} is outside {low} to 65535")
    return port


def _parse_host_port(text: str, *, allow_empty_host: bool, lowest_port: int) -> HostPort:
    match = _HOST_PORT.fullmatch(text)
    if match is None:
        raise BadValue(f"'{text}' is not host:port")
    host = match["ipv6"] if match["ipv6"] is not None else match["host"]
    if not host and not allow_empty_host:
        raise BadValue(f"'{text}' has no host")
    if host and match["ipv6"] is None and not _HOST.fullmatch(host):
        raise BadValue(f"'{text}' has an invalid host name")
    return HostPort(host, _parse_port(match["port"], lowest_port))


def _parse_voters(raw: str) -> Mapping[int, HostPort]:
    voters: dict[int, HostPort] = {}
    for entry in _split_list(raw, ","):
        node_text, at, address = entry.partition("@")
        if not at or not re.fullmatch(r"[0-9]+", node_text):
            raise BadValue(f"entry '{entry}' is not id@host:port with a non-negative id")
        node_id = _parse_integer(node_text, 0, _INT_MAX, "a node id")
        if node_id in voters:
            raise BadValue(f"voter id {node_id} is listed twice")
        endpoint = _parse_host_port(address, allow_empty_host=False, lowest_port=1)
        if endpoint in voters.values():
            raise BadValue(f"address {endpoint} is given to more than one voter")
        voters[node_id] = endpoint
    if not voters:
        raise BadValue("no voters listed (expected id@host:port,...)")
    return MappingProxyType(dict(sorted(voters.items())))


def _parse_listeners(raw: str, *, advertised: bool) -> tuple[Listener, ...]:
    """``listeners``: where to bind, so an empty host (every interface) and port 0 (any free
    port) are allowed and no two listeners may bind one port. ``advertised.listeners``, as in
    Kafka: where clients dial, so a real host (not empty, not a wildcard) and a real port;
    two may share a port (on different hosts)."""
    listeners: list[Listener] = []
    for entry in _split_list(raw, ","):
        name, scheme, address = entry.partition("://")
        if not scheme or not _LISTENER_NAME.fullmatch(name):
            raise BadValue(f"entry '{entry}' is not NAME://host:port")
        name = name.upper()
        if any(listener.name == name for listener in listeners):
            raise BadValue(f"listener name {name} is used twice")
        host, port = _parse_host_port(
            address, allow_empty_host=not advertised, lowest_port=1 if advertised else 0
        )
        if advertised and host in ("0.0.0.0", "::"):
            raise BadValue(
                f"entry '{entry}' advertises a wildcard address, which no client can dial"
            )
        if not advertised and port != 0 and any(listener.port == port for listener in listeners):
            raise BadValue(f"port {port} is used by more than one listener")
        listeners.append(Listener(name, host, port))
    return tuple(listeners)


_PARSERS: Final[Mapping[ConfigType, Callable[[str, str], object]]] = {
    ConfigType.INT: lambda raw, _sep: _parse_integer(raw, _INT_MIN, _INT_MAX, "an integer"),
    ConfigType.LONG: lambda raw, _sep: _parse_integer(raw, _LONG_MIN, _LONG_MAX, "an integer"),
    ConfigType.BOOLEAN: lambda raw, _sep: _parse_boolean(raw),
    ConfigType.STRING: lambda raw, _sep: raw,
    ConfigType.LIST: _split_list,
    ConfigType.CLASS: lambda raw, _sep: _parse_class(raw),
    ConfigType.VOTERS: lambda raw, _sep: _parse_voters(raw),
    ConfigType.LISTENERS: lambda raw, _sep: _parse_listeners(raw, advertised=False),
    ConfigType.ADVERTISED_LISTENERS: lambda raw, _sep: _parse_listeners(raw, advertised=True),
}


def parse_value(kind: ConfigType, raw: str, separator: str = ",") -> object:
    """The typed form of ``raw`` as a value of ``kind`` (``separator`` splits a LIST), or
    ``BadValue`` saying what is wrong with it."""
    return _PARSERS[kind](raw, separator)


TYPE_SHAPES: Final[Mapping[ConfigType, str]] = {
    ConfigType.BOOLEAN: "true, false",
    ConfigType.CLASS: "package.module.ClassName or package.module:ClassName",
    ConfigType.VOTERS: "id@host:port,…",
    ConfigType.LISTENERS: "NAME://host:port,…",
    ConfigType.ADVERTISED_LISTENERS: "NAME://host:port,… (names from listeners)",
}
"""How each type's values look, for the README's table when a key has no validator."""
