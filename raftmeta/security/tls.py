"""TLS settings with Kafka's names, parsed from a node's or a client's properties.

Only PEM is supported, as grpc reads nothing else. Kafka offers two ways to give PEM material,
and both are accepted:

- **inline**: ``ssl.keystore.key`` and ``ssl.keystore.certificate.chain`` hold the PEM text of
  the private key and of the certificate chain, ``ssl.truststore.certificates`` the PEM text of
  the trusted CA certificates. These keys never name a file, as in Kafka: a value that is not
  PEM text is refused, with a pointer to the ``.location`` key.
- **by file**: ``ssl.keystore.location`` names one PEM file holding the private key and the
  chain, ``ssl.truststore.location`` one PEM file of CA certificates. Only files can be renewed
  without a restart (see :mod:`raftmeta.security.credentials`), so they are what
  ``raftmeta dev --tls`` writes.

Giving both forms for the same store is an error, as is half of the inline keystore.
``ssl.key.password`` decrypts an encrypted PEM key. ``ssl.client.auth`` is ``required`` or
``none`` (Kafka's default); Kafka's third value, ``requested`` (ask for a certificate but
accept a client without one), is refused because grpc's Python server cannot ask for an
optional certificate: it either requires one or does not ask. ``ssl.principal.mapping.rules``
is parsed by :mod:`raftmeta.security.principal`.

A setting may be given for one listener as ``listener.name.<name>.<key>`` (``<name>`` in lower
case), which wins over the plain key, key by key, as in Kafka.

Parsing reads no file: a bad value fails here, with one line naming the key, and reading the
files is :func:`raftmeta.security.pem.load_keystore` and ``load_truststore``'s job. An empty
value counts as unset, so a templated ``ssl.keystore.key=`` does not count as a second form.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from raftmeta.config.errors import ConfigError
from raftmeta.security.principal import DEFAULT_RULES, PrincipalMapper, parse_mapping_rules

SECURITY_PROTOCOL_MAP_KEY = "listener.security.protocol.map"
KEYSTORE_TYPE_KEY = "ssl.keystore.type"
KEYSTORE_LOCATION_KEY = "ssl.keystore.location"
KEYSTORE_KEY_KEY = "ssl.keystore.key"
KEYSTORE_CHAIN_KEY = "ssl.keystore.certificate.chain"
KEY_PASSWORD_KEY = "ssl.key.password"
TRUSTSTORE_TYPE_KEY = "ssl.truststore.type"
TRUSTSTORE_LOCATION_KEY = "ssl.truststore.location"
TRUSTSTORE_CERTIFICATES_KEY = "ssl.truststore.certificates"
CLIENT_AUTH_KEY = "ssl.client.auth"
PRINCIPAL_MAPPING_RULES_KEY = "ssl.principal.mapping.rules"

TLS_KEYS: tuple[str, ...] = (
    KEYSTORE_TYPE_KEY,
    KEYSTORE_LOCATION_KEY,
    KEYSTORE_KEY_KEY,
    KEYSTORE_CHAIN_KEY,
    KEY_PASSWORD_KEY,
    TRUSTSTORE_TYPE_KEY,
    TRUSTSTORE_LOCATION_KEY,
    TRUSTSTORE_CERTIFICATES_KEY,
    CLIENT_AUTH_KEY,
    PRINCIPAL_MAPPING_RULES_KEY,
)
"""Every key :func:`parse_tls_settings` reads, for the configuration key table."""

PEM = "PEM"
_PEM_MARKER = "-----BEGIN "


class SecurityProtocol(enum.StrEnum):
    """What a listener speaks. The SASL protocols are served on the KAFKA listener only (the
    gRPC listeners name their callers with bearer tokens and certificates)."""

    PLAINTEXT = "PLAINTEXT"
    SSL = "SSL"
    SASL_PLAINTEXT = "SASL_PLAINTEXT"
    SASL_SSL = "SASL_SSL"

    @property
    def uses_tls(self) -> bool:
        return self in (SecurityProtocol.SSL, SecurityProtocol.SASL_SSL)

    @property
    def uses_sasl(self) -> bool:
        return self in (SecurityProtocol.SASL_PLAINTEXT, SecurityProtocol.SASL_SSL)


DEFAULT_SECURITY_PROTOCOL_MAP = "PLAINTEXT:PLAINTEXT,SSL:SSL"
"""Kafka's default, less the SASL listeners: a listener named SSL speaks SSL."""


