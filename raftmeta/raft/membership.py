"""The voter set and ``kraft.version`` at every point of a node's log (KIP-853).

A VotersRecord takes effect when it is appended, committed or not, because a leader must count
a new voter's acknowledgements at once for the change to commit under the new majority. So a
node's voter set is the latest VotersRecord in its log, or, with none after its snapshot, the
set the snapshot (or the bootstrap configuration) holds. Truncating a VotersRecord away
restores the set before it, so this keeps every change still in the log, not only the last.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from raftmeta.raft.batch import Batch
from raftmeta.raft.control import membership_in
from raftmeta.raft.voters import VoterSet


@dataclass(frozen=True, slots=True)
class Membership:
    kraft_version: int
    voters: VoterSet


class MembershipHistory:
    """Membership at the log start, then one entry per control batch in the log that sets it."""

    __slots__ = ("_base", "_entries", "_offsets")

    def __init__(self, base: Membership) -> None:
        self._base = base
        self._entries: list[Membership] = []
        self._offsets: list[int] = []
        """The base offset of the batch that set each entry, ascending."""

    @property
    def current(self) -> Membership:
        return self._entries[-1] if self._entries else self._base

    @property
    def last_change_offset(self) -> int | None:
        """Where the latest change in the log is (None: the set is the log start's)."""
        return self._offsets[-1] if self._offsets else None

    def at(self, end_offset: int) -> Membership:
        """Membership in effect for the log below ``end_offset`` (what a snapshot there holds)."""
        index = bisect.bisect_left(self._offsets, end_offset) - 1
        return self._entries[index] if index >= 0 else self._base

    def appended(self, batch: Batch) -> bool:
        """Take in an appended batch; True if it changed the voter set or kraft.version."""
        kraft_version, voters = membership_in(batch)
        if kraft_version is None and voters is None:
            return False
        current = self.current
        self._entries.append(
            Membership(
                current.kraft_version if kraft_version is None else kraft_version,
                current.voters if voters is None else voters,
            )
        )
        self._offsets.append(batch.base_offset)
        return True

    def truncated(self, end_offset: int) -> bool:
        """The log was cut at ``end_offset``; True if a change was cut with it."""
        keep = bisect.bisect_left(self._offsets, end_offset)
        if keep == len(self._offsets):
            return False
        del self._entries[keep:]
        del self._offsets[keep:]
        return True

    def start_moved(self, start_offset: int) -> None:
        """The log now starts at ``start_offset`` (a snapshot covers what was before)."""
        self._base = self.at(start_offset)
        keep = bisect.bisect_left(self._offsets, start_offset)
        del self._entries[:keep]
        del self._offsets[:keep]

    def reset(self, base: Membership) -> None:
        """The log was replaced by a downloaded snapshot holding ``base``."""
        self._base = base
        self._entries.clear()
        self._offsets.clear()
