"""Which of a node's listeners would take unauthenticated callers from other hosts.

A controller answers voter RPCs, Fetches of the whole log and admin writes. Over a listener
whose callers are not authenticated, anyone who reaches the port can forge a vote, advance
the high watermark with a forged Fetch or rewrite the metadata. On loopback only local
processes can reach it, which is how development clusters and tests run; anywhere else a node
refuses to start unless the operator says in its configuration that this is deliberate.

A listener's callers are authenticated when it is SSL with ``ssl.client.auth=required``
(every caller presents a certificate the node's truststore trusts) or, on the KAFKA listener,
SASL (every caller logs in). This module only reads the configuration: no DNS, no sockets.
"""

from __future__ import annotations

import ipaddress

from raftmeta.config.node import RaftmetaConfig
from raftmeta.config.values import Listener
from raftmeta.security.listener import CONTROLLER_LISTENER, RAFT_LISTENER
from raftmeta.security.tls import (
    ClientAuth,
    SecurityProtocol,
    parse_security_protocol_map,
    parse_tls_settings,
    protocol_of,
)

ALLOW_KEY = "raftmeta.allow.unauthenticated.listeners"


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach ``host``: ``localhost`` or a loopback address.
    An empty host is every interface; any other name may resolve anywhere."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _authenticates(listener: Listener, config: RaftmetaConfig) -> bool:
    protocols = parse_security_protocol_map(config.listener_security_protocol_map)
    name = CONTROLLER_LISTENER if listener.name == RAFT_LISTENER else listener.name
    protocol = protocol_of(name, protocols)
    if protocol.uses_sasl:
        return True
    if protocol is not SecurityProtocol.SSL:
        return False
    return parse_tls_settings(config.originals, name).client_auth is ClientAuth.REQUIRED


def served_listeners(config: RaftmetaConfig) -> list[Listener]:
    """Every listener the node opens: ``listeners``, plus the CONTROLLER listener that a node
    without one serves on its own ``controller.quorum.voters`` address."""
    served = list(config.listeners)
    if all(listener.name != CONTROLLER_LISTENER for listener in served):
        endpoint = config.controller_endpoint
        served.insert(0, Listener(CONTROLLER_LISTENER, endpoint.host, endpoint.port))
    return served


def unauthenticated_exposure(config: RaftmetaConfig) -> list[Listener]:
    """The listeners other hosts could reach whose callers are not authenticated."""
    return [
        listener
        for listener in served_listeners(config)
        if not is_loopback(listener.host) and not _authenticates(listener, config)
    ]


def exposure_problem(config: RaftmetaConfig) -> str | None:
    """The one line refusing to start, or None when every exposed listener authenticates (or
    the operator allowed it with :data:`ALLOW_KEY`)."""
    exposed = unauthenticated_exposure(config)
    if not exposed or config.raftmeta_allow_unauthenticated_listeners:
        return None
    names = ", ".join(f"{item.name}://{item.host or '0.0.0.0'}:{item.port}" for item in exposed)
    return (
        f"Invalid configuration listeners: {names} would take unauthenticated callers from "
        "other hosts (use SSL with ssl.client.auth=required, or SASL on KAFKA, or bind to "
        f"127.0.0.1; set {ALLOW_KEY}=true to run it anyway)"
    )


def exposure_warning(config: RaftmetaConfig) -> str | None:
    """The warning a node logs when it runs exposed listeners because the operator allowed it."""
    exposed = unauthenticated_exposure(config)
    if not exposed:
        return None
    names = ", ".join(item.name for item in exposed)
    return (
        f"listeners {names} take unauthenticated callers from other hosts ({ALLOW_KEY}=true): "
        "anyone who reaches them can forge Raft messages and change the metadata"
    )
