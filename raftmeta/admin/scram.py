"""SCRAM credential values of the admin client, shaped as confluent-kafka's
(``ScramMechanism``, ``ScramCredentialInfo``, ``UserScramCredentialUpsertion``,
``UserScramCredentialDeletion``, ``UserScramCredentialsDescription``).

An upsertion holds the password only until the client salts it: :func:`salted_upsertion` turns
it into what crosses the wire (salt, iterations, SaltedPassword), as Kafka's admin client does,
so the password never leaves the caller's process.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from raftmeta.common.scram import ScramUpsertion
from raftmeta.security.scram import (
    DEFAULT_ITERATIONS,
    SALT_BYTES,
    ScramMechanism,
    iterations_problem,
    salted_password,
)

__all__ = [
    "ScramCredentialInfo",
    "ScramMechanism",
    "UserScramCredentialDeletion",
    "UserScramCredentialUpsertion",
    "UserScramCredentialsDescription",
    "salted_upsertion",
]


@dataclass(frozen=True, slots=True)
class ScramCredentialInfo:
    mechanism: ScramMechanism
    iterations: int = DEFAULT_ITERATIONS


@dataclass(frozen=True, slots=True)
class UserScramCredentialUpsertion:
    """Set ``user``'s credential of ``scram_credential_info.mechanism`` to ``password``."""

    user: str
    scram_credential_info: ScramCredentialInfo
    password: bytes | str = field(repr=False)
    salt: bytes | None = field(default=None, repr=False)
    """A random one when left None."""


@dataclass(frozen=True, slots=True)
class UserScramCredentialDeletion:
    user: str
    mechanism: ScramMechanism


@dataclass(frozen=True, slots=True)
class UserScramCredentialsDescription:
    """A user's credentials: mechanisms and iteration counts, never a key."""

    user: str
    scram_credential_infos: tuple[ScramCredentialInfo, ...]


def salted_upsertion(upsertion: UserScramCredentialUpsertion) -> ScramUpsertion:
    """What crosses the wire for ``upsertion``: the password salted and iterated here."""
    info = upsertion.scram_credential_info
    salt = upsertion.salt if upsertion.salt is not None else secrets.token_bytes(SALT_BYTES)
    mechanism = ScramMechanism.of(int(info.mechanism))
    # An unknown mechanism or a count the controller refuses is sent unsalted, to be refused
    # there with Kafka's code, rather than spending minutes on a count of a billion here.
    salted = (
        b""
        if mechanism is ScramMechanism.UNKNOWN or iterations_problem(info.iterations)
        else salted_password(mechanism, upsertion.password, salt, info.iterations)
    )
    return ScramUpsertion(upsertion.user, int(info.mechanism), info.iterations, salt, salted)
