"""The SCRAM credentials of an image (Kafka's ScramImage): each user's credential per mechanism.

Every controller replays the same records, so every SASL listener checks logins against the
same credentials, and a snapshot carries them like any other record: none lives in a per-node
file that could drift.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType

from raftmeta.image.errors import ReplayError
from raftmeta.records import RemoveUserScramCredentialRecord, UserScramCredentialRecord

ScramKey = tuple[str, int]
"""(user name, Kafka's mechanism id)."""

_MECHANISMS = frozenset((1, 2))
"""SCRAM-SHA-256 and SCRAM-SHA-512: replay refuses any other id."""


class ScramImage:
    """Credentials by (user, mechanism)."""

    __slots__ = ("_credentials",)

    def __init__(self) -> None:
        self._credentials: dict[ScramKey, UserScramCredentialRecord] = {}

    def copy(self) -> ScramImage:
        other = ScramImage()
        other._credentials = dict(self._credentials)
        return other

    def replay_credential(self, record: UserScramCredentialRecord) -> None:
        if record.mechanism not in _MECHANISMS:
            raise ReplayError(
                f"UserScramCredentialRecord for {record.name!r}: unknown mechanism "
                f"{record.mechanism}"
            )
        if not record.name:
            raise ReplayError("UserScramCredentialRecord names no user")
        self._credentials[(record.name, record.mechanism)] = record

    def replay_remove(self, record: RemoveUserScramCredentialRecord) -> None:
        if self._credentials.pop((record.name, record.mechanism), None) is None:
            raise ReplayError(
                f"no SCRAM credential of mechanism {record.mechanism} for {record.name!r}"
            )

    @property
    def credentials(self) -> Mapping[ScramKey, UserScramCredentialRecord]:
        return MappingProxyType(self._credentials)

    def credential(self, name: str, mechanism: int) -> UserScramCredentialRecord | None:
        return self._credentials.get((name, mechanism))

    def users(self) -> list[str]:
        """Every user holding a credential, sorted."""
        return sorted({name for name, _ in self._credentials})

    def of_user(self, name: str) -> list[UserScramCredentialRecord]:
        """The user's credentials, by mechanism id."""
        return [
            self._credentials[(name, mechanism)]
            for mechanism in sorted(_MECHANISMS)
            if (name, mechanism) in self._credentials
        ]

    def records(self) -> Iterator[UserScramCredentialRecord]:
        """In the canonical order of a snapshot: by user, then mechanism."""
        credentials = self._credentials
        for key in sorted(credentials):
            yield credentials[key]

    def __len__(self) -> int:
        return len(self._credentials)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ScramImage):
            return NotImplemented
        return self._credentials == other._credentials

    __hash__ = None  # type: ignore[assignment]
