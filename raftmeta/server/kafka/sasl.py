"""SASL on the KAFKA listener: SaslHandshake (key 17, v0-1) and SaslAuthenticate (key 36,
v0-2) with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512, mapped onto the principals the gRPC path
uses.

Which mechanisms a listener offers is ``sasl.enabled.mechanisms``, as in Kafka. SCRAM checks a
login against the user's credential in the node's committed metadata image (records written by
``format --add-scram`` or AlterUserScramCredentials), the same on every controller, with the
RFC 5802 exchange of :mod:`raftmeta.security.scram_exchange`; the user is then ``User:<name>``.
PLAIN checks the password as a bearer token of ``raftmeta.auth.tokens.file``: the username is
the name of the principal the token maps to (``token=User:alice``), so the same line of the
same file admits ``alice`` through either door. Either way the login names the connection's
principal once, and every request on the connection reaches the API layer as that principal,
meeting the same ACLs, so no check is written twice.

On a SASL listener nothing but ApiVersions, SaslHandshake and SaslAuthenticate is answered
before the login succeeds; Kafka closes such a connection, and so does this listener. A
mechanism the listener does not offer is answered UNSUPPORTED_SASL_MECHANISM, a SASL request
out of order ILLEGAL_SASL_STATE, a failed login SASL_AUTHENTICATION_FAILED with Kafka's fixed
words, and the connection closed after each, as Kafka does; the reason is logged, never a
password, proof or key. Handshake v0 (the tokens then sent as bare frames, without a request
header) is served too, for old clients.
"""

from __future__ import annotations

import enum
import secrets
from dataclasses import dataclass
from typing import Any

from raftmeta.apis import ControllerHost
from raftmeta.auth import AccessControl
from raftmeta.errors import ErrorCode, KafkaError
from raftmeta.security.scram import SCRAM_MECHANISM_NAMES, ScramCredential, ScramMechanism
from raftmeta.security.scram_exchange import CredentialLookup, ScramFailure, ScramServer
from raftmeta.server.kafka.context import Fields

SASL_HANDSHAKE_KEY = 17
SASL_AUTHENTICATE_KEY = 36
PLAIN = "PLAIN"
SUPPORTED_MECHANISMS = (PLAIN, *SCRAM_MECHANISM_NAMES)
UNSUPPORTED_SASL_MECHANISM = int(ErrorCode.UNSUPPORTED_SASL_MECHANISM)
ILLEGAL_SASL_STATE = int(ErrorCode.ILLEGAL_SASL_STATE)
BAD_LOGIN = "Authentication failed: Invalid username or password"


def failed_login(mechanism: str) -> str:
    """Kafka's words to a client whose login failed; what was wrong is logged, not sent."""
    return (
        "Authentication failed during authentication due to invalid credentials with SASL "
        f"mechanism {mechanism}"
    )


class SaslStage(enum.Enum):
    START = "start"
    """No handshake yet."""
    HANDSHAKEN = "handshaken"
    """A mechanism chosen with handshake v1: SaslAuthenticate requests come next."""
    RAW_TOKEN = "raw-token"
    """A mechanism chosen with handshake v0: the tokens come next as bare frames."""
    DONE = "done"


@dataclass(frozen=True, slots=True)
class Login:
    """The outcome of one PLAIN token: the caller's principal, or why it was refused."""

    principal: str | None
    error: str | None


@dataclass(frozen=True, slots=True)
class Step:
    """One token answered: the bytes for the client, or the refusal (``error`` for the
    client, ``reason`` for the log)."""

    reply: bytes = b""
    error: str | None = None
    reason: str | None = None


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


