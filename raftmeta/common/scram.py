"""SCRAM credential changes and descriptions as AlterUserScramCredentials (51) and
DescribeUserScramCredentials (50) carry them, for either wire.

An upsertion carries what the client computed: the salt, the iteration count and the
SaltedPassword, never the password; the controller derives the StoredKey and ServerKey from
it. A description carries each mechanism's iteration count, never a key. Mechanisms are Kafka's
ids (1 SCRAM-SHA-256, 2 SCRAM-SHA-512); any other id travels unchanged so the controller can
answer it UNSUPPORTED_SASL_MECHANISM.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from raftmeta.common.items import OK, ItemError


@dataclass(frozen=True, slots=True)
class ScramDeletion:
    name: str
    mechanism: int


@dataclass(frozen=True, slots=True)
class ScramUpsertion:
    name: str
    mechanism: int
    iterations: int
    salt: bytes = field(repr=False)
    salted_password: bytes = field(repr=False)


@dataclass(frozen=True, slots=True)
class AlterScramRequest:
    deletions: tuple[ScramDeletion, ...] = ()
    upsertions: tuple[ScramUpsertion, ...] = ()
    timeout_ms: int = 0


@dataclass(frozen=True, slots=True)
class ScramUserResult:
    """One user's outcome of an AlterUserScramCredentials request."""

    user: str
    error: ItemError = OK


@dataclass(frozen=True, slots=True)
class ScramCredentialInfo:
    mechanism: int
    iterations: int


@dataclass(frozen=True, slots=True)
class ScramUserDescription:
    """One user's credentials (mechanism and iterations), or why they cannot be shown."""

    user: str
    error: ItemError = OK
    credentials: tuple[ScramCredentialInfo, ...] = ()
