"""The admin client's config dict: confluent-kafka's keys, checked once, and which transport
they choose.

``bootstrap.servers`` names nodes of the quorum and the client speaks raftmeta's gRPC Admin
service to them; ``bootstrap.controllers`` (Kafka's admin client key of KIP-919) names the
controllers' KAFKA listeners and the client speaks Kafka's own protocol to them. Exactly one of
the two is given. ``security.protocol=SSL`` and the ``ssl.*`` keys secure either transport
with the same certificates. SASL_PLAINTEXT and SASL_SSL, with ``sasl.mechanism`` (PLAIN,
SCRAM-SHA-256, SCRAM-SHA-512) and ``sasl.jaas.config`` (or ``sasl.username`` and
``sasl.password``), log in on the KAFKA listeners only: the gRPC door names its callers with
``bearer.token``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from raftmeta.channel import DEFAULT_REQUEST_TIMEOUT_MS, parse_bootstrap_servers
from raftmeta.config.errors import ConfigError
from raftmeta.security.listener import CLIENT_TLS_KEYS, SECURITY_PROTOCOL_KEY, client_tls
from raftmeta.security.sasl_client import SASL_KEYS, SaslLogin, kafka_client_security
from raftmeta.security.tls import TlsSettings

SERVERS_KEY = "bootstrap.servers"
CONTROLLERS_KEY = "bootstrap.controllers"
TOKEN_KEY = "bearer.token"

UNREACHABLE_TIMEOUT_KEY = "bootstrap.unreachable.timeout.ms"
"""raftmeta's own key: give up on a call after this long when no server has ever answered and
every bootstrap server is unreachable (refused, no such host), rather than retrying until
``request.timeout.ms``. Unset (the default), the client rides out a quorum that is down, as
Kafka's does; the command-line tools set it so that a wrong address fails in a second. The
Kafka transport tries each controller once per call and so never waits that long."""

CONFIG_KEYS = (
    SERVERS_KEY,
    CONTROLLERS_KEY,
    "request.timeout.ms",
    TOKEN_KEY,
    UNREACHABLE_TIMEOUT_KEY,
    *CLIENT_TLS_KEYS,
    *SASL_KEYS,
)
"""The keys an admin client's config dict may hold."""


@dataclass(frozen=True, slots=True)
class AdminSettings:
    bootstrap_servers: tuple[str, ...]
    """The addresses to start from: gRPC listeners, or KAFKA listeners with ``over_kafka``."""
    request_timeout_ms: int = DEFAULT_REQUEST_TIMEOUT_MS
    bearer_token: str | None = None
    tls: TlsSettings | None = None
    """From ``security.protocol=SSL`` and the ``ssl.*`` keys; None speaks plaintext."""
    unreachable_timeout_ms: int | None = None
    """``bootstrap.unreachable.timeout.ms``; None retries unreachable servers to the deadline."""
    over_kafka: bool = False
    """True when the config named ``bootstrap.controllers``: Kafka's protocol, not gRPC."""
    sasl: SaslLogin | None = None
    """The SASL login on the KAFKA listeners (SASL_PLAINTEXT, SASL_SSL); None: no login."""


def parse_admin_config(config: Mapping[str, object]) -> AdminSettings:
    """Check a confluent-style config dict; anything unknown or malformed is a ValueError."""
    if not isinstance(config, Mapping):
        raise ValueError(f"admin config must be a dict of settings, got {type(config).__name__}")
    unknown = sorted(str(key) for key in config if key not in CONFIG_KEYS)
    if unknown:
        raise ValueError(
            f"unknown admin config key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}; "
            f"known keys: {', '.join(CONFIG_KEYS)}"
        )
    over_kafka = CONTROLLERS_KEY in config
    if over_kafka and SERVERS_KEY in config:
        raise ValueError(f"admin config takes {SERVERS_KEY} or {CONTROLLERS_KEY}, not both")
    address_key = CONTROLLERS_KEY if over_kafka else SERVERS_KEY
    servers = config.get(address_key)
    if servers is None:
        raise ValueError(
            f"admin config needs {SERVERS_KEY} or {CONTROLLERS_KEY} (host:port[,host:port...])"
        )
    if not isinstance(servers, str) and not (
        isinstance(servers, Sequence) and all(isinstance(s, str) for s in servers)
    ):
        raise ValueError(f"{address_key} must be host:port strings, got {servers!r}")
    timeout = config.get("request.timeout.ms", DEFAULT_REQUEST_TIMEOUT_MS)
    if isinstance(timeout, str) and timeout.strip().isdigit():
        timeout = int(timeout)
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout <= 0:
        raise ValueError(
            f"request.timeout.ms must be a whole number of ms above 0, got {timeout!r}"
        )
    token = config.get(TOKEN_KEY)
    if token is not None and (not isinstance(token, str) or not token or "\n" in token):
        raise ValueError(f"{TOKEN_KEY} must be a non-empty single-line string")
    if token is not None and over_kafka:
        raise ValueError(
            f"{TOKEN_KEY} is carried by gRPC only: give {SERVERS_KEY}, or leave the token out "
            f"with {CONTROLLERS_KEY}"
        )
    security = {key: str(config[key]) for key in (*CLIENT_TLS_KEYS, *SASL_KEYS) if key in config}
    sasl: SaslLogin | None = None
    try:
        if _speaks_sasl(security):
            if not over_kafka:
                raise ConfigError(
                    f"Invalid configuration {SECURITY_PROTOCOL_KEY}: SASL is spoken on the "
                    f"KAFKA listeners only; give {CONTROLLERS_KEY}, or {TOKEN_KEY} over gRPC"
                )
            login = kafka_client_security(security)
            tls, sasl = login.tls, login.sasl
        else:
            given = sorted(key for key in SASL_KEYS if key in security)
            if given:
                raise ConfigError(
                    f"Invalid configuration {given[0]}: set, but {SECURITY_PROTOCOL_KEY} is "
                    "not SASL_PLAINTEXT or SASL_SSL"
                )
            tls = client_tls({k: v for k, v in security.items() if k in CLIENT_TLS_KEYS})
    except ConfigError as error:
        raise ValueError(str(error)) from None
    unreachable = config.get(UNREACHABLE_TIMEOUT_KEY)
    if unreachable is not None and (
        isinstance(unreachable, bool) or not isinstance(unreachable, int) or unreachable < 0
    ):
        raise ValueError(
            f"{UNREACHABLE_TIMEOUT_KEY} must be a whole number of ms, 0 or more, "
            f"got {unreachable!r}"
        )
    return AdminSettings(
        parse_bootstrap_servers(servers), timeout, token, tls, unreachable, over_kafka, sasl
    )


def _speaks_sasl(security: Mapping[str, str]) -> bool:
    return security.get(SECURITY_PROTOCOL_KEY, "").strip().upper().startswith("SASL_")
