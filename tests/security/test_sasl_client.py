"""Kafka's client keys for a SASL login on a KAFKA listener: ``sasl.jaas.config`` as Kafka's
Java clients write it, or librdkafka's username and password; every mistake one line that
names the key and never the password."""

from __future__ import annotations

import pytest

from raftmeta.admin.settings import parse_admin_config
from raftmeta.cli.client_config import parse_client_config
from raftmeta.config.errors import ConfigError
from raftmeta.security.sasl_client import SaslLogin, kafka_client_security
from raftmeta.security.tls import SecurityProtocol

SCRAM_JAAS = (
    "org.apache.kafka.common.security.scram.ScramLoginModule required "
    'username="alice" password="s3cret \\"quoted\\"";'
)


def test_jaas_config_and_librdkafka_keys_give_the_same_login() -> None:
    java = kafka_client_security(
        {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": SCRAM_JAAS,
        }
    )
    assert java.protocol is SecurityProtocol.SASL_PLAINTEXT and java.tls is None
    assert java.sasl == SaslLogin("SCRAM-SHA-512", "alice", 's3cret "quoted"')
    plain = kafka_client_security(
        {
            "security.protocol": "sasl_plaintext",
            "sasl.mechanism": "PLAIN",
            "sasl.username": "alice",
            "sasl.password": "pw",
        }
    )
    assert plain.sasl == SaslLogin("PLAIN", "alice", "pw")
    assert "pw" not in repr(plain.sasl)


@pytest.mark.parametrize(
    ("properties", "words"),
    [
        ({"security.protocol": "SASL_PLAINTEXT"}, "sasl.mechanism=unset"),
        ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"}, "GSSAPI"),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "PLAIN",
                "sasl.jaas.config": SCRAM_JAAS,
            },
            "PlainLoginModule",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                "required username=alice",
            },
            "needs a username and a password",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-256",
                "sasl.jaas.config": "not a jaas line at all =",
            },
            "sasl.jaas.config",
        ),
        ({"security.protocol": "SSL", "sasl.mechanism": "PLAIN"}, "sasl.mechanism: set"),
        ({"security.protocol": "KERBEROS"}, "expected PLAINTEXT, SSL"),
    ],
)
def test_mistakes_name_the_key(properties: dict[str, str], words: str) -> None:
    with pytest.raises(ConfigError) as refused:
        kafka_client_security(properties)
    assert words in str(refused.value)
    assert "s3cret" not in str(refused.value)


def test_sasl_is_for_the_kafka_door_only() -> None:
    sasl = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-256",
        "sasl.jaas.config": SCRAM_JAAS,
    }
    settings = parse_admin_config({"bootstrap.controllers": "h:1", **sasl})
    assert settings.sasl == SaslLogin("SCRAM-SHA-256", "alice", 's3cret "quoted"')
    with pytest.raises(ValueError, match="KAFKA listeners only"):
        parse_admin_config({"bootstrap.servers": "h:1", **sasl})
    with pytest.raises(ValueError, match=r"sasl\.mechanism"):
        parse_admin_config({"bootstrap.controllers": "h:1", "sasl.mechanism": "PLAIN"})


def test_a_client_file_keeps_sasl_keys_for_a_sasl_protocol_and_warns_otherwise() -> None:
    used = parse_client_config(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="pw";\n'
    )
    assert dict(used.tls_properties)["sasl.mechanism"] == "SCRAM-SHA-256"
    assert used.ignored_keys == ()
    unused = parse_client_config("sasl.mechanism=PLAIN\n")
    assert unused.tls_properties == () and unused.ignored_keys == ("sasl.mechanism",)