class ClientAuth(enum.StrEnum):
    """Kafka's ``ssl.client.auth`` values; :func:`parse_tls_settings` refuses ``requested``."""

    REQUIRED = "required"
    REQUESTED = "requested"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class PemFile:
    """A PEM file named by a ``.location`` key; ``key`` is that key, for error messages."""

    path: Path
    key: str


@dataclass(frozen=True, slots=True)
class InlineKeystore:
    """``ssl.keystore.certificate.chain`` and ``ssl.keystore.key`` as given (PEM text)."""

    certificate_chain: str = field(repr=False)
    key: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class InlineTruststore:
    """``ssl.truststore.certificates`` as given (PEM text)."""

    certificates: str = field(repr=False)


Keystore = InlineKeystore | PemFile
Truststore = InlineTruststore | PemFile


@dataclass(frozen=True, slots=True)
class TlsSettings:
    """One endpoint's TLS settings: its own certificate (if any), whom it trusts, whether it
    asks clients for certificates, and how a client certificate becomes a principal."""

    keystore: Keystore | None = None
    """Absent for a client that presents no certificate; a server needs one."""
    truststore: Truststore | None = None
    """Absent means the system's default roots (clients) or no client check (servers)."""
    client_auth: ClientAuth = ClientAuth.NONE
    principal_mapper: PrincipalMapper = field(default_factory=lambda: DEFAULT_RULES)
    key_password: str | None = field(default=None, repr=False)


def parse_tls_settings(
    properties: Mapping[str, str], listener_name: str | None = None
) -> TlsSettings:
    """The TLS settings in ``properties``, for ``listener_name`` if given (its
    ``listener.name.<name>.`` keys win over the plain ones); raises :class:`ConfigError`."""
    look = _Lookup(properties, listener_name)
    for type_key in (KEYSTORE_TYPE_KEY, TRUSTSTORE_TYPE_KEY):
        store_type = look.get(type_key)
        if store_type is not None and store_type.upper() != PEM:
            raise ConfigError(
                f"Invalid configuration {look.name(type_key)}={store_type}: only PEM is "
                "supported (give PEM text or a PEM file)"
            )
    client_auth = _parse_client_auth(look)
    rules = look.get(PRINCIPAL_MAPPING_RULES_KEY)
    mapper = (
        DEFAULT_RULES
        if rules is None
        else parse_mapping_rules(rules, look.name(PRINCIPAL_MAPPING_RULES_KEY))
    )
    return TlsSettings(
        keystore=_parse_keystore(look),
        truststore=_parse_truststore(look),
        client_auth=client_auth,
        principal_mapper=mapper,
        key_password=look.get(KEY_PASSWORD_KEY),
    )


def parse_security_protocol_map(
    value: str, key: str = SECURITY_PROTOCOL_MAP_KEY
) -> Mapping[str, SecurityProtocol]:
    """``NAME:PROTOCOL,...`` as a read-only map from upper-case listener name to protocol."""
    result: dict[str, SecurityProtocol] = {}
    entries = [entry.strip() for entry in value.split(",")]
    if entries == [""]:
        raise ConfigError(f"Invalid configuration {key}: empty (expected NAME:PROTOCOL,...)")
    for entry in entries:
        name, colon, protocol = (part.strip() for part in entry.partition(":"))
        if not colon or not name or not _is_listener_name(name):
            raise ConfigError(
                f"Invalid configuration {key}: entry {_quote(entry)} is not NAME:PROTOCOL"
            )
        name = name.upper()
        if name in result:
            raise ConfigError(f"Invalid configuration {key}: listener {name} is mapped twice")
        try:
            result[name] = SecurityProtocol(protocol.upper())
        except ValueError:
            raise ConfigError(
                f"Invalid configuration {key}: listener {name} has protocol "
                f"{_quote(protocol)} (expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)"
            ) from None
    return MappingProxyType(result)


def protocol_of(
    listener_name: str, protocols: Mapping[str, SecurityProtocol], key: str = "listeners"
) -> SecurityProtocol:
    """The protocol ``listener_name`` speaks, or a :class:`ConfigError` naming the listener
    that ``listener.security.protocol.map`` leaves out (``key`` is where that name came from)."""
    try:
        return protocols[listener_name.upper()]
    except KeyError:
        raise ConfigError(
            f"Invalid configuration {key}: listener {listener_name.upper()} has no entry in "
            f"{SECURITY_PROTOCOL_MAP_KEY}"
        ) from None


