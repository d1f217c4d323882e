"""How a client of a KAFKA listener logs in, from Kafka's client keys.

``security.protocol`` is PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL; the TLS ones read the
``ssl.*`` keys :mod:`raftmeta.security.tls` reads. The SASL ones need ``sasl.mechanism``
(PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512) and a username and password, given as Kafka's Java
clients give them::

    sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
        username="alice" password="alice-secret";

(``PlainLoginModule`` for PLAIN), or as librdkafka's ``sasl.username`` and ``sasl.password``.
SASL keys with a protocol that is not SASL are refused rather than silently ignored, and every
message names the key, never the password.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from raftmeta.config.errors import ConfigError
from raftmeta.security.tls import TLS_KEYS, SecurityProtocol, TlsSettings, parse_tls_settings

SECURITY_PROTOCOL_KEY = "security.protocol"
SASL_MECHANISM_KEY = "sasl.mechanism"
SASL_JAAS_CONFIG_KEY = "sasl.jaas.config"
SASL_USERNAME_KEY = "sasl.username"
SASL_PASSWORD_KEY = "sasl.password"
SASL_KEYS = (SASL_MECHANISM_KEY, SASL_JAAS_CONFIG_KEY, SASL_USERNAME_KEY, SASL_PASSWORD_KEY)
"""Every SASL key a client may give."""
CLIENT_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_LOGIN_MODULES = {
    "PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
    "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule",
    "SCRAM-SHA-512": "org.apache.kafka.common.security.scram.ScramLoginModule",
}
_JAAS = re.compile(r"\s*(?P<module>[\w.$]+)\s+(?P<flag>\w+)(?P<options>.*?);?\s*$", re.DOTALL)
_OPTION = re.compile(
    r'\s*(?P<key>[\w.]+)\s*=\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<bare>[^\s"]+))'
)


@dataclass(frozen=True, slots=True)
class SaslLogin:
    """Who a client logs in as, and with which mechanism."""

    mechanism: str
    username: str
    password: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class KafkaClientSecurity:
    protocol: SecurityProtocol
    tls: TlsSettings | None
    """For SSL and SASL_SSL."""
    sasl: SaslLogin | None
    """For SASL_PLAINTEXT and SASL_SSL."""


def parse_jaas_config(text: str) -> tuple[str, dict[str, str]]:
    """The login module and its options of one ``sasl.jaas.config`` entry."""
    found = _JAAS.fullmatch(text)
    if found is None or found["flag"] not in ("required", "requisite", "sufficient", "optional"):
        raise ConfigError(
            f"Invalid configuration {SASL_JAAS_CONFIG_KEY}: expected '<LoginModule> required "
            'username="..." password="...";\''
        )
    options: dict[str, str] = {}
    rest = found["options"].strip()
    while rest:
        option = _OPTION.match(rest)
        if option is None:
            raise ConfigError(
                f"Invalid configuration {SASL_JAAS_CONFIG_KEY}: malformed option; expected "
                'key="value" pairs'
            )
        value = option["quoted"]
        value = option["bare"] if value is None else re.sub(r"\\(.)", r"\1", value)
        options[option["key"]] = value
        rest = rest[option.end() :].strip()
    return found["module"], options


def _login(properties: Mapping[str, str]) -> SaslLogin:
    mechanism = properties.get(SASL_MECHANISM_KEY, "").strip().upper()
    if mechanism not in CLIENT_MECHANISMS:
        given = mechanism[:40] or "unset (Kafka's default GSSAPI)"
        raise ConfigError(
            f"Invalid configuration {SASL_MECHANISM_KEY}={given}: expected "
            f"{', '.join(CLIENT_MECHANISMS)}"
        )
    jaas = properties.get(SASL_JAAS_CONFIG_KEY, "").strip()
    username = properties.get(SASL_USERNAME_KEY)
    password = properties.get(SASL_PASSWORD_KEY)
    if jaas:
        if username is not None or password is not None:
            raise ConfigError(
                f"Invalid configuration {SASL_JAAS_CONFIG_KEY}: give it or {SASL_USERNAME_KEY} "
                f"and {SASL_PASSWORD_KEY}, not both"
            )
        module, options = parse_jaas_config(jaas)
        if module != _LOGIN_MODULES[mechanism]:
            raise ConfigError(
                f"Invalid configuration {SASL_JAAS_CONFIG_KEY}: {mechanism} logs in with "
                f"{_LOGIN_MODULES[mechanism]}, not {module[:80]}"
            )
        username, password = options.get("username"), options.get("password")
    if not username or not password:
        raise ConfigError(
            f"Invalid configuration {SASL_JAAS_CONFIG_KEY}: {mechanism} needs a username and "
            f"a password (in {SASL_JAAS_CONFIG_KEY}, or {SASL_USERNAME_KEY} and "
            f"{SASL_PASSWORD_KEY})"
        )
    return SaslLogin(mechanism, username, password)


def kafka_client_security(properties: Mapping[str, str]) -> KafkaClientSecurity:
    """The protocol, TLS settings and login a KAFKA listener client uses; raises
    :class:`ConfigError`."""
    raw = properties.get(SECURITY_PROTOCOL_KEY, "").strip() or "PLAINTEXT"
    try:
        protocol = SecurityProtocol(raw.upper())
    except ValueError:
        raise ConfigError(
            f"Invalid configuration {SECURITY_PROTOCOL_KEY}={raw[:40]!r}: expected PLAINTEXT, "
            "SSL, SASL_PLAINTEXT or SASL_SSL"
        ) from None
    sasl_given = sorted(key for key in SASL_KEYS if properties.get(key, "").strip())
    if sasl_given and not protocol.uses_sasl:
        raise ConfigError(
            f"Invalid configuration {sasl_given[0]}: set, but {SECURITY_PROTOCOL_KEY} is "
            f"{protocol} (set SASL_PLAINTEXT or SASL_SSL to use it)"
        )
    tls_given = sorted(key for key in TLS_KEYS if properties.get(key, "").strip())
    if tls_given and not protocol.uses_tls:
        raise ConfigError(
            f"Invalid configuration {tls_given[0]}: set, but {SECURITY_PROTOCOL_KEY} is "
            f"{protocol} (set SSL or SASL_SSL to use it)"
        )
    tls = parse_tls_settings(properties) if protocol.uses_tls else None
    sasl = _login(properties) if protocol.uses_sasl else None
    return KafkaClientSecurity(protocol, tls, sasl)
