"""Python ``ssl`` contexts from the same TLS settings the gRPC listeners use.

The KAFKA listener is served by asyncio, not grpc, so it needs an :class:`ssl.SSLContext`
rather than grpc credentials; it is built from the same :class:`TlsSettings` (the same
``ssl.*`` keys, the same checks of the key and chain), so an operator gives one set of
certificates for both front doors. ``ssl`` loads a key and chain only from a file: the checked
PEM is written to a private temporary file that is removed as soon as it is loaded, so an
encrypted or inline key works as it does for grpc.

A renewed keystore is read by new gRPC connections without a restart; this context keeps the
certificate it was built with until the listener restarts.
"""

from __future__ import annotations

import os
import ssl
import tempfile

from raftmeta.config.errors import ConfigError
from raftmeta.security.pem import KeyPair, load_keystore, load_truststore
from raftmeta.security.tls import KEYSTORE_LOCATION_KEY, ClientAuth, TlsSettings


def _load_key_pair(context: ssl.SSLContext, pair: KeyPair) -> None:
    descriptor, path = tempfile.mkstemp(prefix="raftmeta-key-", suffix=".pem")
    try:
        with os.fdopen(descriptor, "wb") as handle:  # mkstemp: readable by the owner only
            handle.write(pair.key_pem + b"\n" + pair.chain_pem)
        context.load_cert_chain(path)
    except ssl.SSLError as error:
        raise ConfigError(f"Cannot use the TLS key and chain: {error.reason or error}") from None
    finally:
        os.unlink(path)


def server_ssl_context(settings: TlsSettings) -> ssl.SSLContext:
    """A server context presenting the settings' keystore; with ``ssl.client.auth=required``
    it asks for a client certificate signed by the truststore. Raises :class:`ConfigError`."""
    if settings.keystore is None:
        raise ConfigError(
            f"Invalid configuration {KEYSTORE_LOCATION_KEY}: an SSL listener needs its own "
            "certificate (set it, or ssl.keystore.key and ssl.keystore.certificate.chain)"
        )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    _load_key_pair(context, load_keystore(settings.keystore, settings.key_password))
    if settings.truststore is not None:
        context.load_verify_locations(cadata=load_truststore(settings.truststore).decode())
    if settings.client_auth is ClientAuth.REQUIRED:
        if settings.truststore is None:
            raise ConfigError(
                "Invalid configuration ssl.client.auth=required: no ssl.truststore.location "
                "to check client certificates against"
            )
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def client_ssl_context(settings: TlsSettings) -> ssl.SSLContext:
    """A client context trusting the settings' truststore (else the system's roots),
    presenting the keystore when there is one. Raises :class:`ConfigError`."""
    context = ssl.create_default_context()
    if settings.truststore is not None:
        context.load_verify_locations(cadata=load_truststore(settings.truststore).decode())
    if settings.keystore is not None:
        _load_key_pair(context, load_keystore(settings.keystore, settings.key_password))
    return context
