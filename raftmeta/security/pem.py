"""Reading and checking the PEM material that TLS settings name.

The only I/O of the security settings: :func:`load_keystore` and :func:`load_truststore` read
the files a ``.location`` key names (or take the inline text) and check them with
``cryptography`` before grpc sees them, so a wrong file fails at start-up with one line naming
the key, instead of every handshake failing later with an OpenSSL code. The private key comes
back unencrypted (PKCS#8), decrypted with ``ssl.key.password`` if it was encrypted, because
grpc takes only plain keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes

from raftmeta.config.errors import ConfigError
from raftmeta.security.tls import (
    KEY_PASSWORD_KEY,
    KEYSTORE_CHAIN_KEY,
    KEYSTORE_KEY_KEY,
    TRUSTSTORE_CERTIFICATES_KEY,
    InlineKeystore,
    InlineTruststore,
    Keystore,
    PemFile,
    Truststore,
)

_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n.*?-----END \1-----\r?\n?", re.DOTALL)
_KEY_LABELS = frozenset(
    {b"PRIVATE KEY", b"ENCRYPTED PRIVATE KEY", b"RSA PRIVATE KEY", b"EC PRIVATE KEY"}
)
_CERTIFICATE = frozenset({b"CERTIFICATE"})


@dataclass(frozen=True, slots=True)
class KeyPair:
    """A private key (plain PKCS#8 PEM) and its certificate chain (PEM, leaf first)."""

    key_pem: bytes = field(repr=False)
    chain_pem: bytes


def load_keystore(keystore: Keystore, key_password: str | None = None) -> KeyPair:
    """The key and chain ``keystore`` holds, checked: one private key, at least one
    certificate, and the first certificate is the key's. Raises :class:`ConfigError`."""
    if isinstance(keystore, InlineKeystore):
        keys = _blocks(keystore.key.encode(), KEYSTORE_KEY_KEY, _KEY_LABELS)
        chain = _blocks(keystore.certificate_chain.encode(), KEYSTORE_CHAIN_KEY, _CERTIFICATE)
        key_where, chain_where = KEYSTORE_KEY_KEY, KEYSTORE_CHAIN_KEY
    else:
        key_where = chain_where = f"{keystore.key}={keystore.path}"
        blocks = _blocks(_read(keystore), key_where, _KEY_LABELS | _CERTIFICATE)
        keys = [(label, block) for label, block in blocks if label in _KEY_LABELS]
        chain = [(label, block) for label, block in blocks if label in _CERTIFICATE]
    return _key_pair(
        [block for _, block in keys],
        [block for _, block in chain],
        key_where,
        chain_where,
        key_password,
    )


def load_truststore(truststore: Truststore) -> bytes:
    """The trusted CA certificates as PEM, checked to be certificates. Raises
    :class:`ConfigError`."""
    if isinstance(truststore, InlineTruststore):
        data, where = truststore.certificates.encode(), TRUSTSTORE_CERTIFICATES_KEY
    else:
        data, where = _read(truststore), f"{truststore.key}={truststore.path}"
    blocks = [block for _, block in _blocks(data, where, _CERTIFICATE)]
    if not blocks:
        raise ConfigError(f"Invalid configuration {where}: holds no PEM certificate")
    for block in blocks:
        _certificate(block, where)
    return b"".join(blocks)


def _key_pair(
    key_blocks: list[bytes],
    chain_blocks: list[bytes],
    key_where: str,
    chain_where: str,
    key_password: str | None,
) -> KeyPair:
    if len(key_blocks) != 1:
        raise ConfigError(
            f"Invalid configuration {key_where}: expected one PEM private key, found "
            f"{len(key_blocks)}"
        )
    if not chain_blocks:
        raise ConfigError(f"Invalid configuration {chain_where}: holds no PEM certificate")
    key = _private_key(key_blocks[0], key_where, key_password)
    leaf = _certificate(chain_blocks[0], chain_where)
    for block in chain_blocks[1:]:
        _certificate(block, chain_where)
    if leaf.public_key() != key.public_key():
        raise ConfigError(
            f"Invalid configuration {chain_where}: the first certificate is not the private "
            "key's (the chain must start with the key's own certificate)"
        )
    plain = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return KeyPair(key_pem=plain, chain_pem=b"".join(chain_blocks))


def _read(source: PemFile) -> bytes:
    try:
        return source.path.read_bytes()
    except OSError as error:
        raise ConfigError(
            f"Invalid configuration {source.key}={source.path}: cannot read: "
            f"{error.strerror or error}"
        ) from None


def _blocks(data: bytes, where: str, allowed: frozenset[bytes]) -> list[tuple[bytes, bytes]]:
    """The PEM blocks in ``data`` as (label, block); any label outside ``allowed`` is refused,
    so a key pasted into a certificate key (or the reverse) is caught."""
    # Each block ends with a line break, so blocks joined again stay apart even where the
    # settings parser stripped the text's last one.
    found = [(m.group(1), m.group(0).rstrip(b"\r\n") + b"\n") for m in _BLOCK.finditer(data)]
    if not found:
        raise ConfigError(f"Invalid configuration {where}: holds no PEM block")
    for label, _ in found:
        if label not in allowed:
            raise ConfigError(
                f"Invalid configuration {where}: unexpected PEM block {label.decode()}"
            )
    return found


def _private_key(block: bytes, where: str, password: str | None) -> PrivateKeyTypes:
    encrypted = block.startswith(b"-----BEGIN ENCRYPTED") or b"Proc-Type: 4,ENCRYPTED" in block
    if encrypted and password is None:
        raise ConfigError(
            f"Invalid configuration {where}: the private key is encrypted and "
            f"{KEY_PASSWORD_KEY} is not set"
        )
    try:
        return serialization.load_pem_private_key(
            block, password.encode() if encrypted and password is not None else None
        )
    except (ValueError, TypeError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ConfigError(
            f"Invalid configuration {where}: unreadable private key ({reason})"
        ) from None


def _certificate(block: bytes, where: str) -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(block)
    except ValueError as error:
        reason = str(error).splitlines()[0] if str(error) else "malformed"
        raise ConfigError(
            f"Invalid configuration {where}: unreadable certificate ({reason})"
        ) from None
