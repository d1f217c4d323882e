"""SASL/PLAIN on the KAFKA listener: SaslHandshake (key 17, v0-1) and SaslAuthenticate (key
36, v0-2), mapped onto the principals the gRPC path uses.

A gRPC caller names itself with a bearer token that ``raftmeta.auth.tokens.file`` maps to a
principal (``token=User:alice``). A Kafka client logs in with PLAIN's username and password;
the password is that token and the username the principal's name, so the same line of the
same file admits ``alice`` through either door as the same principal, and the same ACLs
apply. The login names the connection's principal once, with the same function that names a
gRPC caller (:meth:`raftmeta.auth.AccessControl.principal`), and every request on the
connection reaches the API layer as that principal, so no check is written twice.

On a SASL listener nothing but ApiVersions, SaslHandshake and SaslAuthenticate is answered
before the login succeeds; Kafka closes such a connection, and so does this listener. A
failed login is answered SASL_AUTHENTICATION_FAILED and the connection closed, as Kafka does.
Handshake v0 (the PLAIN token then sent as a bare frame, without a request header) is served
too, for old clients.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from raftmeta.auth import AccessControl
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.server.kafka.context import Fields

SASL_HANDSHAKE_KEY = 17
SASL_AUTHENTICATE_KEY = 36
PLAIN = "PLAIN"
MECHANISMS = [PLAIN]
UNSUPPORTED_SASL_MECHANISM = 33
ILLEGAL_SASL_STATE = 34
BAD_LOGIN = "Authentication failed: Invalid username or password"


class SaslStage(enum.Enum):
    START = "start"
    """No handshake yet."""
    HANDSHAKEN = "handshaken"
    """PLAIN chosen with handshake v1: a SaslAuthenticate request comes next."""
    RAW_TOKEN = "raw-token"
    """PLAIN chosen with handshake v0: the token comes next as a bare frame."""
    DONE = "done"


@dataclass(frozen=True, slots=True)
class Login:
    """The outcome of one PLAIN token: the caller's principal, or why it was refused."""

    principal: str | None
    error: str | None


def check_plain(access: AccessControl, token: bytes) -> Login:
    """PLAIN's ``authzid NUL username NUL password`` checked against the tokens file."""
    try:
        parts = token.decode("utf-8").split("\x00")
    except UnicodeDecodeError:
        return Login(None, "Authentication failed: the PLAIN token is not UTF-8")
    if len(parts) != 3 or not parts[1] or not parts[2]:
        return Login(None, "Authentication failed: malformed PLAIN token")
    authzid, username, password = parts
    if authzid and authzid != username:
        return Login(None, "Authentication failed: authorization id differs from the username")
    if access.tokens is None:
        return Login(None, "Authentication failed: no raftmeta.auth.tokens.file on this node")
    try:
        principal = access.principal((("authorization", f"Bearer {password}"),))
    except KafkaError:
        return Login(None, BAD_LOGIN)
    if principal != f"User:{username}":
        return Login(None, BAD_LOGIN)
    return Login(principal, None)


class SaslSession:
    """One connection's login, in order: handshake, then one token."""

    def __init__(self, access: AccessControl, required: bool) -> None:
        self._access = access
        self.required = required
        """Whether the listener is SASL_PLAINTEXT or SASL_SSL."""
        self.stage = SaslStage.START
        self.principal: str | None = None
        """Who logged in (``None``: nobody yet)."""

    @property
    def authenticated(self) -> bool:
        return not self.required or self.stage is SaslStage.DONE

    def handshake(self, request: Any, version: int) -> tuple[Fields, bool]:
        """The SaslHandshake answer, and whether the connection stays open."""
        if not self.required or self.stage is not SaslStage.START:
            return {"error_code": ILLEGAL_SASL_STATE, "mechanisms": MECHANISMS}, False
        if request.mechanism != PLAIN:
            return {"error_code": UNSUPPORTED_SASL_MECHANISM, "mechanisms": MECHANISMS}, True
        self.stage = SaslStage.RAW_TOKEN if version == 0 else SaslStage.HANDSHAKEN
        return {"error_code": 0, "mechanisms": MECHANISMS}, True

    def authenticate(self, request: Any) -> tuple[Fields, bool]:
        """The SaslAuthenticate answer, and whether the connection stays open."""
        if self.stage is not SaslStage.HANDSHAKEN:
            return _authenticate_answer(ILLEGAL_SASL_STATE, "SaslAuthenticate out of order"), False
        login = self.login(bytes(request.auth_bytes or b""))
        if login.error is not None:
            code = int(ErrorCode.SASL_AUTHENTICATION_FAILED)
            return _authenticate_answer(code, login.error), False
        return _authenticate_answer(0, None), True

    def login(self, token: bytes) -> Login:
        login = check_plain(self._access, token)
        if login.principal is not None:
            self.stage = SaslStage.DONE
            self.principal = login.principal
        return login


def _authenticate_answer(code: int, message: str | None) -> Fields:
    return {
        "error_code": code,
        "error_message": message,
        "auth_bytes": b"",
        "session_lifetime_ms": 0,
    }