def image_credentials(owner: ControllerHost) -> CredentialLookup:
    """SCRAM credentials from the node's committed image (none before its controller runs)."""

    def lookup(user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        controller = owner.maybe_controller
        if controller is None:
            return None
        record = controller.committed_image.scram.credential(user, int(mechanism))
        if record is None:
            return None
        return ScramCredential(record.salt, record.stored_key, record.server_key, record.iterations)

    return lookup


def _no_credentials(user: str, mechanism: ScramMechanism) -> ScramCredential | None:
    return None


class SaslSession:
    """One connection's login, in order: a handshake, then the chosen mechanism's tokens."""

    def __init__(
        self,
        access: AccessControl,
        required: bool,
        mechanisms: tuple[str, ...] = (PLAIN,),
        credentials: CredentialLookup = _no_credentials,
        decoy_secret: bytes | None = None,
    ) -> None:
        self._access = access
        self.required = required
        """Whether the listener is SASL_PLAINTEXT or SASL_SSL."""
        self.mechanisms = list(mechanisms)
        self._credentials = credentials
        self._decoy_secret = decoy_secret if decoy_secret is not None else secrets.token_bytes(32)
        self.stage = SaslStage.START
        self.mechanism: str | None = None
        self._scram: ScramServer | None = None
        self.principal: str | None = None
        """Who logged in (``None``: nobody yet)."""
        self.failure: str | None = None
        """Why the connection is being closed, for the log."""

    @property
    def authenticated(self) -> bool:
        return not self.required or self.stage is SaslStage.DONE

    def handshake(self, request: Any, version: int) -> tuple[Fields, bool]:
        """The SaslHandshake answer, and whether the connection stays open."""
        if not self.required or self.stage is not SaslStage.START:
            self.failure = "SaslHandshake out of order"
            return {"error_code": ILLEGAL_SASL_STATE, "mechanisms": self.mechanisms}, False
        mechanism = request.mechanism
        if mechanism not in self.mechanisms:
            self.failure = f"unsupported SASL mechanism {str(mechanism)[:40]!r}"
            return {"error_code": UNSUPPORTED_SASL_MECHANISM, "mechanisms": self.mechanisms}, False
        self.mechanism = mechanism
        scram = ScramMechanism.from_name(mechanism)
        if scram is not ScramMechanism.UNKNOWN:
            self._scram = ScramServer(scram, self._credentials, self._decoy_secret)
        self.stage = SaslStage.RAW_TOKEN if version == 0 else SaslStage.HANDSHAKEN
        return {"error_code": 0, "mechanisms": self.mechanisms}, True

    def authenticate(self, request: Any) -> tuple[Fields, bool]:
        """The SaslAuthenticate answer, and whether the connection stays open."""
        if self.stage is not SaslStage.HANDSHAKEN:
            self.failure = "SaslAuthenticate out of order"
            return _authenticate_answer(ILLEGAL_SASL_STATE, "SaslAuthenticate out of order"), False
        step = self.step(bytes(request.auth_bytes or b""))
        if step.error is not None:
            code = int(ErrorCode.SASL_AUTHENTICATION_FAILED)
            return _authenticate_answer(code, step.error), False
        return _authenticate_answer(0, None, step.reply), True

    def step(self, token: bytes) -> Step:
        """One token of the chosen mechanism, from a SaslAuthenticate request or a bare
        frame; after a refusal the connection must close."""
        assert self.mechanism is not None, "a mechanism was chosen"
        if self._scram is None:
            login = check_plain(self._access, token)
            if login.principal is None:
                self.failure = login.error
                return Step(error=login.error, reason=login.error)
            self._logged_in(login.principal)
            return Step()
        scram = self._scram
        try:
            reply = scram.respond(token)
        except ScramFailure as failure:
            self.failure = f"{self.mechanism} login refused: {failure}"
            return Step(error=failed_login(self.mechanism), reason=self.failure)
        if scram.username is not None:
            self._logged_in(f"User:{scram.username}")
        return Step(reply=reply)

    def _logged_in(self, principal: str) -> None:
        self.stage = SaslStage.DONE
        self.principal = principal


def _authenticate_answer(code: int, message: str | None, reply: bytes = b"") -> Fields:
    return {
        "error_code": code,
        "error_message": message,
        "auth_bytes": reply,
        "session_lifetime_ms": 0,
    }
