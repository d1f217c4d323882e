"""Which TLS settings a node's listener and a client's channel use, from Kafka's keys.

A controller serves Raft, Admin and BrokerLifecycle on one port, its *controller listener*:
the listener named ``CONTROLLER`` in ``listeners`` or, when there is none, the one implied at
the node's ``controller.quorum.voters`` entry, under the same name. A ``RAFT`` listener (the
Raft stream) follows it: same protocol, same certificates. Its protocol is
``listener.security.protocol.map``'s entry for ``CONTROLLER``; every listener must have an
entry, and an SSL listener needs a keystore. Problems are one-line :class:`ConfigError`\\ s.

A client of that listener (the admin tools, a broker, a controller dialling its peers) speaks
SSL when ``security.protocol=SSL`` (a client properties file, as Kafka's clients), or, for a
node's own configuration, when the map says the ``CONTROLLER`` listener is SSL; its
``ssl.*`` keys then give whom it trusts and the certificate it presents.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import grpc

from raftmeta.config.errors import ConfigError
from raftmeta.config.node import RaftmetaConfig
from raftmeta.security.credentials import channel_credentials
from raftmeta.security.tls import (
    DEFAULT_SECURITY_PROTOCOL_MAP,
    KEYSTORE_LOCATION_KEY,
    SECURITY_PROTOCOL_MAP_KEY,
    TLS_KEYS,
    SecurityProtocol,
    TlsSettings,
    parse_security_protocol_map,
    parse_tls_settings,
    protocol_of,
)

CONTROLLER_LISTENER = "CONTROLLER"
RAFT_LISTENER = "RAFT"
"""Serves Raft as framed messages (the stream transport); it always speaks what the
controller listener speaks, under the same certificates, so it needs no map entry."""
SECURITY_PROTOCOL_KEY = "security.protocol"
CLIENT_TLS_KEYS: tuple[str, ...] = (SECURITY_PROTOCOL_KEY, *TLS_KEYS)
"""The keys a client properties file may hold for TLS."""
NODE_DEFAULT_PROTOCOL_MAP = f"{CONTROLLER_LISTENER}:PLAINTEXT,{DEFAULT_SECURITY_PROTOCOL_MAP}"


def controller_listener_tls(config: RaftmetaConfig) -> TlsSettings | None:
    """The controller listener's TLS settings, or None when it is PLAINTEXT.

    Checks every listener against ``listener.security.protocol.map`` and that an SSL
    controller listener has a keystore; raises :class:`ConfigError`."""
    protocols = parse_security_protocol_map(config.listener_security_protocol_map)
    for listener in config.listeners:
        if listener.name != RAFT_LISTENER:
            protocol_of(listener.name, protocols)
    controller_protocol = protocol_of(CONTROLLER_LISTENER, protocols)
    if controller_protocol.uses_sasl:
        raise ConfigError(
            f"Invalid configuration {SECURITY_PROTOCOL_MAP_KEY}: listener {CONTROLLER_LISTENER} "
            f"has protocol {controller_protocol} (SASL is served on the KAFKA listener only; "
            "expected PLAINTEXT or SSL)"
        )
    raft_protocol = protocols.get(RAFT_LISTENER, controller_protocol)
    if raft_protocol is not controller_protocol:
        raise ConfigError(
            f"Invalid configuration {SECURITY_PROTOCOL_MAP_KEY}: listener {RAFT_LISTENER} must "
            f"speak what {CONTROLLER_LISTENER} speaks ({controller_protocol}), with the same "
            "certificates and peer identities"
        )
    if controller_protocol is SecurityProtocol.PLAINTEXT:
        return None
    settings = parse_tls_settings(config.originals, CONTROLLER_LISTENER)
    if settings.keystore is None:
        raise ConfigError(
            f"Invalid configuration {KEYSTORE_LOCATION_KEY}: listener {CONTROLLER_LISTENER} is "
            "SSL and needs this node's certificate (set it, or ssl.keystore.key and "
            "ssl.keystore.certificate.chain)"
        )
    return settings


def client_tls(properties: Mapping[str, str]) -> TlsSettings | None:
    """The TLS settings a client of the controller listener uses, or None for plaintext.

    ``security.protocol`` decides when given; otherwise the ``CONTROLLER`` entry of
    ``listener.security.protocol.map`` (a node's own file), else PLAINTEXT. ``ssl.*`` keys
    given to a PLAINTEXT client are refused rather than silently ignored."""
    raw = properties.get(SECURITY_PROTOCOL_KEY, "").strip()
    if raw:
        try:
            protocol = SecurityProtocol(raw.upper())
            if protocol.uses_sasl:
                raise ValueError(protocol)
        except ValueError:
            raise ConfigError(
                f"Invalid configuration {SECURITY_PROTOCOL_KEY}={raw[:40]!r}: expected "
                "PLAINTEXT or SSL"
            ) from None
    else:
        protocols = parse_security_protocol_map(
            properties.get(SECURITY_PROTOCOL_MAP_KEY, "").strip() or NODE_DEFAULT_PROTOCOL_MAP
        )
        protocol = protocols.get(CONTROLLER_LISTENER, SecurityProtocol.PLAINTEXT)
        if protocol.uses_sasl:
            raise ConfigError(
                f"Invalid configuration {SECURITY_PROTOCOL_MAP_KEY}: listener "
                f"{CONTROLLER_LISTENER} has protocol {protocol} (expected PLAINTEXT or SSL)"
            )
    if protocol is SecurityProtocol.PLAINTEXT:
        if not raw:
            return None
        given = sorted(key for key in TLS_KEYS if properties.get(key, "").strip())
        if given:
            raise ConfigError(
                f"Invalid configuration {given[0]}: set, but {SECURITY_PROTOCOL_KEY} is "
                "PLAINTEXT (set security.protocol=SSL to use it)"
            )
        return None
    return parse_tls_settings(properties, CONTROLLER_LISTENER)


def secure_channel_credentials(tls: TlsSettings | None) -> grpc.ChannelCredentials | None:
    """grpc credentials for ``tls`` (None: plaintext); raises :class:`ConfigError` for
    unreadable files, so a client fails before its first call."""
    return None if tls is None else channel_credentials(tls)


def aio_channel(
    target: str, credentials: grpc.ChannelCredentials | None, options: Any = ()
) -> grpc.aio.Channel:
    """A ``grpc.aio`` channel to ``target``: TLS with ``credentials``, else plaintext."""
    if credentials is None:
        return grpc.aio.insecure_channel(target, options=options)
    return grpc.aio.secure_channel(target, credentials, options=options)


def sync_channel(
    target: str, credentials: grpc.ChannelCredentials | None, options: Any = ()
) -> grpc.Channel:
    """A blocking channel to ``target``: TLS with ``credentials``, else plaintext."""
    if credentials is None:
        return grpc.insecure_channel(target, options=options)
    return grpc.secure_channel(target, credentials, options=options)
