"""Client settings files: the one reader behind ``--admin.config`` (``leader-election``) and
``--command-config`` (``topics``, ``brokers``), and the one type they become.

Both flags name a ``.properties`` file of client settings, as Kafka's tools do, and both accept
the same keys: ``bearer.token`` (who the caller is), ``request.timeout.ms`` (the deadline each
request carries to the controller) and ``default.api.timeout.ms`` (how long the command waits
for its whole answer), and for a controller listener that speaks TLS, ``security.protocol=SSL``
with Kafka's ``ssl.*`` keys (``ssl.truststore.location`` to check the controllers,
``ssl.keystore.location`` for the client's own certificate under mutual TLS). With
``--bootstrap-controller``, ``security.protocol=SASL_PLAINTEXT`` or ``SASL_SSL`` with
``sasl.mechanism`` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and ``sasl.jaas.config``
(``ScramLoginModule`` or ``PlainLoginModule`` with ``username`` and ``password``) log in on the
KAFKA listener, as Kafka's tools take them. The messages are those of Kafka's ``ConfigDef``.

A key raftmeta does not read is warned about and ignored, as Kafka's clients do ("The
configuration 'x' was supplied but isn't a known config."): the same file often serves Kafka's
own tools too and holds settings that have no meaning here, and refusing it would
make a user keep two
copies. A typo in a known key is then a warning rather than an error, which is Kafka's trade too.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from raftmeta.cli.text_files import UnreadableFile, read_text_file
from raftmeta.config.errors import ConfigError
from raftmeta.config.properties import parse_properties
from raftmeta.security.listener import CLIENT_TLS_KEYS, SECURITY_PROTOCOL_KEY, client_tls
from raftmeta.security.sasl_client import SASL_KEYS, kafka_client_security

REQUEST_TIMEOUT_MS = 15_000
"""The deadline a request carries to the controller unless ``request.timeout.ms`` says: long
enough to ride out a controller failover, short enough that a wrong address fails soon."""

DEFAULT_API_TIMEOUT_MS = 30_000
"""How long a command waits for its whole answer unless ``default.api.timeout.ms`` says."""

UNREACHABLE_TIMEOUT_MS = 1_000
"""A command gives up after this long when every bootstrap server refuses the connection or
does not resolve and none has answered: the address is wrong or the quorum is down, and the
user learns which server was tried at once rather than after ``request.timeout.ms``."""

INT_MAX = 2**31 - 1
"""The largest value of a Kafka INT setting (Java's Integer.MAX_VALUE)."""

_TIMEOUT_KEYS = ("request.timeout.ms", "default.api.timeout.ms")
KNOWN_KEYS = ("bearer.token", *_TIMEOUT_KEYS, *CLIENT_TLS_KEYS, *SASL_KEYS)


class ClientConfigError(Exception):
    """The file cannot be used; the message is one line, for the command to print."""


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """What a client settings file may set: who the caller is and how long to wait."""

    bearer_token: str | None = None
    request_timeout_ms: int = REQUEST_TIMEOUT_MS
    default_api_timeout_ms: int = DEFAULT_API_TIMEOUT_MS
    ignored_keys: tuple[str, ...] = ()
    """Keys of the file raftmeta has no use for; the command warns about them, as Kafka does."""
    tls_properties: tuple[tuple[str, str], ...] = ()
    """``security.protocol``, the ``ssl.*`` and the ``sasl.*`` keys as given, checked, for the
    admin client (which refuses SASL on the gRPC door)."""

    def admin_config(
        self, bootstrap_servers: str, *, controllers: bool = False
    ) -> dict[str, object]:
        """The AdminClient config for these settings; with ``controllers`` the addresses are
        KAFKA listeners (``bootstrap.controllers``), whose protocol carries no bearer token.
        The client wants a deadline above 0; Kafka accepts 0, which here means the shortest
        one."""
        config: dict[str, object] = {
            "bootstrap.controllers" if controllers else "bootstrap.servers": bootstrap_servers,
            "request.timeout.ms": max(1, self.request_timeout_ms),
            "bootstrap.unreachable.timeout.ms": UNREACHABLE_TIMEOUT_MS,
        }
        if self.bearer_token is not None and not controllers:
            config["bearer.token"] = self.bearer_token
        config.update(self.tls_properties)
        return config

    def warn_about_ignored_keys(self, write: Callable[[str], None] | None = None) -> None:
        """One warning line per ignored key, on stderr unless ``write`` says otherwise."""
        for key in self.ignored_keys:
            line = ignored_key_warning(key)
            if write is None:
                print(line, file=sys.stderr)
            else:
                write(line)


def read_client_config(path: Path) -> ClientSettings:
    """The settings in the file at ``path``; every problem names the file."""
    try:
        text = read_text_file(path, "a properties file")
    except UnreadableFile as error:
        raise ClientConfigError(str(error)) from None
    try:
        return parse_client_config(text)
    except ClientConfigError as error:
        raise ClientConfigError(f"{path}: {error}") from None


def parse_client_config(text: str) -> ClientSettings:
    """The settings in ``text``, with the keys raftmeta does not read in ``ignored_keys``."""
    try:
        properties = parse_properties(text)
    except ConfigError as error:
        raise ClientConfigError(str(error)) from None
    timeouts: dict[str, int] = {}
    for key in _TIMEOUT_KEYS:
        if key in properties:
            timeouts[key] = _timeout_value(key, properties[key])
    token = properties.get("bearer.token")
    if token is not None:
        token = token.strip()
        if not token:
            raise ClientConfigError("Invalid value for configuration bearer.token: empty")
        if "\n" in token or "\r" in token:
            raise ClientConfigError(
                "Invalid value for configuration bearer.token: more than one line"
            )
    # Without a SASL protocol the sasl.* keys are unused, as by Kafka's clients: a file shared
    # with other tools may hold them; they are warned about, not refused.
    sasl = properties.get(SECURITY_PROTOCOL_KEY, "").strip().upper().startswith("SASL_")
    used_keys = (*CLIENT_TLS_KEYS, *SASL_KEYS) if sasl else CLIENT_TLS_KEYS
    tls_properties = tuple((key, properties[key]) for key in used_keys if key in properties)
    try:
        if sasl:
            kafka_client_security(dict(tls_properties))
        else:
            client_tls(dict(tls_properties))
    except ConfigError as error:
        raise ClientConfigError(str(error)) from None
    return ClientSettings(
        bearer_token=token,
        tls_properties=tls_properties,
        request_timeout_ms=timeouts.get("request.timeout.ms", REQUEST_TIMEOUT_MS),
        default_api_timeout_ms=timeouts.get("default.api.timeout.ms", DEFAULT_API_TIMEOUT_MS),
        ignored_keys=tuple(
            sorted(
                key
                for key in properties
                if key not in KNOWN_KEYS or (key in SASL_KEYS and not sasl)
            )
        ),
    )


def ignored_key_warning(key: str) -> str:
    """The warning for a key the file set that nothing reads (Kafka's wording)."""
    return f"The configuration '{key}' was supplied but isn't a known config."


def _timeout_value(key: str, raw: str) -> int:
    value = raw.strip()
    try:
        number = int(value) if len(value) <= 20 else INT_MAX + 1
    except ValueError:
        raise ClientConfigError(
            f"Invalid value {value} for configuration {key}: Not a number of type INT"
        ) from None
    if number > INT_MAX:
        # Kafka's ConfigDef reads an INT with Integer.parseInt, which refuses this the same way;
        # taken as it is, a deadline of 10^20 ms overflows every timer below it.
        raise ClientConfigError(
            f"Invalid value {value} for configuration {key}: Not a number of type INT"
        )
    if number < 0:
        raise ClientConfigError(
            f"Invalid value {number} for configuration {key}: Value must be at least 0"
        )
    return number
