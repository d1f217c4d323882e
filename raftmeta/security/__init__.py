"""Transport security: TLS settings with Kafka's names, grpc credentials built from them, the
principal a TLS peer's certificate maps to, and a throwaway CA for development and tests.

Leaf package for the listeners and channels above it: it may import ``raftmeta.config`` (for
:class:`~raftmeta.config.errors.ConfigError`), grpc and ``cryptography``; nothing else of raftmeta.
The quorum runtime, the composition root and the clients all use it to build their servers and
channels, and the services use :func:`context_principal` to name their callers.
"""

from raftmeta.security.credentials import (
    ReloadingCertificates,
    channel_credentials,
    server_credentials,
)
from raftmeta.security.pem import KeyPair, load_keystore, load_truststore
from raftmeta.security.principal import (
    ANONYMOUS,
    NODE_PRINCIPAL_RULES,
    KafkaPrincipal,
    NodeIdentity,
    NodeRole,
    PeerAuthenticationError,
    PrincipalMapper,
    broker_principal,
    context_principal,
    controller_principal,
    node_identity,
    parse_mapping_rules,
    peer_principal,
)
from raftmeta.security.tls import (
    DEFAULT_SECURITY_PROTOCOL_MAP,
    SECURITY_PROTOCOL_MAP_KEY,
    TLS_KEYS,
    ClientAuth,
    SecurityProtocol,
    TlsSettings,
    parse_security_protocol_map,
    parse_tls_settings,
    protocol_of,
)

__all__ = [
    "ANONYMOUS",
    "DEFAULT_SECURITY_PROTOCOL_MAP",
    "NODE_PRINCIPAL_RULES",
    "SECURITY_PROTOCOL_MAP_KEY",
    "TLS_KEYS",
    "ClientAuth",
    "KafkaPrincipal",
    "KeyPair",
    "NodeIdentity",
    "NodeRole",
    "PeerAuthenticationError",
    "PrincipalMapper",
    "ReloadingCertificates",
    "SecurityProtocol",
    "TlsSettings",
    "broker_principal",
    "channel_credentials",
    "context_principal",
    "controller_principal",
    "load_keystore",
    "load_truststore",
    "node_identity",
    "parse_mapping_rules",
    "parse_security_protocol_map",
    "parse_tls_settings",
    "peer_principal",
    "protocol_of",
    "server_credentials",
]
