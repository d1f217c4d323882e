"""``ssl.SSLContext``\\ s from TLS settings, for the listeners that are not gRPC (the Raft stream,
the KAFKA listener) and the clients that dial them.

They carry exactly what the gRPC credentials of :mod:`raftmeta.security.credentials` carry:
the node's key and chain (read and checked by :mod:`raftmeta.security.pem`), the truststore as
the only roots (the system's when none is set), and a required client certificate with
``ssl.client.auth=required``. So one set of files secures both listeners, and a peer that
may not speak on one may not speak on the other.

Renewal works as on the gRPC listener: a server context built from keystore or truststore
*files* looks at their stamps at every handshake (from the TLS server-name callback, which
OpenSSL runs for each ClientHello) and, when one changed, serves that handshake and every later
one from a context built from the new files. A renewal that cannot be read is logged and the
current certificate stays; connections already open keep theirs.

``ssl`` loads a key only from a file, while a keystore may be inline PEM or an encrypted key:
the checked pair is written to a private temporary file (0600, in a 0700 directory), loaded,
and removed at once.
"""

from __future__ import annotations

import logging
import os
import ssl
import tempfile
import threading
from pathlib import Path

from raftmeta.config.errors import ConfigError
from raftmeta.security.credentials import ReloadingCertificates, file_stamps
from raftmeta.security.pem import KeyPair, load_keystore, load_truststore
from raftmeta.security.tls import CLIENT_AUTH_KEY, TRUSTSTORE_LOCATION_KEY, ClientAuth, TlsSettings

log = logging.getLogger(__name__)


def server_ssl_context(settings: TlsSettings) -> ssl.SSLContext:
    """The context a stream listener serves with; raises :class:`ConfigError` as
    :func:`~raftmeta.security.credentials.server_credentials` does for the same settings."""
    if settings.client_auth is ClientAuth.REQUIRED and settings.truststore is None:
        raise ConfigError(
            f"Invalid configuration {TRUSTSTORE_LOCATION_KEY}: {CLIENT_AUTH_KEY}=required needs "
            "a truststore to check client certificates against"
        )
    # Checks the keystore is present and readable, with the gRPC path's message.
    certificates = ReloadingCertificates(settings)
    context = _server_context(settings)
    if certificates.watches_files:
        _ReloadOnHandshake(settings, context, certificates.watched_paths).install()
    return context


def client_ssl_context(settings: TlsSettings) -> ssl.SSLContext:
    """The context a node dials a stream listener with: the server is checked against the
    truststore (the system's roots when none is set) and its name against the address dialled,
    as gRPC does; the keystore, when set, is presented for mutual TLS."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cadata=_roots_text(settings))
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    if settings.keystore is not None:
        _load_pair(context, load_keystore(settings.keystore, settings.key_password))
    return context


def _server_context(settings: TlsSettings) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    assert settings.keystore is not None
    _load_pair(context, load_keystore(settings.keystore, settings.key_password))
    roots = _roots_text(settings)
    if roots is not None:
        context.load_verify_locations(cadata=roots)
    if settings.client_auth is ClientAuth.REQUIRED:
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def _roots_text(settings: TlsSettings) -> str | None:
    if settings.truststore is None:
        return None
    return load_truststore(settings.truststore).decode("ascii")


def _load_pair(context: ssl.SSLContext, pair: KeyPair) -> None:
    """Load ``pair`` (already checked to match) through a private file that lives only for
    the call."""
    with tempfile.TemporaryDirectory(prefix="raftmeta-tls-") as directory:
        path = Path(directory) / "keystore.pem"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(pair.key_pem + b"\n" + pair.chain_pem)
        try:
            context.load_cert_chain(path)
        except ssl.SSLError as error:
            raise ConfigError(f"Invalid TLS keystore: {error}") from None


class _ReloadOnHandshake:
    """Swaps in a context built from renewed files at the next handshake (see the module)."""

    def __init__(
        self, settings: TlsSettings, context: ssl.SSLContext, watched: tuple[Path, ...]
    ) -> None:
        self._settings = settings
        self._initial = context
        self._watched = watched
        self._lock = threading.Lock()
        self._stamps = file_stamps(watched)
        self._current = context
        self.reloads = 0

    def install(self) -> None:
        self._initial.sni_callback = self._on_hello

    def _on_hello(self, connection: ssl.SSLObject, _name: str | None, _ctx: ssl.SSLContext) -> None:
        stamps = file_stamps(self._watched)
        with self._lock:
            if stamps != self._stamps:
                self._stamps = stamps
                try:
                    renewed = _server_context(self._settings)
                except (ConfigError, OSError, ssl.SSLError) as error:
                    log.warning(
                        "TLS certificate change not applied, the current one stays: %s", error
                    )
                else:
                    self._current = renewed
                    self.reloads += 1
                    log.info("TLS certificate reloaded from %s", ", ".join(map(str, self._watched)))
            current = self._current
        if current is not self._initial:
            connection.context = current
