"""Checks of an already parsed value (a range, a pattern, a subset of choices), each able to
describe itself for the README's configuration table."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from raftmeta.config.values import BadValue


class Validator(Protocol):
    def __call__(self, value: object) -> None:
        """Raise ``BadValue`` naming the problem when ``value`` is not acceptable."""

    def describe(self) -> str: ...


@dataclass(frozen=True, slots=True)
class AtLeast:
    minimum: int

    def __call__(self, value: object) -> None:
        if isinstance(value, int) and value < self.minimum:
            raise BadValue(f"must be at least {self.minimum}")

    def describe(self) -> str:
        return f"≥ {self.minimum}"


@dataclass(frozen=True, slots=True)
class Between:
    minimum: int
    maximum: int

    def __call__(self, value: object) -> None:
        if isinstance(value, int) and not self.minimum <= value <= self.maximum:
            raise BadValue(f"must be between {self.minimum} and {self.maximum}")

    def describe(self) -> str:
        return f"{self.minimum} to {self.maximum}"


@dataclass(frozen=True, slots=True)
class NonEmpty:
    def __call__(self, value: object) -> None:
        if value in ("", ()):
            raise BadValue("must not be empty")

    def describe(self) -> str:
        return "non-empty"


@dataclass(frozen=True, slots=True)
class SubsetOf:
    """A non-empty list drawn from fixed choices, each at most once."""

    choices: tuple[str, ...]

    def __call__(self, value: object) -> None:
        if not isinstance(value, tuple):
            return
        if not value:
            raise BadValue(f"must list at least one of {', '.join(self.choices)}")
        for item in value:
            if item not in self.choices:
                raise BadValue(f"'{item}' is not one of {', '.join(self.choices)}")
        if len(set(value)) != len(value):
            raise BadValue("lists an entry twice")

    def describe(self) -> str:
        return "non-empty subset of " + ", ".join(self.choices)


@dataclass(frozen=True, slots=True)
class Matches:
    pattern: str
    description: str

    def __call__(self, value: object) -> None:
        if isinstance(value, str) and not re.fullmatch(self.pattern, value):
            raise BadValue(f"must be {self.description}")

    def describe(self) -> str:
        return self.description


@dataclass(frozen=True, slots=True)
class EachMatches:
    pattern: str
    description: str

    def __call__(self, value: object) -> None:
        if not isinstance(value, tuple):
            return
        for item in value:
            if not re.fullmatch(self.pattern, item):
                raise BadValue(f"entry '{item}' is not {self.description}")

    def describe(self) -> str:
        return f"each {self.description}"
