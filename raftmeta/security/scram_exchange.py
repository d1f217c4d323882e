"""The messages of a SCRAM login (RFC 5802, RFC 7677), for both ends.

Four messages, two each way::

    client-first   n,,n=<user>,r=<client nonce>
    server-first   r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>
    client-final   c=<base64 of the gs2 header>,r=<the joined nonce>,p=<base64 ClientProof>
    server-final   v=<base64 ServerSignature>

:class:`ScramServer` checks a login against a stored credential: the client-final must carry
the exact gs2 header, the nonce this server added to the client's, and a proof of the digest's
length whose ``H(proof XOR HMAC(StoredKey, AuthMessage))`` equals the StoredKey, compared in
constant time. The server nonce is fresh for every login, so a proof recorded from one login is
worthless in another. A user with no credential gets a decoy salt derived from the name with a
per-server secret and is refused only at the proof, exactly as a wrong password is: a client
cannot learn which users exist. Channel binding and Kafka's delegation-token extension are
refused. :class:`ScramClient` is the other end, used by raftmeta's own tools; it checks the
server's signature, so a server that does not hold the credential cannot pretend to.

Every failure is a :class:`ScramFailure` whose message says what was wrong without quoting a
proof, a key or a password: the listener logs it and answers the client Kafka's fixed words.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from raftmeta.security.scram import (
    DEFAULT_ITERATIONS,
    MAX_ITERATIONS,
    MIN_ITERATIONS,
    ScramCredential,
    ScramMechanism,
    client_key,
    hash_of,
    hmac_of,
    salted_password,
)

CredentialLookup = Callable[[str, ScramMechanism], ScramCredential | None]
"""A user's credential under a mechanism, or ``None`` when the user has none."""

NONCE_BYTES = 24
_NONCE_CHARACTERS = frozenset(chr(code) for code in range(0x21, 0x7F)) - {","}
_TOKEN_AUTH = "tokenauth"


class ScramFailure(Exception):
    """A login that cannot succeed; the message is one line and quotes no secret."""


class _Stage(enum.Enum):
    FIRST = "first"
    FINAL = "final"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class ClientFirst:
    """A parsed client-first message."""

    gs2_header: str
    """``n,,`` (or ``n,a=<authzid>,``): echoed, base64-encoded, in the client-final."""
    username: str
    """The user, with RFC 5802's ``=2C`` and ``=3D`` decoded."""
    nonce: str
    bare: str
    """The message without the gs2 header, part of the AuthMessage."""


