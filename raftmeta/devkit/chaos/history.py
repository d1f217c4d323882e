"""What the campaign's clients asked for and what they were told, one entry per operation.

The checker judges the cluster against this history, the way Jepsen does: an operation the
client saw succeed must be in the committed log exactly once, one it saw fail definitely must
not be there at all, and one whose outcome it never learned may be either.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path


class Outcome(enum.Enum):
    """How an operation ended, as its client saw it."""

    OK = "ok"
    """The controller answered success: the write happened and must survive."""
    FAILED = "failed"
    """A definite error (the request was refused before it did anything): the write must not
    be in the log."""
    ECHO = "echo"
    """TOPIC_ALREADY_EXISTS for a name only this operation uses: the write happened (an earlier
    attempt of the same call committed it) but the client was told it failed."""
    UNKNOWN = "unknown"
    """No definite answer (a timeout, a lost connection, NOT_CONTROLLER after the deadline):
    the write may or may not have happened."""


@dataclass(frozen=True, slots=True)
class Operation:
    """One CreateTopics of a topic name nobody else uses."""

    topic: str
    worker: int
    invoked_s: float
    """Seconds since the campaign started, when the client sent it."""
    completed_s: float
    outcome: Outcome
    error: str = ""
    """The error's name and message when the outcome is not OK."""

    def to_json(self) -> str:
        fields = asdict(self)
        fields["outcome"] = self.outcome.value
        return json.dumps(fields, sort_keys=True)

    @classmethod
    def from_json(cls, line: str) -> Operation:
        fields = json.loads(line)
        fields["outcome"] = Outcome(fields["outcome"])
        return cls(**fields)


def write_history(path: Path, operations: Iterable[Operation]) -> None:
    path.write_text("".join(op.to_json() + "\n" for op in operations), encoding="utf-8")


def read_history(path: Path) -> list[Operation]:
    return [Operation.from_json(line) for line in path.read_text().splitlines() if line]
