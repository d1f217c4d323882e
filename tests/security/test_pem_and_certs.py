"""The dev CA's files, and the checks made when PEM material is read."""

from __future__ import annotations

import ipaddress
import stat
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from raftmeta.config.errors import ConfigError
from raftmeta.security.certs import new_certificate_authority, write_dev_certificates
from raftmeta.security.pem import load_keystore, load_truststore
from raftmeta.security.tls import parse_tls_settings


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_dev_certificates_for_a_cluster(tmp_path: Path) -> None:
    files = write_dev_certificates(tmp_path, ["controller-3000", "broker-7"])
    assert _mode(tmp_path / "ca.key") == 0o600
    ca = x509.load_pem_x509_certificate((tmp_path / "ca.pem").read_bytes())
    for name, node in files.items():
        assert node.truststore == tmp_path / "ca.pem"
        assert _mode(node.keystore) == 0o600
        pair = load_keystore(parse_tls_settings(node.properties()).keystore)  # type: ignore[arg-type]
        leaf = x509.load_pem_x509_certificate(pair.chain_pem)
        leaf.verify_directly_issued_by(ca)
        assert leaf.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == name
        names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
        assert names.get_values_for_type(x509.DNSName) == ["localhost"]
        usage = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        assert set(usage) == {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH}


def test_node_properties_parse_and_load(tmp_path: Path) -> None:
    node = write_dev_certificates(tmp_path, ["controller-3000"])["controller-3000"]
    settings = parse_tls_settings(node.properties())
    assert settings.truststore is not None
    assert load_truststore(settings.truststore) == (tmp_path / "ca.pem").read_bytes()
    assert settings.principal_mapper.name_for("CN=controller-3000") == "controller-3000"


def test_inline_keystore_and_an_encrypted_key() -> None:
    ca = new_certificate_authority()
    issued = ca.issue("broker-7")
    key = serialization.load_pem_private_key(issued.key_pem, None)
    encrypted = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"s3cret"),
    ).decode()
    properties = {
        "ssl.keystore.key": encrypted,
        "ssl.keystore.certificate.chain": issued.chain_pem.decode(),
    }
    settings = parse_tls_settings({**properties, "ssl.key.password": "s3cret"})
    assert settings.keystore is not None
    assert load_keystore(settings.keystore, settings.key_password).key_pem == issued.key_pem
    with pytest.raises(ConfigError, match=r"^Invalid configuration ssl\.keystore\.key: .*ssl\.key"):
        load_keystore(settings.keystore)
    with pytest.raises(ConfigError, match=r"^Invalid configuration ssl\.keystore\.key: unreadable"):
        load_keystore(settings.keystore, "wrong")


def _keystore_error(tmp_path: Path, content: bytes | None) -> str:
    path = tmp_path / "node.pem"
    if content is not None:
        path.write_bytes(content)
    settings = parse_tls_settings({"ssl.keystore.location": str(path)})
    assert settings.keystore is not None
    with pytest.raises(ConfigError) as raised:
        load_keystore(settings.keystore)
    message = str(raised.value)
    assert message.startswith(f"Invalid configuration ssl.keystore.location={path}: ")
    assert "\n" not in message
    return message


def test_keystore_files_that_cannot_serve(tmp_path: Path) -> None:
    ca = new_certificate_authority()
    mine, other = ca.issue("broker-7"), ca.issue("broker-8")
    assert "cannot read" in _keystore_error(tmp_path, None)
    assert "holds no PEM block" in _keystore_error(tmp_path, b"")
    assert "expected one PEM private key, found 0" in _keystore_error(tmp_path, mine.chain_pem)
    assert "found 2" in _keystore_error(tmp_path, mine.key_pem + other.key_pem + mine.chain_pem)
    assert "holds no PEM certificate" in _keystore_error(tmp_path, mine.key_pem)
    assert "not the private key's" in _keystore_error(tmp_path, mine.key_pem + other.chain_pem)
    broken = mine.chain_pem.replace(b"\n-----END", b"AAAA\n-----END")
    assert "unreadable certificate" in _keystore_error(tmp_path, mine.key_pem + broken)
    assert "unexpected PEM block PUBLIC KEY" in _keystore_error(
        tmp_path,
        mine.keystore_pem + b"-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
    )


def test_a_truststore_holds_certificates_only(tmp_path: Path) -> None:
    ca = new_certificate_authority()
    path = tmp_path / "ca.pem"
    path.write_bytes(ca.certificate_pem + ca.key_pem)
    settings = parse_tls_settings({"ssl.truststore.location": str(path)})
    assert settings.truststore is not None
    with pytest.raises(ConfigError, match="unexpected PEM block PRIVATE KEY"):
        load_truststore(settings.truststore)
    inline = parse_tls_settings({"ssl.truststore.certificates": ca.certificate_pem.decode()})
    assert inline.truststore is not None
    assert load_truststore(inline.truststore) == ca.certificate_pem