def _text(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ScramFailure(f"the {what} is not UTF-8") from None


def _attributes(text: str, what: str) -> list[tuple[str, str]]:
    """``a=value,b=value`` as pairs, each name one letter (or an extension's name)."""
    pairs: list[tuple[str, str]] = []
    for part in text.split(","):
        name, equals, value = part.partition("=")
        if not equals or not name:
            raise ScramFailure(f"the {what} holds a malformed attribute")
        pairs.append((name, value))
    return pairs


def _nonce(value: str, what: str) -> str:
    if not value or not set(value) <= _NONCE_CHARACTERS:
        raise ScramFailure(f"the {what} holds an empty or malformed nonce")
    return value


def decode_saslname(value: str) -> str:
    """RFC 5802's saslname: ``=2C`` is a comma, ``=3D`` an equals sign, any other ``=`` is
    malformed."""
    decoded: list[str] = []
    position = 0
    while position < len(value):
        character = value[position]
        if character != "=":
            decoded.append(character)
            position += 1
            continue
        escape = value[position : position + 3]
        if escape == "=2C":
            decoded.append(",")
        elif escape == "=3D":
            decoded.append("=")
        else:
            raise ScramFailure("the username holds a malformed escape")
        position += 3
    return "".join(decoded)


def encode_saslname(name: str) -> str:
    return name.replace("=", "=3D").replace(",", "=2C")


def parse_client_first(data: bytes) -> ClientFirst:
    text = _text(data, "client-first message")
    flag, comma, rest = text.partition(",")
    if not comma or flag not in ("n", "y"):
        # "p=..." asks for channel binding, which neither Kafka nor raftmeta offers.
        raise ScramFailure("the client-first message asks for channel binding or is malformed")
    authzid_part, comma, bare = rest.partition(",")
    if not comma:
        raise ScramFailure("the client-first message has no gs2 header")
    authzid: str | None = None
    if authzid_part:
        if not authzid_part.startswith("a="):
            raise ScramFailure("the client-first message has a malformed authzid")
        authzid = decode_saslname(authzid_part[2:])
    attributes = _attributes(bare, "client-first message")
    if len(attributes) < 2 or attributes[0][0] != "n" or attributes[1][0] != "r":
        raise ScramFailure("the client-first message must start with n= and r=")
    username = decode_saslname(attributes[0][1])
    if not username:
        raise ScramFailure("the client-first message names no user")
    if authzid is not None and authzid != username:
        raise ScramFailure("the authorization id differs from the username")
    for name, _ in attributes[2:]:
        if name == "m" or name == _TOKEN_AUTH:
            raise ScramFailure(f"the client-first message asks for an unsupported extension {name}")
    return ClientFirst(
        gs2_header=f"{flag},{authzid_part},",
        username=username,
        nonce=_nonce(attributes[1][1], "client-first message"),
        bare=bare,
    )


def _base64(value: str, what: str) -> bytes:
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise ScramFailure(f"the {what} is not base64") from None


def new_nonce() -> str:
    return secrets.token_urlsafe(NONCE_BYTES)


class ScramServer:
    """The server's side of one login: :meth:`first` answers the client-first message,
    :meth:`final` the client-final; each raises :class:`ScramFailure`, after which the login
    is over. Messages out of order fail too."""

    def __init__(
        self,
        mechanism: ScramMechanism,
        lookup: CredentialLookup,
        decoy_secret: bytes,
        nonce: Callable[[], str] = new_nonce,
    ) -> None:
        if mechanism is ScramMechanism.UNKNOWN:
            raise ValueError("a SCRAM login needs a known mechanism")
        self.mechanism = mechanism
        self._lookup = lookup
        self._decoy_secret = decoy_secret
        self._new_nonce = nonce
        self._stage = _Stage.FIRST
        self._client_first: ClientFirst | None = None
        self._server_first = ""
        self._nonce = ""
        self._credential: ScramCredential | None = None
        self.username: str | None = None
        """The user, once the login has succeeded."""

    @property
    def done(self) -> bool:
        return self._stage is _Stage.DONE

    def respond(self, data: bytes) -> bytes:
        """The answer to the client's next message: :meth:`first`, then :meth:`final`; any
        message after those fails."""
        if self._stage is _Stage.FIRST:
            return self.first(data)
        if self._stage is _Stage.FINAL:
            return self.final(data)
        self._stage = _Stage.FAILED
        raise ScramFailure("a SCRAM message after the login ended")

    def first(self, data: bytes) -> bytes:
        """The server-first message for the client-first ``data``."""
        self._expect(_Stage.FIRST)
        try:
            client_first = parse_client_first(data)
        except ScramFailure:
            self._stage = _Stage.FAILED
            raise
        credential = self._lookup(client_first.username, self.mechanism)
        self._credential = credential
        salt, iterations = (
            (credential.salt, credential.iterations)
            if credential is not None
            else (self._decoy_salt(client_first.username), DEFAULT_ITERATIONS)
        )
        self._client_first = client_first
        self._nonce = client_first.nonce + self._new_nonce()
        self._server_first = (
            f"r={self._nonce},s={base64.b64encode(salt).decode('ascii')},i={iterations}"
        )
        self._stage = _Stage.FINAL
        return self._server_first.encode("ascii")

    def final(self, data: bytes) -> bytes:
        """The server-final message for the client-final ``data``, once its proof holds."""
        self._expect(_Stage.FINAL)
        self._stage = _Stage.FAILED
        client_first = self._client_first
        assert client_first is not None
        text = _text(data, "client-final message")
        without_proof, separator, proof_text = text.rpartition(",p=")
        if not separator:
            raise ScramFailure("the client-final message carries no proof")
        attributes = _attributes(without_proof, "client-final message")
        if len(attributes) < 2 or attributes[0][0] != "c" or attributes[1][0] != "r":
            raise ScramFailure("the client-final message must start with c= and r=")
        binding = _base64(attributes[0][1], "channel binding")
        if not hmac.compare_digest(binding, client_first.gs2_header.encode("utf-8")):
            raise ScramFailure("the channel binding differs from the gs2 header")
        if not hmac.compare_digest(attributes[1][1].encode("utf-8"), self._nonce.encode("utf-8")):
            raise ScramFailure("the nonce differs from the one this login agreed")
        proof = _base64(proof_text, "client proof")
        if len(proof) != self.mechanism.digest_size:
            raise ScramFailure("the client proof has the wrong length")
        auth_message = f"{client_first.bare},{self._server_first},{without_proof}".encode()
        credential = self._credential
        stored_key = credential.stored_key if credential is not None else bytes(len(proof))
        signature = hmac_of(self.mechanism, stored_key, auth_message)
        presented_client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        matches = hmac.compare_digest(hash_of(self.mechanism, presented_client_key), stored_key)
        if credential is None or not matches:
            raise ScramFailure(f"invalid credentials for user {client_first.username!r}")
        self._stage = _Stage.DONE
        self.username = client_first.username
        server_signature = hmac_of(self.mechanism, credential.server_key, auth_message)
        return b"v=" + base64.b64encode(server_signature)

    def _expect(self, stage: _Stage) -> None:
        if self._stage is not stage:
            self._stage = _Stage.FAILED
            raise ScramFailure(f"a SCRAM message out of order (expected the {stage.value})")

    def _decoy_salt(self, username: str) -> bytes:
        """The same salt for the same unknown user on every try, so repeated tries do not tell
        a missing user from a real one."""
        return hmac_of(self.mechanism, self._decoy_secret, username.encode("utf-8"))


class ScramClient:
    """The client's side of one login, with a password: :meth:`first`, :meth:`final` (for the
    server-first) and :meth:`verify` (the server-final); each raises :class:`ScramFailure`."""

    def __init__(
        self,
        mechanism: ScramMechanism,
        username: str,
        password: str,
        nonce: Callable[[], str] = new_nonce,
    ) -> None:
        if mechanism is ScramMechanism.UNKNOWN:
            raise ValueError("a SCRAM login needs a known mechanism")
        self.mechanism = mechanism
        self._password = password
        self._nonce = nonce()
        self._bare = f"n={encode_saslname(username)},r={self._nonce}"
        self._server_signature = b""

    def first(self) -> bytes:
        return f"n,,{self._bare}".encode()

    def final(self, server_first: bytes) -> bytes:
        text = _text(server_first, "server-first message")
        attributes = dict(_attributes(text, "server-first message"))
        nonce = attributes.get("r", "")
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce):
            raise ScramFailure("the server's nonce does not extend this client's")
        salt = _base64(attributes.get("s", ""), "salt")
        iterations_text = attributes.get("i", "")
        if not iterations_text.isdigit():
            raise ScramFailure("the server-first message has no iteration count")
        iterations = int(iterations_text)
        if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
            raise ScramFailure(f"the server asks for {iterations} iterations")
        salted = salted_password(self.mechanism, self._password, salt, iterations)
        without_proof = f"c=biws,r={nonce}"
        auth_message = f"{self._bare},{text},{without_proof}".encode()
        key = client_key(self.mechanism, salted)
        signature = hmac_of(self.mechanism, hash_of(self.mechanism, key), auth_message)
        proof = bytes(a ^ b for a, b in zip(key, signature, strict=True))
        server_key = hmac_of(self.mechanism, salted, b"Server Key")
        self._server_signature = hmac_of(self.mechanism, server_key, auth_message)
        return f"{without_proof},p={base64.b64encode(proof).decode('ascii')}".encode()

    def verify(self, server_final: bytes) -> None:
        text = _text(server_final, "server-final message")
        if not text.startswith("v="):
            raise ScramFailure("the server-final message carries no signature")
        signature = _base64(text[2:], "server signature")
        if not self._server_signature or not hmac.compare_digest(signature, self._server_signature):
            raise ScramFailure("the server's signature is wrong: it does not hold the credential")
