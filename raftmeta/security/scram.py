"""SCRAM credentials (RFC 5802, RFC 7677): what a password becomes before anything keeps it.

A credential is one user's salt, iteration count, StoredKey and ServerKey under one mechanism.
The password is salted and iterated into the SaltedPassword (PBKDF2-HMAC) by whoever knows it
(a client, or ``raftmeta format``); the SaltedPassword yields ``ClientKey = HMAC(SaltedPassword,
"Client Key")``, ``StoredKey = H(ClientKey)`` and ``ServerKey = HMAC(SaltedPassword, "Server
Key")``. Only the last two are kept: they let a server check a login and prove itself, but
neither the password nor a ClientKey can be computed back from them.

Mechanism ids and the iteration bounds are Kafka's (``ScramMechanism``: SCRAM-SHA-256 is 1,
SCRAM-SHA-512 is 2; 4096 to 16384 iterations), so records and requests read the same as
Kafka's. This module holds the arithmetic only; :mod:`raftmeta.security.scram_exchange` holds
the messages of a login.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384
DEFAULT_ITERATIONS = 4096
"""What ``format --add-scram`` and the admin client use when no iteration count is given."""
SALT_BYTES = 32


class ScramMechanism(enum.IntEnum):
    """Kafka's SCRAM mechanism ids; UNKNOWN is what a request naming another id becomes."""

    UNKNOWN = 0
    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @property
    def mechanism_name(self) -> str:
        """The SASL name (``SCRAM-SHA-256``)."""
        return self.name.replace("_", "-")

    @property
    def hash_name(self) -> str:
        """The hashlib name of the mechanism's hash."""
        if self is ScramMechanism.UNKNOWN:
            raise ValueError("the UNKNOWN SCRAM mechanism has no hash")
        return "sha256" if self is ScramMechanism.SCRAM_SHA_256 else "sha512"

    @property
    def digest_size(self) -> int:
        return hashlib.new(self.hash_name).digest_size

    @classmethod
    def of(cls, value: int) -> ScramMechanism:
        """The mechanism with id ``value``; UNKNOWN for any other id."""
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN

    @classmethod
    def from_name(cls, name: str) -> ScramMechanism:
        """The mechanism named ``name`` (``SCRAM-SHA-512``); UNKNOWN for any other name."""
        for mechanism in cls:
            if mechanism is not cls.UNKNOWN and mechanism.mechanism_name == name:
                return mechanism
        return cls.UNKNOWN


SCRAM_MECHANISMS = (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512)
SCRAM_MECHANISM_NAMES = tuple(mechanism.mechanism_name for mechanism in SCRAM_MECHANISMS)


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """What a server keeps to check one user's logins under one mechanism. Its ``repr``
    shows the iteration count only: the keys are as good as a password against this server."""

    salt: bytes = field(repr=False)
    stored_key: bytes = field(repr=False)
    server_key: bytes = field(repr=False)
    iterations: int


def hmac_of(mechanism: ScramMechanism, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, mechanism.hash_name).digest()


def hash_of(mechanism: ScramMechanism, data: bytes) -> bytes:
    return hashlib.new(mechanism.hash_name, data).digest()


def salted_password(
    mechanism: ScramMechanism, password: str | bytes, salt: bytes, iterations: int
) -> bytes:
    """RFC 5802's ``Hi(password, salt, i)``: PBKDF2-HMAC with the mechanism's hash. The
    password is taken as its UTF-8 bytes, as Kafka's clients take it (no SASLprep)."""
    secret = password.encode("utf-8") if isinstance(password, str) else password
    return hashlib.pbkdf2_hmac(mechanism.hash_name, secret, salt, iterations)


def client_key(mechanism: ScramMechanism, salted: bytes) -> bytes:
    return hmac_of(mechanism, salted, b"Client Key")


def credential_from_salted_password(
    mechanism: ScramMechanism, salt: bytes, salted: bytes, iterations: int
) -> ScramCredential:
    """The credential a server keeps, from the SaltedPassword a client computed."""
    return ScramCredential(
        salt=salt,
        stored_key=hash_of(mechanism, client_key(mechanism, salted)),
        server_key=hmac_of(mechanism, salted, b"Server Key"),
        iterations=iterations,
    )


def credential_from_password(
    mechanism: ScramMechanism,
    password: str | bytes,
    *,
    salt: bytes | None = None,
    iterations: int = DEFAULT_ITERATIONS,
) -> ScramCredential:
    """The credential of ``password``, under a fresh random salt unless one is given."""
    chosen = secrets.token_bytes(SALT_BYTES) if salt is None else salt
    salted = salted_password(mechanism, password, chosen, iterations)
    return credential_from_salted_password(mechanism, chosen, salted, iterations)


def iterations_problem(iterations: int) -> str | None:
    """Kafka's message for an iteration count outside 4096..16384, or ``None``."""
    if iterations < MIN_ITERATIONS:
        return "Too few iterations"
    if iterations > MAX_ITERATIONS:
        return "Too many iterations"
    return None
