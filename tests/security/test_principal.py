"""Kafka's ssl.principal.mapping.rules, the subject a certificate names, and node principals."""

from __future__ import annotations

import datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from raftmeta.config.errors import ConfigError
from raftmeta.security.certs import new_certificate_authority
from raftmeta.security.principal import (
    ANONYMOUS,
    DEFAULT_RULES,
    NODE_PRINCIPAL_RULES,
    KafkaPrincipal,
    NodeIdentity,
    NodeRole,
    PeerAuthenticationError,
    broker_principal,
    controller_principal,
    node_identity,
    parse_mapping_rules,
    peer_principal,
    subject_name,
)

# The rule list from Kafka's documentation of ssl.principal.mapping.rules.
KAFKA_DOCS_RULES = (
    "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,"
    "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,"
    "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,"
    "DEFAULT"
)

MAPPINGS: list[tuple[str, str, str]] = [
    (KAFKA_DOCS_RULES, "CN=serviceuser,OU=ServiceUsers,O=Unknown,L=Unknown", "serviceuser"),
    (
        KAFKA_DOCS_RULES,
        "CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown",
        "adminuser@admin",
    ),
    (KAFKA_DOCS_RULES, "OU=x,cn=Some.Body,O=y", "some.body"),
    (KAFKA_DOCS_RULES, "OU=nobody", "OU=nobody"),
    ("DEFAULT", "CN=broker-7,O=Acme\\, Inc.", "CN=broker-7,O=Acme\\, Inc."),
    ("RULE:^CN=(.*),OU=(.*)$/$2-$1/U", "CN=alice,OU=eng", "ENG-ALICE"),
    # "/" is escaped inside a rule; "\x" in a replacement is a literal x.
    (r"RULE:^CN=(.*)\/(.*)$/$1\/$2\$/", "CN=a/b", "a/b$"),
    # A comma inside a pattern does not split the list.
    ("RULE:^CN=([^,]*),OU=ops$/$1/ , DEFAULT", "CN=carol,OU=ops", "carol"),
    ("RULE:^CN=([^,]*),OU=ops$/$1/ , DEFAULT", "CN=carol,OU=dev", "CN=carol,OU=dev"),
    # Named groups, and a group number of two digits only when the pattern has that many.
    ("RULE:^CN=(?P<who>.*)$/${who}/", "CN=dave", "dave"),
    ("RULE:^CN=(.*)$/$10/", "CN=erin", "erin0"),
    # The first rule that applies wins; a rule giving an empty name does not apply.
    ("RULE:^CN=(.*)$/$1/,RULE:^(.*)$/x/", "CN=frank", "frank"),
    ("RULE:^CN=(x*),.*$/$1/,DEFAULT", "CN=,O=y", "CN=,O=y"),
    # Node certificates under the naming convention; other subjects keep their whole name.
    (NODE_PRINCIPAL_RULES, "CN=controller-3000", "controller-3000"),
    (NODE_PRINCIPAL_RULES, "CN=broker-7", "broker-7"),
    (NODE_PRINCIPAL_RULES, "CN=broker-7,O=Acme", "CN=broker-7,O=Acme"),
    (NODE_PRINCIPAL_RULES, "CN=router-1", "CN=router-1"),
]


@pytest.mark.parametrize(("rules", "subject", "name"), MAPPINGS)
def test_mapping_rules(rules: str, subject: str, name: str) -> None:
    assert parse_mapping_rules(rules).principal_for(subject) == KafkaPrincipal("User", name)


def test_no_rule_applies_is_an_authentication_failure() -> None:
    mapper = parse_mapping_rules("RULE:^CN=(.*),OU=ops$/$1/")
    with pytest.raises(PeerAuthenticationError, match=r"no ssl\.principal\.mapping\.rules entry"):
        mapper.name_for("CN=mallory,OU=dev")


@pytest.mark.parametrize(
    ("rules", "words"),
    [
        ("", "no rules"),
        (" , ", "no rules"),
        ("FOO", "'FOO' is not DEFAULT or RULE"),
        ("RULE:^CN=(.*)$/$1/X", "is not DEFAULT or RULE"),
        ("RULE:^CN=(.*)$/$1", "is not DEFAULT or RULE"),
        ("DEFAULT,RULE:x", "'RULE:x' is not"),
        ("RULE:^CN=((.*)$/$1/", "bad pattern"),
        ("RULE:^CN=(.*)$/$2/", "refers to group 2"),
        ("RULE:^CN=(.*)$/$x/", "must be followed by a group number"),
        ("RULE:^CN=(.*)$/${who}/", "names no group"),
        ("RULE:^CN=(.*)$/a\\/", "is not DEFAULT or RULE"),
    ],
)
def test_bad_rules_are_one_line_naming_the_key(rules: str, words: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_mapping_rules(rules, "listener.name.controller.ssl.principal.mapping.rules")
    message = str(raised.value)
    assert message.startswith(
        "Invalid configuration listener.name.controller.ssl.principal.mapping.rules:"
    )
    assert words in message
    assert "\n" not in message


def _certificate_pem(subject: x509.Name) -> bytes:
    ca = new_certificate_authority()
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca.certificate.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(ca.key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM)


def test_subject_in_rfc_2253_order_with_java_keywords() -> None:
    pem = _certificate_pem(
        x509.Name(
            [
                x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme, Inc."),
                x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "Brokers"),
                x509.NameAttribute(NameOID.COMMON_NAME, "broker+7"),
            ]
        )
    )
    assert subject_name(pem) == "CN=broker\\+7,OU=Brokers,O=Acme\\, Inc.,C=US"


def test_peer_principal_from_an_auth_context() -> None:
    pem = _certificate_pem(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "broker-7")]))
    mapper = parse_mapping_rules(NODE_PRINCIPAL_RULES)
    tls_context = {"transport_security_type": [b"ssl"], "x509_pem_cert": [pem]}
    assert peer_principal(tls_context, mapper) == broker_principal(7)
    assert str(peer_principal(tls_context)) == "User:CN=broker-7"
    assert peer_principal({}, mapper) is ANONYMOUS
    assert peer_principal({"transport_security_type": [b"ssl"]}, mapper) is ANONYMOUS
    with pytest.raises(PeerAuthenticationError, match="unreadable peer certificate"):
        peer_principal({"x509_pem_cert": [b"not a certificate"]}, DEFAULT_RULES)


def test_node_principals() -> None:
    assert str(controller_principal(3000)) == "User:controller-3000"
    assert str(broker_principal(7)) == "User:broker-7"
    assert node_identity(controller_principal(3000)) == NodeIdentity(NodeRole.CONTROLLER, 3000)
    assert node_identity(broker_principal(0)) == NodeIdentity(NodeRole.BROKER, 0)
    for name in ("broker-07", "broker--1", "broker-2147483648", "CN=broker-7", "admin"):
        assert node_identity(KafkaPrincipal("User", name)) is None
    assert node_identity(KafkaPrincipal("Group", "broker-7")) is None
    assert str(ANONYMOUS) == "User:ANONYMOUS"
