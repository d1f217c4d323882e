"""The one error replay raises, shared by every part of the image."""

from __future__ import annotations


class ReplayError(Exception):
    """A record the image cannot apply. Fatal: continuing would diverge from the quorum."""

    def __init__(self, reason: str, offset: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset

    def __str__(self) -> str:
        if self.offset is None:
            return self.reason
        return f"record at offset {self.offset}: {self.reason}"