class _Lookup:
    """Reads a key for one listener: its prefixed form first, then the plain one."""

    def __init__(self, properties: Mapping[str, str], listener_name: str | None) -> None:
        self._properties = properties
        self._prefix = f"listener.name.{listener_name.lower()}." if listener_name else ""

    def name(self, key: str) -> str:
        """The key as the operator wrote it (prefixed when that form is set)."""
        prefixed = self._prefix + key
        if self._prefix and self._properties.get(prefixed, "").strip():
            return prefixed
        return key

    def get(self, key: str) -> str | None:
        value = self._properties.get(self.name(key), "").strip()
        return value or None


def _parse_client_auth(look: _Lookup) -> ClientAuth:
    raw = look.get(CLIENT_AUTH_KEY)
    if raw is None:
        return ClientAuth.NONE
    try:
        client_auth = ClientAuth(raw.lower())
    except ValueError:
        raise ConfigError(
            f"Invalid configuration {look.name(CLIENT_AUTH_KEY)}={_quote(raw)}: expected "
            "required or none"
        ) from None
    if client_auth is ClientAuth.REQUESTED:
        raise ConfigError(
            f"Invalid configuration {look.name(CLIENT_AUTH_KEY)}=requested: not supported "
            "(grpc cannot ask for an optional client certificate); use required or none"
        )
    return client_auth


def _parse_keystore(look: _Lookup) -> Keystore | None:
    location = look.get(KEYSTORE_LOCATION_KEY)
    key = look.get(KEYSTORE_KEY_KEY)
    chain = look.get(KEYSTORE_CHAIN_KEY)
    if location is not None:
        if key is not None or chain is not None:
            inline = KEYSTORE_KEY_KEY if key is not None else KEYSTORE_CHAIN_KEY
            raise ConfigError(
                f"Invalid configuration {look.name(KEYSTORE_LOCATION_KEY)}: give either a "
                f"keystore file or inline PEM in {look.name(inline)}, not both"
            )
        return PemFile(Path(location), look.name(KEYSTORE_LOCATION_KEY))
    if key is None and chain is None:
        return None
    if key is None or chain is None:
        missing = KEYSTORE_KEY_KEY if key is None else KEYSTORE_CHAIN_KEY
        given = KEYSTORE_CHAIN_KEY if key is None else KEYSTORE_KEY_KEY
        raise ConfigError(
            f"Invalid configuration {look.name(missing)}: missing, while {look.name(given)} "
            "is set (an inline keystore needs both the key and the certificate chain)"
        )
    _require_pem_text(look, KEYSTORE_KEY_KEY, key, KEYSTORE_LOCATION_KEY)
    _require_pem_text(look, KEYSTORE_CHAIN_KEY, chain, KEYSTORE_LOCATION_KEY)
    return InlineKeystore(certificate_chain=chain, key=key)


def _parse_truststore(look: _Lookup) -> Truststore | None:
    location = look.get(TRUSTSTORE_LOCATION_KEY)
    certificates = look.get(TRUSTSTORE_CERTIFICATES_KEY)
    if location is not None and certificates is not None:
        raise ConfigError(
            f"Invalid configuration {look.name(TRUSTSTORE_LOCATION_KEY)}: give either a "
            f"truststore file or inline PEM in {look.name(TRUSTSTORE_CERTIFICATES_KEY)}, "
            "not both"
        )
    if location is not None:
        return PemFile(Path(location), look.name(TRUSTSTORE_LOCATION_KEY))
    if certificates is None:
        return None
    _require_pem_text(look, TRUSTSTORE_CERTIFICATES_KEY, certificates, TRUSTSTORE_LOCATION_KEY)
    return InlineTruststore(certificates=certificates)


def _require_pem_text(look: _Lookup, key: str, value: str, file_key: str) -> None:
    if _PEM_MARKER not in value:
        raise ConfigError(
            f"Invalid configuration {look.name(key)}: expected PEM text (-----BEGIN ...); "
            f"to name a file use {file_key}"
        )


def _is_listener_name(name: str) -> bool:
    return (
        name[0].isascii()
        and name[0].isalpha()
        and all(char.isascii() and (char.isalnum() or char == "_") for char in name)
    )


def _quote(value: str, limit: int = 60) -> str:
    """A value shown on one line, cut if long: PEM text and typos alike stay readable."""
    shown = "".join(
        char if char.isprintable() else char.encode("unicode_escape").decode("ascii")
        for char in value
    )
    return repr(shown if len(shown) <= limit else shown[: limit - 3] + "...")
