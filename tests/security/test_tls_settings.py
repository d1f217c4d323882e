"""TLS settings and the listener protocol map: good values parse, every bad value is one line
naming its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from raftmeta.config.errors import ConfigError
from raftmeta.security.principal import DEFAULT_RULES
from raftmeta.security.tls import (
    DEFAULT_SECURITY_PROTOCOL_MAP,
    ClientAuth,
    InlineKeystore,
    InlineTruststore,
    PemFile,
    SecurityProtocol,
    TlsSettings,
    parse_security_protocol_map,
    parse_tls_settings,
    protocol_of,
)

KEY = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
CHAIN = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"


def test_nothing_set_gives_a_client_without_certificate_and_the_default_rules() -> None:
    assert parse_tls_settings({}) == TlsSettings(
        keystore=None, truststore=None, client_auth=ClientAuth.NONE, principal_mapper=DEFAULT_RULES
    )


def test_files_by_location() -> None:
    settings = parse_tls_settings(
        {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": "/etc/raftmeta/node.pem",
            "ssl.truststore.type": "pem",
            "ssl.truststore.location": "/etc/raftmeta/ca.pem",
            "ssl.client.auth": "REQUIRED",
        }
    )
    assert settings.keystore == PemFile(Path("/etc/raftmeta/node.pem"), "ssl.keystore.location")
    assert settings.truststore == PemFile(Path("/etc/raftmeta/ca.pem"), "ssl.truststore.location")
    assert settings.client_auth is ClientAuth.REQUIRED


def test_inline_pem_text() -> None:
    settings = parse_tls_settings(
        {
            "ssl.keystore.key": KEY,
            "ssl.keystore.certificate.chain": CHAIN,
            "ssl.truststore.certificates": CHAIN,
            "ssl.key.password": "secret",
        }
    )
    assert settings.keystore == InlineKeystore(certificate_chain=CHAIN.strip(), key=KEY.strip())
    assert settings.truststore == InlineTruststore(CHAIN.strip())
    assert settings.key_password == "secret"
    assert "secret" not in repr(settings) and "AAAA" not in repr(settings)


def test_a_listener_prefixed_key_wins_key_by_key() -> None:
    properties = {
        "ssl.keystore.location": "/plain.pem",
        "ssl.truststore.location": "/ca.pem",
        "listener.name.controller.ssl.keystore.location": "/controller.pem",
    }
    settings = parse_tls_settings(properties, listener_name="CONTROLLER")
    assert settings.keystore == PemFile(
        Path("/controller.pem"), "listener.name.controller.ssl.keystore.location"
    )
    assert settings.truststore == PemFile(Path("/ca.pem"), "ssl.truststore.location")
    assert parse_tls_settings(properties).keystore == PemFile(
        Path("/plain.pem"), "ssl.keystore.location"
    )


def test_empty_values_count_as_unset() -> None:
    settings = parse_tls_settings(
        {"ssl.keystore.location": "/node.pem", "ssl.keystore.key": " ", "ssl.client.auth": ""}
    )
    assert settings.keystore == PemFile(Path("/node.pem"), "ssl.keystore.location")
    assert settings.client_auth is ClientAuth.NONE


BAD_SETTINGS: list[tuple[dict[str, str], str, str]] = [
    ({"ssl.keystore.type": "JKS"}, "ssl.keystore.type", "only PEM"),
    ({"ssl.truststore.type": "PKCS12"}, "ssl.truststore.type", "only PEM"),
    (
        {"listener.name.broker.ssl.keystore.type": "JKS"},
        "listener.name.broker.ssl.keystore.type",
        "only PEM",
    ),
    ({"ssl.client.auth": "always"}, "ssl.client.auth", "expected required or none"),
    ({"ssl.client.auth": "requested"}, "ssl.client.auth", "not supported"),
    (
        {"ssl.keystore.location": "/a.pem", "ssl.keystore.key": KEY},
        "ssl.keystore.location",
        "not both",
    ),
    (
        {"ssl.keystore.location": "/a.pem", "ssl.keystore.certificate.chain": CHAIN},
        "ssl.keystore.location",
        "not both",
    ),
    ({"ssl.keystore.key": KEY}, "ssl.keystore.certificate.chain", "missing"),
    ({"ssl.keystore.certificate.chain": CHAIN}, "ssl.keystore.key", "missing"),
    (
        {"ssl.keystore.key": "/etc/node.key", "ssl.keystore.certificate.chain": CHAIN},
        "ssl.keystore.key",
        "use ssl.keystore.location",
    ),
    (
        {"ssl.keystore.key": KEY, "ssl.keystore.certificate.chain": "/etc/node.crt"},
        "ssl.keystore.certificate.chain",
        "expected PEM text",
    ),
    (
        {"ssl.truststore.certificates": "/etc/ca.pem"},
        "ssl.truststore.certificates",
        "use ssl.truststore.location",
    ),
    (
        {"ssl.truststore.certificates": CHAIN, "ssl.truststore.location": "/ca.pem"},
        "ssl.truststore.location",
        "not both",
    ),
    ({"ssl.principal.mapping.rules": "RULE:(/x/"}, "ssl.principal.mapping.rules", "pattern"),
    ({"ssl.principal.mapping.rules": "NOPE"}, "ssl.principal.mapping.rules", "'NOPE'"),
]


@pytest.mark.parametrize(("properties", "key", "words"), BAD_SETTINGS)
def test_every_bad_value_is_one_line_naming_its_key(
    properties: dict[str, str], key: str, words: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_tls_settings(properties, listener_name="BROKER")
    message = str(raised.value)
    assert message.startswith(f"Invalid configuration {key}")
    assert words in message
    assert "\n" not in message


def test_protocol_map() -> None:
    protocols = parse_security_protocol_map(" controller:SSL , BROKER:plaintext,Ext_1:SSL ")
    assert dict(protocols) == {
        "CONTROLLER": SecurityProtocol.SSL,
        "BROKER": SecurityProtocol.PLAINTEXT,
        "EXT_1": SecurityProtocol.SSL,
    }
    assert protocol_of("controller", protocols) is SecurityProtocol.SSL
    assert dict(parse_security_protocol_map(DEFAULT_SECURITY_PROTOCOL_MAP)) == {
        "PLAINTEXT": SecurityProtocol.PLAINTEXT,
        "SSL": SecurityProtocol.SSL,
    }


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("", "empty"),
        ("CONTROLLER", "is not NAME:PROTOCOL"),
        (":SSL", "is not NAME:PROTOCOL"),
        ("9LIVES:SSL", "is not NAME:PROTOCOL"),
        ("CONTROLLER:SSL,", "is not NAME:PROTOCOL"),
        ("CONTROLLER:TLS", "expected PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL"),
        ("CONTROLLER:SSL,controller:PLAINTEXT", "mapped twice"),
    ],
)
def test_bad_protocol_maps(value: str, words: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_security_protocol_map(value)
    message = str(raised.value)
    assert message.startswith("Invalid configuration listener.security.protocol.map")
    assert words in message
    assert "\n" not in message


def test_a_listener_the_map_leaves_out() -> None:
    with pytest.raises(ConfigError, match=r"^Invalid configuration listeners: listener BROKER"):
        protocol_of("broker", parse_security_protocol_map("CONTROLLER:SSL"))
