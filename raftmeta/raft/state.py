"""The election state every voter must make durable before acting on it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ElectionState:
    """What ``quorum-state`` holds: the epoch, whom this node voted for in it, and its leader.

    ``voted_id`` and ``leader_id`` are ``None`` when unknown. A node never changes ``voted_id``
    within an epoch once it is durable; that is what makes a vote count only once.
    ``voted_directory_id`` is the directory of the candidate voted for (KIP-853's
    votedDirectoryId), so a vote for a node is not a vote for the same id on a wiped disk.
    """

    epoch: int = 0
    voted_id: int | None = None
    leader_id: int | None = None
    voted_directory_id: str | None = None
