"""Which epoch wrote which stretch of the log: answers "where does epoch E end?".

Leaders use it to tell a fetching follower where its log diverges; followers use it to pick a
truncation point. Each entry is (epoch, start offset); an epoch ends where the next one starts,
or at the log end for the last one.
"""

from __future__ import annotations

import bisect

from raftmeta.raft.batch import OffsetAndEpoch


class EpochCache:
    __slots__ = ("_epochs", "_starts")

    def __init__(self) -> None:
        self._epochs: list[int] = []
        self._starts: list[int] = []

    def __len__(self) -> int:
        return len(self._epochs)

    def entries(self) -> list[tuple[int, int]]:
        return list(zip(self._epochs, self._starts, strict=True))

    def assign(self, epoch: int, start_offset: int) -> None:
        """Note that ``epoch`` writes from ``start_offset`` on; repeated calls are no-ops."""
        if self._epochs:
            last_epoch = self._epochs[-1]
            if epoch == last_epoch:
                return
            if epoch < last_epoch:
                raise ValueError(f"epoch {epoch} assigned after epoch {last_epoch}")
            if start_offset < self._starts[-1]:
                raise ValueError(
                    f"epoch {epoch} starts at {start_offset}, before epoch {last_epoch} "
                    f"which starts at {self._starts[-1]}"
                )
        self._epochs.append(epoch)
        self._starts.append(start_offset)

    def truncate_from_end(self, end_offset: int) -> None:
        """Forget epochs that start at or after ``end_offset`` (the log was cut there)."""
        while self._starts and self._starts[-1] >= end_offset:
            self._epochs.pop()
            self._starts.pop()

    def clear_and_start(self, epoch: int, start_offset: int) -> None:
        """Reset to a single epoch, as after loading a snapshot that replaces the log."""
        self._epochs = [epoch]
        self._starts = [start_offset]

    def end_offset_for(self, epoch: int, log_end_offset: int) -> OffsetAndEpoch:
        """The largest epoch at or below ``epoch`` that this log knows, and where it ends.

        Returns ``OffsetAndEpoch(-1, -1)`` when every known epoch is above ``epoch``.
        """
        index = bisect.bisect_right(self._epochs, epoch) - 1
        if index < 0:
            return OffsetAndEpoch(-1, -1)
        end = self._starts[index + 1] if index + 1 < len(self._starts) else log_end_offset
        return OffsetAndEpoch(end, self._epochs[index])
