"""grpc credentials from TLS settings, with certificate renewal without a restart.

A server's keystore and truststore, when given as files, are watched: grpc asks
:class:`ReloadingCertificates` for a new configuration at every TLS handshake (that is what
``grpc.dynamic_ssl_server_credentials`` does), and it answers with freshly read files when
their modification or change time, size or inode changed since the last look. So a renewed
certificate, written over the old file (best by rename, as
:func:`raftmeta.security.certs.write_private` does), serves every new connection, while the
connections already open keep theirs. A renewal that cannot be read (a half-written file, a
key that does not match) is logged and the current certificate stays in use; the next change
is tried again. Inline PEM cannot change, so it gives plain ``grpc.ssl_server_credentials``.

A client's credentials are fixed for the life of its channel: to present a renewed client
certificate, the caller builds a new channel.

Whether the server requires a client certificate is fixed when it starts: ``ssl.client.auth``.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import grpc

from raftmeta.config.errors import ConfigError
from raftmeta.security.pem import KeyPair, load_keystore, load_truststore
from raftmeta.security.tls import (
    CLIENT_AUTH_KEY,
    KEYSTORE_LOCATION_KEY,
    TRUSTSTORE_LOCATION_KEY,
    ClientAuth,
    PemFile,
    TlsSettings,
)

log = logging.getLogger(__name__)

_FileStamp = tuple[int, int, int, int] | None


class ReloadingCertificates:
    """The fetcher behind ``grpc.dynamic_ssl_server_credentials``: the server's current key,
    chain and trusted roots, read again whenever one of their files changes.

    grpc calls it from its own threads, once per handshake, so the common answer ("no change",
    ``None``) costs one ``stat`` per file and a lock."""

    def __init__(self, settings: TlsSettings) -> None:
        if settings.keystore is None:
            raise ConfigError(
                f"Invalid configuration {KEYSTORE_LOCATION_KEY}: an SSL listener needs its own "
                "certificate (set it, or ssl.keystore.key and ssl.keystore.certificate.chain)"
            )
        self._settings = settings
        self._lock = threading.Lock()
        self._watched = tuple(
            store.path
            for store in (settings.keystore, settings.truststore)
            if isinstance(store, PemFile)
        )
        self._stamps = self._stamp()
        self.initial = self._configuration()
        """The configuration read at start-up; a bad file here is a :class:`ConfigError`."""
        self.reloads = 0
        """How many renewals were picked up, for logs and tests."""

    @property
    def watches_files(self) -> bool:
        return bool(self._watched)

    @property
    def watched_paths(self) -> tuple[Path, ...]:
        """The keystore and truststore files renewal watches (none for inline PEM)."""
        return self._watched

    def __call__(self) -> grpc.ServerCertificateConfiguration | None:
        stamps = self._stamp()
        with self._lock:
            if stamps == self._stamps:
                return None
            self._stamps = stamps
            try:
                configuration = self._configuration()
            except ConfigError as error:
                log.warning("TLS certificate change not applied, the current one stays: %s", error)
                return None
            except Exception:
                # Called from grpc's handshake: whatever goes wrong, the listener keeps serving.
                log.exception("TLS certificate change not applied, the current one stays")
                return None
            self.reloads += 1
        log.info("TLS certificate reloaded from %s", ", ".join(map(str, self._watched)))
        return configuration

    def _configuration(self) -> grpc.ServerCertificateConfiguration:
        pair = _key_pair(self._settings)
        roots = _roots(self._settings)
        return grpc.ssl_server_certificate_configuration([(pair.key_pem, pair.chain_pem)], roots)

    def _stamp(self) -> tuple[_FileStamp, ...]:
        return file_stamps(self._watched)


def server_credentials(settings: TlsSettings) -> grpc.ServerCredentials:
    """Credentials for ``server.add_secure_port``: the node's certificate, client certificates
    required (and checked against the truststore) when ``ssl.client.auth=required``, and
    renewal from files as the module describes. Raises :class:`ConfigError`."""
    require = settings.client_auth is ClientAuth.REQUIRED
    if require and settings.truststore is None:
        raise ConfigError(
            f"Invalid configuration {TRUSTSTORE_LOCATION_KEY}: {CLIENT_AUTH_KEY}=required needs "
            "a truststore to check client certificates against"
        )
    certificates = ReloadingCertificates(settings)
    if not certificates.watches_files:
        pair = _key_pair(settings)
        return grpc.ssl_server_credentials(
            [(pair.key_pem, pair.chain_pem)], _roots(settings), require_client_auth=require
        )
    return grpc.dynamic_ssl_server_credentials(
        certificates.initial, certificates, require_client_authentication=require
    )


def channel_credentials(settings: TlsSettings) -> grpc.ChannelCredentials:
    """Credentials for ``grpc.aio.secure_channel``: servers are checked against the truststore
    (the system's roots when none is set), and the keystore, if any, is presented as the
    client's own certificate for mutual TLS. Raises :class:`ConfigError`."""
    roots = _roots(settings)
    if settings.keystore is None:
        return grpc.ssl_channel_credentials(root_certificates=roots)
    pair = _key_pair(settings)
    return grpc.ssl_channel_credentials(
        root_certificates=roots, private_key=pair.key_pem, certificate_chain=pair.chain_pem
    )


def _key_pair(settings: TlsSettings) -> KeyPair:
    assert settings.keystore is not None
    return load_keystore(settings.keystore, settings.key_password)


def _roots(settings: TlsSettings) -> bytes | None:
    return None if settings.truststore is None else load_truststore(settings.truststore)


def file_stamps(paths: tuple[Path, ...]) -> tuple[_FileStamp, ...]:
    """What tells a renewed file from the one read before: each file's modification and
    change times, size and inode (None for a file that cannot be read right now)."""
    return tuple(_file_stamp(path) for path in paths)


def _file_stamp(path: Path) -> _FileStamp:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_ctime_ns, status.st_size, status.st_ino)
