"""A throwaway certificate authority for development and tests.

``raftmeta dev --tls`` and the TLS tests need a CA and one certificate per node without asking
anyone to run openssl. Everything is built with the ``cryptography`` library (no hand-written
ASN.1) and written as PEM, the one keystore type the nodes read.

A node's certificate is good for both ends of a connection (server and client authentication):
a controller listens and also calls its peers with the same identity. Its subject is
``CN=<name>`` (``controller-3000``, ``broker-7``) and its alternative names are the loopback
address and ``localhost``, where dev clusters and tests live. Keys are ECDSA P-256: quick to
make, and accepted by every TLS stack gRPC uses. Private keys are written with mode 0600.

Not for production: the CA's key sits beside the certificates it signs.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from raftmeta.security.principal import NODE_PRINCIPAL_RULES

DEFAULT_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost")
"""Where a dev or test node is reached; every leaf certificate names them."""

CA_VALIDITY = datetime.timedelta(days=3650)
LEAF_VALIDITY = datetime.timedelta(days=365)
CLOCK_SKEW = datetime.timedelta(minutes=5)
"""Certificates start a little in the past so a peer whose clock runs behind still accepts them."""

CA_CERT_FILE = "ca.pem"
CA_KEY_FILE = "ca.key"


@dataclass(frozen=True, slots=True)
class IssuedCertificate:
    """A certificate (its chain up to, not including, the CA) and its private key, as PEM."""

    chain_pem: bytes
    key_pem: bytes

    @property
    def keystore_pem(self) -> bytes:
        """Key and chain in one file, the shape ``ssl.keystore.location`` reads for PEM."""
        return self.key_pem + self.chain_pem


@dataclass(frozen=True, slots=True)
class CertificateAuthority:
    """A self-signed CA that signs node certificates."""

    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @property
    def certificate_pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    @property
    def key_pem(self) -> bytes:
        return _key_pem(self.key)

    def issue(
        self,
        common_name: str,
        hosts: Sequence[str] = DEFAULT_HOSTS,
        *,
        validity: datetime.timedelta = LEAF_VALIDITY,
        now: datetime.datetime | None = None,
    ) -> IssuedCertificate:
        """A leaf certificate for ``CN=<common_name>`` valid for ``hosts`` (IP addresses or
        DNS names), usable as a TLS server and as a TLS client."""
        start = (now or _utcnow()) - CLOCK_SKEW
        key = ec.generate_private_key(ec.SECP256R1())
        ca_ski = self.certificate.extensions.get_extension_for_class(x509.SubjectKeyIdentifier)
        certificate = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)]))
            .issuer_name(self.certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(start + validity)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=True,
                    key_cert_sign=False,
                    crl_sign=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(
                x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
            .add_extension(
                x509.SubjectAlternativeName([_general_name(host) for host in hosts]),
                critical=False,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
            )
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski.value),
                critical=False,
            )
            .sign(self.key, hashes.SHA256())
        )
        return IssuedCertificate(
            chain_pem=certificate.public_bytes(serialization.Encoding.PEM),
            key_pem=_key_pem(key),
        )


def new_certificate_authority(
    name: str = "raftmeta dev CA",
    *,
    validity: datetime.timedelta = CA_VALIDITY,
    now: datetime.datetime | None = None,
) -> CertificateAuthority:
    """A fresh self-signed CA whose subject is ``CN=<name>``."""
    start = (now or _utcnow()) - CLOCK_SKEW
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + validity)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return CertificateAuthority(certificate=certificate, key=key)


@dataclass(frozen=True, slots=True)
class NodeFiles:
    """Where one node's TLS material was written."""

    keystore: Path
    """The node's private key and certificate chain in one PEM file (mode 0600)."""
    truststore: Path
    """The CA certificate(s) the node trusts, PEM."""

    def properties(self, client_auth: str = "required") -> dict[str, str]:
        """The settings a node (or a client) needs to use these files, with Kafka's names.

        File locations rather than inline PEM, so a renewed certificate written over the
        keystore is picked up without a restart; node certificates map to node principals
        (``User:controller-3000``)."""
        return {
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(self.keystore),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.truststore),
            "ssl.client.auth": client_auth,
            "ssl.principal.mapping.rules": NODE_PRINCIPAL_RULES,
        }


def write_certificate_authority(ca: CertificateAuthority, directory: Path) -> Path:
    """Write the CA's certificate (``ca.pem``) and key (``ca.key``, 0600) into ``directory``;
    returns the certificate's path, the truststore every node shares."""
    directory.mkdir(parents=True, exist_ok=True)
    write_private(directory / CA_KEY_FILE, ca.key_pem)
    certificate_path = directory / CA_CERT_FILE
    certificate_path.write_bytes(ca.certificate_pem)
    return certificate_path


def write_node_files(
    ca: CertificateAuthority,
    directory: Path,
    common_name: str,
    hosts: Sequence[str] = DEFAULT_HOSTS,
) -> NodeFiles:
    """Issue a certificate for ``common_name`` and write it, with the CA certificate, into
    ``directory`` as ``<common_name>.pem`` (key + chain, 0600) and ``ca.pem``."""
    directory.mkdir(parents=True, exist_ok=True)
    issued = ca.issue(common_name, hosts)
    keystore = directory / f"{common_name}.pem"
    write_private(keystore, issued.keystore_pem)
    truststore = directory / CA_CERT_FILE
    truststore.write_bytes(ca.certificate_pem)
    return NodeFiles(keystore=keystore, truststore=truststore)


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` readable by the owner only, replacing the file in one step so
    a reader never sees half a key (a running node may be watching it for renewal)."""
    temporary = path.with_name(f".{path.name}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            # The mode given to os.open applies only if the file is new.
            os.fchmod(file.fileno(), 0o600)
            file.write(data)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    os.replace(temporary, path)


def _general_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def write_dev_certificates(directory: Path, common_names: Sequence[str]) -> dict[str, NodeFiles]:
    """A new CA and one certificate per name, all written into ``directory``: what a
    throwaway TLS cluster (``raftmeta dev --tls``) needs, keyed by common name."""
    ca = new_certificate_authority()
    write_certificate_authority(ca, directory)
    return {name: write_node_files(ca, directory, name) for name in common_names}
